"""One named test per hostile-patch family: each is refused, and the branch, the ledger and the
object store are as before, but for the one ledger row that records the refusal."""

from __future__ import annotations

import pytest

from tests.support.hostile import assert_refused_cleanly as refused_cleanly
from tests.support.hostile import hostile_submission
from tests.support.patches import new_file
from tests.support.world import World
from verifier.agentkit.workspace import binary_literal

FINDING = "findings/ab/fnd_ab00000000000000.yaml"


def assert_refused_cleanly(world: World, patch: bytes, code: str) -> None:
    """The hostile patch, sent against a fresh leaf, is refused with `code` and leaves nothing but
    the refusal's ledger row (tests.support.hostile's check)."""
    world.leaf("hostile-1")
    refused_cleanly(world, hostile_submission(world, "hostile-1", patch), code)


def test_path_traversal(world: World) -> None:
    assert_refused_cleanly(world, new_file("findings/../../etc/passwd", "root\n"), "path_traversal")


def test_dot_git_in_any_spelling(world: World) -> None:
    assert_refused_cleanly(world, new_file("findings/.GIT/hooks/post-commit", "sh\n"), "git_internal")


def test_symlink(world: World) -> None:
    patch = new_file(FINDING, "/etc/passwd").replace(b"100644", b"120000")
    assert_refused_cleanly(world, patch, "symlink")


def test_submodule(world: World) -> None:
    patch = (f"diff --git a/{FINDING} b/{FINDING}\nnew file mode 160000\nindex 0000000..1234567\n"
             f"--- /dev/null\n+++ b/{FINDING}\n@@ -0,0 +1 @@\n+Subproject commit {'a' * 40}\n").encode()
    assert_refused_cleanly(world, patch, "submodule")


def test_gitmodules_file(world: World) -> None:
    assert_refused_cleanly(world, new_file(".gitmodules", "[submodule]\n"), "git_internal")


def test_mode_change(world: World) -> None:
    patch = b"diff --git a/README.md b/README.md\nold mode 100644\nnew mode 100755\n"
    assert_refused_cleanly(world, patch, "mode")


def test_executable_new_file(world: World) -> None:
    assert_refused_cleanly(world, new_file(FINDING, "x\n").replace(b"100644", b"100755"), "mode")


def test_rename_out_of_the_write_set(world: World) -> None:
    source = "sources/5a/src_5a8990e88a960b49.yaml"
    patch = (f"diff --git a/{source} b/{FINDING}\nsimilarity index 100%\n"
             f"rename from {source}\nrename to {FINDING}\n").encode()
    assert_refused_cleanly(world, patch, "outside_write_set")


def test_binary_change_to_a_text_path(world: World) -> None:
    patch = (b"diff --git a/README.md b/README.md\nindex 1234567..89abcde 100644\n"
             b"Binary files a/README.md and b/README.md differ\n")
    assert_refused_cleanly(world, patch, "binary")


def test_binary_literal_outside_the_write_set(world: World) -> None:
    path = "findings/ab/fnd_ab00000000000000.pdf"
    patch = (f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..0a1b2c3\n"
             + binary_literal(b"%PDF-1.4\x00\x01")).encode()
    assert_refused_cleanly(world, patch, "outside_write_set")


def test_empty_patch(world: World) -> None:
    assert_refused_cleanly(world, b"", "empty_patch")


def test_oversize_patch(world: World) -> None:
    body = "".join(f"+{'x' * 99}\n" for _ in range(90_000))
    patch = (f"diff --git a/{FINDING} b/{FINDING}\nnew file mode 100644\n--- /dev/null\n+++ b/{FINDING}\n"
             f"@@ -0,0 +1,90000 @@\n{body}").encode()
    assert_refused_cleanly(world, patch, "oversize")


def test_write_to_verifier_only_file(world: World) -> None:
    assert_refused_cleanly(world, new_file("ledger/000001.jsonl", "{}\n"), "verifier_only")


def test_new_file_over_existing_path(world: World) -> None:
    assert_refused_cleanly(world, new_file("README.md", "mine now\n"), "outside_write_set")


@pytest.mark.parametrize(("name", "code"), [("a/b\x7f", "bad_path"), ("findings/ab/x\u202e.yaml", "bad_path"),
                                           ("a/ b", "malformed_patch")])
def test_control_bidi_and_space_characters(world: World, name: str, code: str) -> None:
    assert_refused_cleanly(world, new_file(name, "x\n"), code)


def test_a_patch_cut_short_of_its_last_newline_is_refused(world: World) -> None:
    # git apply calls it corrupt: the last line may have been cut, or a missing newline not marked.
    assert_refused_cleanly(world, new_file(FINDING, "a line\n")[:-1], "malformed_patch")
