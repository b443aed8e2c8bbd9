"""The prompts of the IMProofBench harness, after the structure of the paper's App. H and I.1 (own wording).

Agentic mode: the first user message explains the benchmark, the staged conversation, the tools
on offer, the token budgets and the answer format, then gives the problem statement (never a
subquestion). Each later stage opens with one subquestion; a short status note after every turn
that did not submit gives the stage's token usage. Single-turn mode (App. I.1): the statement
alone, then each subquestion asking for a ``\\boxed{}`` answer.

This is the ``ours`` wording (the default); ``wording = "paper"`` takes App. H's point by point, with the
paper's tool names (:mod:`prompts_paper`).

Changing any text here changes :data:`PROMPT_VERSION`'s digest, and so the harness's pipeline
name: stored turns of other prompts are never replayed into these.
"""

from __future__ import annotations

from collections.abc import Sequence

from theorembench.methods.improof import prompts_paper

PROMPT_VERSION = "improof-prompts-1"

TOOL_LINES = {
    "python": "`python`: runs a self-contained Python script (NumPy, SciPy, SymPy and the usual scientific "
              "packages); nothing is kept between runs except files, and only what you print is shown",
    "bash": "`bash`: runs a shell command in the same isolated machine (files you write stay for this problem)",
    "sage": "`sage`: runs a self-contained SageMath script",
    "search": "`search`: full-text search over a local library of mathematical papers (titles, abstracts, "
              "main theorems)",
    "web_search": "`web_search`: searches the web for definitions, theorems and recent literature",
}

MAIN_AGENTIC = """\
# About this evaluation
This conversation is part of IMProofBench, a benchmark of research-level mathematics. A problem has \
one **main question**, answered by a complete proof that expert mathematicians will grade, and a few \
**subquestions** with short, unique answers (for instance a number) that a program checks.

# How the conversation goes
We go through the questions one at a time: first the main question, then subquestion 1, subquestion \
2, and so on. A question is shown only once the previous one has been answered. For each question you \
may think aloud over several turns, use the tools below, and finally register your answer with the \
`submit` tool; the conversation moves on only after `submit`. Everything you write stays in the \
conversation for the later questions, but your hidden reasoning and tool internals may not, so write \
down anything you will want to reuse.

# Tools
{tool_lines}
- `submit`: registers your final answer to the current question.
Each tool call may run for at most {timeout} and use at most {memory} of memory.

# Token budget
You have {main_tokens:,} tokens for the main question and {sub_tokens:,} tokens for each subquestion. \
Both your visible output (tool calls included) and your reasoning tokens count. After each turn you \
are told how much of the current question's budget you have used.

# Form of the main answer
The answer to the main question is a full mathematical argument in Markdown, with inline formulas in \
$...$ and displayed formulas in $$...$$. Cite references as ordinary Markdown links.

**Problem:**
{statement}

Work through the problem carefully. When your proof is complete, register it with the submit tool.\
"""

SUB_AGENTIC = """\
{previous}

**Subquestion {number}:**
{text}

- You may build on everything above and use the same tools.
- State the answer precisely and in its simplest form.
- Register it with the submit tool when you are done.\
"""

PREVIOUS = {
    "submitted": "Your answer to the previous question is registered ({used:,} of {budget:,} tokens used). "
                 "Now the next question, in the same context.",
    "limit_exceeded": "The token budget of the previous question ran out before an answer was submitted, so "
                      "nothing was registered for it. Now the next question, with a fresh budget.",
    "error": "The previous question ended without a registered answer (repeated malformed tool calls). Now "
             "the next question, with a fresh budget.",
}

STATUS = """\
Please go on with the current question; the conversation moves to the next stage only once you \
register an answer with the submit tool.
Token usage: {used:,} of {budget:,} tokens used for this stage.\
"""

RESUMED = ("(This conversation was interrupted and resumed: files written in the sandbox before the "
           "interruption are gone.)")  # fmt: skip

SUB_SINGLE_FIRST = """\
Thank you. Next come some follow-up questions whose answers are read by a program. They may restate \
the main question or ask about special cases. Put each final answer in a \\boxed{{}}, for example \
\\boxed{{Yes}}, \\boxed{{No}}, \\boxed{{172}} or \\boxed{{-13/45}}, with no further LaTeX formatting \
inside the box.

Subquestion {number}:
{text}\
"""

SUB_SINGLE_NEXT = """\
Thank you.
Subquestion {number}:
{text}\
"""

SUBMIT_DESCRIPTION = "Register your final answer to the current question (the main question or a subquestion)."
SUBMITTED = "Answer registered."


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds:g} seconds"


def _memory(mb: int) -> str:
    return f"{mb // 1024} GB" if mb % 1024 == 0 else f"{mb} MB"


def main_prompt(statement: str, *, tools: Sequence[str], main_tokens: int, sub_tokens: int, timeout_s: float,
                memory_mb: int, mode: str, wording: str = "ours") -> str:  # fmt: skip
    """The first user message: the whole frame and the statement (agentic), or the statement alone (single-turn).
    ``tools`` are the names the model is offered."""
    if mode == "single-turn":
        return statement.strip()
    if wording == "paper":
        lines = "\n".join(f"- {prompts_paper.TOOL_LINES[t]}" for t in tools if t in prompts_paper.TOOL_LINES)
        template = prompts_paper.MAIN
    else:
        lines = "\n".join(f"- {TOOL_LINES[t]}" for t in tools if t in TOOL_LINES)
        template = MAIN_AGENTIC
    return template.format(tool_lines=lines, timeout=_duration(timeout_s), memory=_memory(memory_mb),
                               main_tokens=main_tokens, sub_tokens=sub_tokens, statement=statement.strip())  # fmt: skip


def sub_prompt(number: int, text: str, *, mode: str, previous: str = "submitted", used: int = 0,
               budget: int = 0, wording: str = "ours") -> str:  # fmt: skip
    """The message that opens subquestion ``number`` (1-based); ``previous`` is the last stage's outcome (the paper's
    wording opens every subquestion alike)."""
    if mode == "single-turn":
        template = SUB_SINGLE_FIRST if number == 1 else SUB_SINGLE_NEXT
        return template.format(number=number, text=text.strip())
    if wording == "paper":
        return prompts_paper.SUB.format(number=number, text=text.strip())
    intro = PREVIOUS.get(previous, PREVIOUS["error"]).format(used=used, budget=budget)
    return SUB_AGENTIC.format(previous=intro, number=number, text=text.strip())


def status_note(used: int, budget: int, wording: str = "ours") -> str:
    """The note after a turn that did not submit: the stage's tokens used so far against its budget."""
    return (prompts_paper.STATUS if wording == "paper" else STATUS).format(used=used, budget=budget)


def duration(seconds: float) -> str:
    return _duration(seconds)


def memory(mb: int) -> str:
    return _memory(mb)


def prompt_texts() -> list[str]:
    """Every template, for the digest of the harness settings."""
    return [PROMPT_VERSION, MAIN_AGENTIC, SUB_AGENTIC, *PREVIOUS.values(), STATUS, RESUMED, SUB_SINGLE_FIRST,
            SUB_SINGLE_NEXT, SUBMIT_DESCRIPTION, SUBMITTED, *TOOL_LINES.values()]  # fmt: skip
