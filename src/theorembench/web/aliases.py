"""The names of answers in blind grading ("Answer K"), and their order on the page, drawn so that they tell nothing.

What must not leak. A grader may know, or guess, *when* an answer arrived: a model evaluated later
than the others, a newer run. Lettering the answers in page order and giving an answer added after
the assignment the next letter (G after A–F, inserted somewhere in the list) made such an answer stand
out twice: by its letter, and by breaking the alphabetical order of the page.

The design:

* **Names are drawn at random.** A grader's first assignment draws one name per answer, uniformly and
  without replacement, from a pool: the single letters A–Z while the answers fill at most half of it,
  else two letters AA–ZZ (676), else three. An answer added later draws uniformly among the names of
  the same pool still unused. Draws without replacement are exchangeable: the final name → answer map
  has the same distribution whether the answers came all at once or one by one, so it carries no
  trace of the order in which they arrived. Only when a pool is used up does a late answer get a
  longer name; a pool half empty at the start needs more late answers than there were at first.
* **The page lists answers by name** (A before B; shorter names first), and the stored order is that
  same order, so a position says nothing beyond the name, which says nothing.
* **Names never change.** A grader's notes ("C slips in the matrix step") stay true after a refresh.
* **Every grader draws their own names**, so comparing names between graders says nothing either.

What stays visible, and cannot be hidden without renaming answers under a grader's hands: someone who
remembers their earlier list sees which name is new, and a new answer is the one they have not graded
yet. The name adds nothing to that.
"""

from __future__ import annotations

import functools
import itertools
import string
from typing import Any, Protocol

LETTERS = string.ascii_uppercase


class Drawer(Protocol):
    """What the draws need from a random source (``random.Random`` and ``secrets.SystemRandom`` fit)."""

    def shuffle(self, x: list[Any]) -> None: ...

    def sample(self, population: list[str], k: int) -> list[str]: ...


@functools.cache
def pool(length: int) -> tuple[str, ...]:
    """Every name of ``length`` letters, in page order (A … Z; AA, AB, …)."""
    return tuple("".join(p) for p in itertools.product(LETTERS, repeat=length))


def order_key(name: str) -> tuple[int, str]:
    """Where a name stands on the page: shorter names first, then alphabetically."""
    return len(name), name


def first_names(rng: Drawer, n: int) -> list[str]:
    """Names for the ``n`` answers of a first assignment: a random draw from the smallest pool at most half full."""
    length = 1
    while len(pool(length)) < 2 * n:
        length += 1
    return rng.sample(list(pool(length)), n)


def more_names(rng: Drawer, taken: set[str], n: int) -> list[str]:
    """Names for ``n`` answers added later: random unused names of the pool in use (a longer one once it is full)."""
    length = max((len(name) for name in taken), default=1)
    out: list[str] = []
    while len(out) < n:
        unused = [name for name in pool(length) if name not in taken]
        out += rng.sample(unused, min(n - len(out), len(unused)))
        length += 1
    return out


def in_page_order(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Assignment entries (``{"answer_id", "alias", ...}``) sorted as the page lists them."""
    return sorted(entries, key=lambda e: order_key(e["alias"]))
