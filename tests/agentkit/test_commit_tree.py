"""`rw check` reads the leaf's base through one git process (verifier.agentkit.localcheck.CommitTree):
it sees exactly the files `git ls-tree -r` lists, with the bytes `git cat-file` gives, and refuses
a base that is not a commit id of the clone, naming it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from verifier.agentkit.localcheck import CommitTree


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A clone-like repository: nested folders, a name that is not ASCII, an executable, an empty
    file, a link and a submodule entry; its one commit."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "findings" / "ab").mkdir(parents=True)
    (root / "findings" / "ab" / "fnd_ab.yaml").write_bytes(b"finding_id: fnd_ab\n")
    (root / "PROJECT.md").write_bytes(b"---\nproject: demo\n---\n")
    (root / "caf\u00e9.md").write_bytes("caf\u00e9\n".encode())
    (root / "run.sh").write_bytes(b"#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    (root / "empty").write_bytes(b"")
    (root / "link").symlink_to("PROJECT.md")
    git(root, "add", "-A")
    blob = git(root, "hash-object", "-w", "--stdin").strip().decode()  # any id stands in for a commit
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{blob},vendor/sub")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    return root, git(root, "rev-parse", "HEAD").strip().decode()


def test_the_tree_lists_what_ls_tree_lists_and_reads_what_cat_file_reads(repo: tuple[Path, str]) -> None:
    root, commit = repo
    listed: dict[str, str] = {}
    for entry in git(root, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
        if entry:
            meta, _, path = entry.partition(b"\t")
            _mode, kind, oid = meta.split(b" ")
            if kind == b"blob":
                listed[path.decode()] = oid.decode()
    tree = CommitTree(root, commit)
    try:
        assert tree.blobs == listed and "vendor/sub" not in tree.blobs
        for name, blob_id in listed.items():
            assert tree.read(name) == git(root, "cat-file", "blob", blob_id), name
        assert tree.read("missing.md") is None
        assert tree.list_dir("") == sorted(["PROJECT.md", "caf\u00e9.md", "empty", "findings", "link", "run.sh"])
        assert tree.list_dir("findings") == ["ab"] and tree.is_dir("findings/ab") and not tree.is_dir("vendor")
    finally:
        tree.close()


@pytest.mark.parametrize("revision", ["0" * 40, "HEAD", "--output=x", "abc\nHEAD"])
def test_a_base_that_is_not_a_commit_of_the_clone_is_refused_by_name(repo: tuple[Path, str], revision: str) -> None:
    root, _commit = repo
    with pytest.raises(RuntimeError, match="git cat-file: ") as caught:
        CommitTree(root, revision)
    assert revision.splitlines()[0][:20] in str(caught.value)
