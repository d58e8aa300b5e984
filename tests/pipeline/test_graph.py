"""The evidence graph end to end: links, skeptic notes, reviews, the Field Guide, people's edits,
plans and reports, holds, reverts, use scores, replay and the digest."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from tests.support.edits import edit, landed_findings, report_doc
from tests.support.patches import modify
from tests.support.world import FIXTURES, GUIDE_ID, NOTE_ID, NOW, PDF_ID, SLUG, ScriptedAgent, World, make_home
from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import link_file, note_file, review_file
from verifier.audits.replay import replay
from verifier.errors import ConflictError
from verifier.pipeline.digest import digest
from verifier.pipeline.payload import leaf_payload
from verifier.pipeline.submit import Submission, Verdict
from verifier.state.layout import USE_SCORES, finding_path, use_shard_path
from verifier.state.project import ProjectView
from verifier.store.fetcher import OfflineFetcher
from verifier.store.gitrepo import VERIFIER
from verifier.store.identities import Actor
from verifier.writes.holds import decide
from verifier.writes.project import init_project
from verifier.writes.revert import revert


@pytest.fixture
def steward(world: World) -> tuple[Actor, str]:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    return world.home.identities.authenticate(token), token


def links(world: World, leaf_id: str, findings: list[str], stances: list[str], kind: str = "link",
          revision: int = 1) -> dict[str, bytes]:
    files = {}
    for finding_id, stance in zip(findings, stances, strict=False):
        path, data = link_file(finding_id=finding_id, hypothesis_id="H1", revision=revision, stance=stance,
                               rationale=f"{stance} because the figures say so", leaf_kind=kind, leaf_id=leaf_id)
        files[path] = data
    return files


def use_of(world: World, object_id: str) -> float:
    shard = json.loads(world.repo.view(world.tip()).read(use_shard_path(object_id)) or b"{}")
    return float(shard[object_id]["u"])


def summary(world: World) -> dict:  # type: ignore[type-arg]
    scores: dict = json.loads(world.repo.view(world.tip()).read(USE_SCORES) or b"{}")  # type: ignore[type-arg]
    return scores


def test_link_leaf_with_contradicting_link(world: World, second_agent) -> None:  # type: ignore[no-untyped-def]
    findings = landed_findings(world)
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    other = second_agent()
    verdict = world.submit(world.creation("link-1", links(world, "link-1", findings[:2], ["supports", "contradicts"]),
                                          agent=other))
    assert verdict.outcome == "accepted", verdict.line()
    assert "1 contradicts" in verdict.summary
    # Cross-operator links weigh 1.0 each.
    assert use_of(world, findings[0]) == 1.0
    assert summary(world)["hypotheses"]["H1"] == 2.0


def test_counter_evidence_requirement(world: World) -> None:
    findings = landed_findings(world)
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    verdict = world.submit(world.creation("link-1", links(world, "link-1", findings[:2], ["supports", "supports"])))
    assert verdict.rejections[0].code == "counter_evidence"


def test_skeptic_note_with_scout_requests(world: World) -> None:
    findings = landed_findings(world)
    world.leaf("skeptic-1", "skeptic", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    files = links(world, "skeptic-1", findings[:1], ["context"], kind="skeptic")
    files.update([note_file(leaf_id="skeptic-1", hypothesis_id="H1", revision=1, none_found_after=3,
                            sources_checked=[NOTE_ID, GUIDE_ID, PDF_ID],
                            scout_requests=["teams that stopped paying for verification"])])
    verdict = world.submit(world.creation("skeptic-1", files))
    assert verdict.outcome == "accepted", verdict.line()
    assert any("scout request" in note for note in verdict.notes)
    assert any("stopped paying" in gap for gap in digest(world.home, SLUG, NOW)["open_gaps"])


@pytest.mark.parametrize(("finding", "revision", "code"), [
    ("fnd_0000000000000000", 1, "unknown_finding"),
    (None, 2, "unknown_revision"),
])
def test_link_must_point_at_existing_objects(world: World, finding: str | None, revision: int, code: str) -> None:
    findings = landed_findings(world)
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    files = links(world, "link-1", [finding or findings[0]], ["contradicts"], revision=revision)
    verdict = world.submit(world.creation("link-1", files))
    assert code in [r.code for r in verdict.rejections], verdict.line()


def test_review_leaf_and_payload_isolation(world: World, second_agent) -> None:  # type: ignore[no-untyped-def]
    world.leaf("extract-1")
    author = world.submit(world.extract("extract-1"))
    assert author.trace_id is not None
    target_id = sorted(world.findings("extract-1"))[0].rsplit("/", 1)[1][:-5]
    world.leaf("review-1", "review", source_id=None, object_path=finding_path(target_id))
    payload = json.dumps(leaf_payload(world.repo.view(world.tip()), "review-1"))
    assert target_id in payload and "analyst" in payload.lower()
    assert author.trace_id not in payload
    for event in world.home.traces.read(author.trace_id)["events.jsonl"].decode().splitlines():
        content = json.loads(event)["content"]
        if isinstance(content, str) and len(content) > 20:
            assert content not in payload
    path, data = review_file(object_path=finding_path(target_id), object_id=target_id, decision="amend",
                             reason="The limitation understates the sample bias.", leaf_id="review-1",
                             amendment={"limitation": "Eleven self-selected teams."})
    assert world.submit(world.creation("review-1", {path: data}, agent=second_agent())).outcome == "accepted"


def test_review_needs_reason_and_right_amendment(world: World, second_agent) -> None:  # type: ignore[no-untyped-def]
    target_id = landed_findings(world)[0]
    world.leaf("review-1", "review", source_id=None, object_path=finding_path(target_id))
    path, data = review_file(object_path=finding_path(target_id), object_id=target_id, decision="amend",
                             reason="Stance is wrong.", leaf_id="review-1", amendment={"stance": "supports"})
    verdict = world.submit(world.creation("review-1", {path: data}, agent=second_agent()))
    assert verdict.rejections[0].code == "bad_amendment"


def test_guide_leaf_rules(world: World) -> None:
    world.leaf("guide-1", "guide", source_id=None)
    old = (world.repo.view(world.tip()).read("FIELD-GUIDE.md") or b"").decode()

    def submit_guide(new: str) -> Verdict:
        patch = modify("FIELD-GUIDE.md", old, new)
        trace = TraceRecorder()
        for kind in ("tool_call", "tool_result", "final"):
            trace.add(NOW, kind, "edit the guide")
        bundle = trace.bundle(leaf_id="guide-1", agent="agent-a", operator="op-a", base_revision=world.tip(),
                              patch=patch, level="L1")
        return world.submit(Submission(SLUG, "guide-1", patch, bundle, world.agent.token))

    unattributed = old + "- Quillmark reports run rate, not revenue.\n"
    assert submit_guide(unattributed).rejections[0].code == "guide_attribution"
    assert submit_guide(old + "- Kestrel audits are per cell. (human: ericxtang)\n").rejections[0].code == \
        "guide_attribution"
    long = old + "".join(f"- lesson {n}. (agent: agent-a)\n" for n in range(150))
    assert submit_guide(long).rejections[0].code == "guide_budget"
    assert submit_guide(old + "- Northgate reports in JPY. (agent: agent-a)\n").outcome == "accepted"


def test_human_edit_of_project_md(world: World, steward: tuple[Actor, str]) -> None:
    _, token = steward
    project = (world.repo.view(world.tip()).read("PROJECT.md") or b"").decode()
    good = project.replace("holds: []", "holds: [ links ]")
    verdict = world.submit(edit(world, token, {"PROJECT.md": good.encode()}))
    assert verdict.outcome == "accepted" and verdict.actor == "ericxtang"
    broken = good.replace("loop_cadence: 20m", "loop_cadence: soon")
    verdict = world.submit(edit(world, token, {"PROJECT.md": broken.encode()}))
    assert verdict.rejections[0].code == "bad_project"
    assert verdict.rejections[0].where == "PROJECT.md:13" and "loop_cadence" in verdict.rejections[0].message


def test_agents_cannot_edit_outside_leaves(world: World) -> None:
    project = (world.repo.view(world.tip()).read("PROJECT.md") or b"").decode()
    verdict = world.submit(edit(world, world.agent.token, {"PROJECT.md": project.replace("20m", "5m").encode()}))
    assert verdict.rejections[0].code == "leaf_required"


def test_hypothesis_revision_rule_and_earlier_wording(world: World, steward: tuple[Actor, str]) -> None:
    _, token = steward
    findings = landed_findings(world)
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    assert world.submit(world.creation("link-1", links(world, "link-1", findings[:1], ["contradicts"]))).outcome \
        == "accepted"
    text = (world.repo.view(world.tip()).read("hypotheses/H1.md") or b"").decode()
    reworded = text.replace("more robotics teams pay", "most robotics teams pay")
    assert world.submit(edit(world, token, {"hypotheses/H1.md": reworded.encode()})).rejections[0].code == \
        "bad_revision"
    bumped = reworded.replace("revision: 1", "revision: 2")
    assert world.submit(edit(world, token, {"hypotheses/H1.md": bumped.encode()})).outcome == "accepted"
    card = next(c for c in digest(world.home, SLUG, NOW)["hypotheses"] if c["hypothesis_id"] == "H1")
    assert card["revision"] == 2 and card["linked_to_earlier_wording"] == 1


def test_reports_cite_existing_objects_and_score(world: World, steward: tuple[Actor, str]) -> None:
    _, token = steward
    findings = landed_findings(world)
    bad = world.submit(edit(world, token, {"reports/r-one.md": report_doc("r-one", [], ["fnd_0000000000000000"])}))
    assert bad.rejections[0].code == "unknown_citation"
    good = world.submit(edit(world, token, {"reports/r-one.md": report_doc("r-one", findings[:1], findings[1:3])}))
    assert good.outcome == "accepted", good.line()
    assert use_of(world, findings[1]) == 1.0  # cited across operators (op-a's finding, ericxtang's report)
    assert summary(world)["reports"]["r-one"] == 0.0


def test_held_links_wait_for_approval(world: World, steward: tuple[Actor, str]) -> None:
    actor, token = steward
    findings = landed_findings(world)
    project = (world.repo.view(world.tip()).read("PROJECT.md") or b"").decode()
    assert world.submit(edit(world, token, {"PROJECT.md": project.replace("holds: []", "holds: [ links ]")
                                             .encode()})).outcome == "accepted"
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    verdict = world.submit(world.creation("link-1", links(world, "link-1", findings[:1], ["contradicts"])))
    assert verdict.outcome == "held"
    held = list(ProjectView(world.repo.view(world.tip())).held)
    assert [h.type for h in held] == ["link"]
    assert "H1" not in summary(world).get("hypotheses", {})
    decide(world.home, SLUG, actor, held[0].object_id, approve=True, reason="Checked the quote.", now=NOW)
    assert list(ProjectView(world.repo.view(world.tip())).held) == []
    assert summary(world)["hypotheses"]["H1"] == 0.25  # op-a linking op-a's finding
    assert replay(world.repo).ok


def test_revert_withdraws_citations_and_revert_of_revert_restores(world: World,
                                                                  steward: tuple[Actor, str]) -> None:
    actor, _ = steward
    findings = landed_findings(world)
    before = {p: world.repo.view(world.tip()).read(p) for p in (USE_SCORES, use_shard_path(findings[0]))}
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    linked = world.submit(world.creation("link-1", links(world, "link-1", findings[:1], ["contradicts"])))
    assert use_of(world, findings[0]) == 0.25
    after_link = {p: world.repo.view(world.tip()).read(p) for p in before}
    landed = revert(world.home, SLUG, actor, linked.commit or "", reason="Misread the figure.", now=NOW)
    assert use_of(world, findings[0]) == 0.0
    message = world.repo.commit(landed.commit or "").message
    assert "Reason: Misread the figure." in message and "Operator: ericxtang" in message
    again = revert(world.home, SLUG, actor, landed.commit or "", reason="It was right after all.", now=NOW)
    assert again.commit
    assert {p: world.repo.view(world.tip()).read(p) for p in before} == after_link
    assert replay(world.repo).ok


def test_revert_refusals(world: World, steward: tuple[Actor, str]) -> None:
    actor, _ = steward
    landed_findings(world)
    with pytest.raises(ConflictError, match="append-only"):
        revert(world.home, SLUG, actor, world.tip(), reason="no", now=NOW)


def test_replay_matches_and_catches_corruption(world: World, steward: tuple[Actor, str]) -> None:
    _, token = steward
    findings = landed_findings(world)
    world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
    world.submit(world.creation("link-1", links(world, "link-1", findings[:2], ["contradicts", "supports"])))
    world.submit(edit(world, token, {"reports/r-one.md": report_doc("r-one", findings[:1], findings[1:2])}))
    report = replay(world.repo)
    assert report.ok, report.differences
    tip = world.tip()
    view = world.repo.view(tip)
    derived = [USE_SCORES, use_shard_path(findings[0]), "ledger/000000.jsonl", "leaves/extract-1.result.json"]
    for path in derived:
        data = view.read(path)
        assert data is not None
        tree = world.repo.build_tree(tip, {path: data.replace(b"1", b"2", 1) if b"1" in data else data + b" "})
        forged = world.repo.create_commit(tree=tree, parents=[tip], author=VERIFIER, committer=VERIFIER,
                                          message=world.repo.commit(tip).message, when=NOW)
        world.repo.repo.references["refs/heads/main"].set_target(forged)
        caught = replay(world.repo)
        assert any(path in d for d in caught.differences), (path, caught.differences)
        world.repo.repo.references["refs/heads/main"].set_target(tip)
    assert replay(world.repo).ok


def test_scores_are_byte_identical_for_the_same_history(tmp_path) -> None:  # type: ignore[no-untyped-def]
    outputs = []
    for name in ("one", "two"):
        home = make_home(tmp_path / name)
        init_project(home, SLUG, now=NOW, template=FIXTURES / "demo-project")
        token = home.identities.add("agent-a", "op-a", "agent", NOW)
        world = World(home, ScriptedAgent(home, "agent-a", "op-a", token), OfflineFetcher())
        findings = landed_findings(world)
        world.leaf("link-1", "link", source_id=None, hypothesis_id="H1", hypothesis_revision=1)
        world.submit(world.creation("link-1", links(world, "link-1", findings[:2], ["contradicts", "context"])))
        view = world.repo.view(world.tip())
        outputs.append({p: view.read(p) for p in view.walk("scores")})
    assert outputs[0] == outputs[1] and outputs[0]


def test_digest_shape_and_open_leaves(world: World) -> None:
    world.leaf("extract-open")
    world.leaf("extract-old", expires=timedelta(minutes=1))
    value = digest(world.home, SLUG, NOW + timedelta(minutes=5))
    assert {leaf["leaf_id"] for leaf in value["open_leaves"]} == {"extract-open"}
    assert [card["hypothesis_id"] for card in value["hypotheses"]] == ["H1", "H2", "H3"]
    assert "H1 is active and has no evidence links" in value["open_gaps"]
    # No baseline in it: only which active hypotheses have none sealed yet, and why (public).
    assert "baseline" not in json.dumps({key: part for key, part in value.items() if key != "unsealed"})
    assert [set(item) for item in value["unsealed"]] == [{"hypothesis_id", "missing", "why"}] * 2
