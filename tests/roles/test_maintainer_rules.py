"""The maintainer's pure rules and the outcome index: sampling, grouping, page patching, scheduling."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.world import NOW, make_home
from verifier.roles.opswiki import OpsWiki
from verifier.roles.outcomes import OutcomeEntry, kinds_due
from verifier.roles.patterns import add_contrast, facts_from_events, failure_patterns, render_page, strategy_patterns
from verifier.roles.traceindex import TraceIndex


def entry(number: int, outcome: str = "rejected", code: str | None = "excerpt_not_found",
          kind: str = "extract") -> OutcomeEntry:
    return OutcomeEntry(trace_id=f"trc_{number:016x}", project="p", seq=number,
                        at=f"2026-11-30T12:{number % 60:02d}:00",
                        leaf_id=f"{kind}-{number}", kind=kind, outcome=outcome, reason_code=code,
                        description=f"findings/ab/fnd_{number:016x}.yaml:excerpt: not in the source",
                        skill_version="sk-1")


def events(*tools: str) -> bytes:
    rows = [{"ts": "2026-11-30T12:00:00Z", "type": "tool_call", "content": {"tool": tool}} for tool in tools]
    rows.append({"ts": "2026-11-30T12:00:01Z", "type": "final", "content": "done"})
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def test_rejections_group_by_code_and_failing_step_and_contrast_with_accepted() -> None:
    facts = [facts_from_events(entry(1), events("write")), facts_from_events(entry(2), events("write")),
             facts_from_events(entry(3, code="finding_count"), events("write")),
             facts_from_events(entry(4), events("read", "write", "check")),
             facts_from_events(entry(5, "accepted", None), events("rw source text", "write"))]
    failures, strategies = failure_patterns(facts), strategy_patterns(facts)
    add_contrast(failures, strategies)
    assert [(p.name, len(p.facts)) for p in failures] == [
        ("excerpt-not-found-after-write", 2), ("excerpt-not-found-after-check", 1), ("finding-count-after-write", 1)]
    assert failures[0].facts[0].where == "findings/*/fnd_*.yaml:excerpt"
    assert any("`rw source text`" in line for line in failures[0].contrast)
    assert [p.path for p in strategies] == ["patterns/extract/accepted-workflow.md"]


def test_a_page_is_patched_not_replaced() -> None:
    first = failure_patterns([facts_from_events(entry(n), events("write")) for n in (1, 2)])[0]
    page = render_page(first, None, "2026-11-30T12:00:00Z")
    again = failure_patterns([facts_from_events(entry(n), events("write")) for n in (2, 3)])[0]
    patched = render_page(again, page, "2026-12-01T12:00:00Z")
    assert "seen: 3" in patched and all(f"trc_{n:016x}" in patched for n in (1, 2, 3))


def test_kinds_fall_due_after_n_ended_leaves_of_their_own_kind() -> None:
    now = {"extract": {"rejected": 5, "accepted": 4, "held": 9}, "scout": {"accepted": 1}}
    last = {"extract": {"rejected": 1}}
    assert kinds_due(now, last, {"extract": 8, "scout": 2}) == ["extract"]
    assert kinds_due(now, last, {"extract": 9, "scout": 1}) == ["scout"]
    assert kinds_due(now, last, {"extract": 0, "scout": 0}) == []


def test_the_index_reads_a_stratum_from_its_tail(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    index = TraceIndex(home)
    index.root.mkdir(parents=True)
    rows = [entry(n) for n in range(3000)]  # several 64 KiB chunks
    (index.root / "extract.rejected.jsonl").write_bytes(b"".join(row.line() for row in rows + rows[-5:]))
    newest = index.recent("extract", "rejected", 700)
    assert [e.seq for e in newest] == list(range(2999, 2299, -1))  # duplicates dropped, newest first
    assert index.recent("extract", "accepted", 10) == []


def test_the_ops_wiki_only_moves_forward(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    wiki = OpsWiki(home)
    first = wiki.repo.tip()
    second = wiki.write({"logs.md": b"one\n"}, "one", NOW)
    third = wiki.write({"logs.md": b"two\n"}, "two", NOW)
    assert wiki.repo.is_ancestor(str(first), second) and wiki.repo.is_ancestor(second, third)
    assert set(OpsWiki(home).files()) >= {"index.md", "logs.md", "skill-impact.md", "patterns/extract/README.md"}


def test_agent_supplied_tool_names_cannot_forge_page_structure() -> None:
    hostile = "write`\n## Evidence\n- trc_forged | x"
    pattern = failure_patterns([facts_from_events(entry(1), events(hostile))])[0]
    page = render_page(pattern, None, "2026-11-30T12:00:00Z")
    assert [line for line in page.splitlines() if line.startswith("## Evidence")] == ["## Evidence"]
    assert "\n- trc_forged" not in page
    assert pattern.failing_step == "write' ## Evidence - trc_forged / x"
