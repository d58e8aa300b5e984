"""The patch applier reads patches as strictly as git: binary framing (length bytes, a complete
zlib stream, the reverse section, the index line), no mid-file hunk without trailing context
(unless the whole patch is zero-context), `git format-patch` output, non-UTF-8 text files patched
byte-exactly, and a folder replaced by a file in one patch."""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

import pygit2
import pytest

from tests.support.gitapply import git, init, write
from tests.support.hostile import assert_refused_cleanly
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.workspace import binary_literal
from verifier.errors import Rejected
from verifier.patch.apply import apply_patch, git_blob_id
from verifier.patch.parse import parse_patch
from verifier.pipeline.patching import apply_to
from verifier.pipeline.submit import Submission
from verifier.store.gitrepo import GitTree

PDF = b"%PDF-1.4\n" + bytes(range(256)) * 3
HEAD = "diff --git a/x.pdf b/x.pdf\nnew file mode 100644\n"


def _index(data: bytes) -> str:
    return f"index 0000000..{git_blob_id(data)}\n"


def _code(patch: bytes) -> str:
    with pytest.raises(Rejected) as caught:
        parse_patch(patch)
    return caught.value.headline.code


def _literal_lines(data: bytes) -> list[str]:
    return binary_literal(data).split("\n")


def test_a_well_framed_binary_literal_parses() -> None:
    assert parse_patch((HEAD + _index(PDF) + binary_literal(PDF)).encode()).changes[0].binary == PDF


def test_a_wrong_length_byte_is_refused() -> None:
    lines = _literal_lines(PDF)
    lines[2] = ("y" if lines[2][0] == "z" else "z") + lines[2][1:]
    assert _code((HEAD + _index(PDF) + "\n".join(lines)).encode()) == "malformed_patch"


def test_a_truncated_zlib_stream_is_refused() -> None:
    packed = zlib.compress(PDF, 9)[:-4]  # the adler32 checksum bytes cut off
    body = []
    for start in range(0, len(packed), 52):
        chunk = packed[start:start + 52]
        marker = chr(ord("A") + len(chunk) - 1) if len(chunk) <= 26 else chr(ord("a") + len(chunk) - 27)
        body.append(marker + base64.b85encode(chunk, pad=True).decode())
    literal = f"GIT binary patch\nliteral {len(PDF)}\n" + "\n".join(body) + "\n\nliteral 0\nHcmV?d00001\n\n"
    assert _code((HEAD + _index(PDF) + literal).encode()) == "malformed_patch"


def test_a_corrupt_reverse_section_is_refused() -> None:
    literal = binary_literal(PDF).replace("literal 0\nHcmV?d00001", "literal 0\nHcmV?d0000X")
    assert _code((HEAD + _index(PDF) + literal).encode()) == "malformed_patch"


def test_a_binary_create_without_an_index_line_is_refused() -> None:
    assert _code((HEAD + binary_literal(PDF)).encode()) == "binary"


def _modify(old: str, new_hunk: str) -> bytes:
    return (f"diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n{new_hunk}").encode()


def test_a_mid_file_hunk_without_trailing_context_is_refused() -> None:
    old = b"one\ntwo\nthree\nfour\n"
    patch = parse_patch(_modify("", "@@ -1,2 +1,2 @@\n one\n-two\n+2\n"))
    with pytest.raises(Rejected) as caught:
        apply_patch(patch, {"f.txt": old}.get)
    assert caught.value.headline.code == "does_not_apply"


def test_a_hunk_without_trailing_context_at_the_end_of_the_file_applies() -> None:
    patch = parse_patch(_modify("", "@@ -3,2 +3,2 @@\n three\n-four\n+4\n"))
    assert apply_patch(patch, {"f.txt": b"one\ntwo\nthree\nfour\n"}.get) == {"f.txt": b"one\ntwo\nthree\n4\n"}


def test_a_zero_context_patch_applies_mid_file() -> None:
    patch = parse_patch(_modify("", "@@ -2 +2 @@\n-two\n+2\n"))
    assert apply_patch(patch, {"f.txt": b"one\ntwo\nthree\n"}.get) == {"f.txt": b"one\n2\nthree\n"}


def test_git_format_patch_output_is_accepted() -> None:
    diff = "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    mail = ("From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\n"
            "Date: Mon, 30 Nov 2026 12:00:00 +0000\nSubject: [PATCH] change two\n\nWhy.\n---\n"
            " f.txt | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n" + diff + "-- \n2.43.0\n\n")
    assert apply_patch(parse_patch(mail.encode()), {"f.txt": b"one\ntwo\n"}.get) == {"f.txt": b"one\n2\n"}


