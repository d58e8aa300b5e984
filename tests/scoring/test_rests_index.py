"""The index of what rests on what (verifier.scoring.rests, issue 26): kept a landing at a time it
agrees with a scan of the corpus on random graphs; it survives a revert and a repair; it is built
when missing and rebuilt when stale; the cascade reads it, not the corpus."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.graph import land_findings, land_link, land_review
from tests.support.rests import base_files, finding, index_files, land, link, rebuilt, report, review
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.scripted import ScriptedAgent
from verifier.checks.dependants import cascade
from verifier.scoring.rests import RestIndex
from verifier.state.layout import RESTS_INDEX, RESTS_ROOT, classify, finding_path
from verifier.state.view import DictTree
from verifier.store.identities import Actor
from verifier.writes.repair import repair
from verifier.writes.revert import revert

# One step of a random history: (kind, a, b, c) read against the files present at that step.
Step = tuple[str, int, int, int]
STEPS = st.lists(st.tuples(st.sampled_from(["finding", "link", "review", "report", "delete", "edit"]),
                           st.integers(0, 20), st.integers(0, 20), st.integers(1, 3)), min_size=1, max_size=25)


def _objects(files: dict[str, bytes], kind: str) -> list[str]:
    return sorted(path for path in files if (found := classify(path)) is not None and found.type == kind)


def _writes(files: dict[str, bytes], step: Step) -> dict[str, bytes | None]:
    kind, a, b, c = step
    findings, links = _objects(files, "finding"), _objects(files, "link")
    if kind == "finding":
        return dict([finding(a % 3, b % 3, c)])
    if kind == "link" and findings:
        return dict([link(findings[a % len(findings)].rsplit("/", 1)[1][:-5], b % 2, c)])
    if kind == "review" and findings + links:
        return dict([review((findings + links)[a % len(findings + links)], c)])
    if kind == "report" and findings + links:
        cited = [path.rsplit("/", 1)[1][:-5] for path in (findings + links)[a % len(findings + links):][:c]]
        return dict([report(f"r-{b % 3}", cited)])
    removable = [path for path in files if classify(path) is not None and classify(path).type != "source"]  # type: ignore[union-attr]
    if kind == "delete" and removable:
        return {sorted(removable)[a % len(removable)]: None}
    if kind == "edit" and links:  # a person points a link at another hypothesis, in place
        path = links[a % len(links)]
        return {path: files[path].replace(b"hypothesis_id: H1", b"hypothesis_id: H2")}
    return {}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_the_index_kept_a_landing_at_a_time_agrees_with_a_scan_of_the_corpus(steps: list[Step]) -> None:
    files = base_files()
    for step in steps:
        files = land(files, _writes(files, step))
        assert index_files(files) == rebuilt(files), step


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS, st.integers(0, 50))
def test_the_cascade_from_the_kept_index_is_the_cascade_from_a_scan(steps: list[Step], pick: int) -> None:
    files = base_files()
    for step in steps:
        files = land(files, _writes(files, step))
    objects = sorted(path for path in files if classify(path) is not None)
    target = objects[pick % len(objects)]
    corpus = {path: data for path, data in files.items() if not path.startswith(RESTS_ROOT)}
    kept = cascade(DictTree(files), {target: None}, RestIndex(DictTree(files).read))
    assert kept == cascade(DictTree(corpus), {target: None})  # no index in the tree: built by a scan


def test_a_missing_index_is_built_and_a_stale_one_rebuilt() -> None:
    files = base_files()
    path, data = finding(0, 0, 1)
    files[path] = data  # a tree built by hand: no index
    lnk, lnk_data = link(path.rsplit("/", 1)[1][:-5], 0, 1)
    files = land(files, {lnk: lnk_data})
    assert json.loads(files[RESTS_INDEX]) == {"format": 1}
    assert index_files(files) == rebuilt(files)
    # Another format: rebuilt, and its leftover shards deleted.
    stale = {**files, RESTS_INDEX: b'{"format": 0}\n', f"{RESTS_ROOT}/ff/ff.json": b'{"fnd_x": ["links/x"]}'}
    assert index_files(land(stale, {})) == rebuilt(files)
    # A shard that does not parse: the cascade rebuilds rather than trust it.
    shard = next(p for p in files if p.startswith(f"{RESTS_ROOT}/") and b"links/" in files[p])
    broken = {**files, shard: b"not json"}
    index = RestIndex(DictTree(broken).read)
    result = cascade(DictTree(broken), {path: None}, index)
    assert result.withdrawn == {lnk: None}
    assert index.built


def test_a_name_the_index_kept_of_a_file_that_rests_elsewhere_is_not_withdrawn() -> None:
    files = base_files()
    path, data = finding(0, 0, 1)
    files = land(files, {path: data})
    finding_id = path.rsplit("/", 1)[1][:-5]
    lnk, lnk_data = link(finding_id, 0, 1)
    files = land(files, {lnk: lnk_data})
    other, other_data = finding(1, 1, 2)
    files[lnk] = lnk_data.replace(finding_id.encode(), other.rsplit("/", 1)[1][:-5].encode())  # not fed
    files[other] = other_data
    assert cascade(DictTree(files), {path: None}, RestIndex(DictTree(files).read)).withdrawn == {}


@pytest.fixture
def steward(world: World) -> Actor:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    return world.home.identities.authenticate(token)


def _tip_files(world: World) -> dict[str, bytes]:
    view = world.repo.view(world.tip())
    return {path: data for path in view.walk() if (data := view.read(path)) is not None}


def test_the_index_survives_a_revert_and_a_repair(world: World, steward: Actor,
                                                  second_agent: Callable[[], ScriptedAgent]) -> None:
    extract, findings = land_findings(world)
    after_findings = world.tip()
    other = second_agent()
    linked, link_path_ = land_link(world, "link-1", findings[0], agent=other)
    assert linked.outcome == "accepted", linked.line()
    reviewed, _ = land_review(world, "review-1", link_path_, "accept")
    assert reviewed.outcome == "accepted", reviewed.line()
    files = _tip_files(world)
    assert index_files(files) == rebuilt(files) and RESTS_INDEX in files

    revert(world.home, SLUG, steward, extract.commit or "", reason="Wrong source version.", now=NOW)
    files = _tip_files(world)
    assert finding_path(findings[0]) not in files and link_path_ not in files
    assert index_files(files) == rebuilt(files)

    repair(world.home, SLUG, steward, after_findings, reason="Back to the extract.", now=NOW)
    files = _tip_files(world)
    assert finding_path(findings[0]) in files
    assert index_files(files) == rebuilt(files)
