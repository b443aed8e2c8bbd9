"""The one renderer of author, reviewer and model text: Markdown with raw HTML off, then sanitised.

Math (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``) is kept as escaped text in an element with a
``data-math`` attribute (``inline`` or ``display``); ``static/app.js`` typesets it with KaTeX in
the browser (trust off, expansion limits on). LaTeX environments written bare (``\\begin{align}…``,
the matrices, ``cases``) are math too (web/math_env.py), so their ``\\\\`` rows survive Markdown; one
that KaTeX sets only displayed (``align``, ``gather``) is marked ``display`` even inside ``$…$``.
The HTML that markdown-it makes is then cleaned by nh3 (ammonia) with a short list of tags and
attributes, and links only to http, https and mailto.
So ``\\href{javascript:…}`` is either text or math, and never a live link.
"""

from __future__ import annotations

import html
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.texmath import texmath_plugin

from theorembench.web.math_env import math_env_plugin, needs_display

MAX_CHARS = 200_000  # longer text is refused by the routes (413) and cut here
MAX_NESTING = 20  # markdown-it stops nesting blocks and inlines deeper than this

TAGS = {"p", "br", "hr", "em", "strong", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li", "h1", "h2",
        "h3", "h4", "h5", "h6", "a", "span", "div", "table", "thead", "tbody", "tr", "th", "td"}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "span": {"data-math"}, "div": {"data-math"}, "ol": {"start"}}
SCHEMES = {"http", "https", "mailto"}
_INLINE = {"math_inline", "math_single"}
_DISPLAY = {"math_inline_double", "math_block", "math_block_label", "math_block_eqno"}


def _math_rule(display: bool):  # noqa: ANN202 - a markdown-it render rule
    def rule(self, tokens, idx, options, env) -> str:  # noqa: ANN001 - markdown-it's signature
        text = html.escape(tokens[idx].content, quote=True)
        if display and tokens[idx].block:
            return f'<div data-math="display">{text}</div>\n'
        shown = display or needs_display(tokens[idx].content)
        return f'<span data-math="{"display" if shown else "inline"}">{text}</span>'

    return rule


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False,
                                   "maxNesting": MAX_NESTING})  # fmt: skip
    md.enable(["table", "strikethrough"])
    dollarmath_plugin(md, allow_space=True, allow_digits=True, double_inline=True)
    texmath_plugin(md, delimiters="brackets")
    math_env_plugin(md)
    for name in _INLINE:
        md.add_render_rule(name, _math_rule(False))
    for name in _DISPLAY:
        md.add_render_rule(name, _math_rule(True))
    md.validateLink = _link_ok
    return md


def _link_ok(url: str) -> bool:
    """Links markdown-it may make: http(s), mailto, or relative ones (no other scheme)."""
    head = url.strip().split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].lower()
    if ":" not in head:
        return True
    return head.split(":", 1)[0] in SCHEMES


def sanitise(fragment: str) -> str:
    """Clean an HTML fragment: the tags and attributes above, links to http/https/mailto only."""
    return nh3.clean(fragment, tags=TAGS, attributes=ATTRIBUTES, url_schemes=SCHEMES,
                     link_rel="noopener noreferrer nofollow", strip_comments=True)  # fmt: skip


def render_markdown(text: str | None) -> str:
    """Markdown + LaTeX as a safe HTML fragment (empty text gives an empty fragment)."""
    if not text:
        return ""
    text = str(text)[:MAX_CHARS]
    try:
        raw = _markdown().render(text)
    except RecursionError:  # a pathological nesting: show the text, escaped
        raw = f"<pre>{html.escape(text)}</pre>"
    return sanitise(raw)
