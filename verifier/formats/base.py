"""Shared model machinery: strict pydantic bases and turning validation errors into FormatErrors.

Every model that reads untrusted input forbids unknown fields and is frozen. A validation error
becomes one FormatError naming the file, the line (when it can be found) and the field path.

A file parsed once is not parsed again while the process remembers it: YAML is the costliest
step of reading a project (a landing reads the same source record, PROJECT.md and the new
findings in the judge, the digest and the notifier), and a model parsed from the same bytes at the
same path is the same frozen value, so the last PARSED_KEPT parses are kept, by model, path and
the bytes' digest. Refusals are not kept: bad input is parsed, and refused, each time.

The formats `rw check` reads (leaf, project, source, finding, trace) are written without
`from __future__ import annotations`: pydantic reads a field's annotation written as text by
compiling it, once per field at every start; evaluated where the class is written, the same
annotation costs no compile (issue 26; the models' schemas are the same either way).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from datetime import UTC, date, datetime
from typing import Annotated, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, StringConstraints, ValidationError

from verifier.errors import FormatError
from verifier.formats.frontmatter import key_line, load_front_matter, load_yaml
from verifier.text.visible import control_problem

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class Strict(BaseModel):
    """Base for every format: unknown fields are errors, values are frozen after parsing.

    Strict: a value is read as the type it is written as, never coerced ('10', 10.0 and true are
    not the integer 10; 1 is not true), and every number is finite. Timestamps and dates are the
    one text-to-value reading, and only from their ISO spelling (`Timestamp`, `Day`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False, strict=True,
                              allow_inf_nan=False, defer_build=True)


HANDLE_RE = r"^[a-z0-9][a-z0-9_.-]{0,62}$"
Handle = Annotated[str, StringConstraints(pattern=HANDLE_RE)]
Sha256Hex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
CommitId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


Text = Annotated[NonEmpty, AfterValidator(_not_blank)]


def _one_line(value: str) -> str:
    problem = control_problem(value)
    if problem is not None:
        raise ValueError(f"must be one line of plain text; it {problem}")
    return value


def _plain_lines(value: str) -> str:
    problem = control_problem(value, lines=True)
    if problem is not None:
        raise ValueError(f"must be plain text; it {problem}")
    return value


# Text a client sends that others' terminals and logs print (verifier.text.visible.control_problem).
OneLine = AfterValidator(_one_line)
PlainLines = AfterValidator(_plain_lines)


def _aware_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("timestamp needs a timezone, e.g. 2026-11-30T12:00:00Z")
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59:59-01:00 is past the last moment a datetime holds in UTC
        raise ValueError("timestamp is out of range once in UTC") from None


_ISO_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})?$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def timestamp_text(value: object) -> object:
    """An ISO 8601 timestamp string becomes a datetime; anything else is left for strict checking."""
    if isinstance(value, str):
        if not _ISO_TIMESTAMP.match(value):
            raise ValueError("timestamp must be ISO 8601, e.g. 2026-11-30T12:00:00Z")
        return datetime.fromisoformat(value)
    return value


def _date_text(value: object) -> object:
    if isinstance(value, str):
        if not _ISO_DATE.match(value):
            raise ValueError("date must be ISO 8601, e.g. 2026-11-30")
        return date.fromisoformat(value)
    if isinstance(value, datetime):  # a datetime is not a date, though Python says it is one
        raise ValueError("expected a date (YYYY-MM-DD), not a timestamp")
    return value


def _tuple_of_list(value: object) -> object:
    """JSON and YAML have lists, not tuples: a list is the one spelling of a tuple field."""
    return tuple(value) if isinstance(value, list) else value


Timestamp = Annotated[datetime, BeforeValidator(timestamp_text), AfterValidator(_aware_utc)]
Day = Annotated[date, BeforeValidator(_date_text)]
ListIn = BeforeValidator(_tuple_of_list)


def no_items() -> list[T]:
    """An empty list: the default_factory of every list field. A Python function, not `list`,
    because pydantic asks each factory for its signature, and a builtin's is parsed from its text
    by inspect, which compiles the tokenizer's regular expressions (about 0.004 s of CPU at the
    first model built: each `rw check` paid it, issue 26). The value is the same."""
    return []


def iso(moment: datetime) -> str:
    """The one spelling of a timestamp in our files: UTC, seconds, trailing Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _describe(exc: ValidationError) -> tuple[tuple[str | int, ...], str]:
    first = exc.errors()[0]
    loc = tuple(first["loc"])
    field = ".".join(str(part) for part in loc) or "(document)"
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        message = "unknown field (not in the format; see `rw schema`)"
    elif first["type"] == "missing":
        message = "required field is missing"
    more = len(exc.errors()) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return loc, f"field {field}: {message}{suffix}"


def validate(model: type[M], value: object, where: str, raw: bytes | str | None = None,
             *, front_matter: bool = False) -> M:
    """Validate a parsed document against a model; errors name the file, line and field."""
    if not isinstance(value, dict):
        raise FormatError("expected a mapping of fields", where)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        loc, message = _describe(exc)
        line = None
        if raw is not None:
            keys = tuple(part for part in loc if isinstance(part, str | int))
            line = key_line(raw, keys, front_matter=front_matter)
        location = f"{where}:{line}" if line else where
        raise FormatError(message, location) from exc


PARSED_KEPT = 4096  # parsed files remembered per process (a few KiB each)
_parsed: OrderedDict[tuple[type[BaseModel], str, bool, bytes], tuple[BaseModel, str]] = OrderedDict()
_parsed_lock = threading.Lock()


def _remembered(model: type[M], data: bytes | str, where: str, front_matter: bool) -> tuple[M, str]:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    key = (model, where, front_matter, hashlib.blake2b(raw, digest_size=16).digest())
    with _parsed_lock:
        found = _parsed.get(key)
        if found is not None:
            _parsed.move_to_end(key)
    if found is not None:
        value, body = found
        assert isinstance(value, model)
        return value, body
    if front_matter:
        fields, body = load_front_matter(data, where)
        parsed = validate(model, fields, where, data, front_matter=True)
    else:
        parsed, body = validate(model, load_yaml(data, where), where, data), ""
    with _parsed_lock:
        _parsed[key] = (parsed, body)
        while len(_parsed) > PARSED_KEPT:
            _parsed.popitem(last=False)
    return parsed, body


def parse_yaml_model(model: type[M], data: bytes | str, where: str) -> M:
    return _remembered(model, data, where, front_matter=False)[0]


def parse_front_matter_model(model: type[M], data: bytes | str, where: str) -> tuple[M, str]:
    return _remembered(model, data, where, front_matter=True)


SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")


def check_slug(slug: str) -> str:
    if not SLUG_RE.match(slug):
        raise FormatError(
            f"project slug {slug!r} must be 2-63 characters of a-z, 0-9 and '-', "
            "starting with a letter or digit"
        )
    return slug