def test_a_non_utf8_text_file_is_patched_byte_exactly() -> None:
    old = "caf\xe9\nna\xefve\n".encode("latin-1")
    patch = "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-caf\xe9\n+th\xe9\n na\xefve\n"
    result = apply_patch(parse_patch(patch.encode("latin-1")), {"f.txt": old}.get)
    assert result == {"f.txt": "th\xe9\nna\xefve\n".encode("latin-1")}


def test_patch_headers_that_are_not_utf8_are_refused() -> None:
    assert _code(b"\xff\xfediff --git a/x b/x\n") == "binary"


def _create(path: str, line: bytes) -> bytes:
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n"
            .encode() + b"+" + line)


def _edit(world: World, token: str, patch: bytes) -> Submission:
    return Submission(SLUG, None, patch, {}, token)


def test_a_folder_replaced_by_a_file_in_one_patch_lands(world: World) -> None:
    token = world.home.identities.add("steward", "steward", "human", NOW)
    first = _create("notes/sub/x.md", b"x\n")
    assert world.submit(_edit(world, token, first)).outcome == "accepted"
    swap = (b"diff --git a/notes/sub/x.md b/notes/sub/x.md\ndeleted file mode 100644\n--- a/notes/sub/x.md\n"
            b"+++ /dev/null\n@@ -1 +0,0 @@\n-x\ndiff --git a/notes/sub b/notes/sub\nnew file mode 100644\n"
            b"--- /dev/null\n+++ b/notes/sub\n@@ -0,0 +1 @@\n+now a file\n")
    verdict = world.submit(_edit(world, token, swap))
    assert verdict.outcome == "accepted", verdict.line()
    assert world.repo.view(world.tip()).read("notes/sub") == b"now a file\n"


def test_a_file_inside_a_folder_that_stays_is_still_a_clash(world: World) -> None:
    token = world.home.identities.add("steward", "steward", "human", NOW)
    first = _create("notes/sub/x.md", b"x\n")
    assert world.submit(_edit(world, token, first)).outcome == "accepted"
    clash = _create("notes/sub", b"f\n")
    assert_refused_cleanly(world, _edit(world, token, clash), "path_clash")


def _tree_with(tmp_path: Path, mode: int) -> GitTree:
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    builder = repo.TreeBuilder()
    builder.insert("run.sh", repo.create_blob(b"echo hi\n"), mode)
    builder.insert("keep.txt", repo.create_blob(b"keep\n"), pygit2.enums.FileMode.BLOB)
    tree = repo[builder.write()]
    assert isinstance(tree, pygit2.Tree)
    return GitTree(repo, tree)


@pytest.mark.parametrize("mode", [pygit2.enums.FileMode.BLOB_EXECUTABLE, pygit2.enums.FileMode.LINK])
def test_a_pure_rename_of_an_executable_or_symlink_is_refused(tmp_path: Path, mode: int) -> None:
    rename = b"diff --git a/run.sh b/go.sh\nsimilarity index 100%\nrename from run.sh\nrename to go.sh\n"
    with pytest.raises(Rejected) as caught:
        apply_to(_tree_with(tmp_path, mode), parse_patch(rename))
    assert caught.value.headline.code == "mode"


def test_a_pure_rename_of_a_regular_file_keeps_its_bytes(tmp_path: Path) -> None:
    rename = b"diff --git a/keep.txt b/kept.txt\nsimilarity index 100%\nrename from keep.txt\nrename to kept.txt\n"
    assert apply_to(_tree_with(tmp_path, pygit2.enums.FileMode.BLOB), parse_patch(rename)) == {
        "keep.txt": None, "kept.txt": b"keep\n"}


def test_a_binary_file_can_be_deleted_as_git_writes_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init(repo, {"x.pdf": PDF, "keep.txt": b"k\n"})
    write(repo, {"x.pdf": None})
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", "--binary", "HEAD").stdout
    assert b"GIT binary patch" in patch
    assert apply_patch(parse_patch(patch), {"x.pdf": PDF, "keep.txt": b"k\n"}.get) == {"x.pdf": None}
    with pytest.raises(Rejected) as caught:
        apply_patch(parse_patch(patch), {"x.pdf": PDF + b"changed"}.get)
    assert caught.value.headline.code == "does_not_apply"
