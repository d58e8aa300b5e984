"""The use-score files (verifier.scoring.use keeps them): a shard of object entries, and the
summary. Typed, parsed strictly, and dumped to the exact bytes the scorer has always written.

A key the scorer leaves out is a fact, not a default: an entry has `gave` only while it counts,
`rejected_by` only while a review rejects it, `introduced_by` once a report introduced it; an
operator row written before undisclosed cost was kept apart has no `*_objects` counts. So those
fields are None when the file has no such key, and `to_json` writes back exactly the keys read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from verifier.errors import FormatError
from verifier.formats.indentjson import dumps_indented
from verifier.formats.strictjson import Json

Number = int | float  # a sum of 1.0 and 0.25 weights is a float; cost sums keep what was added
COST_UNITS = ("tokens", "usd")


def dump_json(value: Json) -> bytes:
    """The scorer's spelling: sorted keys, one-space indent, UTF-8, a final newline (json.dumps's
    bytes, written through its C encoder: verifier.formats.indentjson)."""
    return dumps_indented(value, sort_keys=True, ensure_ascii=False, allow_nan=False).encode() + b"\n"


def _load(data: bytes, where: str) -> dict[str, Json]:
    try:
        # Decoded here: json.loads would first sniff the bytes' encoding, in Python, per file.
        value = json.loads(data.decode("utf-8"))
    except ValueError as exc:
        raise FormatError(f"not JSON: {exc}", where) from exc
    if not isinstance(value, dict):
        raise FormatError("expected a JSON object", where)
    return value


def _number(value: Json, where: str) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormatError(f"expected a number, found {value!r}", where)
    return value


def _int(value: Json, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"expected an integer, found {value!r}", where)
    return value


def _str(value: Json, where: str) -> str:
    if not isinstance(value, str):
        raise FormatError(f"expected a string, found {value!r}", where)
    return value


def _optional_str(value: Json, where: str) -> str | None:
    return None if value is None else _str(value, where)


def _strings(value: Json, where: str) -> list[str]:
    if not isinstance(value, list):
        raise FormatError(f"expected a list of strings, found {value!r}", where)
    return [_str(item, where) for item in value]


def _numbers(value: Json, where: str) -> dict[str, Number]:
    if not isinstance(value, dict):
        raise FormatError(f"expected an object of numbers, found {value!r}", where)
    return {key: _number(item, f"{where}.{key}") for key, item in value.items()}


_ENTRY_KEYS = frozenset({"type", "operator", "present", "u", "finding", "hypothesis", "cites", "introduced",
                         "rejects", "gave", "introduced_by", "rejected_by"})


@dataclass
class UseEntry:
    """One object's entry in a shard. Mutable: the scorer's working copy of the file."""

    type: str
    operator: str  # who first landed it
    present: bool
    u: Number
    finding: str | None = None  # links: the finding and hypothesis it connects
    hypothesis: str | None = None
    linked: bool = False  # the entry carries the two keys above (every link the scorer wrote)
    cites: list[str] | None = None  # plans and reports
    introduced: list[str] | None = None  # reports
    rejects: str | None = None  # a review whose decision is reject: the reviewed object's id
    gave: list[tuple[str, Number]] | None = None  # while it counts: what it lent, to whom
    introduced_by: list[str] | None = None
    rejected_by: list[str] | None = None

    @classmethod
    def from_json(cls, value: Json, where: str) -> UseEntry:
        if not isinstance(value, dict):
            raise FormatError("expected an entry object", where)
        unknown = sorted(set(value) - _ENTRY_KEYS)
        if unknown:
            raise FormatError(f"unknown field {unknown[0]!r}", where)
        missing = [key for key in ("type", "operator", "present", "u") if key not in value]
        if missing:
            raise FormatError(f"field {missing[0]}: required field is missing", where)
        present = value["present"]
        if not isinstance(present, bool):
            raise FormatError(f"field present: expected true or false, found {present!r}", where)
        entry = cls(type=_str(value["type"], where), operator=_str(value["operator"], where), present=present,
                    u=_number(value["u"], where), gave=_gave(value["gave"], where) if "gave" in value else None)
        if "finding" in value or "hypothesis" in value:
            entry.linked = True
            entry.finding = _optional_str(value.get("finding"), where)
            entry.hypothesis = _optional_str(value.get("hypothesis"), where)
        for name in ("cites", "introduced", "introduced_by", "rejected_by"):
            if name in value:
                setattr(entry, name, _strings(value[name], f"{where}.{name}"))
        if "rejects" in value:
            entry.rejects = _str(value["rejects"], where)
        return entry

    def to_json(self) -> dict[str, Json]:
        out: dict[str, Json] = {"type": self.type, "operator": self.operator, "present": self.present, "u": self.u}
        if self.linked:
            out["finding"], out["hypothesis"] = self.finding, self.hypothesis
        for name, values in (("cites", self.cites), ("introduced", self.introduced),
                             ("introduced_by", self.introduced_by), ("rejected_by", self.rejected_by)):
            if values is not None:
                out[name] = list(values)
        if self.rejects is not None:
            out["rejects"] = self.rejects
        if self.gave is not None:
            out["gave"] = [[target, w] for target, w in self.gave]
        return out

    @property
    def active(self) -> bool:
        """Present and not rejected by a review: only active objects count anywhere."""
        return self.present and not self.rejected_by


def _gave(value: Json, where: str) -> list[tuple[str, Number]]:
    pairs = value if isinstance(value, list) else None
    if pairs is None or any(not isinstance(pair, list) or len(pair) != 2 for pair in pairs):
        raise FormatError("field gave: expected a list of [id, weight] pairs", where)
    return [(_str(pair[0], where), _number(pair[1], where)) for pair in pairs if isinstance(pair, list)]


def load_shard(data: bytes, where: str) -> dict[str, Json]:
    """scores/use/<ab>/<cd>.json decoded but its entries not yet checked (UseEntry.from_json
    checks one): for a reader that wants a few of a shard's entries."""
    return _load(data, where)


