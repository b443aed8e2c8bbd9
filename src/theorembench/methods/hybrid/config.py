"""Proof2Hybrid parameters (the paper's Table 2), in one TOML file with the paper's defaults.

m1 (seed judges) and m3 (distractor judges) are the number of judge models given,
m2 the number of generator models. The paper used m1 = m3 = 4, m2 = 5; its thresholds
(k1 = 8, k3 = 7, k4 = 10) only fit four judges, so a build with another number of judges
is refused before any work, and the error names thresholds that fit
(:func:`fitting_thresholds`, the paper's proportions scaled to the judges given).

Two seeds, kept apart so that one can change without invalidating the other's work:
``generation.sampling_seed`` seeds every generator and judge call and the choice of k2 of
the n2 distractors (it shapes the stored steps and the response cache);
``questions.seed`` draws the seeds used (``max_seeds``) and assembles the questions (it
shapes only the final drawing, so changing it reuses every stored step and model call).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from theorembench.common.errors import UserError
from theorembench.common.tomlconfig import load_layered

DEFAULT_TOML = """\
# theorembench hybrid build: Proof2Hybrid settings (defaults: the AlgGeoTest values).

[models]
generators = ["local/smollm2"]   # m2 models write distractors (the paper: 5)
judges = ["local/smollm2"]       # m1 = m3 judge models (the paper: 4; the thresholds below fit 4)

[seed_filter]
n1 = 3                           # verdicts per judge
k1 = 8                           # keep a seed judged correct at least k1 times; needs k1 > m1*n1/2

[distractors]
n2 = 6                           # distractors written by each generator
k2 = 2                           # of which k2 are drawn at random (k2 <= n2)

[distractor_filter]
n3 = 3                           # verdicts per judge
k3 = 7                           # keep a distractor judged incorrect k3..k4 times:
k4 = 10                          #   m3*n3/2 < k3 <= k4 <= m3*n3 - 2
enforce_bounds = true            # false only for smoke runs on a tiny model (it judges everything correct)

[questions]
m = 2                            # correct items per question
n = 6                            # items per question
seed = 0                         # draws the seeds used (max_seeds) and assembles the questions

