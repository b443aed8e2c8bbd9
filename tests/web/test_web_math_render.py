"""LaTeX as mathematicians write it, through the platform's one renderer: bare display environments keep their
rows (``\\\\``) and ``&``, math spans keep every backslash, and the nh3 sanitising is as strict as before."""

from __future__ import annotations

import re

import pytest

from theorembench.web.render import render_markdown

ALIGN = "Then\n\\begin{align}\na &= b \\\\\nc &= d\n\\end{align}\nfollows."


def test_a_bare_align_keeps_its_rows_and_interrupts_the_paragraph():
    assert render_markdown(ALIGN) == (
        "<p>Then</p>\n"
        '<div data-math="display">\\begin{align}\na &amp;= b \\\\\nc &amp;= d\n\\end{align}</div>\n'
        "<p>follows.</p>\n"
    )


@pytest.mark.parametrize("name", ["align*", "gather", "gather*", "equation", "alignat", "split"])
def test_other_display_environments_are_one_displayed_formula(name):
    text = f"\\begin{{{name}}}x_1 &= y_2 \\\\ *z* \\end{{{name}}}"
    assert render_markdown(text) == f'<div data-math="display">{text.replace("&", "&amp;")}</div>\n'


def test_cases_inside_a_line_stays_inline_and_keeps_its_backslashes():
    text = (
        "Let $f(x) = \\begin{cases} 1 & x > 0 \\\\ 0 & \\text{else} \\end{cases}$ and "
        "g = \\begin{cases} a \\\\ b \\end{cases} here."
    )
    assert render_markdown(text) == (
        '<p>Let <span data-math="inline">f(x) = \\begin{cases} 1 &amp; x &gt; 0 \\\\ 0 &amp; \\text{else} '
        '\\end{cases}</span> and g = <span data-math="inline">\\begin{cases} a \\\\ b \\end{cases}</span> here.</p>\n'
    )


@pytest.mark.parametrize("name", ["matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix", "smallmatrix"])
def test_matrices_keep_rows_and_columns(name):
    block = f"\\begin{{{name}}}\n1 & 2 \\\\\n3 & 4\n\\end{{{name}}}"
    assert render_markdown(block) == (
        f'<div data-math="display">\\begin{{{name}}}\n1 &amp; 2 \\\\\n3 &amp; 4\n\\end{{{name}}}</div>\n'
    )
    assert render_markdown(f"so $A = \\begin{{{name}}} a & b \\\\ c & d \\end{{{name}}}$.") == (
        f'<p>so <span data-math="inline">A = \\begin{{{name}}} a &amp; b \\\\ c &amp; d \\end{{{name}}}</span>.</p>\n'
    )


def test_an_align_written_inside_dollars_is_marked_displayed():
    # KaTeX refuses {align} outside display mode, so the span asks for display
    assert render_markdown("$\\begin{align} a \\\\ b \\end{align}$") == (
        '<p><span data-math="display">\\begin{align} a \\\\ b \\end{align}</span></p>\n'
    )
    assert render_markdown("$\\begin{aligned} a \\\\ b \\end{aligned}$") == (
        '<p><span data-math="inline">\\begin{aligned} a \\\\ b \\end{aligned}</span></p>\n'
    )


def test_nested_environments_close_at_the_matching_end():
    text = (
        "\\begin{align}\nf &= \\begin{cases} 1 \\\\ 2 \\end{cases} \\\\\n\\begin{align} &= 3 \\end{align}\n\\end{align}"
    )
    assert render_markdown(text) == f'<div data-math="display">{text.replace("&", "&amp;")}</div>\n'


def test_math_spans_keep_every_backslash_and_markdown_characters():
    assert render_markdown("$a \\\\ b \\_ c * d * \\{e\\}$") == (
        '<p><span data-math="inline">a \\\\ b \\_ c * d * \\{e\\}</span></p>\n'
    )
    assert render_markdown("$$\n\\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}\n$$") == (
        '<div data-math="display">\n\\begin{bmatrix} 1 &amp; 0 \\\\ 0 &amp; 1 \\end{bmatrix}\n</div>\n'
    )
    assert render_markdown("\\[ x \\\\ y \\]") == '<div data-math="display"> x \\\\ y </div>\n'


def test_environments_in_a_quote_and_a_list_lose_only_the_markdown_markers():
    assert render_markdown("> \\begin{align}\n> a &= 1 \\\\\n> b &= 2\n> \\end{align}") == (
        '<blockquote>\n<div data-math="display">\\begin{align}\na &amp;= 1 \\\\\nb &amp;= 2\n\\end{align}</div>\n'
        "</blockquote>\n"
    )
    assert render_markdown("- item\n\n  \\begin{gather}\n  x \\\\\n  y\n  \\end{gather}") == (
        '<ul>\n<li>\n<p>item</p>\n<div data-math="display">\\begin{gather}\nx \\\\\ny\n\\end{gather}</div>\n'
        "</li>\n</ul>\n"
    )


def test_what_is_not_a_closed_math_environment_stays_markdown():
    assert render_markdown("\\begin{align} a \\\\ b") == "<p>\\begin{align} a \\ b</p>\n"  # never closed
    assert render_markdown("\\begin{theorem} *x* \\end{theorem}") == (
        "<p>\\begin{theorem} <em>x</em> \\end{theorem}</p>\n"
    )
    assert render_markdown("\\\\begin{align} x \\end{align}") == "<p>\\begin{align} x \\end{align}</p>\n"  # escaped
    assert render_markdown("`\\begin{align} a \\\\ b \\end{align}`") == (
        "<p><code>\\begin{align} a \\\\ b \\end{align}</code></p>\n"
    )
    assert render_markdown("    \\begin{align} a \\end{align}") == (
        "<pre><code>\\begin{align} a \\end{align}\n</code></pre>\n"
    )


def test_many_unclosed_environments_stay_text():
    text = "\\begin{align} x\n" * 3000
    rendered = render_markdown(text)
    assert "data-math" not in rendered
    assert rendered.count("\\begin{align} x") == 3000


@pytest.mark.parametrize("text", [
    "\\begin{align}<script>alert(1)</script>\\end{align}",
    "\\begin{align}\n</div><img src=x onerror=alert(1)>\n\\end{align}",
    "x \\begin{pmatrix}</span><a href=\"javascript:alert(1)\">y</a>\\end{pmatrix}",
    "$\\begin{align}\"><svg onload=alert(1)>\\end{align}$",
    "\\begin{cases} [z](javascript:alert(1)) \\end{cases} [w](javascript:alert(2))",
])  # fmt: skip
def test_environments_cannot_carry_live_html(text):
    rendered = render_markdown(text)
    tags = re.findall(r"<(/?[a-z]+)([^>]*)>", rendered)
    assert {name.lstrip("/") for name, _ in tags} <= {"p", "div", "span"}
    assert {attributes for _, attributes in tags} <= {"", ' data-math="display"', ' data-math="inline"'}
    assert rendered.count("data-math") == 1
