"""The contamination guard: score a model only on items it cannot have seen in training, or report both apart.

A benchmark item made from a paper first published before a model's training-data cutoff may have been
in its training data; one published strictly after cannot. Every evaluation service (``evaluate_mcq``,
``evaluate_hybrid``, ``evaluate_eternal``, ``run_improof_eval``) takes a guard, one of :data:`GUARDS`:

* ``exclude``: only items first published strictly after the cutoff are asked and scored; the others make
  no model call. Items without a date, or whose date straddles the cutoff (an arXiv month that contains
  it), cannot be shown to be new: they are not scored either, and are listed as ``unknown``;
* ``flag``: every item is scored, and the items before and after the cutoff (and the unknown ones) get
  their own score, each an :class:`~theorembench.common.stats.Estimate` with its n and interval;
* ``off``: no guard.

The default (``None``) is ``exclude`` for items of a release (a folder with a release manifest) and
``flag`` for a plain file, which keeps a plain file's headline unchanged and adds the split.

A model missing from the registry (:mod:`cutoff_registry`) has no known cutoff: it is evaluated on every
item, with a warning, and its results say so (``cutoff: null``). Each service selects its items with
:func:`select` before the sample loop and writes :meth:`Selection.block` into its results: which items
counted, which were excluded and which had no usable date, with the cutoff and its source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting
from theorembench.common.stats import Estimate, bounded_mean, proportion
from theorembench.evaluate.cutoff_registry import ModelEntry, Registry
from theorembench.evaluate.item_dates import UNKNOWN, ItemDate

GUARDS = ("exclude", "flag", "off")
RELATIONS = ("before", "after", "unknown")


@dataclass(frozen=True)
class CutoffGuard:
    """A guard for one model: the mode, the model's registry entry (None: not known) and the cutoff compared."""

    mode: str
    model: str
    entry: ModelEntry | None = None
    cutoff: date | None = None
    basis: str = "unknown"
    sources: tuple[str, ...] = ()


def check_guard(mode: str | None, *, release: bool = False) -> str:
    """The guard's mode, checked: ``None`` is ``exclude`` for a release's items and ``flag`` for a plain file."""
    if mode is None:
        return "exclude" if release else "flag"
    if mode not in GUARDS:
        raise InvalidSetting("cutoff_guard", f"must be exclude, flag or off, not {mode!r}")
    return mode


def cutoff_guard(mode: str | None, model: str, *, models_file: str | Path | None = None,
                 release: bool = False) -> CutoffGuard:  # fmt: skip
    """The guard for ``model``: its mode checked, its cutoff from the registry (and the user's file). Raises
    :class:`InvalidSetting` for a bad mode or models file, before any work."""
    mode = check_guard(mode, release=release)
    if mode == "off":
        return CutoffGuard("off", model)
    registry = Registry.load(models_file)
    entry = registry.lookup(model)
    cutoff, basis = entry.effective_cutoff if entry is not None else (None, "unknown")
    return CutoffGuard(mode, model, entry, cutoff, basis, tuple(registry.sources))


def relation(when: ItemDate, cutoff: date) -> str:
    """``after``: first public strictly after the cutoff; ``before``: on or before it; ``unknown``: no date, or
    a span (a month) that contains the cutoff."""
    if not when.known:
        return "unknown"
    assert when.earliest is not None and when.latest is not None
    if when.earliest > cutoff:
        return "after"
    if when.latest <= cutoff:
        return "before"
    return "unknown"


