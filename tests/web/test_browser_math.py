"""Mathematics as written, in a real browser: bare align, cases and pmatrix environments typeset as displayed
formulas with their rows, LaTeX that does not typeset shows KaTeX's error next to its source, saving names the
fields that hold such LaTeX, and subquestion texts and rationales have a live preview like the statement."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.browser import add_user, log_in

pytestmark = pytest.mark.browser

AUTHOR, PASSWORD = "author.math@example.org", "author-math-password"
STATEMENT = """\
Show that
\\begin{align}
a &= b + c \\\\
c &= d
\\end{align}
where
\\begin{cases}
1 & n > 0 \\\\
0 & n \\le 0
\\end{cases}
and
\\begin{pmatrix}
1 & 2 \\\\
3 & 4
\\end{pmatrix}
is invertible. Broken: $\\frac{1}{$ here."""
SUB_TEXT = "What is $\\det \\begin{bmatrix} 2 & 0 \\\\ 0 & 3 \\end{bmatrix}$?"
SUB_RATIONALE = "Multiply the diagonal: $\\sqrt{6$."
SECOND_SUB_TEXT = "Is $\\begin{vmatrix} 1 & 0 \\\\ 0 & 1 \\end{vmatrix} = 1$?"


def _tex(locator: Any) -> list[str]:
    """The TeX source KaTeX recorded in each formula's MathML annotation."""
    return locator.locator('annotation[encoding="application/x-tex"]').all_text_contents()


def test_environments_typeset_errors_show_in_place_and_saving_warns(page: Any, platform: Any,
                                                                    browser_log: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    add_user(platform, AUTHOR, PASSWORD)
    log_in(page, AUTHOR, PASSWORD)
    page.goto("/questions/new")
    page.get_by_test_id("question-title").fill("Aligned sums")
    page.get_by_test_id("question-statement").fill(STATEMENT)
    preview = page.get_by_test_id("statement-preview")
    expect(preview.locator(".katex-display")).to_have_count(3)
    expect(preview.get_by_test_id("math-error")).to_be_visible()

    rows = page.get_by_test_id("sub-row")
    rows.nth(0).get_by_test_id("sub-text").fill(SUB_TEXT)
    rows.nth(0).get_by_test_id("sub-answer").fill("6")
    rows.nth(0).get_by_test_id("sub-rationale").fill(SUB_RATIONALE)
    expect(rows.nth(0).get_by_test_id("sub-text-preview").locator(".katex")).to_have_count(1)
    sub_tex = _tex(rows.nth(0).get_by_test_id("sub-text-preview"))
    assert sub_tex == ["\\det \\begin{bmatrix} 2 & 0 \\\\ 0 & 3 \\end{bmatrix}"]
    rationale_error = rows.nth(0).get_by_test_id("sub-rationale-preview").get_by_test_id("math-error")
    expect(rationale_error).to_be_visible()
    expect(rationale_error).to_contain_text("KaTeX parse error")
    page.get_by_test_id("add-subquestion").click()
    rows.nth(1).get_by_test_id("sub-text").fill(SECOND_SUB_TEXT)  # a row added in the page has its preview too
    rows.nth(1).get_by_test_id("sub-answer").fill("yes")
    rows.nth(1).get_by_test_id("sub-kind").select_option("boolean")
    expect(rows.nth(1).get_by_test_id("sub-text-preview").locator(".katex")).to_have_count(1)
    browser_log.snap(page, "editor-with-previews")

    page.get_by_test_id("question-save").click()
    page.wait_for_url("**/questions/aligned-sums")
    warning = page.get_by_test_id("latex-warning")
    expect(warning).to_have_text("Saved. The LaTeX in Statement, Subquestion 1 rationale does not typeset: "
                                 "each error is shown in red next to its source.")  # fmt: skip

    statement = page.get_by_test_id("question-statement")
    displays = statement.locator(".katex-display")
    expect(displays).to_have_count(3)
    assert _tex(displays) == [
        "\\begin{align}\na &= b + c \\\\\nc &= d\n\\end{align}",
        "\\begin{cases}\n1 & n > 0 \\\\\n0 & n \\le 0\n\\end{cases}",
        "\\begin{pmatrix}\n1 & 2 \\\\\n3 & 4\n\\end{pmatrix}",
    ]
    # the rows are typeset as rows: the align's two equations, the matrix's two rows in MathML
    expect(displays.nth(0).locator("mtable > mtr")).to_have_count(2)
    expect(displays.nth(2).locator("mtable > mtr")).to_have_count(2)
    error = statement.locator(".math-error")
    expect(error.locator(".math-source")).to_have_text("\\frac{1}{")
    expect(error.get_by_test_id("math-error")).to_be_visible()
    expect(error.get_by_test_id("math-error")).to_contain_text("KaTeX parse error")
    expect(page.get_by_test_id("subquestion-rationale").get_by_test_id("math-error")).to_be_visible()
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        browser_log.snap(page, f"question-math-{width}")

    page.get_by_test_id("edit-question").click()  # mended, the next save says nothing about LaTeX
    page.get_by_test_id("question-statement").fill(STATEMENT.replace("$\\frac{1}{$", "$\\frac{1}{2}$"))
    page.get_by_test_id("sub-rationale").first.fill("Multiply the diagonal: $\\sqrt{36} = 6$.")
    page.get_by_test_id("question-save").click()
    page.wait_for_url("**/questions/aligned-sums")
    expect(page.get_by_test_id("question-version")).to_have_text("2")
    expect(page.get_by_test_id("question-statement").locator(".katex-display")).to_have_count(3)
    expect(page.get_by_test_id("latex-warning")).to_have_count(0)
    expect(page.locator(".math-error")).to_have_count(0)
