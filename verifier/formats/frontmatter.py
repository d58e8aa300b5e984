"""Safe reading of YAML documents and Markdown front matter from untrusted bytes.

YAML is parsed with ruamel's safe loader (no tags, no Python objects). Aliases are refused
outright: our formats never need them, and they are the lever of expansion bombs. Size is bounded
before parsing and nesting after. Errors name the file and the line.
"""

from __future__ import annotations

import io
import threading
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from verifier.errors import FormatError

MAX_DOCUMENT_BYTES = 1024 * 1024
MAX_DEPTH = 32
FENCE = "---"


_LOCAL = threading.local()


def _yaml() -> YAML:
    # One loader per thread: ruamel loaders keep state between calls and are not thread-safe,
    # and making one costs more than parsing a small document. The C parser from
    # ruamel.yaml.clib is used when installed (about four times faster than pure Python).
    loader: YAML | None = getattr(_LOCAL, "yaml", None)
    if loader is None:
        loader = _LOCAL.yaml = YAML(typ="safe")
    return loader


def _decode(data: bytes | str, where: str) -> str:
    if isinstance(data, str):
        return data
    if len(data) > MAX_DOCUMENT_BYTES:
        raise FormatError(f"document is {len(data)} bytes; the limit is {MAX_DOCUMENT_BYTES}", where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not valid UTF-8 at byte {exc.start}", where) from exc


def _refuse_shared_nodes(value: Any, where: str) -> None:
    """Aliases load as the same Python object in two places; refuse any container seen twice.

    Checking the loaded value (rather than parsing events a second time) costs one walk and
    stops before anything (validation, serialisation) could expand an alias bomb.
    """
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(value, 0)]
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


def load_yaml(data: bytes | str, where: str, *, line_offset: int = 0) -> Any:
    """Parse one YAML document from untrusted input; raise FormatError naming the line."""
    text = _decode(data, where)
    try:
        docs = list(_yaml().load_all(io.StringIO(text)))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 + line_offset if mark is not None else "?"
        raise FormatError(f"line {line}: YAML syntax: {exc.problem}", where) from exc
    except YAMLError as exc:
        raise FormatError(f"YAML syntax: {exc}", where) from exc
    except RecursionError as exc:
        raise FormatError(f"nesting deeper than {MAX_DEPTH} levels", where) from exc
    if len(docs) != 1:
        raise FormatError(f"expected one YAML document, found {len(docs)}", where)
    _refuse_shared_nodes(docs[0], where)
    return docs[0]


def split_front_matter(data: bytes | str, where: str) -> tuple[str, str, int]:
    """Split `---\\n<yaml>\\n---\\n<body>`; return (yaml text, body, line of the yaml's start)."""
    text = _decode(data, where).replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].strip() != FENCE:
        raise FormatError("expected front matter: the first line must be '---'", where)
    for index in range(1, len(lines)):
        if lines[index].strip() == FENCE:
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), 1
    raise FormatError("front matter is not closed by a '---' line", where)


def load_front_matter(data: bytes | str, where: str) -> tuple[Any, str]:
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
