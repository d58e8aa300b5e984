"""Hostile pushes, from a real git client through the real hooks: a secret anywhere in what a push
brings (a commit's subject, body, trailers, author or committer, a file) is refused with
`secret_in_push` and nothing of it lands (a bearer token of ours in it is revoked); a file in
Latin-1 lands byte for byte; a revert's reason made only of invisible characters is refused, by
every door that takes a reason."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.git import clone, commit_file, git, push_for_review
from tests.support.secret_cases import CASES
from tests.support.world import NOW, SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.errors import AuthError, FormatError
from verifier.formats.ledger import LedgerRow
from verifier.formats.review import parse_review
from verifier.pipeline.ledger import read_chain
from verifier.roles.resolver import approve
from verifier.seal.status import NOT_SEALED
from verifier.text.visible import has_visible_text, require_reason
from verifier.writes.holds import decide
from verifier.writes.repair import repair
from verifier.writes.revert import revert

# Real `rw` processes, a real service or real git pushes: end to end, so in the slow set.
pytestmark = pytest.mark.slow

assert COMMAND_MODULES  # the commands register on import
SECRETS = {case.name: case for case in CASES}
INVISIBLE = ["", " ", "\u200b", "\u2060\u2060", "\ufeff", " \u200b\t\u200d ", "\u3164", "\u0301", "\u2800",
             "\U000e0041\U000e0042", "\ufe0f"]


def person(world: World) -> tuple[str, str]:
    token = world.home.identities.add("ericxtang", "stew-op", "human", NOW)
    return "ericxtang", token


Rows = list[tuple[int, str, str, str | None]]
State = tuple[Rows, list[str], dict[str, str | None]]


def state(world: World) -> State:
    """(ledger rows, refs, the blob of every scores file): what a refused push must leave alone
    but for its one rejected row."""
    view = world.repo.view(world.tip())
    rows: Rows = [(row.seq, row.action, row.outcome, row.reason_code) for _, row in read_chain(view)]
    refs = git(world.repo.path, "for-each-ref", "--format=%(refname)").stdout.split()
    scores = {path: view.blob_id(path) for path in view.walk("scores")}
    return rows, refs, scores


def assert_refused_alone(world: World, before: State, tip: str, code: str) -> None:
    rows, refs, scores = state(world)
    assert rows[:len(before[0])] == before[0]
    assert [(action, outcome, reason) for _, action, outcome, reason in rows[len(before[0]):]] == [
        ("human", "rejected", code)]
    assert refs == before[1] == ["refs/heads/main"]
    assert scores == before[2]
    assert world.repo.changed_paths(tip, world.tip()) == ["ledger/000000.jsonl"]


def everything_on_main(world: World) -> str:
    """Every commit message, author and file on main, as text."""
    done = subprocess.run(["git", "log", "--format=%an %ae %cn %ce%n%B", "-p", "main"], cwd=world.repo.path,
                          capture_output=True, check=True, timeout=120)
    return done.stdout.decode("utf-8", "replace")


@pytest.mark.parametrize("where", ["subject", "body", "trailer", "author", "committer", "file"])
def test_a_secret_anywhere_in_a_push_is_refused_and_lands_nothing(world: World, tmp_path: Path, where: str) -> None:
    _, token = person(world)
    key_id, key = SECRETS["aws_key_id"], SECRETS["aws_secret"]
    github = SECRETS["github"]
    secret = {"subject": key_id.value, "body": key.value, "trailer": github.value, "author": github.value,
              "committer": github.value, "file": github.value}[where]
    message = {"subject": f"note {key_id.context}", "body": f"a note\n\n{key_id.context}\n{key.context}",
               "trailer": f"a note\n\nSome text.\n\nCo-authored-by: {github.context}"}.get(where, "a note")
    env = {"author": {"GIT_AUTHOR_NAME": github.value}, "committer": {"GIT_COMMITTER_NAME": github.value}}.get(where)
    data = f"# a note\n\n{github.context}\n" if where == "file" else "# a note\n"
    tip, before = world.tip(), state(world)
    work = clone(world.repo.path, tmp_path / "work")
    commit_file(work, "notes/honest.md", "# honest\n", "an honest first note")
    commit_file(work, "notes/leak.md", data, message, env=env)
    result = push_for_review(work, token)
    assert result.returncode != 0
    assert "[secret_in_push]" in result.stderr and "NOT LANDED" in result.stderr, result.stderr
    assert secret not in result.stderr  # the refusal names where, never what
    assert_refused_alone(world, before, tip, "secret_in_push")
    assert secret not in everything_on_main(world)


@pytest.mark.parametrize("where", ["message", "author", "file"])
def test_a_bearer_token_anywhere_in_a_push_is_revoked(world: World, tmp_path: Path, where: str) -> None:
    _, token = person(world)
    leaked = world.agent.token
    tip, before = world.tip(), state(world)
    work = clone(world.repo.path, tmp_path / "work")
    message = f"a note\n\nI used RW_TOKEN={leaked} to test." if where == "message" else "a note"
    data = f"# a\n\nexport RW_TOKEN={leaked}\n" if where == "file" else "# a\n"
    commit_file(work, "notes/a.md", data, message, env={"GIT_AUTHOR_NAME": leaked} if where == "author" else None)
    result = push_for_review(work, token)
    assert result.returncode != 0 and "[secret_in_push]" in result.stderr
    assert "revoked the bearer token of: agent-a" in result.stderr
    with pytest.raises(AuthError):
        world.home.identities.authenticate(leaked)
    world.home.identities.authenticate(token)  # the pusher's own token was not in the push: still good
    assert_refused_alone(world, before, tip, "secret_in_push")
    assert leaked not in everything_on_main(world)


def test_an_honest_commit_message_with_trailers_lands(world: World, tmp_path: Path) -> None:
    _, token = person(world)
    work = clone(world.repo.path, tmp_path / "work")
    message = ("notes: the password policy, explained\n\nThe token budget is 4096; see the AWS docs.\n\n"
               "Signed-off-by: Stew Ard <stew@example.org>")
    commit_file(work, "notes/policy.md", "# policy\n\nRotate the key every 90 days.\n", message)
    result = push_for_review(work, token)
    assert result.returncode == 0, result.stderr
    rows = landed_rows(world)
    assert (rows[-1].action, rows[-1].outcome) == ("human", "accepted")
    landed = world.repo.commit(rows[-1].commit or "")
    assert landed.message.startswith("notes: the password policy, explained\n\nThe token budget is 4096")
    assert "Signed-off-by: Stew Ard <stew@example.org>" in landed.message


def test_a_latin1_file_pushed_lands_byte_for_byte_and_so_does_its_edit(world: World, tmp_path: Path) -> None:
    _, token = person(world)
    work = clone(world.repo.path, tmp_path / "work")
    first = "# caf\xe9\n\nna\xefve r\xe9sum\xe9\n".encode("latin-1")
    commit_file(work, "notes/latin.md", first, "a note in Latin-1")
    result = push_for_review(work, token)
    assert result.returncode == 0, result.stderr
    assert world.repo.view(world.tip()).read("notes/latin.md") == first
    git(work, "pull", "-q", "--rebase", "origin", "main")
    second = first + "d\xe9j\xe0 vu\n".encode("latin-1")  # an edit: the diff's index line must match
    commit_file(work, "notes/latin.md", second, "more Latin-1")
    edited = push_for_review(work, token)
    assert edited.returncode == 0 and "does_not_apply" not in edited.stderr, edited.stderr
    assert world.repo.view(world.tip()).read("notes/latin.md") == second


def landed_rows(world: World) -> list[LedgerRow]:
    """The ledger's rows but the "not sealed: why" rows a push may add after its landing (no model here)."""
    return [row for _, row in read_chain(world.repo.view(world.tip())) if row.reason_code != NOT_SEALED]


