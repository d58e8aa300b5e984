"""`rw import`: hypotheses from a steward's list (design §14, "import three Compass theses"). Pure.

Three inputs are read, by file name:

- `*.txt` / `*.md` / anything else: one statement a line (blank lines and `#` comments skipped);
- `*.yaml` / `*.yml`: a list of mappings with `statement` and optionally `criterion`,
  `check_date` (YYYY-MM-DD), `measure`, `imported_from`;
- `*.csv`: a header row naming the same columns.

Every imported hypothesis is `loose` (§3.5: imported as they are). One that comes with all three
of criterion, check date and measure carries its resolution and is ready for a plan; one
missing any of them stays out of every plan until the steward supplies them (the Planner asks).
A row with only some of the three is an error naming the row: half a resolution is a typo.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import date

from pydantic import ValidationError

from verifier.errors import FormatError
from verifier.formats.frontmatter import load_yaml, split_front_matter
from verifier.formats.hypothesis import Hypothesis
from verifier.formats.yamlout import dump_yaml
from verifier.state.layout import PROJECT_FILE
from verifier.text.visible import control_problem

RESOLUTION_FIELDS = ("criterion", "check_date", "measure")
KNOWN_FIELDS = ("statement", *RESOLUTION_FIELDS, "imported_from")
_HYPOTHESES_LINE = re.compile(r"^hypotheses:[^\n]*$", re.MULTILINE)


@dataclass(frozen=True)
class Imported:
    statement: str
    criterion: str | None = None
    check_date: date | None = None
    measure: str | None = None
    imported_from: str | None = None
    where: str = ""  # the file and its row, item or line, for errors about this one


def _text(key: str, value: object, where: str) -> str:
    """A field's text: a string (a YAML date for check_date, as written), one line of plain text.
    Types are strict: `statement: 12` is refused, not read as "12"."""
    if key == "check_date" and isinstance(value, date):
        return value.isoformat()
    if not isinstance(value, str):
        raise FormatError(f"{key} must be text, not {type(value).__name__} ({str(value)[:40]!r}); quote it", where)
    problem = control_problem(value.strip())
    if problem is not None:
        raise FormatError(f"{key} {problem}", where)
    return value.strip()


def _item(value: dict[str, object], where: str) -> Imported:
    unknown = sorted(set(value) - set(KNOWN_FIELDS))
    if unknown:
        raise FormatError(f"unknown field {unknown[0]!r}; expected some of {', '.join(KNOWN_FIELDS)}", where)
    text = {key: _text(key, value[key], where) for key in KNOWN_FIELDS if value.get(key) not in (None, "")}
    if "statement" not in text:
        raise FormatError("a hypothesis needs a statement", where)
    given = [key for key in RESOLUTION_FIELDS if key in text]
    if given and len(given) < len(RESOLUTION_FIELDS):
        missing = [key for key in RESOLUTION_FIELDS if key not in text]
        raise FormatError(f"has {', '.join(given)} but not {', '.join(missing)}: give all three or none", where)
    check = None
    if "check_date" in text:
        try:
            check = date.fromisoformat(text["check_date"])
        except ValueError as exc:
            raise FormatError(f"check_date {text['check_date']!r} is not a date like 2027-06-30", where) from exc
    return Imported(text["statement"], text.get("criterion"), check, text.get("measure"), text.get("imported_from"),
                    where)


def parse_import(data: bytes, name: str) -> list[Imported]:
    """The hypotheses a file lists, in its order."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 at byte {exc.start}", name) from exc
    lower = name.lower()
    if lower.endswith((".yaml", ".yml")):
        value = load_yaml(text, name)
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise FormatError("expected a list of mappings, each with a statement", name)
        items = [_item(item, f"{name}: item {n}") for n, item in enumerate(value, 1)]
    elif lower.endswith(".csv"):
        items = _csv_items(text, name)
    else:
        items = [Imported(_text("statement", line, f"{name}: line {n}"), where=f"{name}: line {n}")
                 for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    if not items:
        raise FormatError("lists no hypotheses", name)
    return items


def _csv_items(text: str, name: str) -> list[Imported]:
    reader = csv.reader(io.StringIO(text))
    try:
        rows = list(reader)
    except csv.Error as exc:  # a field over csv's size limit, a NUL...
        raise FormatError(f"line {reader.line_num}: not CSV: {exc}", name) from exc
    if not rows:
        return []
    header = [column.strip() for column in rows[0]]
    twice = sorted({column for column in header if header.count(column) > 1})
    if twice:
        raise FormatError(f"the header names {twice[0]!r} twice; one column each", f"{name}: row 1")
    items = []
    for number, row in enumerate(rows[1:], 2):
        if not row:
            continue  # a blank line
        if len(row) > len(header):
            raise FormatError(f"{len(row)} fields under a header of {len(header)}", f"{name}: row {number}")
        items.append(_item(dict(zip(header, row, strict=False)), f"{name}: row {number}"))
    return items


def hypothesis_file(hypothesis_id: str, item: Imported) -> bytes:
    """hypotheses/<id>.md for one imported statement, validated with the Hypothesis model."""
    front: dict[str, object] = {"hypothesis_id": hypothesis_id, "revision": 1, "statement": item.statement}
    if item.criterion and item.check_date and item.measure:
        front["resolution"] = {"criterion": item.criterion, "check_date": item.check_date.isoformat(),
                               "measure": item.measure}
    front["status"] = "loose"
    if item.imported_from:
        front["imported_from"] = item.imported_from
    try:
        Hypothesis.model_validate(front)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise FormatError(f"{field}: {first['msg']}", item.where or hypothesis_id) from exc
    body = b"Imported with `rw import`; the steward adds scope and boundaries here.\n"
    return b"---\n" + dump_yaml(front) + b"---\n" + body


def next_ids(existing: list[str], count: int) -> list[str]:
    start = max((int(h[1:]) for h in existing), default=0) + 1
    return [f"H{n}" for n in range(start, start + count)]


def with_hypotheses(project_md: bytes, order: list[str]) -> bytes:
    """PROJECT.md with its `hypotheses:` line set to `order` (flow style), the rest byte for byte."""
    text = project_md.decode("utf-8")
    front, _body, _line = split_front_matter(text, PROJECT_FILE)
    line = f"hypotheses: [ {', '.join(order)} ]"
    if _HYPOTHESES_LINE.search(front):
        current = _HYPOTHESES_LINE.search(front)
        assert current is not None
        if "[" not in current.group(0):
            raise FormatError("hypotheses: is a block list; write it as [ H1, H2 ] to import into it", PROJECT_FILE)
        new_front = _HYPOTHESES_LINE.sub(line, front, count=1)
    else:
        new_front = front.rstrip("\n") + "\n" + line
    return text.replace(front, new_front, 1).encode("utf-8")
