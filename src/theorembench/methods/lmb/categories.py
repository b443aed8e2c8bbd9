"""The thirteen logical categories of LiveMathematicianBench theorems.

A category describes the logical shape of a theorem's conclusion, not its field.
Each entry carries what the generation prompts need: a canonical form, the
decisive logical feature a question should probe, how to shape the stem around
that feature, and how each of the four perturbation strategies turns into a
distractor for theorems of this shape.

Names follow the spelling of the released data ("Inequality or Bound",
"Existential–Universal" with an en dash); the three categories absent from the
released November 2025 split use the same pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PERTURBATION_STRATEGIES: tuple[str, ...] = (
    "controlled perturbation",
    "semantic weakening",
    "semantic strengthening",
    "property confusion",
)


@dataclass(frozen=True)
class DistractorHints:
    """How the four perturbation strategies are realised for one category."""

    controlled_perturbation: str
    semantic_weakening: str
    semantic_strengthening: str
    property_confusion: str

    def items(self) -> list[tuple[str, str]]:
        """(strategy name, hint) pairs in the order of ``PERTURBATION_STRATEGIES``."""
        return [
            ("controlled perturbation", self.controlled_perturbation),
            ("semantic weakening", self.semantic_weakening),
            ("semantic strengthening", self.semantic_strengthening),
            ("property confusion", self.property_confusion),
        ]


@dataclass(frozen=True)
class Category:
    name: str
    canonical_form: str
    description: str
    decisive_feature: str
    stem_strategy: str
    distractor_hints: DistractorHints


_ALL: tuple[Category, ...] = (
    Category(
        name="Algorithmic or Constructive",
        canonical_form=r"There is a procedure $\mathcal{A}$ that, given $x$, outputs $f(x)$ (possibly within a "
        r"stated resource bound); or: the object $X$ can be produced explicitly.",
        description="The conclusion supplies an effective method: an algorithm, a decision procedure or an "
        "explicit construction that produces or decides the object, often with a bound on time, steps or size.",
        decisive_feature="what can be effectively computed or decided, and at what cost",
        stem_strategy="Describe the input class and the object to be produced or decided, then ask what can be "
        "determined effectively about it, or which construction or complexity is achievable (for instance: "
        "'what can be algorithmically determined about the set S?'). The keyed option names exactly which outputs "
        "are computable or decidable, for which inputs, and with which resource bound if the conclusion gives one.",
        distractor_hints=DistractorHints(
            controlled_perturbation="alter the running-time exponent or complexity class, the size bound of the "
            "constructed object, or the admissible range of the input parameters",
            semantic_weakening="drop one of the computed outputs (e.g. keep computing a period but no longer "
            "deciding finiteness), or replace an explicit procedure by bare existence",
            semantic_strengthening="claim one procedure uniform in a parameter it actually depends on, an explicit "
            "numerical bound on the output, or a faster algorithm than the one obtained",
            property_confusion="confuse decidable with semi-decidable, computing a quantity with bounding it, "
            "effective with ineffective, or deterministic with randomised",
        ),
    ),
    Category(
        name="Asymptotic or Limit",
        canonical_form=r"As $n\to\infty$ (or in another limiting regime), $F(n)\sim G(n)$, or "
        r"$F(n)=G(n)+O(E(n))$, or $\lim F(n)=L$.",
        description="The conclusion describes limiting behaviour: an exact limit, an asymptotic equivalence, "
        "a main term with an error term, or a big-O / little-o estimate in a stated regime.",
        decisive_feature="the exact asymptotic regime, leading order and error term",
        stem_strategy="Define the quantity and state the regime precisely (which parameter tends where, and "
        "what stays fixed). Ask for the precise limiting behaviour: the order of growth, the exponent, the "
        "constant or the mode of convergence (for instance: 'as N tends to infinity, what is the sharpest "
        "asymptotic lower bound for f(N)?'). The keyed option gives the leading term, constants and error term "
        "exactly as concluded.",
        distractor_hints=DistractorHints(
            controlled_perturbation="change an exponent, a constant or a power of the logarithm in the main term "
            "or in the error term",
            semantic_weakening="replace an asymptotic equivalence by a same-order or one-sided bound, or enlarge "
            "the error term",
            semantic_strengthening="remove an o(1) or epsilon loss, assert an exact formula or a secondary term, "
            "or make an implied constant explicit or uniform",
            property_confusion="swap pointwise and uniform convergence, the topology or norm of convergence, "
            "lim sup and lim, or the direction of the limiting regime",
        ),
    ),
    Category(
        name="Biconditional or Equivalence",
        canonical_form=r"$P \iff Q$; or: conditions $(1),\dots,(k)$ are pairwise equivalent.",
        description="The conclusion says that two or more conditions imply each other, either as one "
        "'if and only if' or as a list of equivalent statements.",
        decisive_feature="an exact equivalence: a condition that is both necessary and sufficient",
        stem_strategy="Present one side of the equivalence (or one of the listed conditions) in full, together "
        "with all standing assumptions, and ask which condition is equivalent to it or characterises it exactly "
        "(for instance: 'which condition on X is equivalent to P?'). When the theorem lists several conditions you "
        "may list them and ask which relation among them holds. The keyed option states the other side exactly, "
        "as an 'if and only if'.",
        distractor_hints=DistractorHints(
            controlled_perturbation="alter a quantifier, an index range or an inequality inside one side of the "
            "equivalence",
            semantic_weakening="keep only one direction (necessity or sufficiency), or assert the equivalence "
            "only under an extra hypothesis or for part of the list",
            semantic_strengthening="add a further condition claimed to be equivalent, or drop a standing "
            "hypothesis under which the equivalence was proved",
            property_confusion="replace one side by a neighbouring notion that is implied by it or implies it "
            "but is not equivalent",
        ),
    ),
    Category(
        name="Classification or Bijection",
        canonical_form=r"There is a bijection $\Phi\colon\mathcal{X}\to\mathcal{Y}$; or: every object of type "
        r"$\mathcal{X}$ is equivalent to exactly one member of an explicit list.",
        description="The conclusion gives a complete description of a class of objects, as a one-to-one "
        "correspondence with another class or as an exhaustive list up to a stated equivalence.",
        decisive_feature="completeness and exactness of the classification",
        stem_strategy="Describe the class of objects, the equivalence relation and any invariants involved, then "
        "ask for the complete list, the exact description or the correspondence (for instance: 'which subspace "
        "is exactly the kernel of ...?' or 'what is the complete list of ... up to isomorphism?'). The keyed "
        "option gives the whole list or the exact correspondence, including its nature.",
        distractor_hints=DistractorHints(
            controlled_perturbation="change one member, one parameter or one index condition of the list or of "
            "the describing formula",
            semantic_weakening="assert containment instead of equality, or an injection or surjection instead of "
            "a bijection",
            semantic_strengthening="give a shorter list that omits a family, a finer equivalence, or a canonical "
            "isomorphism that was not claimed",
            property_confusion="classify up to a different equivalence (isomorphism, birational equivalence, "
            "homeomorphism) or by a related but different invariant",
        ),
    ),
    Category(
        name="Existence",
        canonical_form=r"$\exists\,x\;P(x)$.",
        description="The conclusion guarantees at least one object with the stated properties, without "
        "asserting that it is unique.",
        decisive_feature="existence of an object with all the stated properties, as opposed to uniqueness or universality",
        stem_strategy="Describe the ambient class and the relevant notions, then ask which existence statement "
        "holds (for instance: 'which existence statement holds for countable groups of this kind?'). The keyed "
        "option asserts existence and lists every property the witness is claimed to have, including the size "
        "of a family when the conclusion gives one.",
        distractor_hints=DistractorHints(
            controlled_perturbation="change the cardinality of the family, a parameter range or one numerical "
            "property of the witness",
            semantic_weakening="drop one required property of the witness or lower the cardinality (countably "
            "many instead of continuum many)",
            semantic_strengthening="add uniqueness, turn the statement into one about every object of the class, "
            "or add regularity or explicitness that was not shown",
            property_confusion="place the witness in a neighbouring class, or give it a related but different "
            "property",
        ),
    ),
    Category(
        name="Existential–Universal",
        canonical_form=r"$\exists\,x\;\forall\,y\;P(x,y)$: one object (a constant, function or parameter) works "
        r"for every $y$.",
        description="The conclusion provides a single object that serves uniformly for every member of a "
        "class; the existential quantifier comes before the universal one.",
        decisive_feature="quantifier order (exists-then-for-all): one witness uniform over the class, and what it may depend on",
        stem_strategy="State what is fixed in advance and over what the universal quantifier ranges, then ask "
        "for the uniform statement (for instance: 'which uniform estimate holds for all sufficiently large X?'). "
        "The keyed option introduces the witness first, states exactly what it may depend on, and then the "
        "property valid for every member of the class.",
        distractor_hints=DistractorHints(
            controlled_perturbation="alter an exponent, threshold or constant inside the universal clause",
            semantic_weakening="reverse the quantifiers so that the witness may depend on y, or shrink the range "
            "of the universal quantifier",
            semantic_strengthening="remove a parameter the witness depends on (make a constant absolute), make "
            "it explicit, or enlarge the universal range",
            property_confusion="let the universal clause range over a related but different set (e.g. "
            "discriminants instead of fields)",
        ),
    ),
    Category(
        name="Implication",
        canonical_form=r"$H_1\wedge\dots\wedge H_k\;\Rightarrow\;C$ (the converse is not claimed).",
        description="The conclusion follows from a list of hypotheses; nothing is said about the converse.",
        decisive_feature="the strongest conclusion that follows from the stated hypotheses",
        stem_strategy="Put every hypothesis into the stem (equations, parameter ranges, structural assumptions) "
        "and ask for the strongest conclusion about the object that holds under them (for instance: 'under these "
        "assumptions, what can be concluded about the special fibre?'). Do not hint at the conclusion. The keyed "
        "option states exactly the conclusion C.",
        distractor_hints=DistractorHints(
            controlled_perturbation="change a parameter range, an exponent or a constant in the conclusion",
            semantic_weakening="state a strict consequence of the conclusion (e.g. birational to the model "
            "instead of a finite quotient of it)",
            semantic_strengthening="claim the converse or an equivalence, a structurally stronger conclusion, or "
            "the same conclusion with one hypothesis removed",
            property_confusion="conclude a related but inequivalent property of the same object",
        ),
    ),
    Category(
        name="Independence or Consistency",
        canonical_form=r"$T\nvdash\varphi$ and $T\nvdash\neg\varphi$; or: $\mathrm{Con}(T)\Rightarrow"
        r"\mathrm{Con}(T+\varphi)$.",
        description="The conclusion is metamathematical: a statement is consistent with, or independent of, "
        "an axiom system, possibly relative to a large-cardinal or other consistency assumption.",
        decisive_feature="provability status relative to an axiom system (consistency versus provability)",
        stem_strategy="Fix the base theory and the consistency assumption, define the notions involved, and ask "
        "which consistency or independence statement holds (for instance: 'which consistency statement about "
        "these ultrafilters holds?'). The keyed option says exactly what is consistent relative to what, "
        "including every extra axiom it is shown compatible with.",
        distractor_hints=DistractorHints(
            controlled_perturbation="change the consistency-strength assumption or the axiom system",
            semantic_weakening="keep consistency of the main statement but drop its compatibility with an extra "
            "axiom, or assert only one half of an independence result",
            semantic_strengthening="claim outright provability instead of consistency, full independence where "
            "only consistency is shown, or that it holds in every model of an extra axiom",
            property_confusion="confuse two related orders or principles, or relative consistency with "
            "equiconsistency",
        ),
    ),
    Category(
        name="Inequality or Bound",
        canonical_form=r"$f(x)\le C\,g(x)$ (or $\ge$, $<$, $>$) for every $x$ in the class, with $C$ depending "
        r"only on listed parameters.",
        description="The conclusion is a quantitative estimate: a uniform bound, a norm inequality or a "
        "comparison between quantities.",
        decisive_feature="the sharp bound: its direction, constant, exponent and the parameters the constant depends on",
        stem_strategy="Define the quantities and the class, then ask for the sharpest quantitative estimate "
        "(for instance: 'which lower bound holds for c(K;F) for every knot K?'); when the conclusion also gives "
        "an equality case or the dependence of constants, ask for those too. The keyed option gives the "
        "inequality with its exact constants, exponents, dependencies and equality case.",
        distractor_hints=DistractorHints(
            controlled_perturbation="change a constant, an exponent, an additive term or the direction of the "
            "inequality",
            semantic_weakening="give a worse constant or exponent, a non-strict version, or the bound only on "
            "a subclass",
            semantic_strengthening="give a better constant or exponent, remove a dependence of the constant, or "
            "widen the equality case",
            property_confusion="bound a related quantity or use a related norm or space (e.g. a different "
            "Lebesgue or Hölder exponent)",
        ),
    ),
    Category(
        name="Nonexistence",
        canonical_form=r"$\neg\exists\,x\;P(x)$, equivalently $\forall\,x\;\neg P(x)$.",
        description="The conclusion is an obstruction: no object of the class has the stated property.",
        decisive_feature="nonexistence (an obstruction): exactly which objects are ruled out",
        stem_strategy="Describe the class and the property in question, then ask what can be said about "
        "objects with that property (for instance: 'which statement about complete metrics of positive scalar "
        "curvature on M holds?'); avoid yes/no phrasing. The keyed option states precisely what is ruled out, "
        "together with any rigidity clause that is part of the same conclusion.",
        distractor_hints=DistractorHints(
            controlled_perturbation="move the excluded property across a threshold (strict versus non-strict "
            "positivity) or change a dimension range",
            semantic_weakening="rule out only a smaller subclass, or only under an extra hypothesis",
            semantic_strengthening="rule out a larger class of objects, or drop a hypothesis needed for the "
            "obstruction",
            property_confusion="exclude a related but different property (e.g. a different curvature condition)",
        ),
    ),
    Category(
        name="Uniqueness",
        canonical_form=r"$\exists!\,x\;P(x)$: existence together with uniqueness in a stated class.",
        description="The conclusion asserts that exactly one object with the property exists, usually within "
        "a stated class or function space.",
        decisive_feature="existence together with uniqueness, and the exact class in which uniqueness holds",
        stem_strategy="Give the full setting (equation, data, boundary conditions) and ask which existence-and-"
        "uniqueness statement holds, without saying in the stem that the object is unique. The keyed option "
        "asserts existence and uniqueness in exactly the class or regularity of the conclusion.",
        distractor_hints=DistractorHints(
            controlled_perturbation="change a regularity index or the range of an exponent in the solution class",
            semantic_weakening="assert mere existence, or uniqueness only in a smaller class or for short time",
            semantic_strengthening="assert uniqueness in a larger class, higher regularity, global instead of "
            "local validity, or drop an assumption on the data",
            property_confusion="assert uniqueness up to a different equivalence, or uniqueness of a related "
            "object",
        ),
    ),
    Category(
        name="Universal",
        canonical_form=r"$\forall\,x\in\mathcal{C}\;P(x)$.",
        description="The conclusion says that every member of a specified class has a property.",
        decisive_feature="that the property holds for every member of the class, and exactly which class",
        stem_strategy="Define the class precisely and ask which statement holds for every member of it (for "
        "instance: 'which statement holds for every hyperbolic lattice of rank at least 46?'). The keyed "
        "option states the property exactly, no weaker and no stronger.",
        distractor_hints=DistractorHints(
            controlled_perturbation="shift a threshold in the class or in the property",
            semantic_weakening="assert the property only on a subclass, or assert a consequence of it",
            semantic_strengthening="enlarge the class by dropping a hypothesis, or strengthen the property",
            property_confusion="assert a nearby property, or present an intermediate step of the argument as "
            "the conclusion",
        ),
    ),
    Category(
        name="Universal–Existential",
        canonical_form=r"$\forall\,x\;\exists\,y\;P(x,y)$: the witness $y$ may depend on $x$.",
        description="The conclusion says that for each member of a class there is an associated object with a "
        "property; the witness may vary with the member.",
        decisive_feature="quantifier order (for-all-then-exists): for each x a witness, which may depend on x",
        stem_strategy="Fix the universally quantified variable in the stem (for instance: 'for every integer "
        "k >= 2') and ask which statement holds for it. The keyed option states that for each such x there is a "
        "y with every required property.",
        distractor_hints=DistractorHints(
            controlled_perturbation="alter a parameter in the property required of the witness",
            semantic_weakening="drop one property of the witness, or restrict the range of x",
            semantic_strengthening="swap the quantifiers so that one witness serves every x, or add uniqueness "
            "or explicit bounds for the witness",
            property_confusion="give the witness a related but different property",
        ),
    ),
)

CATEGORIES: dict[str, Category] = {c.name: c for c in _ALL}
CATEGORY_NAMES: list[str] = [c.name for c in _ALL]

_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"


def _squash(text: str) -> str:
    """Lower case, 'or' for separators, then letters only: 'Existential-Universal' -> 'existentialuniversal'."""
    s = text.strip().lower()
    s = s.replace("\u2200", " forall ").replace("\u2203", " exists ")
    s = re.sub(r"\s*[/|&+]\s*", " or ", s)
    s = re.sub(r"\band\b", " or ", s)
    s = re.sub(rf"[{re.escape(_DASHES)}_]", "", s)
    s = re.sub(r"\b(?:type|category|theorem|statement)s?\b", "", s)
    return re.sub(r"[^a-z]", "", s)


def _aliases() -> dict[str, str]:
    table: dict[str, str] = {}
    for name in CATEGORY_NAMES:
        table[_squash(name)] = name
        if " or " in name:
            left, right = name.split(" or ")
            table[_squash(left)] = name
            table[_squash(right)] = name
            table[_squash(f"{right} or {left}")] = name
    table["forallexists"] = "Universal–Existential"
    table["existsforall"] = "Existential–Universal"
    table["iff"] = "Biconditional or Equivalence"
    table["asymptotics"] = "Asymptotic or Limit"
    table["asymptoticlimit"] = "Asymptotic or Limit"
    table["inequalities"] = "Inequality or Bound"
    table["bounds"] = "Inequality or Bound"
    table["constructive"] = "Algorithmic or Constructive"
    table["algorithm"] = "Algorithmic or Constructive"
    table["consistent"] = "Independence or Consistency"
    table["independent"] = "Independence or Consistency"
    table["notexist"] = "Nonexistence"
    table["doesnotexist"] = "Nonexistence"
    table["unique"] = "Uniqueness"
    table["existenceoruniqueness"] = "Uniqueness"
    return table


_ALIASES = _aliases()


def normalize_category(s: str) -> str | None:
    """The released spelling of a category name, or None when ``s`` names none of the thirteen.

    Accepts "/" or "or" (or "and") between the two halves, either half alone, any
    case, hyphen or en/em dash variants ("Existential-Universal" ->
    "Existential–Universal"), "Non-existence", and a trailing "type".
    """
    if not isinstance(s, str):
        return None
    key = _squash(s)
    if not key:
        return None
    return _ALIASES.get(key)


UNKNOWN = "unknown"  # the released theorem_type of a theorem that fits none of the thirteen categories

# Generation prompts for such a theorem: no category-specific strategy, only what holds for every shape.
UNKNOWN_CATEGORY = Category(
    name=UNKNOWN,
    canonical_form="The conclusion has a logical shape outside the thirteen categories; take it as stated.",
    description="A theorem whose conclusion none of the thirteen logical categories describes.",
    decisive_feature="the single part of the conclusion that carries its strength (a quantifier, a range, a "
    "constant, a dependence or a case distinction)",
    stem_strategy="State the setting and the hypotheses in the stem, then ask about the one part of the conclusion "
    "that carries its strength, phrased as a question about the specific objects of the theorem. The keyed option "
    "states that part exactly as strong as the theorem proves it.",
    distractor_hints=DistractorHints(
        controlled_perturbation="shift a range, a constant, an exponent or a case boundary of the conclusion",
        semantic_weakening="drop one clause of the conclusion or restrict it to a special case",
        semantic_strengthening="remove a hypothesis, widen a range or make a dependence uniform",
        property_confusion="exchange the property the conclusion asserts for a related but different one",
    ),
)


def category_for_prompts(name: str) -> Category:
    """The category whose generation prompts fit ``name``: one of the thirteen, or the generic one for "unknown"."""
    if isinstance(name, str) and name.strip().lower() == UNKNOWN:
        return UNKNOWN_CATEGORY
    return get_category(name)


def get_category(name: str) -> Category:
    """The category for ``name`` in any accepted spelling; ValueError when unknown."""
    canonical = normalize_category(name)
    if canonical is None:
        raise ValueError(f"unknown theorem category {name!r}; expected one of: {', '.join(CATEGORY_NAMES)}")
    return CATEGORIES[canonical]


__all__ = ["CATEGORIES", "CATEGORY_NAMES", "PERTURBATION_STRATEGIES", "UNKNOWN",
           "UNKNOWN_CATEGORY", "Category", "DistractorHints", "category_for_prompts", "get_category",
           "normalize_category"]  # fmt: skip