def landed_note(world: World, work: Path, token: str) -> str:
    """A person's note pushed and landed; returns its contribution commit."""
    commit_file(work, "notes/revert-me.md", "# to revert\n", "a note to revert")
    result = push_for_review(work, token)
    assert result.returncode == 0, result.stderr
    rows = landed_rows(world)
    git(work, "pull", "-q", "--rebase", "origin", "main")
    return rows[-1].commit or ""


@pytest.mark.parametrize("reason", ["\u200b", "\u2060\u2060", "\ufeff", " \u200b\u200d "])
def test_a_pushed_revert_whose_reason_is_invisible_is_refused(world: World, tmp_path: Path, reason: str) -> None:
    _, token = person(world)
    work = clone(world.repo.path, tmp_path / "work")
    target = landed_note(world, work, token)
    tip, before = world.tip(), state(world)
    git(work, "revert", "--no-edit", target)
    message = git(work, "log", "-1", "--format=%B").stdout.strip()
    git(work, "commit", "-q", "--amend", "-m", f"{message}\n\nReason:{reason}")
    result = push_for_review(work, token)
    assert result.returncode != 0 and "[revert_needs_reason]" in result.stderr, result.stderr
    assert "visible character" in result.stderr
    assert_refused_alone(world, before, tip, "revert_needs_reason")
    assert world.repo.view(world.tip()).read("notes/revert-me.md") == b"# to revert\n"


