"""The harness's ``paper`` wording: App. H's prompts and tool descriptions, point by point, in our own sentences.

Chosen with the harness setting ``wording = "paper"``. It keeps what App. H says and in its order:
the sections of the first message (background, how the evaluation goes, the multi-turn environment
with the tools ``python``, ``bash``, ``web_search``, ``sage_computation`` and ``submit``, the token
limits with reasoning counted, the answer format), the subquestion message that opens every later
stage the same way whatever the previous stage's outcome, the status note after each turn, and
each tool's description (independent runs, print to see output, 15 minutes and 8 GB; Sage's
preparser and examples; submit's Markdown and LaTeX advice). The paper's tool names are facts and
kept; the sentences are paraphrased, never copied (the project writes its own text), which is the
one deliberate difference from App. H.
"""

from __future__ import annotations

PAPER_TOOL_NAMES = {"python": "python", "bash": "bash", "sage": "sage_computation", "search": "web_search"}

TOOL_LINES = {
    "python": "Run self-contained experiments in an ordinary Python environment with the `python` tool",
    "bash": "Run commands with the `bash` tool inside a container (Linux with open-source mathematical software)",
    "web_search": "Look up current information, definitions, theorems or recent research with the `web_search` tool",
    "sage_computation": "Try an experiment in a fresh SageMath session with the `sage_computation` tool",
}

MAIN = """\
# Background
IMProofBench is a benchmark of mathematical reasoning for AI systems at the level of research. \
Every problem has one **main question**, whose expected answer is a long mathematical proof, and \
a few **subquestions** with short, unique answers (a natural number, say). Expert mathematicians \
(often the problem's author) and AI evaluators grade the main answer; a Python script checks the \
subquestion answers.

# How the evaluation goes
Below we evaluate your mathematical reasoning on one such problem. The conversation takes the \
questions in order (the main question, then subquestion 1, subquestion 2, ...), and at each step \
you may:
- read the current question
- think about it over several turns, using tools (see below)
- submit your answer to the current question

Throughout, you see the whole earlier conversation, with your thinking outputs and the record of \
every tool call. Your internal reasoning traces and internal tool calls are **not necessarily** \
kept, so write anything useful from them into your visible thinking.

# The multi-turn environment
The conversation runs in Inspect AI's multi-turn environment, where tools are optional. At each step \
you may:
- think aloud: analyse the problem, plan an approach, work through the steps of an argument
{tool_lines}
- Register your final answer to the current question (main or subquestion) with the `submit` tool

Each tool stops after {timeout}, may use up to {memory} of memory (RAM) and runs on ordinary 2025 hardware.

# Token limits
You may spend {main_tokens:,} tokens on the main question and {sub_tokens:,} tokens on each \
subquestion after it. Both your output tokens (tool calls included) and your reasoning tokens count. \
After each turn of the conversation you are told how many you have used.

# Form of the main answer
The main question's text follows. When you have finished reasoning, register your answer with the \
`submit` tool. It should be a detailed mathematical argument in Markdown, with LaTeX in $...$ inline \
and $$...$$ for displayed equations. Cite online sources with Markdown links, **not** with any \
internal web-referencing system.

**Problem:**
{statement}

Work through the problem step by step, and submit your final answer with the submit() tool.\
"""

SUB = """\
----

**Well done on the previous part!**
That question is finished. Please now solve the subquestion below, keeping the context of your \
earlier work:

**Subquestion {number}:**
{text}

**Instructions:**
- You may refer to your work on the earlier parts
- The same mathematical tools are available
- Submit your final answer with the submit() tool
- Give the answer precisely and in the form asked for

Please go ahead with this subquestion.\
"""

STATUS = """\
Please keep working on the current question, and register your answer with the 'submit' tool as the \
first message explains. The conversation moves on to the next stage only after you use 'submit'.

Token usage: {used:,} of {budget:,} tokens used for this stage.\
"""

