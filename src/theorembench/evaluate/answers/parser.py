"""A small safe parser: LaTeX or plain-text mathematics into sympy objects.

Nothing in an answer is ever run as Python: the text is cut into whitelisted tokens and a
recursive-descent parser builds sympy objects from them (no ``sympify``, ``parse_expr`` or
``eval``; function and constant names come from fixed tables). Numbers that would grow too
large are refused *before* they are computed: a power, factorial, product or binomial whose
result would exceed ``MAX_BITS`` raises :class:`TooLarge`, and so does nesting deeper than
``MAX_DEPTH``. Decimals are read as exact rationals (``0.5`` is ``1/2``).
"""

from __future__ import annotations

import math
import re

import sympy

MAX_LITERAL_DIGITS = 300_000
MAX_BITS = 2_000_000  # about 600,000 decimal digits
MAX_DEPTH = 150
MAX_TOKENS = 50_000
MAX_IRRATIONAL_EXPONENT = 10_000


class ParseError(ValueError):
    """The text is not a formula this parser reads."""


class TooLarge(ValueError):
    """The formula would take too much time or memory to evaluate (huge powers, deep nesting)."""


_TOKEN = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+(?![A-Za-z]))?)"
    r"|(?P<cmd>\\(?:[A-Za-z]+|[{}|]))"
    r"|(?P<word>[A-Za-z]+)"
    r"|(?P<op>\*\*|[-+*/^!()\[\]{}|_=,])"
)

_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega", "Gamma",
    "Delta", "Theta", "Lambda", "Xi", "Sigma", "Phi", "Psi", "Omega",
}  # fmt: skip
_FUNCTIONS = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec, "csc": sympy.csc,
    "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan, "sinh": sympy.sinh, "cosh": sympy.cosh,
    "tanh": sympy.tanh, "exp": sympy.exp, "ln": sympy.log, "log": sympy.log, "sqrt": sympy.sqrt, "coth": sympy.coth,
    "arccot": sympy.acot, "arcsec": sympy.asec, "arccsc": sympy.acsc, "arcsinh": sympy.asinh, "arccosh": sympy.acosh,
    "arctanh": sympy.atanh, "sech": sympy.sech, "csch": sympy.csch,
}  # fmt: skip
# Greek letters that are functions when an argument in parentheses follows: \zeta(2), \Gamma(1/2)
_GREEK_FUNCTIONS = ("zeta", "Gamma")
_CLOSERS = {"rfloor": sympy.floor, "rceil": sympy.ceiling}
_OPENERS = {"lfloor": "rfloor", "lceil": "rceil"}
# English words that are never a product of variables in an answer ("5 or 6", "x and y")
_STOPWORDS = {"or", "and", "is", "if", "the", "not", "for", "are", "but", "all", "any", "was", "to", "of", "be", "mod",
              "yes", "no", "so", "it", "has", "can"}  # fmt: skip
_CONSTANTS = {"pi": sympy.pi, "infty": sympy.oo, "infinity": sympy.oo, "inf": sympy.oo, "oo": sympy.oo, "e": sympy.E,
              "i": sympy.I}  # fmt: skip
_CLOSE = {"(": ")", "[": "]", "{": "}"}