def test_a_pushed_revert_with_a_visible_reason_lands(world: World, tmp_path: Path) -> None:
    _, token = person(world)
    work = clone(world.repo.path, tmp_path / "work")
    target = landed_note(world, work, token)
    git(work, "revert", "--no-edit", target)
    message = git(work, "log", "-1", "--format=%B").stdout.strip()
    git(work, "commit", "-q", "--amend", "-m", f"{message}\n\nReason: \u200bwritten in error")
    result = push_for_review(work, token)
    assert result.returncode == 0, result.stderr
    assert world.repo.view(world.tip()).read("notes/revert-me.md") is None
    last = landed_rows(world)[-1]
    assert last.action == "revert" and "written in error" in last.description


@pytest.mark.parametrize("reason", INVISIBLE)
def test_the_reason_rule_refuses_text_with_nothing_visible(reason: str) -> None:
    assert not has_visible_text(reason)
    with pytest.raises(FormatError, match="needs a reason with at least one visible character"):
        require_reason(reason, "a revert", "--reason")


@pytest.mark.parametrize("reason", ["x", " why ", "\u200bwhy", "\xe9", "\u6570\u636e", "\U0001f600", "e\u0301"])
def test_the_reason_rule_accepts_any_visible_character(reason: str) -> None:
    assert has_visible_text(reason)
    assert require_reason(reason, "a revert") == reason.strip()


def test_every_reason_field_refuses_an_invisible_reason(world: World) -> None:
    handle, _ = person(world)
    actor = world.home.identities.get(handle)
    assert actor is not None
    tip = world.tip()
    rows = state(world)[0]
    calls: dict[str, Callable[[], object]] = {
        "rw revert": lambda: revert(world.home, SLUG, actor, tip, reason="\u200b\u2060", now=NOW),
        "rw hold approve": lambda: decide(world.home, SLUG, actor, "f_0000000000000000", approve=True,
                                          reason="\ufeff", now=NOW),
        "rw hold reject": lambda: decide(world.home, SLUG, actor, "f_0000000000000000", approve=False,
                                         reason="\u200b", now=NOW),
        "rw repair": lambda: repair(world.home, SLUG, actor, tip, reason=" \u200d ", now=NOW),
        "rw verdict approve": lambda: approve(world.home, SLUG, actor, "H1", reason="\u2060", now=NOW),
    }
    for name, call in calls.items():
        with pytest.raises(FormatError, match="visible character"):
            call()
        assert world.tip() == tip and state(world)[0] == rows, name
    review = (b"review_id: rev_0123456789abcdef\nobject_path: findings/ab/f.yaml\nobject_id: f_1\n"
              b"decision: reject\nreason: \"\\u200b\\u2060\"\nleaf_id: review-1\n")
    with pytest.raises(FormatError, match="visible character"):
        parse_review(review, "reviews/ab/rev_0123456789abcdef.yaml")


def test_the_cli_refuses_an_invisible_revert_reason(world: World) -> None:
    _, token = person(world)
    tip = world.tip()
    env = {"RW_HOME": str(world.home.root), "RW_TOKEN": token, "RW_NOW": "2026-11-30T12:00:00Z"}
    result = CliRunner().invoke(cli, ["revert", SLUG, tip, "--reason", "\u200b"], env=env, catch_exceptions=False)
    assert result.exit_code != 0 and "visible character" in result.output
    assert world.tip() == tip
