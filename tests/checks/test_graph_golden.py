"""Golden tests for the evidence-graph checks (skeptic, link, review, guide, a person's edit):
each rejection reason on plain data, compared with tests/golden/graph_checks.json.
Regenerate after an intended change with RW_UPDATE_GOLDEN=1 and review the diff."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from tests.support.golden import BASE_FILES, NOW, SENTENCES, SOURCE_ID, TEXT
from verifier.agentkit.objects import finding_file, link_file, note_file, review_file
from verifier.checks.context import CheckContext
from verifier.checks.registry import check_for
from verifier.formats.leaf import LeafContract
from verifier.formats.project import ProjectFile
from verifier.formats.yamlout import dump_yaml
from verifier.state.layout import default_write_rules, finding_path
from verifier.state.view import DictTree, Overlay

GOLDEN = Path(__file__).parents[1] / "golden" / "graph_checks.json"
H1 = (b"---\nhypothesis_id: H1\nrevision: 2\nstatement: \"Layers sell first.\"\nresolution:\n"
      b"  criterion: \"c\"\n  check_date: 2027-06-30\n  measure: \"m\"\nstatus: active\n---\nScope.\n")
PROJECT = b"---\nproject: demo\nhypotheses: [ H1 ]\n---\nFree text.\n"
GUIDE = b"# Field Guide\n\n<!-- lessons -->\n\n- An old lesson. (human: steward)\n"
FINDINGS = dict(finding_file(source_id=SOURCE_ID, source_text=TEXT, excerpt=s, statement="A claim.",
                             limitation="A limit.", leaf_id="extract-1") for s in SENTENCES[:3])
FIDS = sorted(path.rsplit("/", 1)[1][:-5] for path in FINDINGS)
BASE = {**BASE_FILES, **FINDINGS, "hypotheses/H1.md": H1, "PROJECT.md": PROJECT, "FIELD-GUIDE.md": GUIDE}


def leaf(kind: str, **inputs: object) -> LeafContract:
    return LeafContract.model_validate({
        "leaf_id": f"{kind}-1", "kind": kind, "inputs": inputs, "base_revision": "a" * 40,
        "may_write": [r.model_dump() for r in default_write_rules(kind)],  # type: ignore[arg-type]
        "check": kind, "created_at": NOW, "created_by": "planner", "expires_at": NOW.replace(year=2027)})


def run(contract: LeafContract | None, writes: Mapping[str, bytes | None], *, actor: str = "agent-a",
        actor_type: str = "agent", floor: int = 1, extra: dict[str, bytes] | None = None) -> list[list[str]]:
    base = DictTree({**BASE, **(extra or {})})
    project = ProjectFile(project="demo", counter_evidence_min_sources=floor)
    ctx = CheckContext(leaf=contract, actor=actor, project=project, tree=Overlay(base, writes),
                       writes=writes, now=NOW, source_texts={SOURCE_ID: TEXT}, base_tree=base,
                       actor_type=actor_type)
    result = check_for(contract.kind if contract else "human")(ctx)
    return [[r.code, r.render()] for r in result.rejections]


def links(stances: list[str], *, kind: str = "link", revision: int = 2, finding: str | None = None,
          hypothesis: str = "H1", leaf_id: str | None = None) -> dict[str, bytes | None]:
    files: dict[str, bytes | None] = {}
    for fid, stance in zip(FIDS, stances, strict=False):
        path, data = link_file(finding_id=finding or fid, hypothesis_id=hypothesis, revision=revision, stance=stance,
                               rationale="Because.", leaf_kind=kind, leaf_id=leaf_id or f"{kind}-1")
        files[path] = data
    return files


def note(**overrides: object) -> dict[str, bytes | None]:
    fields: dict[str, object] = {"leaf_id": "skeptic-1", "hypothesis_id": "H1", "revision": 2, "none_found_after": 1,
                                 "sources_checked": [SOURCE_ID]}
    fields.update(overrides)
    path, data = note_file(**fields)  # type: ignore[arg-type]
    return {path: data}


LINK = leaf("link", hypothesis_id="H1", hypothesis_revision=2)
SKEPTIC = leaf("skeptic", hypothesis_id="H1", hypothesis_revision=2)
REVIEW = leaf("review", object_path=finding_path(FIDS[0]))
GUIDE_LEAF = leaf("guide")


def review(**overrides: object) -> dict[str, bytes | None]:
    fields: dict[str, object] = {"object_path": finding_path(FIDS[0]), "object_id": FIDS[0], "decision": "reject",
                                 "reason": "The excerpt is out of context.", "leaf_id": "review-1"}
    fields.update(overrides)
    path, data = review_file(**fields)  # type: ignore[arg-type]
    return {path: data}


def human_link() -> dict[str, bytes | None]:
    path, data = link_file(finding_id=FIDS[0], hypothesis_id="H1", revision=2, stance="contradicts",
                           rationale="Read it myself.", leaf_kind="human", leaf_id=None)
    return {path: data}


LOOSE = b"---\nhypothesis_id: H3\nrevision: 1\nstatement: \"Buyers churn.\"\nstatus: loose\n---\nScope.\n"


def activated(check_date: str) -> bytes:
    return LOOSE.replace(b"status: loose", b"resolution:\n  criterion: \"c\"\n  check_date: " + check_date.encode()
                         + b"\n  measure: \"m\"\nstatus: active")


def failed_source() -> dict[str, bytes]:
    record = next(path for path in BASE_FILES if path.endswith(".yaml"))
    return {record: BASE_FILES[record].replace(b"status: included", b"status: failed\nfailure: HTTP 404")}


def loose_human_link() -> dict[str, bytes | None]:
    path, data = link_file(finding_id=FIDS[0], hypothesis_id="H3", revision=1, stance="supports",
                           rationale="Read it myself.", leaf_kind="human", leaf_id=None)
    return {path: data}


def report(cites: list[str]) -> bytes:
    front = dump_yaml({"report_id": "r-one", "title": "T", "cites": cites, "author": "steward",
                       "created_at": "2026-11-30T12:00:00Z"}).decode()
    return f"---\n{front}---\nBody.\n".encode()


CASES: dict[str, Callable[[], list[list[str]]]] = {
    "link/accepted": lambda: run(LINK, links(["supports", "contradicts"])),
    "link/nothing": lambda: run(LINK, {}),
    "link/counter_evidence": lambda: run(LINK, links(["supports", "context"])),
    "link/unknown_finding": lambda: run(LINK, links(["contradicts"], finding="fnd_0000000000000000")),
    "link/unknown_revision": lambda: run(LINK, links(["contradicts"], revision=3)),
    "link/earlier_revision_is_fine": lambda: run(
        leaf("link", hypothesis_id="H1", hypothesis_revision=1), links(["contradicts"], revision=1)),
    "link/unknown_hypothesis": lambda: run(LINK, links(["contradicts"], hypothesis="H7")),
    "link/wrong_leaf": lambda: run(LINK, links(["contradicts"], leaf_id="link-2")),
    "link/wrong_finding": lambda: run(leaf("link", hypothesis_id="H1", hypothesis_revision=2, finding_ids=[FIDS[2]]),
                                      links(["contradicts"])),
    "link/unexpected_file": lambda: run(LINK, {**links(["contradicts"]), "notes/x.md": b"x\n"}),
    "link/scout_requests_only_for_skeptics": lambda: run(LINK, {**links(["supports"]), **note(
        leaf_id="link-1", scout_requests=["more"])}),
    "skeptic/note_accepted": lambda: run(SKEPTIC, {**links(["supports"], kind="skeptic"),
                                                   **note(scout_requests=["churned buyers"])}),
    "skeptic/note_for_another_revision": lambda: run(SKEPTIC, note(revision=1)),
    "review/accepted": lambda: run(REVIEW, review()),
    "review/two_reviews": lambda: run(REVIEW, {**review(), **review(leaf_id="review-2")}),
    "review/wrong_object": lambda: run(REVIEW, review(object_path=finding_path(FIDS[1]), object_id=FIDS[1])),
    "review/bad_amendment": lambda: run(REVIEW, review(decision="amend", amendment={"stance": "supports"})),
    "review/amend_without_amendment": lambda: run(REVIEW, review(decision="amend")),
    "review/blank_reason": lambda: run(REVIEW, review(reason=" ")),
    "review/unknown_object": lambda: run(leaf("review", object_path=finding_path("fnd_0000000000000000")), review(
        object_path=finding_path("fnd_0000000000000000"), object_id="fnd_0000000000000000")),
    "guide/accepted": lambda: run(GUIDE_LEAF, {"FIELD-GUIDE.md": GUIDE + b"- New. (agent: agent-a)\n"}),
    "guide/unattributed": lambda: run(GUIDE_LEAF, {"FIELD-GUIDE.md": GUIDE + b"- New.\n"}),
    "guide/attributed_to_someone_else": lambda: run(GUIDE_LEAF, {"FIELD-GUIDE.md": GUIDE + b"- N. (agent: b)\n"}),
    "guide/over_budget": lambda: run(GUIDE_LEAF, {"FIELD-GUIDE.md": GUIDE + b"".join(
        b"- L%d. (agent: agent-a)\n" % n for n in range(150))}),
    "guide/other_file": lambda: run(GUIDE_LEAF, {"README.md": b"x\n"}),
    "guide/text_after_a_comment": lambda: run(GUIDE_LEAF, {"FIELD-GUIDE.md": GUIDE + b"<!-- --> Trust vendors.\n"}),
    "guide/hash_word_is_not_a_heading": lambda: run(GUIDE_LEAF, {"FIELD-GUIDE.md": GUIDE + b"#Quote vendors.\n"}),
    "guide/agent_removes_a_persons_line": lambda: run(GUIDE_LEAF, {"FIELD-GUIDE.md": b"# Field Guide\n"}),
    "human/delete_project": lambda: run(None, {"PROJECT.md": None}, actor="steward", actor_type="human"),
    "human/delete_hypothesis": lambda: run(None, {"hypotheses/H1.md": None}, actor="steward", actor_type="human"),
    "human/report_cites_twice": lambda: run(None, {"reports/r-one.md": report([FIDS[0], FIDS[0]])}, actor="steward",
                                            actor_type="human"),
    "human/link_posing_as_skeptic": lambda: run(None, links(["contradicts"], kind="skeptic"), actor="steward",
                                                actor_type="human"),
    "human/link_ok": lambda: run(None, human_link(), actor="steward", actor_type="human"),
    "human/project_ok": lambda: run(None, {"PROJECT.md": PROJECT.replace(b"Free", b"New")}, actor="steward",
                                    actor_type="human"),
    "human/project_broken": lambda: run(None, {"PROJECT.md": PROJECT.replace(b"hypotheses: [ H1 ]", b"holds: [x]")},
                                        actor="steward", actor_type="human"),
    "human/project_renamed": lambda: run(None, {"PROJECT.md": PROJECT.replace(b"demo", b"other")},
                                         actor="steward", actor_type="human"),
    "human/statement_without_revision": lambda: run(None, {"hypotheses/H1.md": H1.replace(b"sell first", b"win")},
                                                    actor="steward", actor_type="human"),
    "human/revision_without_statement": lambda: run(None, {"hypotheses/H1.md": H1.replace(b"revision: 2",
                                                                                          b"revision: 3")},
                                                    actor="steward", actor_type="human"),
    "human/new_hypothesis_not_at_1": lambda: run(None, {"hypotheses/H2.md": H1.replace(b"H1", b"H2")},
                                                 actor="steward", actor_type="human"),
    "human/report_unknown_citation": lambda: run(None, {"reports/r-one.md": report(["lnk_0000000000000000"])},
                                                 actor="steward", actor_type="human"),
    "human/report_ok": lambda: run(None, {"reports/r-one.md": report(FIDS[:2])}, actor="steward",
                                   actor_type="human"),
    "human/finding_by_hand_misquoted": lambda: run(None, {
        p: d.replace(b"Seven of eleven", b"Seven of ten") for p, d in FINDINGS.items()
        if b"Seven of eleven" in d} | {}, actor="steward", actor_type="human"),
    "human/guide_line_as_agent": lambda: run(None, {"FIELD-GUIDE.md": GUIDE + b"- X. (agent: steward)\n"},
                                             actor="steward", actor_type="human"),
    # Issue 10: the counter-evidence floor, and no agent's link to a loose hypothesis.
    "skeptic/note_below_the_floor": lambda: run(SKEPTIC, note(), floor=3),
    "skeptic/note_does_not_list_its_sources": lambda: run(SKEPTIC, note(none_found_after=4)),
    "skeptic/note_names_an_unknown_source": lambda: run(SKEPTIC, note(sources_checked=["src_0000000000000000"])),
    "skeptic/note_names_a_failed_source": lambda: run(SKEPTIC, note(), extra=failed_source()),
    "human/activate_with_a_past_check_date": lambda: run(None, {"hypotheses/H3.md": activated("2020-01-01")},
                                                         actor="steward", actor_type="human",
                                                         extra={"hypotheses/H3.md": LOOSE}),
    "human/activate_ok": lambda: run(None, {"hypotheses/H3.md": activated("2030-01-01")}, actor="steward",
                                     actor_type="human", extra={"hypotheses/H3.md": LOOSE}),
    "link/loose_hypothesis": lambda: run(leaf("link", hypothesis_id="H3", hypothesis_revision=1),
                                         links(["contradicts"], hypothesis="H3", revision=1),
                                         extra={"hypotheses/H3.md": LOOSE}),
    "human/link_to_a_loose_hypothesis_ok": lambda: run(None, loose_human_link(), actor="steward", actor_type="human",
                                                       extra={"hypotheses/H3.md": LOOSE}),
}


def test_golden_file_matches() -> None:
    actual = {name: case() for name, case in sorted(CASES.items())}
    if os.environ.get("RW_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    assert actual == json.loads(GOLDEN.read_text())


GOOD = {"link/accepted", "link/earlier_revision_is_fine", "skeptic/note_accepted", "review/accepted",
        "guide/accepted", "human/project_ok", "human/report_ok", "human/link_ok", "human/link_to_a_loose_hypothesis_ok",
        "human/activate_ok"}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_cases_pass(name: str) -> None:
    assert CASES[name]() == []


@pytest.mark.parametrize("name", sorted(set(CASES) - GOOD))
def test_bad_cases_are_rejected(name: str) -> None:
    assert CASES[name](), f"{name} should be rejected"
