"""A project simulator: publishes bad states on purpose into a real project home, in process.

What a hostile maintainer, a stray tool or a disk restore could leave behind, written straight
into the project's bare repository with pygit2 (no writer, no hook, no lock, no anchor update):
a foreign commit on main, a ledger row edited in place, the branch moved back or sideways. The
tests then check that every reader names it and every door refuses to write on it until a person
repairs it (tests/pipeline/test_history_proof.py, tests/pipeline/test_ledger.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import pygit2

from verifier.state.layout import segment_path
from verifier.store.gitrepo import BRANCH, Person, ProjectRepo
from verifier.store.home import Home

STEWARD = Person("Stew Ard", "stew@example.org")  # someone with write access to the disk, not the verifier
WHEN = datetime(2026, 11, 30, 12, 30, tzinfo=UTC)


@dataclass(frozen=True)
class ProjectSimulator:
    """Bad states for project `slug` of `home`, each returning the commit main points at afterwards."""

    home: Home
    slug: str

    @property
    def repo(self) -> ProjectRepo:
        return self.home.project(self.slug)

    def tip(self) -> str:
        tip = self.repo.tip()
        assert tip is not None, f"project {self.slug} has no branch to tamper with"
        return tip

    def foreign_commit(self, writes: dict[str, bytes | None], *, message: str = "planted\n",
                       author: Person = STEWARD) -> str:
        """A commit on top of main written by someone other than the verifier, with no ledger row."""
        repo, tip = self.repo, self.tip()
        tree = repo.build_tree(tip, writes)
        commit = repo.create_commit(tree=tree, parents=[tip], author=author, committer=author, message=message,
                                    when=WHEN)
        return self.move_branch(commit)

    def edit_ledger_row(self, seq: int, edit: Callable[[dict[str, object]], None], *,
                        message: str = "ledger: fix\n", author: Person = STEWARD) -> str:
        """Row `seq` of the ledger rewritten in place (its JSON edited by `edit`), committed on main."""
        path = segment_path(seq)
        lines = (self.repo.view(self.tip()).read(path) or b"").splitlines(keepends=True)
        first = json.loads(lines[0])["seq"]
        row: dict[str, object] = json.loads(lines[seq - first])
        edit(row)
        lines[seq - first] = json.dumps(row, sort_keys=True, separators=(",", ":")).encode() + b"\n"
        return self.foreign_commit({path: b"".join(lines)}, message=message, author=author)

    def replace_ledger_segment(self, seq: int, mutate: Callable[[bytes], bytes], *,
                               message: str = "tamper\n", author: Person = STEWARD) -> str:
        """The ledger segment holding row `seq` replaced by `mutate(bytes)`, committed on main."""
        path = segment_path(seq)
        data = self.repo.view(self.tip()).read(path) or b""
        return self.foreign_commit({path: mutate(data)}, message=message, author=author)

    def move_branch(self, to: str) -> str:
        """Main pointed at `to` (any commit: an older one is a reset, another line a sideways move)."""
        self.repo.repo.references[BRANCH].set_target(pygit2.Oid(hex=to), "simulated")
        return to

    def rewind(self, commits: int) -> str:
        """Main moved back `commits` first-parent steps, as a `git reset --hard HEAD~n` would."""
        commit = self.repo.commit(self.tip())
        for _ in range(commits):
            commit = commit.parents[0]
        return self.move_branch(str(commit.id))
