"""What may follow a number without changing it: a unit (``5 \\text{ cm}``), a percent sign, a currency sign.

``split_trailers`` takes them off the end of an answer and says what they were, so the
comparison can decide: a unit on one side only is dropped, two different units are not
compared, and a percent is a factor 1/100 with its own rules (see ``compare``). Words that
change a number ("thousand", "or more", "approximately") are never taken for units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNIT_WORDS = {
    "mm", "cm", "dm", "m", "km", "nm", "in", "inch", "inches", "ft", "foot", "feet", "yd", "yard", "yards", "mi",
    "mile", "miles", "meter", "meters", "metre", "metres", "centimeter", "centimeters", "centimetre",
    "centimetres", "millimeter", "millimeters", "kilometer", "kilometers", "kilometre", "kilometres", "l", "ml",
    "liter", "liters", "litre", "litres", "gallon", "gallons", "cup", "cups", "unit", "units", "sq", "square",
    "cubic", "cc", "g", "kg", "mg", "gram", "grams", "kilogram", "kilograms", "lb", "lbs", "pound", "pounds", "oz",
    "ounce", "ounces", "s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h", "hr",
    "hrs", "hour", "hours", "day", "days", "week", "weeks", "month", "months", "year", "years", "mph", "kph",
    "km/h", "m/s", "kmh", "per", "dollar", "dollars", "cent", "cents", "euro", "euros", "usd", "deg", "degree",
    "degrees", "rad", "radian", "radians", "j", "kj", "n", "w", "kw", "v", "a", "ma", "k", "hz", "pa", "kpa",
    "mol", "ev", "cal", "kcal", "c", "f",
}  # fmt: skip
# nouns a count may carry ("12 \\text{ ways}"): they name what is counted, never a multiple of it
_COUNT_NOUNS = {
    "ways", "people", "persons", "students", "handshakes", "games", "matches", "points", "solutions", "roots",
    "integers", "numbers", "digits", "triangles", "squares", "rectangles", "edges", "vertices", "faces", "steps",
    "moves", "terms", "elements", "subsets", "paths", "outcomes", "arrangements", "permutations", "colorings",
    "colourings", "sequences", "words", "strings", "trees", "graphs", "pieces", "coins", "marbles", "balls",
    "cards", "cookies", "candies", "apples", "books", "boxes", "questions", "tiles", "lines", "regions",
    "diagonals", "divisors", "factors", "primes", "zeros", "zeroes", "values",
}  # fmt: skip
_WRAPPED = re.compile(
    r"(?:\\[,;:! ]|~|\s)*\\(?:text|mathrm|mbox|textnormal|textrm|rm|textup)\s*\{\s*([^{}]{1,40})\}"
    r"(\s*\^\s*\{?\s*[23]\s*\}?)?\s*$"
)
_PLAIN = re.compile(r"(?<=[\d}).])\s*((?:[A-Za-z]{2,12})(?:\s*/\s*[A-Za-z]{1,6})?)(\s*\^\s*\{?\s*[23]\s*\}?)?\s*$")
_PERCENT = re.compile(r"(?:\\[,;:! ]|\s)*(?:\\%|%|\\text\s*\{\s*(?:percent|pct)\s*\}|\bpercent\b|\bpct\b)\s*$")
_DEGREE = re.compile(r"(?:\s*\^\s*\{\s*\\circ\s*\}|\s*\^\s*\\circ|\s*\\degree|\u00b0)\s*$")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:[.,]\d*)?|\.\d+|\\frac\s*\{\d+\}\s*\{\d+\}|\d+\s*/\s*\d+)")
_CURRENCY = re.compile(r"^\s*(?:\\\$|\u20ac|\u00a3|\\euro\b)\s*|\s*(?:\\\$|\u20ac|\u00a3)\s*$")


# one spelling per unit, so "125 miles" and "125 mi" are the same and "5 cm" and "5 m" are not
_SAME_UNIT = {"meter": "m", "meters": "m", "metre": "m", "metres": "m", "centimeter": "cm", "centimeters": "cm",
              "centimetre": "cm", "centimetres": "cm", "millimeter": "mm", "millimeters": "mm", "kilometer": "km",
              "kilometers": "km", "kilometre": "km", "kilometres": "km", "inch": "in", "inches": "in", "foot": "ft",
              "feet": "ft", "yard": "yd", "yards": "yd", "mile": "mi", "miles": "mi", "second": "s", "seconds": "s",
              "sec": "s", "secs": "s", "minute": "min", "minutes": "min", "mins": "min", "hour": "h", "hours": "h",
              "hr": "h", "hrs": "h", "day": "days", "week": "weeks", "month": "months", "year": "years",
              "gram": "g", "grams": "g", "kilogram": "kg", "kilograms": "kg", "pound": "lb", "pounds": "lb",
              "lbs": "lb", "ounce": "oz", "ounces": "oz", "liter": "l", "liters": "l", "litre": "l", "litres": "l",
              "gallon": "gallons", "cup": "cups", "unit": "units", "dollar": "dollar", "dollars": "dollar",
              "usd": "dollar", "cent": "cents", "euro": "euros", "degree": "deg", "degrees": "deg", "radian": "rad",
              "radians": "rad", "kph": "km/h", "kmh": "km/h"}  # fmt: skip


@dataclass
class Trailers:
    """What ``split_trailers`` took off: the unit (lower case, powers kept), percent, a currency sign."""

    unit: str | None = None
    percent: bool = False
    currency: bool = False


def _unit_phrase(text: str) -> str | None:
    """The normalised unit when every word of ``text`` is a unit word ("cm", "square units", "km/h"), else None."""
    words = [w for w in re.split(r"[\s/]+", text.strip().lower().strip(".")) if w]
    if len(words) == 1 and words[0] in _COUNT_NOUNS:
        return words[0]
    if words and len(words) <= 3 and all(w in _UNIT_WORDS for w in words):
        return " ".join(_SAME_UNIT.get(w, w) for w in words)
    return None


def split_trailers(text: str) -> tuple[str, Trailers]:
    """``text`` without its trailing unit, percent sign and currency signs, and what they were."""
    found = Trailers()
    text = text.strip().rstrip(".,; ").strip()
    if len(text) > 300:  # trailers are short: scanning only the tail keeps this linear on any input
        head, tail = split_trailers(text[-300:])
        return text[:-300] + head, tail
    for _ in range(4):  # "\$15 \text{ dollars}", "15 \mbox{ cm}^2", "28 \%"
        before = text
        if m := _CURRENCY.search(text):
            text, found.currency = (text[: m.start()] + text[m.end() :]).strip(), True
        if m := _PERCENT.search(text):
            text, found.percent = text[: m.start()].rstrip(), True
        elif (m := _DEGREE.search(text)) and _NUMBER.fullmatch(text[: m.start()].strip()):  # not \sin 30^\circ
            text, found.unit = text[: m.start()].rstrip(), "deg"
        elif (m := _WRAPPED.search(text)) and m.start() > 0 and (unit := _unit_phrase(m[1])):
            text, found.unit = text[: m.start()].rstrip(), unit + ("^" + re.sub(r"\D", "", m[2]) if m[2] else "")
        elif (m := _PLAIN.search(text)) and (unit := _unit_phrase(m[1])) and len(m[1]) >= 2:
            text, found.unit = text[: m.start()].rstrip(), unit + ("^" + re.sub(r"\D", "", m[2]) if m[2] else "")
        text = text.rstrip(".,; ").strip()
        if text == before:
            break
    if found.currency and found.unit is None:
        found.unit = "dollar"
    return text, found
