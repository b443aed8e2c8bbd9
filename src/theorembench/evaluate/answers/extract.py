"""The final answer in a reply: the last ``\\boxed{}``/``\\fbox{}``, else an "Answer:" line, else a short reply whole.

When a reply boxes several answers, the last box is the answer (as in the released LMB
protocol and MathArena): earlier boxes are drafts the model went past. Without a box, the
last "Answer:"/"Final Answer:" line counts (also "Final Answer: The final answer is $X$. I
hope it is correct.", and a "**Final Answer**" heading over the value); after a
``</think>`` block only the text after it is searched, and nothing after a chat-template
token (``<|im_start|>``: the model writing the next turn itself). A short sentence such as "The
largest $n$ is 34." gives the value after its last "is". Pure string scanning in one pass
(balanced braces counted, escaped braces skipped), so it is safe to run in the calling
process on any reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

WHOLE_REPLY_CHARS = 200
_BOX = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_ANSWER_LINE = re.compile(
    r"^[\s*_#>-]*(?:the\s+)?(?:final\s+answer|answer)[\s*_]*(?:is[\s*_]*)?[:\uff1a][\s*_]*(.*)$"
    r"|^[\s*_#>-]*(?:so\s+|thus\s+|hence\s+|therefore,?\s+)?the\s+(?:final\s+)?answer\s+is[\s*_:]*(.*)$",
    re.IGNORECASE,
)
_PROSE = re.compile(r"[A-Za-z][A-Za-z][ \t][ \t]*[A-Za-z][A-Za-z]")  # two words; no nested repeats (linear)
_HEADING = re.compile(r"^[\s*_#>-]*(?:final\s+answer|answer)[\s*_#:]*$", re.IGNORECASE)
_LEAD = re.compile(r"^(?:the\s+)?(?:final\s+)?answer\s+is[\s:]*", re.IGNORECASE)
_HOPE = re.compile(r"I\s+hope\s+it\s+is\s+correct", re.IGNORECASE)
_INLINE = re.compile(r"final\s+answer\s*(?:is\s*)?[:\uff1a]", re.IGNORECASE)
_CHAT_TOKEN = re.compile(r"<\|(?:im_start|im_end|endoftext|eot_id|end_of_text|start_header_id)\|>")
_LAST_IS = re.compile(r".*\b(?:is|are|equals)\b\s*:?\s*", re.IGNORECASE | re.DOTALL)
# a sentence that negates, hedges or bounds its value is not read for one ("cannot be 5", "5 or maybe 6")
_HEDGED = re.compile(r"\b(?:or|maybe|perhaps|possibly|probably|likely|might|could|would|unless|if|either|not|never|"
                     r"cannot|approximately|about|around|roughly|nearly|almost|least|most|less|more|fewer|unsure|"
                     r"guess|unknown|undefined|depends?)\b|n't|\?", re.IGNORECASE)  # fmt: skip
_LEAD_VALUE = re.compile(r"(.+?)(?:,\s+|\s+)(?:since|because|as|for|when|where|which|so|by|from|using|with)\b"
                         r"|(.+?),\s+[A-Za-z]{2,}")  # fmt: skip


@dataclass
class Extraction:
    """What was taken from a reply: the answer text, every distinct boxed answer, and where it came from."""

    text: str | None
    candidates: list[str] = field(default_factory=list)  # distinct boxed answers, the final one (the answer) last
    source: str | None = None  # "boxed", "answer-line", "whole" or None
    messages: list[str] = field(default_factory=list)


def _box_body(text: str, start: int) -> tuple[str, int] | None:
    """The body of the box whose command ends at ``start`` and the index after its closing brace (None: unbalanced)."""
    i = start
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] != "{":
        return None
    depth, j = 0, i
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            return text[i + 1 : j], j + 1
        j += 1
    return None


def boxed_contents(reply: str) -> tuple[list[str], int]:
    """Every top-level ``\\boxed{...}`` body in order (nested boxes stay inside), and how many were unbalanced."""
    found: list[str] = []
    unbalanced = 0
    pos = 0
    while m := _BOX.search(reply, pos):
        got = _box_body(reply, m.end())
        if got is None:
            unbalanced += reply[m.end() : m.end() + 50].lstrip(" \t\n").startswith("{")
            if unbalanced >= 20:  # each one scans to the end: stop before that turns quadratic
                break
            pos = m.end()
            continue
        found.append(_unbox(got[0].strip()))
        pos = got[1]
    return found, unbalanced


def _unbox(text: str) -> str:
    """``\\boxed{\\boxed{3}}`` read as ``3`` (a few levels at most)."""
    for _ in range(5):
        m = _BOX.match(text)
        got = _box_body(text, m.end()) if m else None
        if got is None or got[1] != len(text):
            break
        text = got[0].strip()
    return text


def _squash(text: str) -> str:
    return " ".join(text.split())


def _tidy(text: str) -> str:
    """An answer-line's text without "The final answer is", "I hope it is correct.", outer ``$`` and trailing dots."""
    text = _HOPE.split(text, 1)[0].strip() if "hope" in text.lower() else text.strip()
    for _ in range(3):
        text = _LEAD.sub("", text.strip().strip("*_").strip())
    text = text.strip().rstrip(".").strip("*_").strip()
    if len(text) >= 2 and text[0] == text[-1] == "$" and "$" not in text[1:-1].replace("\\$", ""):
        text = text.strip("$").strip()
    return text.rstrip(".").strip()