[generation]
temperature = 0.7
max_tokens = 4096
sampling_seed = 0                # seeds every generator and judge call, and the k2-of-n2 choice
max_seeds = 0                    # use at most this many seeds, drawn at random with questions.seed (0 = all)
"""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Models(_Section):
    generators: list[str] = Field(default_factory=lambda: ["local/smollm2"])
    judges: list[str] = Field(default_factory=lambda: ["local/smollm2"])


class SeedFilter(_Section):
    n1: int = Field(3, ge=1)
    k1: int = Field(8, ge=1)


class Distractors(_Section):
    n2: int = Field(6, ge=1)
    k2: int = Field(2, ge=1)


class DistractorFilter(_Section):
    n3: int = Field(3, ge=1)
    k3: int = Field(7, ge=0)
    k4: int = Field(10, ge=0)
    enforce_bounds: bool = True


class Questions(_Section):
    m: int = Field(2, ge=1)
    n: int = Field(6, ge=2)
    seed: int = 0


class Generation(_Section):
    temperature: float = 0.7
    max_tokens: int = 4096
    sampling_seed: int = 0
    max_seeds: int = Field(0, ge=0)


class HybridConfig(_Section):
    models: Models = Field(default_factory=Models)
    seed_filter: SeedFilter = Field(default_factory=SeedFilter)
    distractors: Distractors = Field(default_factory=Distractors)
    distractor_filter: DistractorFilter = Field(default_factory=DistractorFilter)
    questions: Questions = Field(default_factory=Questions)
    generation: Generation = Field(default_factory=Generation)

    @property
    def m1(self) -> int:
        return len(self.models.judges)

    @property
    def m2(self) -> int:
        return len(self.models.generators)

    @property
    def m3(self) -> int:
        return len(self.models.judges)

    def check(self) -> None:
        """The paper's constraints; a violation is a clear error before any work."""
        problems = []
        m1, m3 = self.m1, self.m3
        if not self.models.judges or not self.models.generators:
            problems.append("at least one judge and one generator model are needed")
        sf, d, df, q = self.seed_filter, self.distractors, self.distractor_filter, self.questions
        if not sf.k1 > m1 * sf.n1 / 2:
            problems.append(f"k1={sf.k1} must exceed m1*n1/2 = {m1}*{sf.n1}/2 = {m1 * sf.n1 / 2:g} "
                            "(a kept seed must be judged correct more often than not)")  # fmt: skip
        if sf.k1 > m1 * sf.n1:
            problems.append(f"k1={sf.k1} can never be reached with m1*n1 = {m1}*{sf.n1} = {m1 * sf.n1} verdicts")
        if d.k2 > d.n2:
            problems.append(f"k2={d.k2} must not exceed n2={d.n2}")
        total = m3 * df.n3
        if df.enforce_bounds and not (total / 2 < df.k3 <= df.k4 <= total - 2):
            problems.append(f"need m3*n3/2 < k3 <= k4 <= m3*n3 - 2, i.e. {total / 2:g} < {df.k3} <= {df.k4} <= "
                            f"{total - 2} with m3={m3} judges x n3={df.n3} verdicts")  # fmt: skip
        elif not df.k3 <= df.k4 <= total:
            problems.append(f"need k3 <= k4 <= m3*n3 = {total}, got k3={df.k3}, k4={df.k4}")
        if not 0 < q.m < q.n:
            problems.append(f"need 0 < m < n, got m={q.m}, n={q.n}")
        if problems:
            thresholds_wrong = len(problems) > sum(p.startswith(("k2=", "need 0 < m", "at least one")) for p in problems)
            if thresholds_wrong and m1:
                paper = "the default thresholds are the paper's, for 4 judges (give --judge 4 times); " if m1 != 4 else ""
                problems.append(f"{paper}thresholds that fit {m1} judge{'s' * (m1 > 1)}: "
                                f"{fitting_thresholds(m1, sf.n1, df.n3).describe()} (a --config file with them: "
                                f"`theorembench hybrid config --judges {m1} > hybrid.toml`)")  # fmt: skip
            raise HybridConfigError("; ".join(problems))


class HybridConfigError(UserError, ValueError):
    pass


class Thresholds(BaseModel):
    n1: int
    k1: int
    n3: int
    k3: int
    k4: int

    def describe(self) -> str:
        return (f"[seed_filter] n1 = {self.n1}, k1 = {self.k1} and "
                f"[distractor_filter] n3 = {self.n3}, k3 = {self.k3}, k4 = {self.k4}")  # fmt: skip


def fitting_thresholds(judges: int, n1: int = 3, n3: int = 3) -> Thresholds:
    """Thresholds in the paper's proportions for ``judges`` judges (for 4 judges and n = 3: the paper's own).

    k1 is two thirds of the m1*n1 verdicts (8 of 12), and more than half; k3 is the least
    majority and k4 leaves two verdicts of doubt (7 and 10 of 12). That window is empty with
    fewer than 5 verdicts, so n3 grows until there are 5.
    """
    total1 = judges * n1
    k1 = max(total1 // 2 + 1, -(-2 * total1 // 3))
    n3 = max(n3, -(-5 // judges))
    total3 = judges * n3
    return Thresholds(n1=n1, k1=k1, n3=n3, k3=total3 // 2 + 1, k4=total3 - 2)


def config_toml(judges: int | None = None) -> str:
    """The default settings file; with ``judges``, its thresholds fit that many judges."""
    if not judges:
        return DEFAULT_TOML
    t = fitting_thresholds(judges)
    text = DEFAULT_TOML
    for name in ("n1", "k1", "n3", "k3", "k4"):
        text = re.sub(rf"^{name} = \d+ *", lambda m, name=name: f"{name} = {getattr(t, name)} ".ljust(len(m[0])),
                      text, count=1, flags=re.M)  # fmt: skip
    return text.replace("(the paper: 4; the thresholds below fit 4)", f"(the paper: 4; the thresholds below fit {judges})")


def load_config(path: str | Path | None = None, **overrides: Any) -> HybridConfig:
    return load_layered(DEFAULT_TOML, HybridConfig, path, overrides, HybridConfigError)