def parse_shard(data: bytes, where: str) -> dict[str, UseEntry]:
    """scores/use/<ab>/<cd>.json: object id -> entry."""
    return {object_id: UseEntry.from_json(value, f"{where}:{object_id}")
            for object_id, value in _load(data, where).items()}


def dump_shard(entries: Mapping[str, UseEntry]) -> bytes:
    return dump_json({object_id: entry.to_json() for object_id, entry in entries.items()})


@dataclass
class OperatorUse:
    """One operator's v0 components in the summary (never combined into one number)."""

    accepted_leaves: int = 0
    accepted_objects: int = 0
    use_score: Number = 0.0
    tokens: Number | None = None  # the disclosed leaves' sum; None until one discloses
    usd: Number | None = None
    # The accepted objects of the leaves that disclosed each cost, and the leaves that did not.
    # None: a row written before undisclosed cost was kept apart (no such key in the file).
    tokens_objects: int | None = 0
    tokens_undisclosed: int | None = 0
    usd_objects: int | None = 0
    usd_undisclosed: int | None = 0
    usd_per_accepted_object: Number | None = None
    has_per_object: bool = field(default=False, repr=False)  # the file has usd_per_accepted_object

    @classmethod
    def from_json(cls, value: Json, where: str) -> OperatorUse:
        # Every landing that scores reads the summary's rows; a row as the scorer writes it is
        # taken in one pass, anything else by the field-by-field checks below (same result).
        if isinstance(value, dict) and _plain_row(value):
            get = value.get
            return cls(accepted_leaves=get("accepted_leaves", 0),  # type: ignore[arg-type]
                       accepted_objects=get("accepted_objects", 0),  # type: ignore[arg-type]
                       use_score=get("use_score", 0.0),  # type: ignore[arg-type]
                       tokens=get("tokens"), usd=get("usd"),  # type: ignore[arg-type]
                       tokens_objects=get("tokens_objects"), tokens_undisclosed=get("tokens_undisclosed"),  # type: ignore[arg-type]
                       usd_objects=get("usd_objects"), usd_undisclosed=get("usd_undisclosed"),  # type: ignore[arg-type]
                       usd_per_accepted_object=get("usd_per_accepted_object"),  # type: ignore[arg-type]
                       has_per_object="usd_per_accepted_object" in value)
        if not isinstance(value, dict):
            raise FormatError("expected an operator object", where)
        unknown = sorted(set(value) - set(_OPERATOR_KEYS))
        if unknown:
            raise FormatError(f"unknown field {unknown[0]!r}", where)

        def optional(name: str) -> Number | None:
            raw = value.get(name)
            return None if raw is None else _number(raw, f"{where}.{name}")

        def count(name: str) -> int | None:
            return _int(value[name], f"{where}.{name}") if name in value else None

        return cls(accepted_leaves=_int(value.get("accepted_leaves", 0), where),
                   accepted_objects=_int(value.get("accepted_objects", 0), where),
                   use_score=_number(value.get("use_score", 0.0), where),
                   tokens=optional("tokens"), usd=optional("usd"),
                   tokens_objects=count("tokens_objects"), tokens_undisclosed=count("tokens_undisclosed"),
                   usd_objects=count("usd_objects"), usd_undisclosed=count("usd_undisclosed"),
                   usd_per_accepted_object=optional("usd_per_accepted_object"),
                   has_per_object="usd_per_accepted_object" in value)

    def to_json(self) -> dict[str, Json]:
        out: dict[str, Json] = {"accepted_leaves": self.accepted_leaves, "accepted_objects": self.accepted_objects,
                                "use_score": self.use_score, "tokens": self.tokens, "usd": self.usd}
        for name in ("tokens_objects", "tokens_undisclosed", "usd_objects", "usd_undisclosed"):
            count: int | None = getattr(self, name)
            if count is not None:
                out[name] = count
        if self.has_per_object:
            out["usd_per_accepted_object"] = self.usd_per_accepted_object
        return out


