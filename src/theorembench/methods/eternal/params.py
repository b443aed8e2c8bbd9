"""Parameter domains of a template: checking a domain, sampling from it, membership, JSON and text forms.

Domains (``params`` of a template, one per variable):

- ``{"type": "int", "min": a, "max": b}``: integers a..b;
- ``{"type": "prime", "min": a, "max": b}``: primes in a..b;
- ``{"type": "choice", "values": [...]}``: one of the listed JSON values;
- ``{"type": "rational", "num_min", "num_max", "den_min", "den_max"}``: a ``Fraction`` num/den (reduced);
- ``{"type": "tuple", "items": [domain, ...]}``: a tuple with one value from each item domain.

In JSON a rational is the string ``"p/q"`` and a tuple a list; in text a rational is ``p/q`` and a
tuple ``(a, b)``. Sampling uses the ``random.Random`` it is given, so a seed fixes every draw.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from fractions import Fraction
from typing import Any

TYPES = ("int", "prime", "choice", "rational", "tuple")
_FIELDS = {"int": ("min", "max"), "prime": ("min", "max"), "choice": ("values",),
           "rational": ("num_min", "num_max", "den_min", "den_max"), "tuple": ("items",)}  # fmt: skip
ENUMERATE_UP_TO = 200_000  # domains at most this big are listed whole; larger ones are drawn from
SIEVE_UP_TO = 2_000_000  # prime domains up to this bound are sieved; above, primes are drawn and tested
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)  # deterministic below 3.3e24


def is_prime(n: int) -> bool:
    """Miller-Rabin with fixed bases: exact below 3.3e24, a strong probable-prime test above."""
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_domain(spec: Any, where: str) -> list[str]:
    """One line per problem with the domain ``spec`` (``where`` names it, e.g. ``params.n``)."""
    if not isinstance(spec, dict):
        return [f"{where}: must be an object with a 'type'"]
    kind = spec.get("type")
    if kind not in TYPES:
        return [f"{where}.type: unknown parameter type {kind!r} (use one of {', '.join(TYPES)})"]
    problems = [f"{where}: unknown field {k!r} for type {kind}" for k in spec if k != "type" and k not in _FIELDS[kind]]
    missing = [k for k in _FIELDS[kind] if k not in spec]
    if missing:
        return problems + [f"{where}: type {kind} needs {', '.join(missing)}"]
    if kind in ("int", "prime", "rational"):
        bounds = [("min", "max")] if kind != "rational" else [("num_min", "num_max"), ("den_min", "den_max")]
        for lo, hi in bounds:
            bad = [k for k in (lo, hi) if not _is_int(spec[k])]
            problems += [f"{where}.{k}: must be an integer, got {spec[k]!r}" for k in bad]
            if not bad and spec[lo] > spec[hi]:
                problems.append(f"{where}: {lo} ({spec[lo]}) is greater than {hi} ({spec[hi]})")
        if problems:
            return problems
        if kind == "rational" and spec["den_min"] < 1:
            problems.append(f"{where}.den_min: denominators must be at least 1, got {spec['den_min']}")
        if kind == "prime" and _next_prime(max(spec["min"], 2)) > spec["max"]:
            problems.append(f"{where}: no prime between {spec['min']} and {spec['max']}")
    elif kind == "choice":
        if not isinstance(spec["values"], list) or not spec["values"]:
            problems.append(f"{where}.values: must be a non-empty list")
        elif any(v is None or isinstance(v, dict) for v in spec["values"]):
            problems.append(f"{where}.values: values must be numbers, strings, booleans or lists")
    elif kind == "tuple":
        if not isinstance(spec["items"], list) or not spec["items"]:
            problems.append(f"{where}.items: must be a non-empty list of domains")
        else:
            for i, item in enumerate(spec["items"]):
                problems += check_domain(item, f"{where}.items[{i}]")
    return problems


def _next_prime(n: int) -> int:
    while not is_prime(n):
        n += 1
    return n


def _primes_between(lo: int, hi: int) -> list[int]:
    lo = max(lo, 2)
    if hi < lo:
        return []
    sieve = bytearray([1]) * (hi + 1)
    sieve[0:2] = b"\x00\x00"
    for p in range(2, int(hi**0.5) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytearray(len(range(p * p, hi + 1, p)))
    return [p for p in range(lo, hi + 1) if sieve[p]]


def size(spec: dict) -> int | None:
    """How many distinct values the domain holds, or None when it is too large to count cheaply."""
    kind = spec["type"]
    if kind == "int":
        return spec["max"] - spec["min"] + 1
    if kind == "prime":
        return len(_primes_between(spec["min"], spec["max"])) if spec["max"] <= SIEVE_UP_TO else None
    if kind == "choice":
        return len({json.dumps(v, sort_keys=True) for v in spec["values"]})
    if kind == "rational":
        nums, dens = spec["num_max"] - spec["num_min"] + 1, spec["den_max"] - spec["den_min"] + 1
        return len(values(spec)) if nums * dens <= ENUMERATE_UP_TO else None
    total = 1
    for item in spec["items"]:
        n = size(item)
        if n is None:
            return None
        total *= n
    return total


def values(spec: dict) -> list[Any]:
    """Every value of a domain (only for domains whose ``size`` is at most ENUMERATE_UP_TO), in a fixed order."""
    kind = spec["type"]
    if kind == "int":
        return list(range(spec["min"], spec["max"] + 1))
    if kind == "prime":
        return _primes_between(spec["min"], spec["max"])
    if kind == "choice":
        seen: dict[str, Any] = {}
        for v in spec["values"]:
            seen.setdefault(json.dumps(v, sort_keys=True), v)
        return list(seen.values())
    if kind == "rational":
        fr = {Fraction(p, q) for p in range(spec["num_min"], spec["num_max"] + 1)
              for q in range(spec["den_min"], spec["den_max"] + 1)}  # fmt: skip
        return sorted(fr)
    return [tuple(combo) for combo in itertools.product(*(values(item) for item in spec["items"]))]


def sample(spec: dict, rng: random.Random) -> Any:
    """One value drawn from the domain."""
    kind = spec["type"]
    if kind == "int":
        return rng.randint(spec["min"], spec["max"])
    if kind == "prime":
        lo, hi = max(spec["min"], 2), spec["max"]
        if hi <= SIEVE_UP_TO:
            return rng.choice(_primes_between(lo, hi))
        for _ in range(10_000):
            x = rng.randint(lo, hi)
            if is_prime(x):
                return x
        p = _next_prime(rng.randint(lo, hi))
        return p if p <= hi else _next_prime(lo)
    if kind == "choice":
        return rng.choice(spec["values"])
    if kind == "rational":
        return Fraction(rng.randint(spec["num_min"], spec["num_max"]), rng.randint(spec["den_min"], spec["den_max"]))
    return tuple(sample(item, rng) for item in spec["items"])


def contains(spec: dict, value: Any) -> bool:
    """Whether ``value`` (a Python value, as ``decode`` gives it) lies in the domain."""
    kind = spec["type"]
    if kind in ("int", "prime"):
        ok = _is_int(value) and spec["min"] <= value <= spec["max"]
        return ok and (kind == "int" or is_prime(value))
    if kind == "choice":
        key = json.dumps(encode(spec, value), sort_keys=True)
        return any(json.dumps(v, sort_keys=True) == key for v in spec["values"])
    if kind == "rational":
        if not isinstance(value, Fraction):
            return False
        return _has_multiple(value, spec)
    if not isinstance(value, tuple) or len(value) != len(spec["items"]):
        return False
    return all(contains(item, v) for item, v in zip(spec["items"], value))


def _has_multiple(value: Fraction, spec: dict) -> bool:
    """Whether some k >= 1 gives num_min <= p*k <= num_max and den_min <= q*k <= den_max (value = p/q reduced)."""
    lo, hi = Fraction(1), None
    for c, a, b in ((value.denominator, spec["den_min"], spec["den_max"]),
                    (value.numerator, spec["num_min"], spec["num_max"])):  # fmt: skip
        if c == 0:
            if not a <= 0 <= b:
                return False
            continue
        k1, k2 = sorted((Fraction(a, c), Fraction(b, c)))
        lo, hi = max(lo, k1), k2 if hi is None else min(hi, k2)
    return hi is not None and math.ceil(lo) <= math.floor(hi)


def encode(spec: dict, value: Any) -> Any:
    """The JSON form of a value: a rational as "p/q", a tuple as a list."""
    kind = spec["type"]
    if kind == "rational" or isinstance(value, Fraction):
        return str(value) if isinstance(value, Fraction) else value
    if kind == "tuple" and isinstance(value, tuple | list):
        return [encode(item, v) for item, v in zip(spec["items"], value)]
    return value


def decode(spec: dict, value: Any) -> Any:
    """The Python value of a JSON form: "p/q" (or an integer) as a Fraction for a rational, a list as a tuple.

    Raises ``ValueError`` when the JSON form does not fit the domain's type.
    """
    kind = spec["type"]
    if kind == "rational":
        if _is_int(value) or isinstance(value, str):
            try:
                return Fraction(value)
            except (ValueError, ZeroDivisionError) as exc:
                raise ValueError(f"{value!r} is not a rational 'p/q'") from exc
        raise ValueError(f"{value!r} is not a rational 'p/q'")
    if kind == "tuple":
        if not isinstance(value, list | tuple) or len(value) != len(spec["items"]):
            raise ValueError(f"{value!r} is not a list of {len(spec['items'])} items")
        return tuple(decode(item, v) for item, v in zip(spec["items"], value))
    if kind in ("int", "prime") and not _is_int(value):
        raise ValueError(f"{value!r} is not an integer")
    return value


def wire(spec: dict, value: Any) -> Any:
    """The form the sandbox harness rebuilds: Fractions and tuples tagged, so the code sees the real types."""
    if isinstance(value, Fraction):
        return {"$fraction": str(value)}
    if isinstance(value, tuple):
        items = spec["items"] if spec.get("type") == "tuple" else [{}] * len(value)
        return {"$tuple": [wire(item, v) for item, v in zip(items, value)]}
    return value


def text(value: Any) -> str:
    """A value as it appears in a rendered problem: 7, 3/4, (2, a), [1, 2]."""
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(text(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(text(v) for v in value) + "]"
    return str(value)


def canonical(params_json: dict) -> str:
    """The canonical JSON of encoded parameters (sorted keys, no spaces): what instance ids hash."""
    return json.dumps(params_json, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
