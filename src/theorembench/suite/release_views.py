"""What of an item a release exports: the splits' and the licences' rules, per method.

Two rules decide what leaves the release folder:

- **private split**: the item's answers never leave. An LMB question ships its stem and its five
  options shuffled and relabelled A–E under a key only the release folder holds (option A is the
  keyed answer in the build's format, so the order itself would give it away), with every field that
  names the keyed or weaker option dropped; an EternalMath instance ships only what a solver sees;
  a Proof2Hybrid question ships its statements without which are correct.
- **licence**: a paper's own text (the theorem, its context, the proof sketch, the statements a
  Proof2Hybrid question quotes) ships only where every source paper's licence allows redistribution
  (:func:`theorembench.sources.licences.licence_info`). Otherwise those fields are left out and the
  item points to its papers by id; the export's manifest lists the items affected.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Mapping
from typing import Any

LABELS = "ABCDE"
# LMB fields that quote the paper (the released item's own names)
LMB_PAPER_TEXT = ("theorem", "ref_dict", "pre_theorem_intro_text", "context", "full_context",
                  "post_theorem_intro_text", "sketch", "expanded_sketch", "expanded_theorem", "sketch_sources")  # fmt: skip
# LMB fields that name the keyed answer, the weaker-but-true option or a model's pick
LMB_ANSWER_FIELDS = ("qa quality eval", "stem_triviality", "hard_selection_meta", "correct_answer", "model_answer",
                     "model_is_correct", "option_origin")  # fmt: skip
ETERNAL_PAPER_TEXT = ("theorem",)
ETERNAL_PUBLIC = ("instance_id", "problem", "answer_kind", "tier", "msc", "paper_id")


def _order(secret: bytes, item_id: str, n: int) -> list[int]:
    """A permutation of ``n`` options drawn from the release's private key and the item's id."""
    seed = hmac.new(secret, item_id.encode(), hashlib.sha256).digest()
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return order


def lmb_view(item: Mapping[str, Any], *, private: bool, with_text: bool,
             secret: bytes) -> tuple[dict[str, Any], dict[str, Any] | None]:  # fmt: skip
    """An LMB item as exported, and (private items) its answer key, which stays in the release folder."""
    view = {k: v for k, v in item.items() if with_text or (k not in LMB_PAPER_TEXT and not k.endswith("_text_len"))}
    if not private:
        return view, None
    mcq = dict(item.get("mcq") or {})
    options = [mcq.get("correct_choice") or {}] + list(mcq.get("choices") or [])
    order = _order(secret, str(item.get("id")), len(options))
    shuffled = [{"label": LABELS[i], "text": options[j].get("text")} for i, j in enumerate(order)]
    for k in LMB_ANSWER_FIELDS:
        view.pop(k, None)
    view["mcq"] = {"question": mcq.get("question"), "choices": shuffled}
    key = {"id": item.get("id"), "correct": LABELS[order.index(0)],
           "weaker_true": next((LABELS[i] for i, j in enumerate(order) if j and options[j].get("label") ==
                                (mcq.get("meta") or {}).get("weaker_true_label")), None)}  # fmt: skip
    return view, key


def eternal_view(item: Mapping[str, Any], *, private: bool,
                 with_text: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:  # fmt: skip
    if private:
        view = {k: item.get(k) for k in ETERNAL_PUBLIC}
        key = {"instance_id": item.get("instance_id"), "numerical_value": item.get("numerical_value"),
               "exact_expression": item.get("exact_expression")}  # fmt: skip
    else:
        view, key = dict(item), None
    if not with_text:
        for k in ETERNAL_PAPER_TEXT:
            view.pop(k, None)
    return view, key


def hybrid_view(item: Mapping[str, Any], *, private: bool,
                with_text: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:  # fmt: skip
    view = {k: v for k, v in item.items() if not (private and k == "answer")}
    entries = []
    for entry in item.get("items") or []:
        shown = {k: v for k, v in entry.items() if not (private and k in ("correct", "change", "kind"))}
        if not with_text:
            shown["text"] = None
        entries.append(shown)
    view["items"] = entries
    return view, ({"id": item.get("id"), "answer": item.get("answer")} if private else None)


def item_view(method: str, item: Mapping[str, Any], *, private: bool, with_text: bool,
              secret: bytes) -> tuple[dict[str, Any], dict[str, Any] | None]:  # fmt: skip
    """The exported item and, for a private one, the answer key kept back."""
    if method == "lmb":
        return lmb_view(item, private=private, with_text=with_text, secret=secret)
    if method == "eternal":
        return eternal_view(item, private=private, with_text=with_text)
    if method == "hybrid":
        return hybrid_view(item, private=private, with_text=with_text)
    raise ValueError(f"unknown method {method!r}")


def flat_fields(method: str, view: Mapping[str, Any]) -> tuple[str, list[str], str | None]:
    """The question, the options and the answer of an exported item, for the typed columns of a table."""
    if method == "lmb":
        mcq = view.get("mcq") or {}
        choices = ([mcq["correct_choice"]] if mcq.get("correct_choice") else []) + list(mcq.get("choices") or [])
        answer = (mcq.get("correct_choice") or {}).get("label")
        return str(mcq.get("question") or ""), [str(c.get("text") or "") for c in choices], answer
    if method == "eternal":
        value = view.get("numerical_value")
        return str(view.get("problem") or ""), [], None if value is None else str(value)
    answer = view.get("answer")
    return (f"Which {view.get('m')} of these {view.get('n')} statements are correct?",
            [str(e.get("text") or "") for e in view.get("items") or []],
            None if answer is None else ",".join(str(a) for a in answer))  # fmt: skip


__all__ = ["LMB_ANSWER_FIELDS", "LMB_PAPER_TEXT", "flat_fields", "item_view"]
