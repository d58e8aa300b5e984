"""Golden and property tests for the strict patch parser and exact application."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.patches import modify, new_file
from verifier.agentkit.workspace import binary_literal
from verifier.errors import Rejected
from verifier.patch.apply import apply_patch, git_blob_id
from verifier.patch.parse import parse_patch


def _codes(data: bytes) -> str:
    with pytest.raises(Rejected) as info:
        parse_patch(data)
    return info.value.headline.code


def test_new_file_parses_and_applies() -> None:
    patch = parse_patch(new_file("findings/ab/x.yaml", "a: 1\nb: 2\n"))
    assert [c.op for c in patch.changes] == ["create"]
    assert apply_patch(patch, lambda _p: None) == {"findings/ab/x.yaml": b"a: 1\nb: 2\n"}


def test_modify_applies_exactly() -> None:
    old = "one\ntwo\nthree\n"
    patch = parse_patch(modify("FIELD-GUIDE.md", old, "one\n2\nthree\nfour\n"))
    assert apply_patch(patch, lambda _p: old.encode()) == {"FIELD-GUIDE.md": b"one\n2\nthree\nfour\n"}


def test_context_mismatch_does_not_apply() -> None:
    patch = parse_patch(modify("FIELD-GUIDE.md", "one\ntwo\n", "one\nTWO\n"))
    with pytest.raises(Rejected) as info:
        apply_patch(patch, lambda _p: b"one\nzwei\n")
    assert info.value.headline.code == "does_not_apply"
    assert "line 2" in info.value.headline.message


def test_new_file_over_existing_is_refused() -> None:
    patch = parse_patch(new_file("a.txt", "x\n"))
    with pytest.raises(Rejected) as info:
        apply_patch(patch, lambda _p: b"already\n")
    assert info.value.headline.code == "path_exists"


def test_delete_with_wrong_content_is_refused() -> None:
    data = b"diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    patch = parse_patch(data)
    with pytest.raises(Rejected):
        apply_patch(patch, lambda _p: b"x\ny\n")
    assert apply_patch(patch, lambda _p: b"x\n") == {"a.txt": None}


def test_index_line_must_match_result() -> None:
    blob = git_blob_id(b"x\n")[:7]
    good = new_file("a.txt", "x\n").replace(b"new file mode 100644\n",
                                            f"new file mode 100644\nindex 0000000..{blob}\n".encode())
    assert apply_patch(parse_patch(good), lambda _p: None) == {"a.txt": b"x\n"}
    bad = good.replace(blob.encode(), b"1234567")
    with pytest.raises(Rejected) as info:
        apply_patch(parse_patch(bad), lambda _p: None)
    assert info.value.headline.code == "does_not_apply"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "empty_patch"),
        (b"   \n", "empty_patch"),
        (b"hello\n", "malformed_patch"),
        (new_file("../etc/passwd", "x\n"), "path_traversal"),
        (new_file(".git/config", "x\n"), "git_internal"),
        (new_file("a/.GIT/config", "x\n"), "git_internal"),
        (new_file("a/git~1/config", "x\n"), "git_internal"),
        (new_file(".gitmodules", "x\n"), "git_internal"),
        (new_file("a//b", "x\n"), "bad_path"),
        (new_file("a\\b", "x\n"), "bad_path"),
        (new_file("a/\x01b", "x\n"), "bad_path"),
        (new_file("/abs", "x\n"), "path_traversal"),
        (new_file("x", "a\n").replace(b"100644", b"120000"), "symlink"),
        (new_file("x", "a\n").replace(b"100644", b"160000"), "submodule"),
        (new_file("x", "a\n").replace(b"100644", b"100755"), "mode"),
        (b"diff --git a/x b/x\nold mode 100644\nnew mode 100755\n", "mode"),
        (b"diff --git a/x b/y\nsimilarity index 100%\ncopy from x\ncopy to y\n", "rename"),
        (b"diff --git a/x b/x\nnew file mode 100644\nBinary files /dev/null and b/x differ\n", "binary"),
        (b"diff --git a/x b/x\nnew file mode 100644\nGIT binary patch\ndelta 3\nAbc\n\n", "binary"),
        (new_file("x", "a\n") + new_file("x", "b\n"), "duplicate_path"),
        (new_file("x", "a\n").replace(b"+1,1 @@", b"+1,2 @@"), "malformed_patch"),
        (b"diff --git a/x b/x\n--- a/x\n+++ b/x\n", "empty_patch"),
        (b"\xff\xfe" + new_file("x", "a\n"), "binary"),
        (new_file("x", "a\x00\n"), "binary"),
        (b'diff --git "a/x y" "b/x y"\n', "malformed_patch"),
    ],
)
def test_refused_patches(data: bytes, code: str) -> None:
    assert _codes(data) == code


def test_oversize_patch_is_refused() -> None:
    assert _codes(new_file("x", "a" * 100 + "\n") * 1 + b" " * (8 * 1024 * 1024)) == "oversize"


def test_binary_literal_round_trips() -> None:
    data = bytes(range(256)) * 9
    header = "diff --git a/sources/ab/src_ab00000000000000.pdf b/sources/ab/src_ab00000000000000.pdf\n"
    patch = parse_patch((header + "new file mode 100644\nindex 0000000..0a1b2c3\n" + binary_literal(data)).encode())
    assert patch.changes[0].binary == data


def test_binary_only_for_new_files() -> None:
    header = "diff --git a/x.pdf b/x.pdf\n"
    assert _codes((header + binary_literal(b"abc")).encode()) == "binary"


def test_rename_parses_as_delete_and_create() -> None:
    data = b"diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n"
    patch = parse_patch(data)
    assert patch.changes[0].op == "rename"
    assert apply_patch(patch, lambda p: b"x\n" if p == "a.txt" else None) == {"a.txt": None, "b.txt": b"x\n"}


_lines = st.lists(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n\x00"), max_size=20),
                  max_size=12)


@settings(max_examples=200, deadline=None)
@given(old=_lines, new=_lines, final_newline_old=st.booleans(), final_newline_new=st.booleans())
def test_apply_reproduces_any_edit(old: list[str], new: list[str], final_newline_old: bool,
                                   final_newline_new: bool) -> None:
    """Whatever edit difflib describes, parsing then applying it gives exactly the new text."""
    old_text = "\n".join(old) + ("\n" if final_newline_old and old else "")
    new_text = "\n".join(new) + ("\n" if final_newline_new and new else "")
    if old_text == new_text or not old_text or not new_text:
        return
    patch = parse_patch(modify("notes/a.md", old_text, new_text))
    assert apply_patch(patch, lambda _p: old_text.encode()) == {"notes/a.md": new_text.encode()}
