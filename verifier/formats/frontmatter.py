"""Safe reading of YAML documents and Markdown front matter from untrusted bytes.

YAML is parsed with ruamel's safe loader (no Python objects), and read only one way: a document
that another YAML reader could read differently is refused rather than guessed at. Refused
outright, before loading: anchors and aliases (the lever of expansion bombs; our formats never
need them), explicit tags (`!!str`, `!foo`), %YAML and %TAG directives, the `<<` merge key, and
plain scalars that YAML 1.1 and YAML 1.2 readers resolve differently (yes/no/on/off, numbers
with a leading zero or colons, 0b/0o prefixes, an exponent without a dot). Front matter is
delimited by lines that are exactly `---` at column 0, holds no other line that some reader takes
for a fence (`  ---` inside a block scalar, `-----`, `...`: a reader that trims lines would end
the front matter there and see other fields), and holds no line break but LF and CRLF (NEL,
U+2028/9 and a lone CR are breaks to some readers only); a second front-matter block after the
first is refused. Size is bounded before parsing and nesting after. Errors name the file and the line.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable, Iterator

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.cyaml import CParser  # type: ignore[attr-defined]  # clib's C parser, re-exported there
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent, DocumentStartEvent, NodeEvent, ScalarEvent
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver, implicit_resolvers
from ruamel.yaml.tag import Tag

from verifier.constants import MAX_DOCUMENT_BYTES
from verifier.errors import FormatError

MAX_DEPTH = 32
FENCE = "---"


# A plain scalar's rules: (tag, the pattern's match), tried in order.
_Rules = tuple[tuple[str, Callable[[str], object]], ...]


@functools.cache
def _rules_12() -> tuple[dict[str, _Rules], _Rules]:
    """The plain-scalar rules of YAML 1.2, ruamel's own (`implicit_resolvers`), by first character,
    and those for any first character; built at first use (ruamel compiles its patterns lazily,
    and a process that loads no YAML should not pay for them). Only 1.2 is ever needed: a %YAML
    directive, the one way to ask for 1.1, is refused before any document is loaded."""
    by_first: dict[str, list[tuple[str, Callable[[str], object]]]] = {}
    any_first: list[tuple[str, Callable[[str], object]]] = []
    for versions, tag, pattern, first in implicit_resolvers:
        if (1, 2) in versions:
            for character in first if first is not None else [None]:
                (any_first if character is None else by_first.setdefault(character, [])).append((tag, pattern.match))
    return {character: (*rules, *any_first) for character, rules in by_first.items()}, tuple(any_first)


class _Resolver12(VersionedResolver):
    """ruamel's resolver with its YAML 1.2 table made once, not once per document and looked up
    again for every scalar (half of what loading a small document cost)."""

    def resolve(self, kind: type, value: str | None, implicit: tuple[bool, bool] | None) -> object:
        # (kind, value, implicit) as ruamel's composer passes them: value and implicit are a
        # scalar's, None for a sequence or mapping.
        if kind is ScalarNode and value is not None and implicit is not None and implicit[0]:
            by_first, any_first = _rules_12()
            for tag, match in by_first.get(value[:1], any_first):
                if match(value):
                    return Tag(suffix=tag)
            implicit = (False, implicit[1])
        return super().resolve(kind, value, implicit)


class _SafeLoader(CParser, SafeConstructor, _Resolver12):  # type: ignore[misc]
    """What `YAML(typ="safe")` puts together from ruamel.yaml.clib's C parser for every document
    (a class made anew each time), made once: C scanner, parser and composer, ruamel's safe
    constructor (duplicate keys refused), YAML 1.2. One is made per document, so threads share
    nothing. tests/formats/test_yaml_loading.py holds it to `YAML(typ="safe")` value for value."""

    def __init__(self, text: str) -> None:
        CParser.__init__(self, io.StringIO(text))
        self._parser = self._composer = self
        SafeConstructor.__init__(self, loader=self)
        self.allow_duplicate_keys = False
        _Resolver12.__init__(self, version=None, loadumper=self)


def _events(text: str) -> Iterator[object]:
    loader = _SafeLoader(text)
    try:
        while loader.check_event():
            yield loader.get_event()
    finally:
        loader.dispose()


def _documents(text: str) -> list[object]:
    loader = _SafeLoader(text)
    try:
        documents = []
        while loader.check_data():
            documents.append(loader.get_data())
        return documents
    finally:
        loader.dispose()


def _decode(data: bytes | str, where: str) -> str:
    if isinstance(data, str):
        return data
    if len(data) > MAX_DOCUMENT_BYTES:
        raise FormatError(f"document is {len(data)} bytes; the limit is {MAX_DOCUMENT_BYTES}", where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not valid UTF-8 at byte {exc.start}", where) from exc


def _refuse_shared_nodes(value: object, where: str) -> None:
    """Aliases load as the same Python object in two places; refuse any container seen twice.

    Checking the loaded value (rather than parsing events a second time) costs one walk and
    stops before anything (validation, serialisation) could expand an alias bomb.
    """
    seen: set[int] = set()
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if id(node) in seen:
            raise FormatError("YAML anchors and aliases are not allowed", where)
        if depth > MAX_DEPTH:
            raise FormatError(f"nesting deeper than {MAX_DEPTH} levels", where)
        seen.add(id(node))
        children = list(node.keys()) + list(node.values()) if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children)


# Plain scalars that YAML 1.1 readers (PyYAML, many tools) and YAML 1.2 readers (ruamel, ours)
# resolve to different values: 1.1 booleans, sexagesimal numbers, leading zeros (octal in 1.1),
# 1.1 binary, 1.2 octal, exponents without a dot. (Digit separators, 2_000_000, are read as the
# same number by PyYAML and ruamel, and stay allowed.)
_AMBIGUOUS_PLAIN = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF"
    r"|[-+]?0[0-9_]+(?:\.[0-9_]*)?"  # a leading zero: octal to 1.1
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"  # sexagesimal to 1.1
    r"|[-+]?0b[01_]+|[-+]?0o[0-7_]+"  # binary to 1.1, octal to 1.2
    r"|[-+]?[0-9]+[eE][-+]?[0-9]+"  # an exponent without a dot: a float to 1.2, text to 1.1
    r")$"
)


def ambiguous_plain(text: str) -> bool:
    """Whether `text`, written as a plain (unquoted) YAML scalar, would be refused on reading (the
    writer quotes it: verifier.formats.yamlout)."""
    return text == "<<" or _AMBIGUOUS_PLAIN.match(text) is not None


def _event_problem(event: object) -> str | None:
    if isinstance(event, AliasEvent) or (isinstance(event, NodeEvent) and event.anchor is not None):
        return "YAML anchors and aliases are not allowed"
    if isinstance(event, DocumentStartEvent) and (event.version is not None or event.tags):
        return "YAML directives (%YAML, %TAG) are not allowed"
    tag = getattr(event, "tag", None)
    if tag is not None and tag != "!":
        return f"YAML tags are not allowed (found {str(tag)[:40]!r}); write the value plainly"
    if isinstance(event, ScalarEvent) and event.style in (None, "") and event.value == "<<":
        return "the YAML merge key `<<` is not allowed"  # a merge to 1.1 readers, a plain key to others
    if isinstance(event, ScalarEvent) and event.style in (None, "") and _AMBIGUOUS_PLAIN.match(event.value):
        return (f"{event.value[:40]!r} means different things to different YAML readers; quote it if it is "
                "text, or write the number or true/false plainly")
    return None


def _refuse_ambiguous(text: str, where: str, line_offset: int) -> None:
    """Walk the YAML events once; refuse what another reader would read differently."""
    for event in _events(text):
        problem = _event_problem(event)
        if problem is not None:
            mark = getattr(event, "start_mark", None)
            line = mark.line + 1 + line_offset if mark is not None else "?"
            raise FormatError(f"line {line}: {problem}", where)


def _unreadable_scalar_line(text: str, line_offset: int) -> str:
    """"line N: " of the first plain scalar whose value cannot be made (a date past its month's
    end, an integer beyond Python's digit limit), or "" when none is found. Only on that error's
    road: the plain scalars are loaded one by one."""
    for event in _events(text):
        if isinstance(event, ScalarEvent) and event.style in (None, ""):
            try:
                _documents(event.value)
            except (ValueError, OverflowError):
                mark = event.start_mark
                return f"line {mark.line + 1 + line_offset}: " if mark is not None else ""
            except YAMLError:
                continue
    return ""


def load_yaml(data: bytes | str, where: str, *, line_offset: int = 0) -> object:
    """Parse one YAML document from untrusted input; raise FormatError naming the line."""
    text = _decode(data, where)
    try:
        _refuse_ambiguous(text, where, line_offset)
        docs = _documents(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 + line_offset if mark is not None else "?"
        raise FormatError(f"line {line}: YAML syntax: {exc.problem}", where) from exc
    except YAMLError as exc:
        raise FormatError(f"YAML syntax: {exc}", where) from exc
    except RecursionError as exc:
        raise FormatError(f"nesting deeper than {MAX_DEPTH} levels", where) from exc
    except (ValueError, OverflowError) as exc:  # a scalar no value can be made of: 2026-02-31, 5,000 digits
        raise FormatError(f"{_unreadable_scalar_line(text, line_offset)}a value cannot be read ({exc}); quote it "
                          "if it is text", where) from exc
    if len(docs) != 1:
        raise FormatError(f"expected one YAML document, found {len(docs)}", where)
    _refuse_shared_nodes(docs[0], where)
    return docs[0]


def split_front_matter(data: bytes | str, where: str) -> tuple[str, str, int]:
    """Split `---\\n<yaml>\\n---\\n<body>`; return (yaml text, body, line of the yaml's start)."""
    text = _decode(data, where).replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0] != FENCE:
        raise FormatError("expected front matter: the first line must be exactly '---'", where)
    for index in range(1, len(lines)):
        if lines[index] == FENCE:
            yaml_text, body = "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
            _refuse_other_readings(yaml_text, body, where)
            return yaml_text, body, 1
    raise FormatError("front matter is not closed by a '---' line at column 0", where)


_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")
# A line some front-matter reader takes for a fence: readers that trim lines (`  ---`, `--- `),
# that accept more dashes (`-----`: python-frontmatter), or that close on YAML's `...` (Pandoc).
_FENCE_TO_SOME = re.compile(r"-{3,}|\.{3}")


def _refuse_other_readings(yaml_text: str, body: str, where: str) -> None:
    """Refuse front matter whose extent another reader could see differently."""
    odd = _OTHER_BREAKS.search(yaml_text)
    if odd is not None:
        line = yaml_text.count("\n", 0, odd.start()) + 2
        raise FormatError(f"line {line}: front matter holds a line break some readers do not see "
                          f"(U+{ord(odd.group()):04X}); use LF or CRLF", where)
    for number, text in enumerate(yaml_text.split("\n"), start=2):
        if _FENCE_TO_SOME.fullmatch(text.strip().lstrip("\ufeff")):
            raise FormatError(f"line {number}: {text.strip()[:12]!r} is content to this reader (it is not exactly "
                              "'---' at column 0) but ends the front matter for readers that trim lines or accept "
                              "other fences, so they would read different fields; reword the line (a block scalar "
                              "cannot hold a line of only dashes or dots)", where)
    if body.lstrip("\n").startswith(FENCE + "\n") or body.lstrip("\n") == FENCE:
        raise FormatError("a second front-matter block follows the first; keep one", where)


def load_front_matter(data: bytes | str, where: str) -> tuple[object, str]:
    """Parse a Markdown file's front matter and return (mapping, body)."""
    yaml_text, body, offset = split_front_matter(data, where)
    value = load_yaml(yaml_text, where, line_offset=offset)
    if not isinstance(value, dict):
        raise FormatError("front matter must be a mapping of fields", where)
    return value, body


def key_line(data: bytes | str, path: tuple[str | int, ...], *, front_matter: bool) -> int | None:
    """Best-effort line number (1-based) of a field, for error messages only."""
    try:
        text = _decode(data, "")
        offset = 0
        if front_matter:
            text, _, offset = split_front_matter(text, "")
        node = YAML(typ="rt").load(text)
        line: int | None = None
        for key in path:
            if isinstance(key, str) and hasattr(node, "lc") and key in node:
                line = node.lc.key(key)[0] + 1 + offset
                node = node[key]
            elif isinstance(key, int) and hasattr(node, "lc") and 0 <= key < len(node):
                line = node.lc.item(key)[0] + 1 + offset
                node = node[key]
            else:
                break
        return line
    except (YAMLError, FormatError, KeyError, TypeError, AttributeError):
        return None
