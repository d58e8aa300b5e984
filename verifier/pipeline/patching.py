"""The patch against a write set: hold it against the leaf's write set, and apply it to a tree.

Pure: reads go through a TreeView; the result is the map of writes, nothing is stored.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from verifier.checks.writeset import evaluate
from verifier.errors import Rejected, Rejection
from verifier.formats.leaf import WriteRule
from verifier.patch.apply import apply_patch
from verifier.patch.casefold import case_clashes
from verifier.patch.parse import ParsedPatch
from verifier.state.layout import classify
from verifier.state.view import Overlay, TreeView

_DUPLICATE_NAMES = {"finding": "finding_id", "source": "source_id", "source-bytes": "source_id",
                    "link": "link_id", "review": "review id"}


def check_write_set(patch: ParsedPatch, rules: list[WriteRule], *, human: bool = False) -> None:
    _, rejections = evaluate(patch, rules, human=human)
    if rejections:
        raise Rejected(rejections)


def _explain_existing(exc: Rejected) -> Rejected:
    """A create over an existing object file is a duplicate id; say so in the object's terms."""
    first = exc.headline
    if first.code == "path_exists" and first.where:
        kind = classify(first.where)
        if kind is not None and kind.type in _DUPLICATE_NAMES:
            return Rejected(Rejection(
                "duplicate_id",
                f"duplicate {_DUPLICATE_NAMES[kind.type]}: {kind.object_id} is already in the corpus",
                first.where,
            ))
    return exc


def _check_shape(base: TreeView, writes: dict[str, bytes | None]) -> None:
    """Refuse a file where a directory is, or a directory where a file is: in the tree as it
    would be, the base with the patch's writes and deletions laid on it (a patch may delete a
    folder's files and write a file in its place)."""
    view = Overlay(base, writes)
    for path, data in writes.items():
        if data is None:
            continue
        if view.is_dir(path):
            raise Rejected(Rejection("path_clash", f"{path} is a directory in the tree", path))
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if view.read(parent) is not None and writes.get(parent, b"") is not None:
                raise Rejected(Rejection("path_clash", f"{parent} is a file; it cannot hold {path}", path))
            if writes.get(parent) is not None:
                raise Rejected(Rejection("path_clash", f"the patch writes {parent} as a file and a folder", path))


@runtime_checkable
class _ModesCheck(Protocol):
    def file_mode(self, path: str) -> int | None: ...


_REGULAR = 0o100644


def _check_modes(view: TreeView, patch: ParsedPatch) -> None:
    """Every file the patch reads must be a regular file: the verifier writes regular files only,
    so renaming or changing an executable or a symlink would change its mode silently."""
    if not isinstance(view, _ModesCheck):
        return
    for change in patch.changes:
        if change.old_path is None:
            continue
        mode = view.file_mode(change.old_path)
        if mode is not None and mode != _REGULAR:
            raise Rejected(Rejection("mode", f"{change.old_path} has mode {mode:o} in the tree; the patch would "
                                     "change it to 100644 (only regular files are patched)", change.old_path))


def apply_to(view: TreeView, patch: ParsedPatch) -> dict[str, bytes | None]:
    """The writes `patch` makes to `view`, checked for exactness and shape."""
    _check_modes(view, patch)
    try:
        writes = apply_patch(patch, view.read)
    except Rejected as exc:
        raise _explain_existing(exc) from None
    _check_shape(view, writes)
    clash = case_clashes([path for path, data in writes.items() if data is not None], view.list_dir,
                         removed=[path for path, data in writes.items() if data is None])
    if clash is not None:
        raise Rejected(clash)
    return writes


def changed_since(base: TreeView, tip: TreeView, paths: list[str]) -> list[str]:
    """Which of `paths` differ between the base tree and the tip tree."""
    return [path for path in paths if base.blob_id(path) != tip.blob_id(path)]