@dataclass
class Selection:
    """Which items a guarded evaluation asks and scores (``counted``), leaves out, and could not date."""

    guard: CutoffGuard
    ids: list[str]
    dates: dict[str, ItemDate]
    relations: dict[str, str]
    counted: list[str]
    excluded: list[str]
    unknown: list[str]
    warnings: list[str] = field(default_factory=list)

    def keeps(self, item_id: str) -> bool:
        return item_id in self._counted

    def __post_init__(self) -> None:
        self._counted = set(self.counted)

    def subset(self, name: str) -> list[str]:
        """The items before or after the cutoff, or without a usable date (``unknown``)."""
        return [i for i in self.ids if self.relations.get(i) == name]

    def block(self, scores: Mapping[str, float | None] | None = None, *, binary: bool = True,
              errors: Iterable[str] = ()) -> dict[str, Any]:  # fmt: skip
        """The results' ``cutoff`` block; under ``flag``, with ``scores`` (item id -> the item's score in [0, 1],
        as the method's headline counts it), each subset's estimate."""
        g = self.guard
        out: dict[str, Any] = {"guard": g.mode, "model": g.model}
        if g.mode == "off":
            return out | {"counted": list(self.counted), "excluded": [], "unknown": []}
        entry = g.entry
        out |= {"cutoff": g.cutoff.isoformat() if g.cutoff else None, "basis": g.basis,
                "entry": entry.key if entry else None, "stated": dict(entry.stated) if entry else None,
                "source": entry.source if entry else None, "registry": list(g.sources),
                "counted": list(self.counted), "excluded": list(self.excluded), "unknown": list(self.unknown),
                "dates": {i: self.dates.get(i, UNKNOWN).to_dict() for i in self.ids}}  # fmt: skip
        if g.mode == "flag" and g.cutoff is not None:
            out["before"], out["after"] = self.subset("before"), self.subset("after")
            if scores is not None:
                failed = set(errors)
                out["subsets"] = {name: subset_estimate([scores.get(i) for i in self.subset(name)],
                                                        sum(i in failed for i in self.subset(name)),
                                                        binary=binary).to_dict()
                                  for name in RELATIONS}  # fmt: skip
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def subset_estimate(values: list[float | None], errors: int = 0, *, binary: bool = True) -> Estimate:
    """A subset's score: a proportion of right items (Wilson) or a mean of scores in [0, 1] (Wilson at the mean);
    an item without a score counts as 0, as in every headline."""
    scores = [float(v or 0.0) for v in values]
    if binary:
        return proportion(round(sum(scores)), len(scores), errors=errors)
    return bounded_mean(scores, errors=errors)


def select(guard: CutoffGuard, ids: Iterable[str], dates: Mapping[str, ItemDate]) -> Selection:
    """Split the items (in their order) by the guard: see the module notes for what each mode counts."""
    ids = list(ids)
    if guard.mode == "off":
        return Selection(guard, ids, {}, {}, list(ids), [], [])
    known = {i: dates.get(i, UNKNOWN) for i in ids}
    warnings: list[str] = []
    if guard.cutoff is None:
        warnings.append(f"{guard.model} is not in the model registry: its training-data cutoff is unknown, so "
                        "every item is evaluated (add it with --models-file or $THEOREMBENCH_MODELS_FILE)")
        undated = [i for i in ids if not known[i].known]
        return Selection(guard, ids, known, {i: "unknown" for i in ids}, list(ids), [], undated, warnings)
    relations = {i: relation(known[i], guard.cutoff) for i in ids}
    unknown = [i for i in ids if relations[i] == "unknown"]
    if guard.mode == "flag":
        return Selection(guard, ids, known, relations, list(ids), [], unknown, warnings)
    counted = [i for i in ids if relations[i] == "after"]
    excluded = [i for i in ids if relations[i] == "before"]
    if unknown:
        warnings.append(f"{len(unknown)} item(s) have no date after {guard.model}'s cutoff "
                        f"{guard.cutoff.isoformat()} that can be shown: not scored")
    if not counted:
        warnings.append(f"no item is first published after {guard.model}'s cutoff {guard.cutoff.isoformat()}: "
                        "nothing is scored (--cutoff-guard flag scores every item and reports both sides)")
    return Selection(guard, ids, known, relations, counted, excluded, unknown, warnings)


__all__ = ["GUARDS", "RELATIONS", "CutoffGuard", "Selection", "check_guard", "cutoff_guard", "relation", "select",
           "subset_estimate"]
