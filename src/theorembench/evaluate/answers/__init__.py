"""Exact checking of final answers, shared by the methods that grade free-form answers.

``check_answer(expected, reply, kind=None)`` extracts the final answer from a reply (the last
``\\boxed{}`` counts when there are several, as in the released LMB protocol and MathArena;
else an "Answer:"/"Final Answer:" line, or a short reply whole) and judges it by kind:
integer, rational, real (with a tolerance), boolean, expression, tuple, list, set or
interval. Brackets, names left of ``=``, approximation signs, units and percent signs are
read, never dropped; what cannot be judged with confidence is None with a warning, never
True. Parsing and comparison run in a worker process under a time and memory limit (see
``checker``), with a safe parser of its own (``parser``): nothing in an answer is ever
executed. Every verdict carries :data:`CHECKER_VERSION`; stored verdicts of another version
are graded again by the methods that keep them.
"""

from theorembench.evaluate.answers.checker import AnswerChecker, check_answer, check_answers
from theorembench.evaluate.answers.extract import Extraction, extract_answer
from theorembench.evaluate.answers.normalize import KINDS, guess_kind
from theorembench.evaluate.answers.verdict import CHECKER_VERSION, Verdict

__all__ = ["CHECKER_VERSION", "KINDS", "AnswerChecker", "Extraction", "Verdict", "check_answer", "check_answers",
           "extract_answer", "guess_kind"]  # fmt: skip
