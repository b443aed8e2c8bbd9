"""The package's shape, as ARCHITECTURE.md draws it: layers import only downwards, no import cycles, small modules.

The import graph is read from the source (every ``import`` statement, also those inside
functions), so a lazy import cannot hide a wrong dependency.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from helpers.paths import REPO

PACKAGE = REPO / "src" / "theorembench"
ARCHITECTURE = PACKAGE.parents[1] / "ARCHITECTURE.md"

BELOW_PIPELINE = {"common", "store", "latex", "sources", "llm", "sandbox", "report"}
# what each top-level part may import (besides itself and the root package's version)
ALLOWED: dict[str, set[str]] = {
    "common": set(),
    "data": set(),
    "store": {"common"},
    "latex": {"common"},
    "report": {"common"},
    "sources": {"common", "latex"},
    "llm": {"common", "store"},
    "sandbox": {"common"},
    "pipeline": BELOW_PIPELINE,
    "evaluate": BELOW_PIPELINE | {"pipeline"},
    "methods": BELOW_PIPELINE | {"pipeline", "evaluate"},
    "testing": BELOW_PIPELINE | {"pipeline"},
    "suite": BELOW_PIPELINE | {"pipeline", "evaluate", "methods"},  # services over several methods (the demo)
    "web": BELOW_PIPELINE | {"pipeline", "evaluate", "methods"},
    "cli": BELOW_PIPELINE | {"pipeline", "evaluate", "methods", "suite", "web"},  # web: `improof serve` starts the platform
}
WHOLE_BY_DESIGN = {"latex/macros.py", "latex/flatten.py"}
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The theorembench modules ``path`` imports (``from pkg import mod`` counts as importing ``pkg.mod``)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "theorembench")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "theorembench":
                continue
            subs = {f"{target}.{a.name}" for a in node.names} & known
            found.update(subs or {target})
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_part_is_in_the_picture():
    parts = {_part(m) for m in _modules()} - {""}
    assert parts <= set(ALLOWED), f"add {sorted(parts - set(ALLOWED))} to the layer picture (here and in ARCHITECTURE.md)"
    text = ARCHITECTURE.read_text()
    missing = [p for p in parts if f"{p}/" not in text]
    assert not missing, f"ARCHITECTURE.md does not show {missing}"


def test_layers_import_only_downwards():
    wrong = []
    for module, targets in sorted(_graph().items()):
        part = _part(module)
        if not part:
            continue
        for target in sorted(targets):
            other = _part(target)
            if other in ("", part):
                continue
            if other not in ALLOWED[part]:
                wrong.append(f"{module} -> {target}")
    assert not wrong, "imports against the layer picture:\n" + "\n".join(wrong)


def test_methods_do_not_import_each_other():
    wrong = [f"{m} -> {t}" for m, targets in _graph().items() if m.startswith("theorembench.methods.")
             for t in targets if t.startswith("theorembench.methods.") and t.split(".")[2] != m.split(".")[2]]  # fmt: skip
    assert not wrong, wrong


def test_no_import_cycles():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in graph:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert not cycles, f"import cycles: {cycles}"


def test_modules_stay_small():
    big = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES and rel not in WHOLE_BY_DESIGN:
            big.append(f"{rel}: {lines} lines")
    assert not big, big


@pytest.mark.parametrize("rel", sorted(WHOLE_BY_DESIGN))
def test_whole_modules_say_why(rel):
    doc = ast.get_docstring(ast.parse((PACKAGE / rel).read_text())) or ""
    assert "stays whole" in doc, f"{rel}: its docstring must say why it stays one module"


def test_the_checker_sees_a_wrong_import(tmp_path):
    """The layer check itself: a latex module importing the LLM layer is reported."""
    fake = tmp_path / "theorembench" / "latex" / "bad.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from theorembench.llm import LLM\n\ndef f():\n    import theorembench.store.db\n")
    found = _imports("theorembench.latex.bad", fake, {"theorembench.llm", "theorembench.store.db"})
    assert found == {"theorembench.llm", "theorembench.store.db"}
    assert "llm" not in ALLOWED["latex"] and "store" not in ALLOWED["latex"]


TESTS = REPO / "tests"
TEST_FOLDERS = {*ALLOWED, "project"} - {"data"}  # a layer's tests, or the whole project's


def _test_modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "helpers" not in p.relative_to(TESTS).parts)


def test_tests_mirror_the_layers():
    """Each test module sits in tests/<layer>/ (tests/methods/<method>/ for a method), or in tests/project/."""
    misplaced = []
    methods = {p.name for p in (PACKAGE / "methods").iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    for path in _test_modules():
        parts = path.relative_to(TESTS).parts
        folder = parts[0] if len(parts) > 1 else ""
        if folder not in TEST_FOLDERS or (folder == "methods" and (len(parts) != 3 or parts[1] not in methods)):
            misplaced.append("/".join(parts))
    assert _test_modules() and not misplaced, misplaced


def test_test_modules_import_only_helpers():
    """No test module imports another one, or conftest: what they share lives in tests/helpers/."""
    names = {p.stem for p in _test_modules()} | {"conftest"}
    wrong = []
    for path in _test_modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])  # fmt: skip
            wrong += [f"{path.relative_to(TESTS)}: {m}" for m in mods if m.split(".")[0] in names]
    assert not wrong, wrong


SERVICE_LAYERS = sorted(set(ALLOWED) - {"cli", "web", "testing", "data"})
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
# the arXiv client's give-up messages point at --base-url, the one way every command that fetches reaches a mirror
OPTION_NAMED_BY_DESIGN = {("sources/arxiv_http.py", "--base-url")}


def test_services_name_settings_not_command_line_options():
    """A service's error names its setting in its own words (``InvalidSetting``): the command line maps it to the
    option. Only a whole command to run (``theorembench …``, ``pip install …``) may carry options."""
    found = []
    for layer in SERVICE_LAYERS:
        for path in (PACKAGE / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.Raise) or node.exc is None:
                    continue
                for sub in ast.walk(node.exc):
                    text = sub.value if isinstance(sub, ast.Constant) and isinstance(sub.value, str) else ""
                    for m in FLAG.finditer(text):
                        rel = path.relative_to(PACKAGE).as_posix()
                        if (rel, m.group()) in OPTION_NAMED_BY_DESIGN:
                            continue
                        if not re.search(r"(theorembench|pip install)[^`]*$", text[: m.start()]):
                            found.append(f"{rel}:{sub.lineno}: {m.group()}")
    assert not found, found
