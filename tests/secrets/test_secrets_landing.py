"""Nothing secret lands or is shown: patch blobs (binary decoded), people's edits without a trace,
Commons messages; and a bearer token of this verifier found anywhere is revoked and its owner told."""

from __future__ import annotations

import base64
import re

import pytest

from tests.support.hostile import FAKE_AWS_KEY, assert_refused_cleanly, traced_submission
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.workspace import binary_literal
from verifier.commons.adapter import OutgoingMessage
from verifier.commons.db import Database
from verifier.commons.local import LocalCommons
from verifier.commons.screen import WITHHELD
from verifier.errors import AuthError
from verifier.messages.triggers import RowFacts, revoked_messages, secret_message
from verifier.patch.apply import git_blob_id
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import Submission
from verifier.secrets import scan_bytes
from verifier.secrets.tokens import KIND, has_checksum, new_token
from verifier.service.errors import ApiError
from verifier.service.screening import refuse_secret_message
from verifier.store.identities import TOKEN_SHAPE

FINDING_PDF = "findings/ab/fnd_ab00000000000000.pdf"


def _binary_create(path: str, data: bytes) -> bytes:
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..{git_blob_id(data)}\n"
            + binary_literal(data)).encode()


def _new_file(path: str, text: str) -> bytes:
    lines = text.splitlines(keepends=True)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n" + "".join("+" + line for line in lines)).encode()


def test_secret_inside_a_binary_literal_is_refused(world: World) -> None:
    world.leaf("hostile-1")
    patch = _binary_create(FINDING_PDF, b"%PDF-1.4\n% aws_access_key_id=" + FAKE_AWS_KEY.encode() + b"\n\x00\x01")
    submission = traced_submission(world, "hostile-1", patch)
    verdict = assert_refused_cleanly(world, submission, "secret_in_patch", purged=True)
    assert verdict.rejections[0].where == FINDING_PDF
    assert FAKE_AWS_KEY not in verdict.line()


def test_binary_literal_without_a_secret_is_not_refused_for_one(world: World) -> None:
    world.leaf("hostile-1")
    patch = _binary_create(FINDING_PDF, bytes(range(256)) * 40)
    verdict = world.submit(traced_submission(world, "hostile-1", patch))
    assert all(r.code != "secret_in_patch" for r in verdict.rejections), verdict.line()


def test_person_edit_without_a_trace_is_scanned(world: World) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    patch = _new_file("notes/creds.md", f"# creds\n\nAWS_ACCESS_KEY_ID={FAKE_AWS_KEY}\n")
    verdict = assert_refused_cleanly(world, Submission(SLUG, None, patch, {}, token), "secret_in_patch", purged=True)
    assert verdict.rejections[0].where == "patch.diff"


def test_our_bearer_token_in_a_trace_is_revoked_and_its_owner_told(world: World) -> None:
    victim = world.home.identities.add("agent-b", "op-b", "agent", NOW)
    world.home.identities.authenticate(victim)  # works before
    world.leaf("hostile-1")
    submission = traced_submission(world, "hostile-1", _new_file("findings/ab/x.md", "hello\n"),
                                   events=[("tool_result", f"export RW_TOKEN={victim}\n")])
    verdict = assert_refused_cleanly(world, submission, "secret_in_trace", purged=True)
    assert KIND in verdict.rejections[0].message and "agent-b" in verdict.rejections[0].message
    with pytest.raises(AuthError):
        world.home.identities.authenticate(victim)
    world.home.identities.authenticate(world.agent.token)  # the submitter's own token was not in it
    row = list(read_chain(world.repo.view(world.tip())))[-1][1]
    told = revoked_messages(RowFacts(SLUG, row))
    assert [(m.to_agent, m.kind) for m in told] == [("agent-b", "secret")]
    assert victim not in told[0].body
    assert secret_message(RowFacts(SLUG, row)) is not None  # and the submitter is told too


def test_our_token_base64_encoded_in_a_patch_is_revoked(world: World) -> None:
    victim = world.home.identities.add("agent-b", "op-b", "agent", NOW)
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    hidden = base64.b64encode(f'{{"auth": "{victim}"}}'.encode()).decode()
    patch = _new_file("notes/blob.md", f"# blob\n\n{hidden}\n")
    assert_refused_cleanly(world, Submission(SLUG, None, patch, {}, token), "secret_in_patch", purged=True)
    with pytest.raises(AuthError):
        world.home.identities.authenticate(victim)


def test_thread_post_with_a_secret_is_refused_and_a_token_revoked(world: World) -> None:
    victim = world.home.identities.add("agent-b", "op-b", "agent", NOW)
    told: list[list[str]] = []
    with pytest.raises(ApiError) as caught:
        refuse_secret_message(world.home.identities, f"is my token {victim} right?", NOW, told.append)
    assert caught.value.code == "secret_in_message" and caught.value.status == 422
    assert told == [["agent-b"]]
    with pytest.raises(AuthError):
        world.home.identities.authenticate(victim)
    with pytest.raises(ApiError):
        refuse_secret_message(world.home.identities, f"key: {FAKE_AWS_KEY}", NOW, told.append)


def test_honest_thread_post_passes(world: World) -> None:
    body = ("Commit 3f786850e387550fdab836ed7e6dc881de23001b, sha256 "
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, "
            "run 123e4567-e89b-12d3-a456-426614174000")
    told: list[list[str]] = []
    try:
        refuse_secret_message(world.home.identities, body, NOW, told.append)
    except ApiError as exc:
        pytest.fail(f"an honest post was refused: {exc.code}: {exc.message}")
    assert told == []  # and nobody's token was revoked
    assert world.home.identities.authenticate(world.agent.token).handle == "agent-a"


def test_composed_commons_message_with_a_secret_is_stored_withheld(world: World) -> None:
    commons = LocalCommons(Database(world.home.root / "commons-test.sqlite"), world.home.identities)
    commons.post([OutgoingMessage("k1", "outcome", f"title quoting {FAKE_AWS_KEY}", SLUG, "leaf-1"),
                  OutgoingMessage("k2", "outcome", "an honest title", SLUG, "leaf-1")], now=NOW)
    withheld, honest = commons.message("k1"), commons.message("k2")
    assert withheld is not None and withheld.body == WITHHELD and FAKE_AWS_KEY not in str(withheld.data)
    assert honest is not None and honest.body == "an honest title"


def test_new_tokens_carry_a_checksum_and_keep_the_old_shape(world: World) -> None:
    token = new_token()
    assert has_checksum(token) and TOKEN_SHAPE.match(token)
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert not has_checksum(flipped)
    added = world.home.identities.add("agent-c", "op-c", "agent", NOW)
    assert has_checksum(added)
    assert world.home.identities.authenticate(added).handle == "agent-c"


def test_scanner_finds_old_and_new_tokens_but_not_lookalikes() -> None:
    legacy = "rwt_" + "aB3-_" * 8 + "xyz"
    assert len(legacy) == 47
    for token in (new_token(), legacy):
        hits = scan_bytes(f'{{"env": "RW_TOKEN={token}"}}'.encode(), name="t")
        assert KIND in [hit.kind for hit in hits]
    assert scan_bytes(b"send `Authorization: Bearer rwt_...` and rwt_short", name="t") == []
    assert not re.search(KIND, "rwt_")
