"""The meta-template: the paper's fields (Appendix A.2) plus our machine-checkable ones, parsed and checked.

``parse_template(obj)`` returns a ``Template`` or raises ``TemplateError`` whose ``problems`` hold
one line per bad field; ``load_templates(path)`` reads a JSON list of templates and reports the
problems of every template at once. Code is compiled (never run) to report syntax errors early.

The paper's own format is accepted as it is: without ``params``, the domains are read from
``param_definition`` (:mod:`definitions`), or one line shows the ``params`` to add. Required:
``template_id``, ``problem_template``, ``formal_solution`` and ``natural_lang_solution`` (the
instances' solution steps). A template without ``small_case_check`` parses, but is *unverified*:
nothing independent checks its formula, and a release leaves its instances out unless told to keep them.
``small_case_check.params`` takes lists of values, a list of cases, or domains as ``params`` writes them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.evaluate.answers import KINDS
from theorembench.methods.eternal import params as P
from theorembench.methods.eternal.definitions import params_from_definitions
from theorembench.methods.eternal.radar import ACADEMIC_LEVELS, academic_level

REQUIRED = ("template_id", "problem_template", "formal_solution", "natural_lang_solution", "params")
_TEXT_FIELDS = ("target_paper_module", "core_math_concept", "output_type")
MAX_CASE_VALUES = 50  # a small_case_check domain with more values than this is not a set of small cases
RESERVED = {"result", "exact_expression"}
_OUTPUT_KINDS = {"integer": "integer", "int": "integer", "rational": "rational", "fraction": "rational",
                 "real": "real", "float": "real", "decimal": "real", "boolean": "boolean", "bool": "boolean",
                 "tuple": "tuple", "list": "list", "set": "set"}  # fmt: skip
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,199}")


class TemplateError(ValueError):
    """A template (or a templates file) that cannot be used; ``problems`` holds one line per bad field."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


@dataclass
class SmallCaseCheck:
    """Independent brute-force code (sets ``result``) and the small cases, each a dict of JSON parameter values."""

    code: str
    cases: list[dict[str, Any]]


@dataclass
class Template:
    """One parsed template; ``raw`` is the object it came from (fields we do not know are kept there)."""

    template_id: str
    problem_template: str
    formal_solution: str
    params: dict[str, dict]
    answer_kind: str
    natural_lang_solution: str = ""
    target_paper_module: str = ""
    core_math_concept: str = ""
    output_type: str = ""
    param_definition: list[dict] = field(default_factory=list)
    param_generation_rule: list[str] = field(default_factory=list)
    validation_rule: list[dict] = field(default_factory=list)
    small_case_check: SmallCaseCheck | None = None
    paper_id: str | None = None
    theorem: str | None = None
    msc: list[str] = field(default_factory=list)
    version: int = 1
    raw: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # how the template was read (e.g. params from the paper's format)

    @property
    def verified(self) -> bool:
        """Whether an independent check (``small_case_check``) stands behind ``formal_solution``."""
        return self.small_case_check is not None

    @property
    def code_hash(self) -> str:
        return hashlib.sha256(self.formal_solution.encode()).hexdigest()

    def decode_params(self, values: dict[str, Any]) -> dict[str, Any]:
        """JSON parameter values as the Python values the code sees (``ValueError`` when one does not fit)."""
        return {name: P.decode(self.params[name], values[name]) for name in self.params}

    def to_dict(self) -> dict:
        return dict(self.raw)


def default_kind(output_type: str) -> str:
    """The answer-checker kind an ``output_type`` implies: Integer -> integer, ... , anything else -> expression."""
    words = re.findall(r"[a-z]+", output_type.lower())
    return _OUTPUT_KINDS.get(words[0], "expression") if words else "expression"