def tokenize(text: str) -> list[tuple[str, str]]:
    """The (kind, text) tokens of ``text``; any character outside the whitelist is a :class:`ParseError`."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ParseError(f"unexpected character {text[pos]!r}")
        pos = m.end()
        if m.lastgroup != "ws":
            tokens.append((m.lastgroup or "", m.group()))
            if len(tokens) > MAX_TOKENS:
                raise TooLarge("formula too long")
    return tokens


def _bits(value: sympy.Basic) -> int:
    """The bit size of an exact rational (numerator or denominator, whichever is larger)."""
    p, q = value.as_numer_denom() if not value.is_Integer else (value, 1)
    return max(abs(int(p)).bit_length(), abs(int(q)).bit_length())


def power(base: sympy.Basic, exp: sympy.Basic) -> sympy.Basic:
    """``base ** exp``, refused when the exact result would be too large to compute."""
    if base.is_number and exp.is_Rational and base not in (sympy.S.Zero, sympy.S.One, sympy.S.NegativeOne):
        if base.is_Rational:
            if abs(exp) * _bits(base) > MAX_BITS:
                raise TooLarge("power too large to evaluate")
            if not exp.is_Integer and _bits(base) > 20_000:
                raise TooLarge("root of a huge number")
        elif abs(exp) > MAX_IRRATIONAL_EXPONENT:
            raise TooLarge("power too large to evaluate")
    if exp.is_number and exp.is_Rational is False and base.is_number and abs(exp.evalf(15)) > 10**6:
        raise TooLarge("power too large to evaluate")
    return sympy.Pow(base, exp)


def factorial(n: sympy.Basic) -> sympy.Basic:
    """``n!``, refused when ``n`` is an integer whose factorial would be too large."""
    if n.is_Integer and n > 2:
        if n > 10**9 or math.lgamma(int(n) + 1) / math.log(2) > MAX_BITS:
            raise TooLarge("factorial too large to evaluate")
    elif n.is_number and n.is_Rational is False and abs(n.evalf(15)) > 10**5:
        raise TooLarge("factorial too large to evaluate")
    return sympy.factorial(n)


def binomial(n: sympy.Basic, k: sympy.Basic) -> sympy.Basic:
    """``binomial(n, k)``, refused when the integer result would be too large."""
    if n.is_Integer and k.is_Integer and 0 <= k <= n:
        m = min(int(k), int(n - k))
        if m * max(1, int(n).bit_length()) > MAX_BITS:
            raise TooLarge("binomial too large to evaluate")
    elif n.is_Integer and abs(n) > 10**9:
        raise TooLarge("binomial too large to evaluate")
    return sympy.binomial(n, k)


def special(name: str, arg: sympy.Basic) -> sympy.Basic:
    """``zeta(arg)`` or ``Gamma(arg)``, refused where an exact value would be huge (zeta(10^6), Gamma(10^9))."""
    if arg.is_number and (not arg.is_finite or (arg.is_real and abs(arg) > 10**9)):
        raise TooLarge(f"{name} argument too large")
    if name == "zeta":
        if arg.is_Integer and abs(arg) > 400:
            raise TooLarge("zeta argument too large")
        return sympy.zeta(arg)
    if arg.is_Integer and arg > 0:
        return factorial(arg - 1)
    return sympy.gamma(arg)


def multiply(a: sympy.Basic, b: sympy.Basic) -> sympy.Basic:
    if a.is_Rational and b.is_Rational and _bits(a) + _bits(b) > MAX_BITS:
        raise TooLarge("product too large to evaluate")
    return a * b


def divide(a: sympy.Basic, b: sympy.Basic) -> sympy.Basic:
    if a.is_Rational and b.is_Rational and _bits(a) + _bits(b) > MAX_BITS:
        raise TooLarge("quotient too large to evaluate")
    if b.is_zero:
        raise ParseError("division by zero")
    return a / b


def number(text: str) -> sympy.Rational:
    """An exact number from a digit string (decimals and ``1.5e3`` exactly)."""
    mantissa, _, exponent = text.lower().partition("e")
    if len(mantissa) > MAX_LITERAL_DIGITS:
        raise TooLarge("number too long")
    whole, _, frac = mantissa.partition(".")
    value = sympy.Rational(int(whole + frac or "0"), 10 ** len(frac))
    if exponent:
        shift = int(exponent)
        if abs(shift) > MAX_LITERAL_DIGITS:
            raise TooLarge("number too large")
        value = value * sympy.Rational(10) ** shift
    return value


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.depth = 0

    # -- token helpers
    def peek(self, offset: int = 0) -> tuple[str, str]:
        i = self.pos + offset
        return self.tokens[i] if i < len(self.tokens) else ("end", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.pos += 1
        return tok

    def expect(self, text: str) -> None:
        if self.take()[1] != text:
            raise ParseError(f"expected {text!r}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise TooLarge("formula nested too deeply")

    # -- grammar
    def parse(self) -> sympy.Basic:
        value = self.sum()
        if self.peek()[0] != "end":
            raise ParseError(f"unexpected {self.peek()[1][:30]!r}")
        return value

    def sum(self) -> sympy.Basic:
        self.enter()
        value = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        self.depth -= 1
        return value

    def _starts_factor(self) -> bool:
        kind, text = self.peek()
        if kind in ("num", "word"):
            return True
        if kind == "cmd":
            return text not in ("\\}", "\\|", "\\degree") and text[1:] not in _CLOSERS
        return text in ("(", "[", "{")

    def term(self) -> sympy.Basic:
        value = self.unary()
        while True:
            kind, text = self.peek()
            if text in ("*", "/"):
                self.take()
                rhs = self.unary()
                value = multiply(value, rhs) if text == "*" else divide(value, rhs)
            elif self._starts_factor():
                if kind == "num" and self.tokens[self.pos - 1][0] == "num":
                    raise ParseError("two numbers side by side")
                value = multiply(value, self.power())
            else:
                return value

    def unary(self) -> sympy.Basic:
        if self.peek()[1] in ("+", "-"):
            self.enter()
            sign = self.take()[1]
            value = self.unary()
            self.depth -= 1
            return -value if sign == "-" else value
        return self.power()

    def power(self) -> sympy.Basic:
        base = self.postfix()
        if self.peek()[1] in ("^", "**"):
            self.take()
            self.enter()
            exp = self.group() if self.peek()[1] == "{" else self.unary()
            self.depth -= 1
            return power(base, exp)
        return base

    def postfix(self) -> sympy.Basic:
        value = self.primary()
        while self.peek()[1] in ("!", "\\degree"):
            if self.take()[1] == "!":
                value = factorial(value)
            else:  # 30^\circ inside a formula: degrees as radians
                value = value * sympy.pi / 180
        return value

    def group(self) -> sympy.Basic:
        """A braced ``{...}`` argument, or a single digit, letter or command (``\\frac12``, ``\\sqrt x``)."""
        kind, text = self.peek()
        if text == "{":
            self.take()
            value = self.sum()
            self.expect("}")
            return value
        if kind == "num" and len(text) > 1 and text.isdigit():
            self.tokens[self.pos] = ("num", text[1:])
            return sympy.Integer(int(text[0]))
        return self.primary()

    def primary(self) -> sympy.Basic:
        kind, text = self.take()
        if kind == "num":
            return number(text)
        if text in _CLOSE:
            value = self.sum()
            self.expect(_CLOSE[text])
            return value
        if text == "|":
            value = self.sum()
            self.expect("|")
            return sympy.Abs(value)
        if kind == "cmd":
            return self.command(text[1:])
        if kind == "word":
            return self.word(text)
        raise ParseError(f"unexpected {text[:30] or 'end of formula'!r}")

    def argument(self) -> sympy.Basic:
        """A function's argument: parenthesised, braced, or the next power (``\\sin x``, ``\\ln 2``)."""
        if self.peek()[1] in ("(", "{", "["):
            return self.primary()
        return self.power()

    def command(self, name: str) -> sympy.Basic:
        if name == "frac":
            return divide(self.group(), self.group())
        if name == "binom":
            return binomial(self.group(), self.group())
        if name == "sqrt":
            index = None
            if self.peek()[1] == "[":
                self.take()
                index = self.sum()
                self.expect("]")
            radicand = self.group()
            return power(radicand, sympy.Rational(1, 2) if index is None else 1 / index)
        if name == "log" and self.peek()[1] == "_":
            self.take()
            base = self.group()
            return sympy.log(self.argument(), base)
        if name in _FUNCTIONS:
            return self.call(name)
        if name in _GREEK_FUNCTIONS and self.peek()[1] == "(":
            return special(name, self.primary())
        if name in _OPENERS:
            value = self.sum()
            self.expect("\\" + _OPENERS[name])
            return _CLOSERS[_OPENERS[name]](value)
        if name in ("gcd", "lcm"):
            return self.gcd_lcm(name)
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        if name in _GREEK:
            return self.subscripted(name)
        raise ParseError(f"unknown command \\{name[:30]}")

    def call(self, name: str) -> sympy.Basic:
        exp = None
        if self.peek()[1] in ("^", "**"):  # \sin^2 x
            self.take()
            exp = self.group()
        value = self._apply(name, self.argument())
        return value if exp is None else power(value, exp)

    def _apply(self, name: str, arg: sympy.Basic) -> sympy.Basic:
        if name == "sqrt":
            return power(arg, sympy.Rational(1, 2))
        if name == "exp":
            return power(sympy.E, arg)
        return _FUNCTIONS[name](arg)

    def gcd_lcm(self, name: str) -> sympy.Basic:
        """``gcd(a, b, ...)`` or ``lcm(...)`` of integers (anything else is not read)."""
        self.expect("(")
        args = [self.sum()]
        while self.peek()[1] == ",":
            self.take()
            args.append(self.sum())
        self.expect(")")
        if not all(a.is_Integer for a in args) or any(_bits(a) > 10_000 for a in args):
            raise ParseError(f"{name} of non-integers")
        fold = sympy.igcd if name == "gcd" else sympy.ilcm
        value = args[0]
        for a in args[1:]:
            value = sympy.Integer(fold(int(value), int(a)))
        return value

    def word(self, text: str) -> sympy.Basic:
        if text.lower() in _STOPWORDS:
            raise ParseError(f"a word, not a formula: {text!r}")
        if text in ("gcd", "lcm") and self.peek()[1] == "(":
            return self.gcd_lcm(text)
        if text in _FUNCTIONS and self.peek()[1] in ("(", "{"):
            return self.call(text)
        if text in ("pi", "oo", "inf", "infty", "infinity"):
            return _CONSTANTS[text]
        if text == "binom" and self.peek()[1] == "(":
            self.take()
            n = self.sum()
            self.expect(",")
            k = self.sum()
            self.expect(")")
            return binomial(n, k)
        if len(text) > 3:
            raise ParseError(f"unknown word {text[:30]!r}")
        value: sympy.Basic = sympy.S.One
        for i, letter in enumerate(text):
            value = value * (self.subscripted(letter) if i == len(text) - 1 else _letter(letter))
        return value

    def subscripted(self, name: str) -> sympy.Basic:
        if self.peek()[1] != "_":
            return _letter(name)
        self.take()
        kind, text = self.take()
        if text == "{":
            parts = []
            while self.peek()[1] not in ("}", ""):
                parts.append(self.take()[1])
            self.expect("}")
            text = "".join(parts)
        if not re.fullmatch(r"[A-Za-z0-9,+\-\\]{1,30}", text):
            raise ParseError("unreadable subscript")
        return sympy.Symbol(f"{name}_{text}")


def _letter(name: str) -> sympy.Basic:
    if name in ("e", "i"):
        return _CONSTANTS[name]
    return sympy.Symbol(name)


def parse_math(text: str) -> sympy.Basic:
    """The sympy value of a normalised formula; :class:`ParseError` or :class:`TooLarge` when it cannot be had."""
    tokens = tokenize(text)
    if not tokens:
        raise ParseError("empty answer")
    return _Parser(tokens).parse()
