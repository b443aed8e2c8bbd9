"""Originality review (stage f): near-duplicates among templates and against corpora the user supplies.

Texts are compared as sets of word shingles (``shingle_words`` consecutive words, default
5) after a normalisation that makes a re-parameterised copy look like its original:
lower case, every declared ``{param}`` placeholder and every number become the same
token, LaTeX commands keep their names and lose their backslash. Similarity is the
Jaccard index of the shingle sets, estimated by MinHash (``datasketch``); a MinHash LSH
index finds the candidates, and a candidate counts when its estimated similarity reaches
the threshold.

Why 0.8 on word 5-shingles: changing one word of a 60-word problem changes up to five of
its ~56 shingles (Jaccard about 0.84), two changed words bring it to about 0.70. So 0.8
flags verbatim and near-verbatim copies, including the same statement with other
numbers, while a genuine rewording passes; a lower threshold starts to flag distinct
problems that share a long standard preamble ("Let G be a finite group and ..."). With
128 permutations the estimate's standard error near 0.8 is about 0.035.

Among templates, the first one (in build order) is kept and each later near-duplicate is
flagged with the one it repeats; a template near a corpus text is flagged with that text's
place (``file:line``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from datasketch import MinHash, MinHashLSH

_PLACEHOLDER = re.compile(r"\{([A-Za-z_]\w*)\}")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9_]+")
_TEXT_KEYS = ("problem", "text", "question", "statement")


def normalise(text: str, params: set[str] | None = None) -> list[str]:
    """The words of a problem text, with placeholders of ``params`` and numbers made one token ``0``."""
    if params:
        text = _PLACEHOLDER.sub(lambda m: " 0 " if m.group(1) in params else m.group(0), text)
    text = _NUMBER.sub(" 0 ", text.lower())
    return _WORD.findall(text)


def shingles(words: list[str], k: int) -> set[str]:
    if len(words) <= k:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i:i + k]) for i in range(len(words) - k + 1)}


def read_corpus(path: str | Path) -> list[tuple[str, str]]:
    """``(place, text)`` of every text in a corpus file: one text a line, or JSONL with problem/text/question."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            line = line.strip()
            if not line:
                continue
            text = line
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                except ValueError:
                    obj = None
                if isinstance(obj, dict):
                    found = next((obj[k] for k in _TEXT_KEYS if isinstance(obj.get(k), str)), None)
                    if found is None:
                        continue
                    text = found
            out.append((f"{path}:{number}", text))
    return out


@dataclass
class Duplicate:
    template_id: str
    duplicate_of: str  # a template id, or "file:line" of a corpus text
    kind: str  # "template" | "corpus"
    similarity: float

    def reason(self) -> str:
        what = "template" if self.kind == "template" else "corpus text"
        return f"near-duplicate of {what} {self.duplicate_of} (estimated Jaccard {self.similarity:.2f})"


class OriginalityIndex:
    """Corpus texts first, then templates in order; :meth:`check` flags a template near anything seen before it."""

    def __init__(self, *, threshold: float = 0.8, shingle_words: int = 5, num_perm: int = 128):
        self.threshold = threshold
        self.k = shingle_words
        self.num_perm = num_perm
        self.lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        self.hashes: dict[str, MinHash] = {}
        self.kinds: dict[str, str] = {}

    def _hash(self, words: list[str]) -> MinHash | None:
        found = shingles(words, self.k)
        if not found:
            return None
        m = MinHash(num_perm=self.num_perm, seed=1)
        m.update_batch([s.encode() for s in sorted(found)])
        return m

    def _add(self, key: str, kind: str, m: MinHash) -> None:
        if key in self.hashes:
            return
        self.lsh.insert(key, m)
        self.hashes[key] = m
        self.kinds[key] = kind

    def add_corpus(self, texts: list[tuple[str, str]]) -> int:
        added = 0
        for place, text in texts:
            m = self._hash(normalise(text))
            if m is not None:
                self._add(f"corpus:{place}", "corpus", m)
                added += 1
        return added

    def check(self, template_id: str, text: str, params: set[str] | None = None) -> Duplicate | None:
        """The closest earlier text at or above the threshold (None: original); then the template joins the index."""
        m = self._hash(normalise(text, params))
        if m is None:
            return None
        best: Duplicate | None = None
        for key in sorted(self.lsh.query(m)):
            sim = float(m.jaccard(self.hashes[key]))
            if sim >= self.threshold and (best is None or sim > best.similarity):
                kind = self.kinds[key]
                best = Duplicate(template_id, key.removeprefix("corpus:").removeprefix("template:"), kind, sim)
        self._add(f"template:{template_id}", "template", m)
        return best


def _template_of(instance: dict) -> str:
    return str(instance.get("template_id") or str(instance.get("instance_id", "")).split("#")[0])


def measure_instances(instances: list[dict], corpora: list[str] | None = None, *, threshold: float = 0.8,
                      shingle_words: int = 5, num_perm: int = 128) -> dict[str, dict]:  # fmt: skip
    """``instance_id -> originality`` measured for the radar's D6: the nearest corpus text or instance of another
    template, its estimated Jaccard similarity, and ``original`` (below ``threshold``). Instances of one template
    differ only in their numbers, which normalise to one token, so they are never compared with each other."""
    index = OriginalityIndex(threshold=threshold, shingle_words=shingle_words, num_perm=num_perm)
    for path in corpora or []:
        index.add_corpus(read_corpus(path))
    owner: dict[str, str] = {}
    hashes: dict[str, MinHash] = {}
    for inst in instances:
        m = index._hash(normalise(str(inst.get("problem") or "")))
        if m is not None:
            key = f"instance:{inst['instance_id']}"
            hashes[key], owner[key] = m, _template_of(inst)
            index._add(key, "instance", m)
    against = (f"in {len(corpora)} corpus file(s) and " if corpora else "(no corpus given) only ") + \
        "among the instances of other templates"  # fmt: skip
    out: dict[str, dict] = {}
    for inst in instances:
        key, best, sim = f"instance:{inst['instance_id']}", None, 0.0
        if key in hashes:
            for other in index.lsh.query(hashes[key]):
                if other == key or owner.get(other) == owner[key]:
                    continue
                found = float(hashes[key].jaccard(index.hashes[other]))
                if found > sim:
                    best, sim = other.removeprefix("corpus:").removeprefix("instance:"), found
        out[inst["instance_id"]] = {"measured": True, "original": sim < threshold, "max_similarity": round(sim, 3),
                                    "nearest": best, "threshold": threshold, "against": against}  # fmt: skip
    return out


__all__ = ["Duplicate", "OriginalityIndex", "measure_instances", "normalise", "read_corpus", "shingles"]
