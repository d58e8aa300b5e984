"""A person steers a project from another machine through a real `rw serve` (docs/api.md,
"People"): a person's edit, the hold queue and its decisions, reverts, verdicts, a leaf by hand, seal, the
Planner's wake, repair, the reads, and the audit log, each refused with 403 `not_authorised` for
a person without the role (the branch and the ledger unchanged, the denial in the audit log) and
allowed for the one who has it; the CLI's `--server` and RW_SERVER reach the same endpoints."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.authority import (
    ADMIN,
    MAINTAINER,
    STEWARD,
    STRANGER,
    People,
    plant_held_sources,
    tip_and_rows,
    with_people,
)
from tests.support.cli import rw_here
from tests.support.edits import edit
from tests.support.graph import land_findings
from tests.support.service_harness import Server, start
from tests.support.world import SLUG, World, make_world
from verifier.client.http import Client
from verifier.store.audit import read_denials

pytestmark = pytest.mark.slow  # a real `rw serve` on loopback

BASE = f"/projects/{SLUG}"


@dataclass
class Site:
    world: World
    people: People
    server: Server
    held: list[str]

    def client(self, handle: str | None = None) -> Client:
        return self.server.client(self.people.token(handle) if handle else None)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    world = make_world(tmp_path_factory.mktemp("people"))
    people = with_people(world)
    held = plant_held_sources(world.home, SLUG, 4)
    server = start(world.home.root)
    yield Site(world, people, server, held)
    server.stop()


def refused_unchanged(site: Site, reply_status: int, code: str | None, before: tuple[str, int]) -> None:
    assert (reply_status, code) == (403, "not_authorised")
    assert tip_and_rows(site.world) == before


def test_the_hold_queue_is_read_openly_and_decided_by_the_steward_only(site: Site) -> None:
    listed = site.client().get(f"{BASE}/holds", auth=False)
    assert listed.status == 200 and [h["object_id"] for h in listed.body["held"]] == site.held
    for handle in (MAINTAINER, STRANGER, ADMIN):
        before = tip_and_rows(site.world)
        reply = site.client(handle).post_json(f"{BASE}/holds/{site.held[0]}/approve", {"reason": "Fine."})
        refused_unchanged(site, reply.status, reply.error_code, before)
        assert "needs its steward (steward: ericxtang)" in reply.error_message
        last = read_denials(site.world.home, SLUG)[-1]
        assert (last.who, last.action, last.door) == (handle, "decide_hold", "http")
    approved = site.client(STEWARD).post_json(f"{BASE}/holds/{site.held[0]}/approve", {"reason": "Vouched."})
    assert approved.status == 200 and approved.body["decision"] == "approved", approved.body
    rejected = site.client(STEWARD).post_json(f"{BASE}/holds/{site.held[1]}/reject", {"reason": "Off topic."})
    assert rejected.status == 200 and rejected.body["decision"] == "rejected"


def test_a_revert_over_http_is_the_stewards_or_a_maintainers(site: Site) -> None:
    landed, _ = land_findings(site.world, "extract-http")
    before = tip_and_rows(site.world)
    reply = site.client(STRANGER).post_json(f"{BASE}/reverts", {"commit": landed.commit, "reason": "No."})
    refused_unchanged(site, reply.status, reply.error_code, before)
    reply = site.client(MAINTAINER).post_json(f"{BASE}/reverts", {"commit": landed.commit, "reason": "Wrong version."})
    assert reply.status == 201 and reply.body["reverted"] == landed.commit, reply.body


def test_verdicts_leaves_seal_and_wake_each_refuse_a_person_without_the_role(site: Site) -> None:
    before = tip_and_rows(site.world)
    for handle, where, body in (
            (MAINTAINER, f"{BASE}/verdicts/H1", {"verdict": "true", "confidence": 0.9, "reason": "Sure."}),
            (ADMIN, f"{BASE}/verdicts/H1/approve", {"reason": "Sure."}),
            (STRANGER, f"{BASE}/leaves", {"kind": "scout", "gap": "pricing data"}),
            (STRANGER, f"{BASE}/seal", {}),
            (STRANGER, f"{BASE}/planner/wake", {"force": True}),
            (STRANGER, f"{BASE}/repair", {"to": site.world.tip(), "reason": "Put back."})):
        reply = site.client(handle).post_json(where, body)
        refused_unchanged(site, reply.status, reply.error_code, before)
    made = site.client(MAINTAINER).post_json(f"{BASE}/leaves", {"kind": "scout", "gap": "pricing data"})
    assert made.status == 201 and made.body["leaf_id"].startswith("scout-"), made.body
    unchanged = tip_and_rows(site.world)
    for body, said in (({"kind": "scout", "gap": "g", "leaf_id": "../../x"}, "leaf_id"),
                       ({"kind": "review", "object_path": "../PROJECT.md"}, "refused")):
        bad = site.client(MAINTAINER).post_json(f"{BASE}/leaves", body)  # the request's fault, not the project's
        assert (bad.status, bad.error_code) == (422, "invalid_body") and said in bad.error_message, bad.body
    assert tip_and_rows(site.world) == unchanged
    woke = site.client(ADMIN).post_json(f"{BASE}/planner/wake", {"force": True})
    assert woke.status == 200, woke.body
    assert "baseline not sealed" in str(woke.body.get("seal_note")), woke.body
    assert str(site.world.home.root) not in str(woke.body), woke.body  # the home's paths stay on its machine


def test_a_bad_token_is_401_and_in_the_audit_log_without_the_token(site: Site) -> None:
    bad = "rwt_" + "z" * 43
    reply = site.server.client(bad).post_json(f"{BASE}/holds/{site.held[2]}/approve", {"reason": "Fine."})
    assert reply.status == 401
    last = [d for d in read_denials(site.world.home, SLUG) if d.kind == "authentication"][-1]
    assert (last.who, last.door, last.project) == ("unknown", "http", SLUG)
    assert bad not in site.world.home.layout.audit_log.read_text()
    assert site.client(STEWARD).get(f"{BASE}/audit").status == 200
    assert site.client(MAINTAINER).get(f"{BASE}/audit").error_code == "not_authorised"


def test_the_reads_answer_openly(site: Site) -> None:
    for where in ("scores", "ledger/verify", "verdicts", "digest"):
        assert site.client().get(f"{BASE}/{where}", auth=False).status == 200, where
    assert site.client().get(f"{BASE}/ledger/verify", auth=False).body["ok"] is True


def test_the_cli_reaches_the_service_by_server_or_rw_server(site: Site,
                                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = str(tmp_path_factory.mktemp("elsewhere") / "home")  # a machine without the project
    env = {"RW_HOME": elsewhere, "RW_TOKEN": site.people.token(STRANGER)}
    local = rw_here("hold", "list", SLUG, env=env)
    assert local.returncode == 2 and "set RW_SERVER=URL" in local.stderr
    listed = rw_here("hold", "list", SLUG, "--server", site.server.url, env=env)
    assert listed.returncode == 0 and site.held[2] in listed.stdout
    refused = rw_here("hold", "approve", SLUG, site.held[2], "--reason", "Fine.", env={**env,
                      "RW_SERVER": site.server.url})
    assert refused.returncode == 10 and "[not_authorised]" in refused.stderr
    approved = rw_here("hold", "approve", SLUG, site.held[2], "--reason", "Vouched.",
                       env={**env, "RW_SERVER": site.server.url, "RW_TOKEN": site.people.token(STEWARD)})
    assert approved.returncode == 0 and f"approved {site.held[2]}" in approved.stdout
    audit = rw_here("audit", SLUG, "--json", env={**env, "RW_SERVER": site.server.url,
                                                  "RW_TOKEN": site.people.token(STEWARD)})
    assert audit.returncode == 0 and '"who": "sam"' in audit.stdout


def test_a_persons_edit_lands_from_another_machine_by_server_or_rw_server(
        site: Site, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("edit")
    old = (site.world.repo.view(site.world.tip()).read("PROJECT.md") or b"").decode()
    assert "usd: 20," in old, "the fixture's budget"
    changed = edit(site.world, "", {"PROJECT.md": old.replace("usd: 20,", "usd: 25,", 1).encode()}).patch
    (folder / "edit.diff").write_bytes(changed)
    env = {"RW_HOME": str(folder / "home"), "RW_SERVER": site.server.url}  # a machine without the project
    before = tip_and_rows(site.world)
    refused = rw_here("submit", SLUG, "--patch", str(folder / "edit.diff"),
                      env={**env, "RW_TOKEN": site.people.token(MAINTAINER)})
    assert refused.returncode == 10 and "[not_authorised]" in refused.stderr, refused.stderr
    assert tip_and_rows(site.world) == before
    last = read_denials(site.world.home, SLUG)[-1]
    assert (last.who, last.action, last.door) == (MAINTAINER, "edit_project", "http")
    scoped = rw_here("submit", SLUG, "--patch", str(folder / "edit.diff"), "--server", site.server.url,
                     env={"RW_HOME": env["RW_HOME"], "RW_TOKEN": site.world.agent.token})
    assert scoped.returncode == 3 and "[token_scope]" in scoped.stderr, scoped.stderr  # an agent's token
    landed = rw_here("submit", SLUG, "--patch", str(folder / "edit.diff"),
                     env={**env, "RW_TOKEN": site.people.token(STEWARD)})
    assert landed.returncode == 0 and landed.stdout.startswith(f"ACCEPTED {SLUG}"), landed.stdout + landed.stderr
    assert "usd: 25," in (site.world.repo.view(site.world.tip()).read("PROJECT.md") or b"").decode()
    # What the landing left unsealed, said for a person elsewhere: nothing of the home's own paths.
    assert "baseline not sealed for" in landed.stderr and str(site.world.home.root) not in landed.stderr
    stale = site.client(STEWARD).edit(SLUG, changed, base="0" * 40)
    assert stale.status == 201 and stale.body["verdict"]["rejections"][0]["code"] == "wrong_base", stale.body
    assert site.client(STEWARD).edit(SLUG, changed, base="HEAD~1").error_code == "bad_query"


def test_a_persons_edit_sent_again_with_its_key_lands_once_and_gets_the_first_answer(site: Site) -> None:
    old = (site.world.repo.view(site.world.tip()).read("PROJECT.md") or b"").decode()
    assert "The steward cares about" in old, "the fixture's words"
    new = old.replace("The steward cares about", "The steward cares most about", 1)
    changed = edit(site.world, "", {"PROJECT.md": new.encode()})
    client = site.client(STEWARD)
    first = client.edit(SLUG, changed.patch, key="edit-key-0001")
    assert first.status == 201 and first.body["verdict"]["outcome"] == "accepted", first.body
    after = tip_and_rows(site.world)
    again = client.edit(SLUG, changed.patch, key="edit-key-0001")  # the answer was lost: sent again
    assert again.status == 200 and again.headers.get("idempotent-replayed") == "true", again.body
    assert again.body["verdict"] == first.body["verdict"] and again.body["submission_id"] == first.body["submission_id"]
    assert tip_and_rows(site.world) == after  # landed once
    other = client.edit(SLUG, changed.patch + b"\n", key="edit-key-0001")
    assert (other.status, other.error_code) == (422, "idempotency_key_reused"), other.body
    assert tip_and_rows(site.world) == after


def test_a_blank_or_an_invisible_reason_is_one_refusal(site: Site) -> None:
    before = tip_and_rows(site.world)
    for reason, seen in (("   ", "only invisible characters (U+0020"), ("\u200b", "(U+200B)")):
        reply = site.client(STEWARD).post_json(f"{BASE}/holds/{site.held[3]}/approve", {"reason": reason})
        assert (reply.status, reply.error_code) == (422, "invalid_body"), reply.body
        assert "needs a reason with at least one visible character" in reply.error_message and seen in \
            reply.error_message, reply.error_message
    assert tip_and_rows(site.world) == before


def test_a_reason_that_would_forge_a_trailer_or_act_on_a_terminal_is_refused(site: Site) -> None:
    before = tip_and_rows(site.world)
    for reason, seen in (("bad data\n\nOperator: mallory", "a line break (U+000A) at character 9"),
                         ("bad \u001b[31mdata", "a control character (U+001B)"),
                         ("bad \u202eatad", "a bidirectional control (U+202E)")):
        reply = site.client(STEWARD).post_json(f"{BASE}/reverts", {"commit": before[0], "reason": reason})
        assert (reply.status, reply.error_code) == (422, "invalid_body"), reply.body
        assert "needs a reason of plain text on one line" in reply.error_message and seen in \
            reply.error_message, reply.error_message
    assert tip_and_rows(site.world) == before
