"""Differential test of the patch applier against `git apply --cached`: on generated repositories
and patches (git's own, and mutated ones), wherever both accept a patch, the resulting trees are
identical, modes included. Bounded so CI stays fast."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.gitapply import git, init, tree_listing, write
from verifier.errors import Rejected
from verifier.patch.apply import apply_patch, git_blob_id
from verifier.patch.parse import parse_patch

LINES = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "", "caf\xe9", "x y"]), min_size=0, max_size=8)
NAMES = ["a.txt", "b.txt", "dir/c.txt", "dir/d.txt"]


def _content(lines: list[str], newline: bool, latin1: bool) -> bytes:
    text = "\n".join(lines) + ("\n" if newline and lines else "")
    return text.encode("latin-1" if latin1 else "utf-8")


SPEC = st.tuples(LINES, st.booleans(), st.booleans())  # lines, final newline, Latin-1
files_strategy = st.dictionaries(st.sampled_from(NAMES), SPEC, max_size=3)
edits_strategy = st.dictionaries(st.sampled_from(NAMES), st.one_of(st.none(), SPEC), max_size=3)


def _ours(base: dict[str, bytes], patch: bytes) -> set[tuple[str, str, str]] | None:
    try:
        writes = apply_patch(parse_patch(patch), base.get)
    except Rejected:
        return None
    result = {**base}
    for path, data in writes.items():
        if data is None:
            result.pop(path, None)
        else:
            result[path] = data
    return {("100644", git_blob_id(data), path) for path, data in result.items()}


def _theirs(repo: Path, patch: bytes) -> set[tuple[str, str, str]] | None:
    git(repo, "read-tree", "HEAD")
    if git(repo, "apply", "--cached", "-", stdin=patch, check=False).returncode != 0:
        return None
    return tree_listing(repo, git(repo, "write-tree").stdout.decode().strip())


def _mutate(patch: bytes, choice: int) -> bytes:
    lines = patch.split(b"\n")
    if len(lines) < 3:
        return patch
    at = choice % (len(lines) - 1)
    kind = choice % 4
    if kind == 0:
        del lines[at]
    elif kind == 1:
        lines.insert(at, lines[at])
    elif kind == 2:
        lines[at] = lines[at].replace(b"1", b"2", 1)
    else:
        lines[at] = lines[at][:1] + b" " + lines[at][1:]
    return b"\n".join(lines)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files_strategy, edits_strategy, st.integers(0, 3), st.booleans(), st.integers(0, 10_000), st.booleans())
def test_where_both_accept_the_trees_are_identical(files: dict[str, tuple[list[str], bool, bool]],
                                                  edits: dict[str, tuple[list[str], bool, bool] | None],
                                                  context: int, renames: bool, choice: int, mutate: bool) -> None:
    base = {path: _content(*spec) for path, spec in files.items()}
    with tempfile.TemporaryDirectory(prefix="rw-diff-") as tmp:
        repo = Path(tmp) / "repo"
        init(repo, base)
        write(repo, {path: None if spec is None else _content(*spec) for path, spec in edits.items()})
        git(repo, "add", "-A")
        patch = git(repo, "diff", "--cached", "--binary", f"-U{context}", "-M" if renames else "--no-renames",
                    "HEAD").stdout
        if not patch:
            return
        if mutate:
            patch = _mutate(patch, choice)
        ours, theirs = _ours(base, patch), _theirs(repo, patch)
        if ours is not None and theirs is not None:
            assert ours == theirs, patch.decode("utf-8", "replace")


def test_an_unmutated_patch_is_accepted_by_both() -> None:
    base = {"a.txt": b"one\ntwo\nthree\n", "dir/c.txt": b"caf\xe9\n"}
    with tempfile.TemporaryDirectory(prefix="rw-diff-") as tmp:
        repo = Path(tmp) / "repo"
        init(repo, base)
        write(repo, {"a.txt": b"one\n2\nthree\nfour\n", "dir/c.txt": b"caf\xe9 au lait\n", "new.txt": b"n\n"})
        git(repo, "add", "-A")
        patch = git(repo, "diff", "--cached", "--binary", "HEAD").stdout
        ours, theirs = _ours(base, patch), _theirs(repo, patch)
        assert ours is not None and ours == theirs
