# theorembench: `make demo` sets everything up and runs the main job offline;
# `make test` runs the whole test suite. Both work on a fresh clone.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.theorembench-installed

.PHONY: setup demo test bench bench-smoke clean

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
	$(BIN)/python bench/web_platform.py

# every bench once, small (CI runs it, so that a broken bench fails CI); the figures mean little at this size
bench-smoke: setup
	$(BIN)/python bench/eval_throughput.py --n 40 --c 8 --latency-ms 20 --shards 1,2
	$(BIN)/python bench/sandbox.py --repeat 1 --n 4
	$(BIN)/python bench/eternal_instantiate.py --quick
	$(BIN)/python bench/improof_harness.py --turns 3 --repeat 1
	$(BIN)/python bench/web_platform.py --graders 4 --seconds 3 --interval 0.5 --setups sqlite:1,sqlite:2

clean:
	rm -rf $(VENV) .theorembench demo-output results logs
