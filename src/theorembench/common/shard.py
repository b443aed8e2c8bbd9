"""One build's or evaluation's work split between processes or machines: ``--shard i/N``.

Shard ``i`` of ``N`` (0 <= i < N) owns the items, papers or problems whose id hashes to ``i``:
SHA-256 of the id as UTF-8, read as a number, modulo ``N``. The partition depends on the ids
alone, never on their order, the process, the machine or Python's per-process ``hash()``: the N
shards are disjoint, together they cover everything, and every process draws the same line.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from theorembench.common.errors import InvalidSetting

T = TypeVar("T")

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def shard_of(key: str, count: int) -> int:
    """The shard (0 .. count-1) that owns ``key``."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise _bad_shard(f"{self.index}/{self.count}")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"i/N"`` as a shard; a one-line :class:`InvalidSetting` (of ``shard``) for anything else."""
        found = _SPEC.fullmatch(text or "")
        if found is None:
            raise _bad_shard(text)
        return cls(int(found.group(1)), int(found.group(2)))

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, key: str) -> bool:
        return shard_of(str(key), self.count) == self.index

    def select(self, items: Iterable[T], key: Callable[[T], str] = str) -> list[T]:
        """The items this shard owns, in their order; ``key`` gives an item's id."""
        return [item for item in items if self.owns(key(item))]

    def __str__(self) -> str:
        return self.label


def _bad_shard(text: str) -> InvalidSetting:
    return InvalidSetting("shard", template="{setting} " + text + ": write i/N with 0 <= i < N, e.g. 0/2 and 1/2")


def parse_shard(text: str | Shard | None) -> Shard | None:
    """The ``shard`` setting's value (``"i/N"``, or a :class:`Shard`); None when not given."""
    return text if isinstance(text, Shard | None) else Shard.parse(text)


def check_shard_count(count: int | None) -> int | None:
    """The ``merge_shards`` setting's value (the number of shards to merge), checked; None when not given."""
    if count is not None and count < 1:
        raise InvalidSetting("merge_shards", template=f"{{setting}} {count}: give the number of shards, at least 1")
    return count


def shard_settings(shard: str | Shard | None, merge_shards: int | None) -> tuple[Shard | None, int | None]:
    """A service's two shard settings, checked: one shard to run, or the number of shards to merge (not both)."""
    parsed, merge = parse_shard(shard), check_shard_count(merge_shards)
    if parsed is not None and merge is not None:
        raise InvalidSetting("shard", template="{setting} goes to each shard's run, not to their merge: give one")
    return parsed, merge


__all__ = ["Shard", "check_shard_count", "parse_shard", "shard_of", "shard_settings"]
