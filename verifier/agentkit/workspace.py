"""A working clone of a project, and the patch of what an agent changed in it."""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

import pygit2

from verifier.agentkit.safefiles import write_bytes
from verifier.patch.apply import git_blob_id


def clone(bare_repo: Path, dest: Path, *, revision: str | None = None) -> pygit2.Repository:
    """Clone a project repository and check out `revision` (default: the tip)."""
    # Through git's protocol (file://), not a copy of the folder: only reachable objects come.
    repo = pygit2.clone_repository(bare_repo.resolve().as_uri(), str(dest))
    if revision is not None:
        commit = repo.revparse_single(revision).peel(pygit2.Commit)
        repo.checkout_tree(commit.tree, strategy=pygit2.enums.CheckoutStrategy.FORCE)  # type: ignore[no-untyped-call]
        repo.set_head(commit.id)
    return repo


def write_files(repo: pygit2.Repository, files: dict[str, bytes]) -> None:
    """Write `files` into the clone's working tree, never through a link (agentkit.safefiles)."""
    workdir = Path(repo.workdir)
    for relative, data in files.items():
        write_bytes(workdir, relative, data)


def binary_literal(data: bytes) -> str:
    """git's `GIT binary patch` literal block for `data` (zlib, then base85 in lines of 52)."""
    packed = zlib.compress(data, 9)
    lines = [f"GIT binary patch\nliteral {len(data)}"]
    for start in range(0, len(packed), 52):
        chunk = packed[start : start + 52]
        size = len(chunk)
        marker = chr(ord("A") + size - 1) if size <= 26 else chr(ord("a") + size - 27)
        lines.append(marker + base64.b85encode(chunk, pad=True).decode("ascii"))  # whole 4-byte groups, as git
    return "\n".join(lines) + "\n\nliteral 0\nHcmV?d00001\n\n"


def make_patch(repo: pygit2.Repository) -> bytes:
    """Everything changed in the working tree against HEAD, as `git diff --binary` writes it.

    libgit2 (through pygit2) writes "Binary files ... differ" without data, so new binary files
    get their literal block from `binary_literal` instead.
    """
    index = repo.index
    index.add_all()
    index.write()
    head_tree = repo.head.peel(pygit2.Commit).tree
    diff = head_tree.diff_to_index(index)
    pieces: list[str] = []
    for patch in diff:
        if patch is None:
            continue
        text = patch.text or ""
        delta = patch.delta
        if delta.is_binary and delta.status == pygit2.enums.DeltaStatus.ADDED:
            blob = repo[delta.new_file.id]
            assert isinstance(blob, pygit2.Blob)
            data = blob.data
            head, _, _ = text.partition("Binary files ")
            text = head + binary_literal(data)
        pieces.append(text)
    return "".join(pieces).encode("utf-8")


def head(repo: pygit2.Repository) -> str:
    return str(repo.head.target)


def creation_patch(files: dict[str, bytes]) -> bytes:
    """A git diff that creates `files` (text as hunks, anything else as a binary literal), for
    agents that write new objects without a clone; identical to what `git diff` writes."""
    pieces: list[str] = []
    for path in sorted(files):
        data = files[path]
        header = f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..{git_blob_id(data)[:7]}\n"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\x00" in text:
            pieces.append(header + binary_literal(data))
            continue
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
            tail = ""
        else:
            tail = "\n\\ No newline at end of file"
        body = "\n".join("+" + line for line in lines) + tail + "\n"
        count = len(lines)
        counts = f"+1,{count}" if count != 1 else "+1"
        pieces.append(f"{header}--- /dev/null\n+++ b/{path}\n@@ -0,0 {counts} @@\n{body}")
    return "".join(pieces).encode("utf-8")
