"""Writing YAML the way our files are written: block style, keys in the given order, UTF-8."""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML


def dump_yaml(value: dict[str, Any]) -> bytes:
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 4096  # one line per scalar: long excerpts stay greppable and diffs stay small
    stream = io.StringIO()
    yaml.dump(value, stream)
    return stream.getvalue().encode("utf-8")
