"""Paths that differ only by case are one path on a case-insensitive disk: refuse the second. Pure.

On macOS and Windows checkouts `notes/a.md` and `notes/A.md`, or `Ledger/` and `ledger/`, are
the same file, so a patch that writes both, or writes one beside the other already in the tree,
would overwrite a file in any such checkout. Names are compared after Unicode case folding
(paths are ASCII today, so this is lower-casing; folding keeps the rule right if that changes).
A directory counts too: `Notes/x.md` clashes with an existing `notes/`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from verifier.errors import Rejection


def _prefixes(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[: depth + 1]) for depth in range(len(parts))]


def case_clashes(written: Iterable[str], list_dir: Callable[[str], list[str]],
                 removed: Iterable[str] = ()) -> Rejection | None:
    """The first path in `written` whose name, or a folder on its way, differs only by case from
    another written path or from a name in the tree (list_dir(folder) -> names in it); or None.
    Names in `removed` (deleted or renamed away by the same patch) no longer count."""
    gone = set(removed)
    seen: dict[str, str] = {}
    listed: dict[str, dict[str, str]] = {}
    for path in written:
        for prefix in _prefixes(path):
            other = seen.setdefault(prefix.casefold(), prefix)
            if other != prefix:
                return Rejection("case_clash", f"{prefix} and {other} differ only by case; on a case-insensitive "
                                 "disk they are one file", path)
            folder, _, name = prefix.rpartition("/")
            if folder not in listed:
                listed[folder] = {entry.casefold(): entry for entry in list_dir(folder)}
            existing = listed[folder].get(name.casefold())
            if existing is None or existing == name:
                continue
            full = f"{folder}/{existing}" if folder else existing
            if full not in gone:
                return Rejection("case_clash", f"{prefix} differs only by case from {full}, already in the "
                                 "tree; on a case-insensitive disk they are one file", path)
    return None
