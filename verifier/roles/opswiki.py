"""The operations wiki (design §3.11): one platform-wide git repository, `$RW_HOME/ops-wiki.git`.

Created from `ops-wiki-template/` on first use. Only the maintainer and the gate harness write it,
one commit per pass or per gate decision, always on top of the tip: nothing ever moves its branch
backwards, so it is never rolled back. No worker-facing path (leaf payloads, the skill, the board,
messages, the UI) reads it; `tests/roles/test_ops_wiki_isolation.py` checks that.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from verifier.errors import NotFound
from verifier.store.files import exclusive_lock, private_dir
from verifier.store.gitrepo import VERIFIER, ProjectRepo
from verifier.store.home import Home

TEMPLATE = Path(__file__).resolve().parents[2] / "ops-wiki-template"


def ops_wiki_path(home: Home) -> Path:
    return home.layout.ops_wiki


class OpsWiki:
    """Read files at the tip; write a set of files as one forward commit."""

    def __init__(self, home: Home, *, template: Path = TEMPLATE) -> None:
        self.home = home
        self.path = ops_wiki_path(home)
        self.lock = home.layout.named_lock("ops-wiki")
        with exclusive_lock(self.lock):
            if not self.path.exists():
                self._create(template)
        self.repo = ProjectRepo(self.path)

    def _create(self, template: Path) -> None:
        if not template.is_dir():
            raise NotFound(f"no ops-wiki template at {template}")
        files = {path.relative_to(template).as_posix(): path.read_bytes()
                 for path in sorted(template.rglob("*")) if path.is_file()}
        repo = ProjectRepo.create(private_dir(self.path))  # 0700 from creation: the platform's own
        tree = repo.build_tree(None, files)
        when = datetime.fromtimestamp(0, UTC)
        commit = repo.create_commit(tree=tree, parents=[], author=VERIFIER, committer=VERIFIER,
                                    message=f"ops wiki created from {template.name}\n", when=when)
        repo.move_branch(commit, None)

    def read(self, path: str) -> str | None:
        data = self.repo.view(self.repo.tip()).read(path)
        return None if data is None else data.decode("utf-8")

    def list_dir(self, path: str) -> list[str]:
        view = self.repo.view(self.repo.tip())
        return view.list_dir(path) if view.is_dir(path) else []

    def files(self) -> dict[str, bytes]:
        """Every file at the tip (for audits and the isolation test)."""
        view = self.repo.view(self.repo.tip())
        return {path: view.read(path) or b"" for path in view.walk()}

    def write(self, files: Mapping[str, bytes], message: str, now: datetime) -> str:
        """Commit `files` on top of the tip (compare-and-swap under the wiki's lock); returns the commit."""
        with exclusive_lock(self.lock):
            tip = self.repo.tip()
            tree = self.repo.build_tree(tip, dict(files))
            commit = self.repo.create_commit(tree=tree, parents=[tip] if tip else [], author=VERIFIER,
                                             committer=VERIFIER, message=message.rstrip("\n") + "\n", when=now)
            self.repo.move_branch(commit, tip)
            return commit
