"""Leaf contracts parsed once per content: a bounded memo by git blob id, shared by every reader
of the process (the judge, the digest, the board, the notifier).

A blob id names its bytes exactly, so a contract parsed from a blob at a path is the contract of
every tree holding that blob there (the path is part of the key: a contract names its own id);
contracts are frozen models, so one parse can be handed to every
thread. A busy project's digest, board and notices read hundreds of open leaves per landing
while only the newest few are new: each leaf's YAML is parsed once, not once per read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from verifier.errors import FormatError
from verifier.formats.leaf import LeafContract, parse_leaf
from verifier.state.layout import leaf_path
from verifier.state.view import TreeView

LIMIT = 5_000  # contracts kept (a few KiB each): more than any project's open leaves (closed ones are not read)

_parsed: OrderedDict[tuple[str, str], LeafContract | FormatError] = OrderedDict()
_lock = threading.Lock()


def contract_in(tree: TreeView, leaf_id: str) -> LeafContract | None:
    """The leaf's contract in `tree`, or None when it has none; raises FormatError (the same error
    each time) when it does not parse."""
    path = leaf_path(leaf_id)
    blob = tree.blob_id(path)
    if blob is None:
        return None
    key = (blob, path)
    with _lock:
        found = _parsed.get(key)
        if found is not None:
            _parsed.move_to_end(key)
    if found is None:
        data = tree.read(path)
        if data is None:
            return None
        try:
            found = parse_leaf(data, path)
        except FormatError as exc:
            found = exc
        with _lock:
            _parsed[key] = found
            while len(_parsed) > LIMIT:
                _parsed.popitem(last=False)
    if isinstance(found, FormatError):
        raise found
    return found
