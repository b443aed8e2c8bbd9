# theorembench: `make demo` sets everything up and runs the main job offline;
# `make test` runs the whole test suite. Both work on a fresh clone.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.theorembench-installed

.PHONY: setup demo test bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt scripts/setup.sh
	PYTHON=$(PYTHON) bash scripts/setup.sh
	touch $(STAMP)

demo: setup
	$(BIN)/theorembench demo

test: setup
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python bench/eval_throughput.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/eternal_instantiate.py
	$(BIN)/python bench/improof_harness.py

clean:
	rm -rf $(VENV) .theorembench demo-output results logs