_OPERATOR_KEYS = ("accepted_leaves", "accepted_objects", "use_score", "tokens", "usd", "tokens_objects",
                  "tokens_undisclosed", "usd_objects", "usd_undisclosed", "usd_per_accepted_object")
_OPERATOR_KEY_SET = frozenset(_OPERATOR_KEYS)
_ROW_INTS = ("accepted_leaves", "accepted_objects")  # absent reads as 0
_ROW_NUMBERS = ("tokens", "usd", "usd_per_accepted_object")  # absent or null reads as None
_ROW_COUNTS = ("tokens_objects", "tokens_undisclosed", "usd_objects", "usd_undisclosed")  # absent: None


def _plain_row(value: dict[str, Json]) -> bool:
    """A row whose every field is of exactly the type the checks accept (JSON's int and float,
    never a bool), so `OperatorUse.from_json` may take it as is."""
    if not _OPERATOR_KEY_SET.issuperset(value):
        return False
    for name in _ROW_INTS:
        if name in value and type(value[name]) is not int:
            return False
    if "use_score" in value and type(value["use_score"]) not in (int, float):
        return False
    for name in _ROW_NUMBERS:
        raw = value.get(name)
        if raw is not None and type(raw) not in (int, float):
            return False
    return all(type(value[name]) is int for name in _ROW_COUNTS if name in value)


CROSS_OPERATOR = 1.0
SAME_OPERATOR = 0.25


@dataclass
class UseSummary:
    """scores/use.json: U(H) per hypothesis, U(r) per report, the components per operator."""

    hypotheses: dict[str, Number] = field(default_factory=dict)
    reports: dict[str, Number] = field(default_factory=dict)
    operators: dict[str, OperatorUse] = field(default_factory=dict)
    weights: dict[str, Number] = field(default_factory=lambda: {"cross_operator": CROSS_OPERATOR,
                                                                "same_operator": SAME_OPERATOR})

    @classmethod
    def parse(cls, data: bytes | None, where: str) -> UseSummary:
        """The summary a tree holds; an absent file is the empty summary (no object scored yet)."""
        if not data:
            return cls()
        value = _load(data, where)
        unknown = sorted(set(value) - {"hypotheses", "reports", "operators", "weights"})
        if unknown:
            raise FormatError(f"unknown field {unknown[0]!r}", where)
        operators = value.get("operators", {})
        if not isinstance(operators, dict):
            raise FormatError("field operators: expected an object", where)
        return cls(hypotheses=_numbers(value.get("hypotheses", {}), f"{where}.hypotheses"),
                   reports=_numbers(value.get("reports", {}), f"{where}.reports"),
                   operators={name: OperatorUse.from_json(row, f"{where}.operators.{name}")
                              for name, row in operators.items()},
                   weights=_numbers(value.get("weights", {}), f"{where}.weights"))

    def to_json(self) -> dict[str, Json]:
        return {"hypotheses": dict(self.hypotheses), "reports": dict(self.reports),
                "operators": {name: row.to_json() for name, row in self.operators.items()},
                "weights": dict(self.weights)}

    def dump(self, rows: Mapping[str, str] | None = None) -> bytes:
        """`dump_json(self.to_json())`. `rows`: the text (`row_text`) of operator rows known not
        to have changed since it was made, taken as it is (a landing changes one row or two)."""
        rows = rows or {}
        operators = self.operators
        names = sorted(operators)
        if any(type(name) is not str for name in names):
            return dump_json(self.to_json())
        texts = [f"{_KEY(name)}: {rows[name] if name in rows else row_text(operators[name])}" for name in names]
        body = "{\n  " + ",\n  ".join(texts) + "\n }" if texts else "{}"
        return (f'{{\n "hypotheses": {_section(self.hypotheses)},\n "operators": {body},\n'
                f' "reports": {_section(self.reports)},\n "weights": {_section(self.weights)}\n}}\n').encode()


_KEY = json.encoder.encode_basestring  # the summary's spelling: ensure_ascii=False


def row_text(row: OperatorUse) -> str:
    """An operator row as the summary file spells it, at its depth (for `UseSummary.dump`)."""
    return dumps_indented(row.to_json(), sort_keys=True, ensure_ascii=False, allow_nan=False, depth=2)


def _section(numbers: Mapping[str, Number]) -> str:
    return dumps_indented(dict(numbers), sort_keys=True, ensure_ascii=False, allow_nan=False, depth=1)