_INDEPENDENT = """\
Notes:
1. Every run starts afresh: nothing is kept from one run to the next
2. Only what you print with print() is shown
3. Bare expressions (as in a notebook) show nothing
4. The script cannot read interactive input
5. A return statement alone shows nothing
6. Variables and imports are gone after each run
7. Standard output is the only way to see a result
8. A run stops after {timeout} and may use up to {memory} of memory (RAM)\
"""

PYTHON = "Execute Python code with the python function.\n\nThe tool runs one self-contained Python script " \
         "at a time.\n" + _INDEPENDENT  # fmt: skip

BASH = ("Execute bash commands with this function. The system is Linux with many common open-source computer "
        "algebra systems (GAP, for instance) installed.\n\nA command stops after {timeout} and may use up to "
        "{memory} of memory (RAM).")  # fmt: skip

WEB_SEARCH = """\
Search for current information, mathematical definitions, theorems or recent research with this function.

It gives you up-to-date information, for instance to:
- look up definitions and theorems
- find recent papers and results
- check computed values against known databases
- check current conventions or notation
- find similar problems or techniques

The results list titles, addresses and the relevant excerpts. Use it for what your training data may lack, \
or to check a fact.{where}\
"""

LOCAL_SEARCH = ("\n\n(In this run the search covers a local library of mathematical papers: titles, abstracts "
                "and main theorems.)")  # fmt: skip

SAGE = """\
Run calculations in SageMath, the open-source mathematics software, with the sage_computation function.

The tool runs one self-contained SageMath script at a time.
{independent}

Every standard SageMath function is imported already, and Sage's preparser applies, so natural \
mathematical notation works.

Main points:
- notation: x^2 for powers, K.<a> for field extensions
- every mathematical object is imported: Matrix, EllipticCurve, PolynomialRing, and so on
- extra packages: admcycles for moduli spaces of curves, among others

Examples:
  # factor a polynomial
  print(factor(x^100 - 1))

  # a number field
  K.<a> = NumberField(x^3 - 2)

  # an elliptic curve
  E = EllipticCurve([0, 1])
  print(E.rank())

IMPORTANT: as with the python() tool, print() is the only way to see output: nothing comes back on its own.\
"""

SUBMIT = """\
Register your final answer to the current question or subquestion, in Markdown with LaTeX. For the main \
question it should be a detailed mathematical argument.

Write the answer as ordinary Markdown with LaTeX formulas: $ for inline and $$ for displayed mathematics, \
or \\begin{equation} environments; cite online sources with standard Markdown links.

TIP: raw strings (r''' or r"") let you write LaTeX without escaping.

On the format:
- write the answer as you would in a mathematical paper
- use raw triple quotes r''' for an answer over several lines with LaTeX
- then \\frac, \\sqrt and \\int need no escaping
- give the whole argument and state the final answer clearly
- use only standard LaTeX commands, no custom macros (such as \\Z, \\Q or \\RR)\
"""


def tool_description(name: str, *, timeout: str, memory: str, local_search: bool = False) -> str:
    """The paper-worded description of one of our tools (``python``, ``bash``, ``sage``, ``search``, ``submit``)."""
    independent = _INDEPENDENT.format(timeout=timeout, memory=memory)
    texts = {"python": PYTHON.format(timeout=timeout, memory=memory), "bash": BASH.format(timeout=timeout,
             memory=memory), "sage": SAGE.format(independent=independent),
             "search": WEB_SEARCH.format(where=LOCAL_SEARCH if local_search else ""), "submit": SUBMIT}  # fmt: skip
    return texts[name]


def texts() -> list[str]:
    """Every template, for the digest of the harness settings."""
    return [MAIN, SUB, STATUS, _INDEPENDENT, PYTHON, BASH, WEB_SEARCH, LOCAL_SEARCH, SAGE, SUBMIT,
            *TOOL_LINES.values()]  # fmt: skip
