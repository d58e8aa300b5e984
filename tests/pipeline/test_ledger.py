"""The ledger is append-only and tamper-evident: `verify` catches truncation, rewriting and a
branch reset under it."""

from __future__ import annotations

import json

import pygit2

from tests.support.simulator import ProjectSimulator
from tests.support.world import NOW, SLUG, World
from verifier.audits.audit import verify_ledger
from verifier.formats.entries import LeafEntry
from verifier.formats.ledger import ROWS_PER_SEGMENT, row_hash
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.writer import ProjectWriter
from verifier.state.layout import leaf_path, segment_path
from verifier.store.gitrepo import VERIFIER


def build_history(world: World) -> None:
    world.leaf("extract-1")
    world.submit(world.extract("extract-1", "extract-bad-excerpt.yaml"))
    world.submit(world.extract("extract-1"))


def rewrite_ledger(world: World, mutate) -> None:  # type: ignore[no-untyped-def]
    """Commit a tampered ledger on top of the branch, as a hostile maintainer could."""
    ProjectSimulator(world.home, SLUG).replace_ledger_segment(0, mutate, author=VERIFIER)


def test_clean_history_verifies(world: World) -> None:
    build_history(world)
    report = verify_ledger(world.repo, world.home.read_anchor(SLUG))
    assert report.ok, report.problems
    assert [row.seq for row in report.rows] == list(range(len(report.rows)))


def test_truncated_ledger_is_reported(world: World) -> None:
    build_history(world)
    rewrite_ledger(world, lambda data: b"".join(data.splitlines(keepends=True)[:-1]))
    report = verify_ledger(world.repo, world.home.read_anchor(SLUG))
    assert not report.ok and any("truncated" in p for p in report.problems)


def test_rewritten_row_is_reported(world: World) -> None:
    build_history(world)

    def flip(data: bytes) -> bytes:
        lines = data.splitlines(keepends=True)
        row = json.loads(lines[1])
        row["actor"] = "someone-else"
        lines[1] = json.dumps(row, sort_keys=True, separators=(",", ":")).encode() + b"\n"
        return b"".join(lines)

    rewrite_ledger(world, flip)
    report = verify_ledger(world.repo, world.home.read_anchor(SLUG))
    assert any("chain broken" in p for p in report.problems)


def test_branch_reset_is_reported(world: World) -> None:
    build_history(world)
    first = list(world.repo.repo.walk(world.tip(), pygit2.enums.SortMode.REVERSE))[1]
    ProjectSimulator(world.home, SLUG).move_branch(str(first.id))
    report = verify_ledger(world.repo, world.home.read_anchor(SLUG))
    assert not report.ok and any("reset" in p for p in report.problems)


def test_segments_roll_over(world: World) -> None:
    """Rows past a segment's capacity go to the next segment, and the chain spans both."""
    first = world.leaf("leaf-0000")
    # The other rows land through one writer, as add_leaf lands its row (its checks of the leaf,
    # and the YAML dump of each copy, are not what is tested here and cost several landings each).
    body = dump_yaml(first.model_dump(mode="json", exclude_none=True))
    assert body.count(b"leaf_id: leaf-0000\n") == 1
    with ProjectWriter.open(world.home, SLUG) as writer:
        for index in range(1, ROWS_PER_SEGMENT + 2):
            leaf_id = f"leaf-{index:04d}"
            writer.land(LeafEntry(at=NOW, leaf_id=leaf_id, kind=first.kind, actor="planner", actor_type="planner",
                                  description=f"leaf {leaf_id} written"),
                        bookkeeping={leaf_path(leaf_id): body.replace(b"leaf-0000", leaf_id.encode())})
    view = world.repo.view(world.tip())
    assert view.read(segment_path(ROWS_PER_SEGMENT)) is not None
    lines = [line for line, _ in read_chain(view)]
    assert len(lines) == ROWS_PER_SEGMENT + 3
    assert world.home.read_anchor(SLUG).row_hash == row_hash(lines[-1])  # type: ignore[union-attr]