def _compiles(code: str, where: str) -> list[str]:
    try:
        compile(code, f"<{where}>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return [f"{where}: Python syntax error at line {exc.lineno}: {exc.msg}"]
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return [f"{where}: cannot be compiled ({type(exc).__name__})"]
    return []


def _check_params(obj: dict) -> list[str]:
    spec = obj.get("params")
    if not isinstance(spec, dict) or not spec:
        return ["params: must be an object naming at least one parameter, e.g. {\"n\": {\"type\": \"int\", ...}}"]
    problems: list[str] = []
    for name, dom in spec.items():
        if not (isinstance(name, str) and name.isidentifier()) or keyword.iskeyword(name) or name.startswith("__"):
            problems.append(f"params: {name!r} is not a usable Python variable name")
        elif name in RESERVED:
            problems.append(f"params: {name!r} is reserved (the code sets it)")
        problems += P.check_domain(dom, f"params.{name}")
    return problems


def _check_definitions(obj: dict) -> list[str]:
    defs = obj.get("param_definition", [])
    if not isinstance(defs, list) or not all(isinstance(d, dict) for d in defs):
        return ["param_definition: must be a list of objects with var_name, var_type, var_constraint, var_source"]
    if not defs or not isinstance(obj.get("params"), dict):
        return []
    names = [d.get("var_name") for d in defs]
    problems = []
    extra = [n for n in names if n not in obj["params"]]
    missing = [n for n in obj["params"] if n not in names]
    if extra:
        problems.append(f"param_definition: names {', '.join(map(str, extra))}, which params does not declare")
    if missing:
        problems.append(f"param_definition: does not name {', '.join(missing)}, which params declares")
    return problems


def _cases(obj: Any, params: dict[str, dict]) -> tuple[list[dict], list[str]]:
    """Small cases as a list of dicts: a dict of lists is expanded (the product when several are given)."""
    if isinstance(obj, dict):
        lists, problems = {}, []
        for name, given in obj.items():
            found, problem = _case_values(name, given)
            lists[name] = found
            problems += [problem] if problem else []
        if problems:
            return [], problems
        names = list(obj)
        cases = [dict(zip(names, combo)) for combo in itertools.product(*(lists[n] for n in names))]
    elif isinstance(obj, list) and obj and all(isinstance(c, dict) for c in obj):
        cases = obj
    else:
        return [], ["small_case_check.params: must be {name: [values]} or a non-empty list of {name: value}"]
    problems = []
    for i, case in enumerate(cases):
        missing = [n for n in params if n not in case]
        unknown = [n for n in case if n not in params]
        if missing or unknown:
            what = ([f"misses {', '.join(missing)}"] if missing else []) + \
                ([f"names unknown {', '.join(unknown)}"] if unknown else [])
            problems.append(f"small_case_check case {i + 1}: {' and '.join(what)}")
            continue
        for n in params:
            try:
                P.decode(params[n], case[n])
            except ValueError as exc:
                problems.append(f"small_case_check case {i + 1}: {n}: {exc}")
    return cases, problems


def _case_values(name: str, given: Any) -> tuple[list[Any], str]:
    """The small-case values of one parameter: a non-empty list, or a domain as ``params`` writes it."""
    if isinstance(given, list) and given:
        return given, ""
    if isinstance(given, dict) and "type" in given:
        bad = P.check_domain(given, f"small_case_check.params.{name}")
        if bad:
            return [], "; ".join(bad)
        count = P.size(given)
        if count is None or count > MAX_CASE_VALUES:
            return [], (f"small_case_check.params.{name}: the domain holds more than {MAX_CASE_VALUES} values; "
                        "small cases are a few small values")  # fmt: skip
        return [P.encode(given, v) for v in P.values(given)], ""
    return [], (f"small_case_check.params.{name}: needs a non-empty list of values or a domain such as "
                '{"type": "int", "min": 3, "max": 6}')  # fmt: skip


def _with_definitions(obj: dict) -> tuple[dict, list[str], list[str]]:
    """The paper's format (no ``params``, a ``param_definition``): params read from it; ``(obj, notes, problems)``."""
    if "params" in obj or "param_definition" not in obj:
        return obj, [], []
    params, notes, problem = params_from_definitions(obj["param_definition"])
    if params is None:
        return obj, [], [problem] if problem else []
    return dict(obj, params=params), notes, []


def _check_check(obj: dict, params_ok: bool) -> list[str]:
    scc = obj.get("small_case_check")
    if scc is None:
        return []
    if not isinstance(scc, dict) or not isinstance(scc.get("code"), str) or not scc["code"].strip():
        return ["small_case_check: must be {\"params\": ..., \"code\": \"...\"} with non-empty code"]
    problems = _compiles(scc["code"], "small_case_check.code")
    if params_ok:
        problems += _cases(scc.get("params"), obj["params"])[1]
    return problems


def _check_fields(obj: dict) -> list[str]:
    why = {"natural_lang_solution": " (each instance's solution_steps are rendered from it)"}
    problems = [f"{k}: required{why.get(k, '')}" for k in REQUIRED if k not in obj]
    tid = obj.get("template_id")
    if "template_id" in obj and not (isinstance(tid, str) and _ID.fullmatch(tid)):
        problems.append("template_id: must be a string of letters, digits, '_', '.', ':' or '-' (at most 200)")
    for k in ("problem_template", "formal_solution", "natural_lang_solution"):
        if k in obj and not (isinstance(obj[k], str) and obj[k].strip()):
            problems.append(f"{k}: must be a non-empty string")
    problems += [f"{k}: must be a string" for k in _TEXT_FIELDS if k in obj and not isinstance(obj[k], str)]
    for k in ("param_generation_rule",):
        if k in obj and not (isinstance(obj[k], list) and all(isinstance(x, str) for x in obj[k])):
            problems.append(f"{k}: must be a list of strings")
    rules = obj.get("validation_rule", [])
    if not (isinstance(rules, list) and all(isinstance(r, dict) and isinstance(r.get("rule"), str) for r in rules)):
        problems.append("validation_rule: must be a list of {\"type\": ..., \"rule\": \"...\"}")
    level = obj.get("academic_level")
    if level is not None and academic_level(level) is None:
        problems.append(f"academic_level: {level!r} is not one of {', '.join(ACADEMIC_LEVELS)} (Table 2)")
    kind = obj.get("answer_kind")
    if kind is not None and kind not in KINDS:
        problems.append(f"answer_kind: {kind!r} is not one of {', '.join(KINDS)}")
    msc = obj.get("msc", [])
    if not (isinstance(msc, list) and all(isinstance(c, str) and re.fullmatch(r"\d\d", c) for c in msc)):
        problems.append("msc: must be a list of two-digit MSC2020 codes, e.g. [\"05\", \"20\"]")
    for k in ("paper_id", "theorem"):
        if obj.get(k) is not None and not isinstance(obj[k], str):
            problems.append(f"{k}: must be a string")
    version = obj.get("version", 1)
    if not (isinstance(version, int) and not isinstance(version, bool) and version >= 1):
        problems.append(f"version: must be an integer >= 1, got {version!r}")
    return problems


def parse_template(obj: Any) -> Template:
    """A checked ``Template``, or ``TemplateError`` listing every problem found."""
    if not isinstance(obj, dict):
        raise TemplateError(["a template must be a JSON object"])
    obj, notes, problems = _with_definitions(obj)
    problems = problems + [p for p in _check_fields(obj) if not (problems and p == "params: required")]
    param_problems = _check_params(obj) if "params" in obj else []
    problems += param_problems
    params_ok = "params" in obj and not param_problems
    problems += _check_definitions(obj)
    problems += _check_check(obj, params_ok)
    if isinstance(obj.get("formal_solution"), str) and obj["formal_solution"].strip():
        problems += _compiles(obj["formal_solution"], "formal_solution")
    if params_ok and isinstance(obj.get("problem_template"), str):
        for name in obj["params"]:
            if not re.search(r"(?<!\\)\{\s*" + re.escape(name) + r"\s*\}", obj["problem_template"]):
                problems.append(f"problem_template: has no {{{name}}} placeholder, so the problem would not "
                                f"state parameter {name}")  # fmt: skip
    if problems:
        raise TemplateError(problems)
    scc = obj.get("small_case_check")
    return Template(
        template_id=obj["template_id"], problem_template=obj["problem_template"],
        formal_solution=obj["formal_solution"], params=obj["params"],
        answer_kind=obj.get("answer_kind") or default_kind(obj.get("output_type", "")),
        natural_lang_solution=obj["natural_lang_solution"],
        target_paper_module=obj.get("target_paper_module", ""), core_math_concept=obj.get("core_math_concept", ""),
        output_type=obj.get("output_type", ""), param_definition=obj.get("param_definition", []),
        param_generation_rule=obj.get("param_generation_rule", []), validation_rule=obj.get("validation_rule", []),
        small_case_check=SmallCaseCheck(scc["code"], _cases(scc["params"], obj["params"])[0]) if scc else None,
        paper_id=obj.get("paper_id"), theorem=obj.get("theorem"), msc=list(obj.get("msc", [])),
        version=obj.get("version", 1), raw=dict(obj), notes=notes,
    )  # fmt: skip


def parse_templates(data: Any) -> list[Template]:
    """A JSON list of templates (or one template object); problems of all of them in one ``TemplateError``."""
    items = data if isinstance(data, list) else [data]
    if not items:
        raise TemplateError(["the templates file holds an empty list"])
    out: list[Template] = []
    problems: list[str] = []
    seen: set[str] = set()
    for i, obj in enumerate(items):
        label = f"template {i + 1}" + (f" ({obj['template_id']})" if isinstance(obj, dict)
                                       and isinstance(obj.get("template_id"), str) else "")  # fmt: skip
        try:
            t = parse_template(obj)
        except TemplateError as exc:
            problems += [f"{label}: {p}" for p in exc.problems]
            continue
        if t.template_id in seen:
            problems.append(f"{label}: template_id {t.template_id!r} is used twice")
        seen.add(t.template_id)
        out.append(t)
    if problems:
        raise TemplateError(problems)
    return out


def load_templates(path: str | Path) -> list[Template]:
    """Read and check a templates file (a JSON list of template objects)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TemplateError([f"{path}: no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError([f"{path}: cannot be read ({exc})"]) from None
    except json.JSONDecodeError as exc:
        raise TemplateError([f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"]) from None
    return parse_templates(data)
