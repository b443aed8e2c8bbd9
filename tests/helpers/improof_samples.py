"""One small IMProofBench problem and the scripted `submit` tool call, shared by the harness, job and evaluation tests.

The problem's prompts carry markers (MAIN-Q, SUB-ONE, SUB-TWO) that the fake server's rules match.
"""

from __future__ import annotations

ODD_SUMS_ID = "odd-sums"


def odd_sums_yaml(*, author: str | None = None, status: str | None = None) -> str:
    """A one-problem file: a main question and two integer subquestions (answers 9 and 100, the second worth 2)."""
    lines = [
        f"- id: {ODD_SUMS_ID}",
        "  title: Sums of odd numbers",
        '  statement: "MAIN-Q: prove that the sum of the first $n$ odd numbers is $n^2$."',
        "  solution: Induction on $n$.",
        "  difficulty: {background: 1, reasoning: 1, insight: 1, compute: 1}",
        *([f"  author: {author}"] if author is not None else []),
        *([f"  status: {status}"] if status is not None else []),
        "  subquestions:",
        '    - text: "SUB-ONE: what is the sum of the first 3 odd numbers?"',
        '      answer: "9"',
        "      kind: integer",
        '    - text: "SUB-TWO: what is the sum of the first 10 odd numbers?"',
        '      answer: "100"',
        "      kind: integer",
        "      points: 2",
    ]
    return "\n".join(lines) + "\n"


def submit(answer: str) -> dict:
    """A scripted reply that calls the `submit` tool with ``answer``."""
    return {"tool_calls": [{"name": "submit", "arguments": {"answer": answer}}]}
