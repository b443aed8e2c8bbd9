"""MCQ items in the released LiveMathematicianBench format, validated before any work.

A file is a JSON list of items (or JSONL, one item a line). Each item needs an
``id`` and an ``mcq`` block with the correct choice (label ``A`` before
shuffling) and four distractors labelled B–E; everything else in the item is
kept as it is. A broken item stops the whole load with one line naming the
item and the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from theorembench.common.errors import UserError
from theorembench.store import content_hash

META_OPTION = "One of the remaining options is correct, but a stronger result can be proven."
NO_EXPANDED_SKETCH = "No expanded sketch found."


class DatasetError(UserError, ValueError):
    """An input file that cannot be evaluated; the message is one line."""


class Choice(BaseModel):
    model_config = ConfigDict(extra="allow")
    label: str
    text: str = Field(min_length=1)


class MCQ(BaseModel):
    model_config = ConfigDict(extra="allow")
    question: str = Field(min_length=1)
    correct_choice: Choice
    choices: list[Choice]

    @field_validator("choices")
    @classmethod
    def _four_distractors(cls, value: list[Choice]) -> list[Choice]:
        if len(value) != 4:
            raise ValueError(f"needs exactly 4 distractors, found {len(value)}")
        return value


class Item(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1)
    mcq: MCQ
    theorem_type: list[str] | str | None = None
    sketch: str | None = None
    expanded_sketch: str | None = None


@dataclass
class Dataset:
    path: Path
    id: str  # sha256 of the file's bytes
    name: str
    month: str
    items: list[Item]
    raw: list[dict[str, Any]]


def _field_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(item)"


def _read_records(path: Path, data: bytes) -> list[Any]:
    text = data.decode("utf-8-sig")
    if path.suffix == ".jsonl":
        records = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}: line {lineno} is not valid JSON: {exc.msg}") from None
        return records
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if isinstance(value, dict) and isinstance(value.get("items"), list):
        value = value["items"]
    if not isinstance(value, list):
        raise DatasetError(f"{path}: expected a JSON list of items, found {type(value).__name__}")
    return value


def month_of(item_id: str) -> str | None:
    """``2511.04651v1::alt1`` -> ``202511`` (new-style arXiv ids carry YYMM)."""
    m = re.match(r"^(\d{2})(\d{2})\.\d{4,5}", item_id)
    if not m:
        return None
    return f"20{m.group(1)}{m.group(2)}"


def _month_of_file(path: Path, items: list[Item]) -> str:
    m = re.search(r"(?<!\d)(20\d{2})(0[1-9]|1[0-2])(?!\d)", path.name)
    if m:
        return m.group(1) + m.group(2)
    months = {month_of(item.id) for item in items} - {None}
    if len(months) == 1:
        return months.pop()  # type: ignore[return-value]
    return "mixed" if months else "unknown"


def load_dataset(path: str | Path) -> Dataset:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    records = _read_records(path, data)
    if not records:
        raise DatasetError(f"{path}: the file holds no items")
    items: list[Item] = []
    seen: dict[str, int] = {}
    for idx, record in enumerate(records):
        if not isinstance(record, dict):
            raise DatasetError(f"{path}: item {idx}: expected an object, found {type(record).__name__}")
        label = f"item {idx}" + (f" ({record['id']!r})" if isinstance(record.get("id"), str) else "")
        try:
            item = Item.model_validate(record)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise DatasetError(
                f"{path}: {label}: field '{_field_path(err['loc'])}': {err['msg']}"
            ) from None
        _check_labels(path, label, item)
        if item.id in seen:
            raise DatasetError(f"{path}: {label}: field 'id': duplicate of item {seen[item.id]}")
        seen[item.id] = idx
        items.append(item)
    return Dataset(
        path=path,
        id=content_hash(data),
        name=path.stem,
        month=_month_of_file(path, items),
        items=items,
        raw=records,
    )


def _check_labels(path: Path, label: str, item: Item) -> None:
    if item.mcq.correct_choice.label != "A":
        raise DatasetError(
            f"{path}: {label}: field 'mcq.correct_choice.label': must be 'A', "
            f"found {item.mcq.correct_choice.label!r}"
        )
    labels = [c.label for c in item.mcq.choices]
    if sorted(labels) != ["B", "C", "D", "E"]:
        raise DatasetError(
            f"{path}: {label}: field 'mcq.choices': labels must be B, C, D, E, found {labels}"
        )


def categories(item: Item) -> list[str]:
    kind = item.theorem_type
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)] or ["unknown"]
    if isinstance(kind, str) and kind:
        return [kind]
    return ["unknown"]


def is_substitution_resistant(item: Item) -> bool:
    return " ".join(item.mcq.correct_choice.text.split()) == META_OPTION
