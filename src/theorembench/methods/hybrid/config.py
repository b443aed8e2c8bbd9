"""Proof2Hybrid parameters (the paper's Table 2), in one TOML file with the paper's defaults.

m1 (seed judges) and m3 (distractor judges) are the numbers of judge models of the two
filters, m2 the number of generator models. One list, ``models.judges``, serves both filters
unless ``models.seed_judges`` or ``models.distractor_judges`` sets a panel apart (the paper
sizes the two panels separately; it used the same four models in each). The paper used
m1 = m3 = 4, m2 = 5; its thresholds (k1 = 8, k3 = 7, k4 = 10) only fit four judges, so a
build with other panels is refused before any work, and the error names thresholds that
fit (:func:`fitting_thresholds`, the paper's proportions scaled to the panels given).

Two seeds, kept apart so that one can change without invalidating the other's work:
``generation.sampling_seed`` seeds every generator and judge call and the choice of k2 of
the n2 distractors (it shapes the stored steps and the response cache);
``questions.seed`` draws the seeds used (``max_seeds``) and assembles the questions (it
shapes only the final drawing, so changing it reuses every stored step and model call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from theorembench.common.settings import Section, Settings

_FIT = "(the paper: 4 in each; the thresholds below fit {judges})"


class Models(Section):
    generators: list[str] = Field(default_factory=lambda: ["local/smollm2"],
                                  description="m2 models write distractors (the paper: 5)")  # fmt: skip
    judges: list[str] = Field(default_factory=lambda: ["local/smollm2"],
                              description="judges of both filters unless set apart below "
                                          + _FIT.format(judges=4))  # fmt: skip
    seed_judges: list[str] = Field(default_factory=list, description="m1 seed-filter judges; empty = judges")
    distractor_judges: list[str] = Field(default_factory=list,
                                         description="m3 distractor-filter judges; empty = judges")  # fmt: skip


class SeedFilter(Section):
    n1: int = Field(3, ge=1, description="verdicts per judge")
    k1: int = Field(8, ge=1, description="keep a seed judged correct at least k1 times; needs k1 > m1*n1/2")


class Distractors(Section):
    n2: int = Field(6, ge=1, description="distractors written by each generator")
    k2: int = Field(2, ge=1, description="of which k2 are drawn at random (k2 <= n2)")


class DistractorFilter(Section):
    n3: int = Field(3, ge=1, description="verdicts per judge")
    k3: int = Field(7, ge=0, description="keep a distractor judged incorrect k3..k4 times:")
    k4: int = Field(10, ge=0, description="  m3*n3/2 < k3 <= k4 <= m3*n3 - 2")
    enforce_bounds: bool = Field(True, description="false only for smoke runs on a tiny model (it judges "
                                                   "everything correct)")  # fmt: skip


class Questions(Section):
    m: int = Field(2, ge=1, description="correct items per question")
    n: int = Field(6, ge=2, description="items per question")
    seed: int = Field(0, description="draws the seeds used (max_seeds) and assembles the questions")


class Generation(Section):
    temperature: float = 0.7
    max_tokens: int = 4096
    sampling_seed: int = Field(0, description="seeds every generator and judge call, and the k2-of-n2 choice")
    max_seeds: int = Field(0, ge=0, description="use at most this many seeds, drawn at random with questions.seed "
                                                "(0 = all)")  # fmt: skip


class HybridConfig(Settings):
    TOML_HEADER = "theorembench hybrid build: Proof2Hybrid settings (defaults: the AlgGeoTest values)."
    models: Models = Field(default_factory=Models)
    seed_filter: SeedFilter = Field(default_factory=SeedFilter)
    distractors: Distractors = Field(default_factory=Distractors)
    distractor_filter: DistractorFilter = Field(default_factory=DistractorFilter)
    questions: Questions = Field(default_factory=Questions)
    generation: Generation = Field(default_factory=Generation)

    @property
    def seed_panel(self) -> list[str]:
        """The m1 judges of the seed filter."""
        return self.models.seed_judges or self.models.judges

    @property
    def distractor_panel(self) -> list[str]:
        """The m3 judges of the distractor filter."""
        return self.models.distractor_judges or self.models.judges

    @property
    def m1(self) -> int:
        return len(self.seed_panel)

    @property
    def m2(self) -> int:
        return len(self.models.generators)

    @property
    def m3(self) -> int:
        return len(self.distractor_panel)

    def _threshold_problems(self) -> list[str]:
        m1, m3 = self.m1, self.m3
        sf, df = self.seed_filter, self.distractor_filter
        found = []
        if not sf.k1 > m1 * sf.n1 / 2:
            found.append(f"seed_filter.k1={sf.k1} must exceed m1*n1/2 = {m1}*{sf.n1}/2 = {m1 * sf.n1 / 2:g} "
                         "(a kept seed must be judged correct more often than not)")  # fmt: skip
        if sf.k1 > m1 * sf.n1:
            found.append(f"seed_filter.k1={sf.k1} can never be reached with m1*n1 = {m1}*{sf.n1} = {m1 * sf.n1} "
                         "verdicts")  # fmt: skip
        total = m3 * df.n3
        if df.enforce_bounds and not (total / 2 < df.k3 <= df.k4 <= total - 2):
            found.append(f"distractor_filter: need m3*n3/2 < k3 <= k4 <= m3*n3 - 2, i.e. {total / 2:g} < {df.k3} <= "
                         f"{df.k4} <= {total - 2} with m3={m3} judges x n3={df.n3} verdicts")  # fmt: skip
        elif not df.k3 <= df.k4 <= total:
            found.append(f"distractor_filter: need k3 <= k4 <= m3*n3 = {total}, got k3={df.k3}, k4={df.k4}")
        return found

    def problems(self) -> list[str]:
        """The paper's constraints; with thresholds that do not fit the judges, the thresholds that do."""
        found = []
        if not self.seed_panel or not self.distractor_panel or not self.models.generators:
            found.append("models: each filter needs at least one judge, and one generator model is needed")
        thresholds = self._threshold_problems()
        found += thresholds
        d, q = self.distractors, self.questions
        if d.k2 > d.n2:
            found.append(f"distractors.k2={d.k2} must not exceed n2={d.n2}")
        if not 0 < q.m < q.n:
            found.append(f"questions: need 0 < m < n, got m={q.m}, n={q.n}")
        m1, m3 = self.m1, self.m3
        if thresholds and m1 and m3:
            paper = "the default thresholds are the paper's, for 4 judges; " if (m1, m3) != (4, 4) else ""
            fit = fitting_thresholds(m1, self.seed_filter.n1, self.distractor_filter.n3, distractor_judges=m3)
            found.append(f"{paper}thresholds that fit {panels(m1, m3)}: {fit.describe()} (a settings file with "
                         f"them: `theorembench hybrid config {config_options(m1, m3)} > hybrid.toml`)")  # fmt: skip
        return found


