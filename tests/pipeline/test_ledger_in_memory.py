"""The fixture project copied into the in-memory repository (tests/support/memrepo.py) reads as
it does on disk, and a ledger landing made the writer's way (row, tree, commit, branch move) gives
the same commit ids in memory as in git: the ledger's rules run on either."""

from __future__ import annotations

from tests.support.memrepo import MemRepo
from tests.support.world import NOW, World
from verifier.formats.entries import LeafEntry
from verifier.pipeline.landing import message
from verifier.pipeline.ledger import append_row, ledger_head, read_chain
from verifier.store.gitrepo import VERIFIER
from verifier.store.repository import ProjectRepository
from verifier.version import verifier_version


def land_row(repo: ProjectRepository, fields: dict[str, object]) -> str:
    """One ledger landing as ProjectWriter._stage and _publish make it, without the lock or anchor."""
    tip = repo.tip()
    assert tip is not None
    row, line, writes = append_row(repo.view(tip), {**fields, "commit": None, "verifier_version": verifier_version()})
    tree = repo.build_tree(tip, writes)
    commit = repo.create_commit(tree=tree, parents=[tip], author=VERIFIER, committer=VERIFIER, when=NOW,
                                message=message(f"ledger: #{row.seq} {row.outcome} {row.action}",
                                                line.decode().rstrip("\n"), {"Verifier-Version": verifier_version()}))
    repo.move_branch(commit, tip)
    return commit


def test_the_fixture_project_reads_the_same_in_memory(world: World) -> None:
    world.leaf("extract-1")
    mem = MemRepo.copy_of(world.repo)
    tip = world.tip()
    assert mem.tip() == tip
    disk, memory = world.repo.view(tip), mem.view(tip)
    files = sorted(disk.walk())
    assert files and sorted(memory.walk()) == files
    assert all(memory.read(path) == disk.read(path) for path in files)
    assert ledger_head(memory) == ledger_head(disk)
    assert list(read_chain(memory)) == list(read_chain(disk))


def test_a_ledger_landing_in_memory_is_the_landing_git_makes(world: World) -> None:
    mem = MemRepo.copy_of(world.repo)
    entry = LeafEntry(at=NOW, actor="planner", actor_type="planner", leaf_id="extract-9", kind="extract",
                      description="an extract leaf for the in-memory landing")
    fields = entry.row_fields()
    for _ in range(3):
        assert land_row(mem, fields) == land_row(world.repo, fields)
    assert mem.tip() == world.repo.tip()
    assert [row.seq for _, row in read_chain(mem.view(mem.tip()))] == [
        row.seq for _, row in read_chain(world.repo.view(world.tip()))]