def sentence_value(text: str) -> str:
    """The value a short sentence states ("The largest $n$ is 34" gives "34"; "5, since n is odd" gives "5"); the
    text itself otherwise, also whenever the sentence negates, hedges or bounds (then it is not judged)."""
    if not _PROSE.search(text) or len(text) > WHOLE_REPLY_CHARS or _HEDGED.search(text):
        return text
    if not text[0].isalpha():  # "5, since 3 is odd": the value leads
        m = _LEAD_VALUE.match(text)
        head = (m[1] or m[2]).strip() if m else ""
        return _tidy(head) if head and not _PROSE.search(head) else text
    m = _LAST_IS.match(text)
    if not m:
        return text
    tail = text[m.end() :].strip().rstrip(".").strip()
    if not tail or _PROSE.search(tail):
        return text
    return _tidy(tail)


def _answer_line(reply: str) -> str | None:
    lines = reply.splitlines()
    for k in range(len(lines) - 1, -1, -1):
        if len(lines[k]) > 5000:
            continue
        m = _ANSWER_LINE.match(lines[k])
        if m:
            text = (m[1] if m[1] is not None else m[2] or "").strip()
        elif _HEADING.match(lines[k]):  # "**Final Answer**" over the value
            text = ""
        else:
            continue
        if not text:  # "Answer:" alone on its line: the next non-empty line
            text = next((line.strip() for line in lines[k + 1 :] if line.strip()), "")
        text = _tidy(text)
        if text:
            return text
    inline = None  # "... Final Answer: The final answer is $x$. I hope it is correct." inside a line
    for inline in _INLINE.finditer(reply):
        pass
    if inline is not None:
        text = _tidy(reply[inline.end() :].split("\n", 1)[0])
        return text or None
    return None


def expected_answer(expected: str) -> tuple[str, bool]:
    """The expected answer itself, and whether it came from a box: the last ``\\boxed{}`` of a worked solution."""
    boxes, _ = boxed_contents(expected) if "\\boxed" in expected or "\\fbox" in expected else ([], 0)
    return (boxes[-1], True) if boxes else (expected, False)


def extract_answer(reply: str, *, sentences: bool = True) -> Extraction:
    """The final answer in ``reply`` (see the module docstring); ``text`` is None when there is none.

    ``sentences=False`` keeps a sentence whole (for yes/no answers, whose words are the answer).
    """
    if "<|" in reply:  # a chat-template token: what follows is the model writing the next turn itself
        reply = _CHAT_TOKEN.split(reply, 1)[0]
    thinking, final = reply.rsplit("</think>", 1) if "</think>" in reply else ("", reply)
    boxes, unbalanced = boxed_contents(final)
    if not boxes and thinking and not final.strip():  # the reply ended inside its reasoning: its last box
        boxes, unbalanced = boxed_contents(thinking)
    messages = [f"{unbalanced} unbalanced \\boxed"] if unbalanced else []
    if boxes:
        distinct: dict[str, None] = {}
        for box in boxes:
            key = _squash(box)
            distinct.pop(key, None)
            distinct[key] = None
        return Extraction(boxes[-1], list(distinct), "boxed", messages)
    reply = final  # the reasoning before </think> is not the answer
    line = _answer_line(reply)
    if line is not None:
        line = sentence_value(line) if sentences else line
        return Extraction(line, [line], "answer-line", messages)
    whole = reply.strip()
    if whole and (len(whole) <= WHOLE_REPLY_CHARS or ("\n" not in whole and not _PROSE.search(whole))):
        whole = sentence_value(whole) if sentences else whole
        return Extraction(whole, [whole], "whole", messages)
    return Extraction(None, [], None, messages + ["no final answer found"])