def panels(m1: int, m3: int) -> str:
    """The judge panels in words: "2 judges", or "2 seed judges and 3 distractor judges"."""
    if m1 == m3:
        return f"{m1} judge{'s' * (m1 > 1)}"
    return f"{m1} seed judge{'s' * (m1 > 1)} and {m3} distractor judge{'s' * (m3 > 1)}"


def config_options(m1: int, m3: int) -> str:
    """The ``hybrid config`` options that print thresholds for these panels."""
    return f"--judges {m1}" if m1 == m3 else f"--seed-judges {m1} --distractor-judges {m3}"


class Thresholds(BaseModel):
    n1: int
    k1: int
    n3: int
    k3: int
    k4: int

    def describe(self) -> str:
        return (f"[seed_filter] n1 = {self.n1}, k1 = {self.k1} and "
                f"[distractor_filter] n3 = {self.n3}, k3 = {self.k3}, k4 = {self.k4}")  # fmt: skip


def fitting_thresholds(judges: int, n1: int = 3, n3: int = 3, *, distractor_judges: int | None = None) -> Thresholds:
    """Thresholds in the paper's proportions for ``judges`` seed judges and ``distractor_judges`` distractor
    judges (default: as many; for 4 and 4 judges and n = 3: the paper's own).

    k1 is two thirds of the m1*n1 verdicts (8 of 12), and more than half; k3 is the least
    majority and k4 leaves two verdicts of doubt (7 and 10 of 12). That window is empty with
    fewer than 5 verdicts, so n3 grows until there are 5.
    """
    m3 = distractor_judges or judges
    total1 = judges * n1
    k1 = max(total1 // 2 + 1, -(-2 * total1 // 3))
    n3 = max(n3, -(-5 // m3))
    total3 = m3 * n3
    return Thresholds(n1=n1, k1=k1, n3=n3, k3=total3 // 2 + 1, k4=total3 - 2)


def config_toml(judges: int | None = None, *, seed_judges: int | None = None,
                distractor_judges: int | None = None) -> str:  # fmt: skip
    """The documented settings file; with panel sizes, its thresholds fit them (``judges``: both panels, which
    ``seed_judges`` / ``distractor_judges`` override)."""
    m1, m3 = seed_judges or judges, distractor_judges or judges
    if not m1 and not m3:
        return HybridConfig.default_toml()
    m1, m3 = m1 or 4, m3 or 4  # a panel not given keeps the paper's size
    t = fitting_thresholds(m1, distractor_judges=m3)
    fitted = HybridConfig(seed_filter=SeedFilter(n1=t.n1, k1=t.k1),
                          distractor_filter=DistractorFilter(n3=t.n3, k3=t.k3, k4=t.k4))
    return fitted.to_toml().replace(_FIT.format(judges=4), _FIT.format(judges=panels(m1, m3)))


def load_config(path: str | Path | None = None, **overrides: Any) -> HybridConfig:
    return HybridConfig.load(path, **overrides)
