"""Writing YAML the way our files are written: block style, keys in the given order, UTF-8, and
every string our own reader would refuse as ambiguous when plain (`N`, `yes`, `0755`, `1:30`, ...)
single-quoted, so whatever the verifier writes it reads back (verifier.formats.frontmatter)."""

from __future__ import annotations

import io
from collections.abc import Mapping

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import SingleQuotedScalarString

from verifier.formats.frontmatter import ambiguous_plain


def _quoted(value: object) -> object:
    if isinstance(value, str):
        return SingleQuotedScalarString(value) if ambiguous_plain(value) else value
    if isinstance(value, dict):
        return {_quoted(key): _quoted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_quoted(item) for item in value]
    return value


def dump_yaml(value: Mapping[str, object]) -> bytes:
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 4096  # one line per scalar: long excerpts stay greppable and diffs stay small
    stream = io.StringIO()
    yaml.dump(_quoted(value), stream)
    return stream.getvalue().encode("utf-8")
