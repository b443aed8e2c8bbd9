"""Exact checking of final answers, shared by the methods that grade free-form answers.

``check_answer(expected, reply, kind=None)`` extracts the final answer from a reply (the last
``\\boxed{}``, an "Answer:" line, or a short reply whole) and judges it by kind: integer,
rational, real (with a tolerance), boolean, expression, tuple, list or set. Parsing and
comparison run in a worker process under a time and memory limit (see ``checker``), with a
safe parser of its own (``parser``): nothing in an answer is ever executed.
"""

from theorembench.evaluate.answers.checker import AnswerChecker, check_answer, check_answers
from theorembench.evaluate.answers.extract import Extraction, extract_answer
from theorembench.evaluate.answers.normalize import KINDS, guess_kind
from theorembench.evaluate.answers.verdict import Verdict

__all__ = ["KINDS", "AnswerChecker", "Extraction", "Verdict", "check_answer", "check_answers", "extract_answer",
           "guess_kind"]  # fmt: skip
