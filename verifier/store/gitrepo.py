"""A project repository through pygit2: read trees, build trees from writes, commit, move the
branch. No working tree is ever checked out; the verifier works on objects only."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import pygit2

from verifier.errors import ConflictError, NotFound
from verifier.store.files import sync_filesystem

BRANCH = "refs/heads/main"
# A project on a git host: landings waiting for the next push (verifier.deploy.publishing). Never
# served to clients (service.githttp hides refs/rw/), never pushed.
STAGED = "refs/rw/staged"
VERIFIER_NAME = "ResearchWiki Verifier"
VERIFIER_EMAIL = "verifier@researchwiki.invalid"
_BLOB = pygit2.enums.FileMode.BLOB
_TREE = pygit2.enums.FileMode.TREE
_TREE_MODE = b"40000"
_TREE_ENTRY = re.compile(rb"[0-7]+ [^\x00]+\x00.{20}", re.DOTALL)
# (status A/M/D, path, old blob id, new blob id): one file that differs between two trees.
Change = tuple[str, str, str | None, str | None]


def agent_email(handle: str) -> str:
    return f"{handle}@agents.researchwiki.invalid"


@dataclass(frozen=True)
class Person:
    name: str
    email: str

    def signature(self, when: datetime) -> pygit2.Signature:
        delta = when.utcoffset()
        offset = int(delta.total_seconds() // 60) if delta else 0
        return pygit2.Signature(self.name, self.email, int(when.timestamp()), offset)


VERIFIER = Person(VERIFIER_NAME, VERIFIER_EMAIL)


class GitTree:
    """TreeView over one pygit2 tree."""

    def __init__(self, repo: pygit2.Repository, tree: pygit2.Tree | None) -> None:
        self.repo = repo
        self.tree = tree

    def _entry(self, path: str) -> pygit2.Object | None:
        if self.tree is None or not path:
            return None
        try:
            return self.tree[path]
        except KeyError:
            return None

    def file_mode(self, path: str) -> int | None:
        """The git file mode of the entry at `path` (0o100644, 0o100755, 0o120000...), or None."""
        if self.tree is None or not path:
            return None
        try:
            mode: int = self.tree[path].filemode
        except KeyError:
            return None
        return mode

    def read(self, path: str) -> bytes | None:
        entry = self._entry(path)
        if entry is None or entry.type != pygit2.enums.ObjectType.BLOB:
            return None
        oid = entry.id
        data = _large_blobs.get(oid)
        if data is not None:
            return data
        # Straight from the object database: a third faster than building a Blob object, which
        # counts when a reader goes through tens of thousands of small files (rw eval, replay).
        _, data = self.repo.read(oid)
        assert isinstance(data, bytes)
        if len(data) >= _LARGE_BLOB_BYTES:
            _large_blobs.put(oid, data)
        return data

    def is_dir(self, path: str) -> bool:
        if not path:
            return self.tree is not None
        entry = self._entry(path)
        return entry is not None and entry.type == pygit2.enums.ObjectType.TREE

    def list_dir(self, path: str) -> list[str]:
        tree = self.tree if not path else self._entry(path)
        if tree is None or tree.type != pygit2.enums.ObjectType.TREE:
            return []
        node = self.repo[tree.id]
        assert isinstance(node, pygit2.Tree)
        return sorted(entry.name or "" for entry in node)

    def blob_id(self, path: str) -> str | None:
        entry = self._entry(path)
        if entry is None or entry.type != pygit2.enums.ObjectType.BLOB:
            return None
        return str(entry.id)

    def mode(self, path: str) -> int | None:
        entry = self._entry(path)
        return None if entry is None else int(entry.filemode)

    def walk(self, prefix: str = "") -> Iterator[str]:
        """Every file path below `prefix` (all files when empty)."""
        stack: list[tuple[str, pygit2.Object | None]] = [
            (prefix.rstrip("/"), self.tree if not prefix else self._entry(prefix))
        ]
        while stack:
            base, node = stack.pop()
            if node is None or node.type != pygit2.enums.ObjectType.TREE:
                continue
            subtree = self.repo[node.id]
            assert isinstance(subtree, pygit2.Tree)
            for entry in subtree:
                path = f"{base}/{entry.name}" if base else str(entry.name)
                if entry.type == pygit2.enums.ObjectType.TREE:
                    stack.append((path, entry))
                else:
                    yield path


class _LargeBlobs:
    """The last large blobs read or written, by id, for the whole process. libgit2 keeps no blob contents
    in its cache, and a landing reads its ledger's last segment (up to 256 rows, ~128 KB, inflated
    each time) three times: the history check before judging, again as the writer opens, and the
    row's append; and the segment a landing writes is the next one's to read. Kept are those read
    and those written (bench_throughput's in-process run, 284 landings one by one, cProfile:
    2,913 object reads taking 0.64 s; 2,403 and 0.31 s keeping those read; 2,148 and 0.08 s
    keeping those written too). A blob's id names its bytes: a kept one is never stale."""

    def __init__(self, budget_bytes: int) -> None:
        self._budget = budget_bytes
        self._used = 0
        self._blobs: OrderedDict[pygit2.Oid, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, oid: pygit2.Oid) -> bytes | None:
        with self._lock:
            data = self._blobs.get(oid)
            if data is not None:
                self._blobs.move_to_end(oid)
            return data

    def put(self, oid: pygit2.Oid, data: bytes) -> None:
        if len(data) > self._budget // 8:  # a retained source of megabytes would push out the rest
            return
        with self._lock:
            if oid in self._blobs:
                return
            self._blobs[oid] = data
            self._used += len(data)
            while self._used > self._budget:
                _, dropped = self._blobs.popitem(last=False)
                self._used -= len(dropped)


# Large: a ledger segment past its first few dozen rows, a source's text. The process keeps 4 MB of
# them, none over 512 KB.
_LARGE_BLOB_BYTES = 16 * 1024
_large_blobs = _LargeBlobs(4 * 1024 * 1024)


# What libgit2 says when the folder it renames a new object's temporary file into is gone.
_VANISHED = os.strerror(errno.ENOENT)
_WRITE_TRIES = 3
_Written = TypeVar("_Written")


def _written(write: Callable[[], _Written]) -> _Written:
    """An object write, made again when its fan-out folder vanished under it: a packing pass
    (verifier.store.upkeep) has git remove each objects/xx folder it emptied, and libgit2 does not
    look again between making the folder and renaming the new object's temporary file into it (git
    itself does). Objects are named by their content, so writing one twice is harmless."""
    for attempt in range(1, _WRITE_TRIES + 1):
        try:
            return write()
        except OSError as exc:
            if attempt == _WRITE_TRIES or _VANISHED not in str(exc):
                raise
    raise AssertionError("unreachable")


class _Known:
    """What a repository's objects were found to say, which never changes since objects do not:
    shared by every thread's handle on the same repository (open_repo), so the thread that lands
    next starts from what the one before it learnt."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.descends: dict[str, str] = {}  # ancestor -> the latest commit found to descend from it
        self.trees: OrderedDict[bytes, frozenset[bytes]] = OrderedDict()  # raw tree id -> its entries (changes)


class ProjectRepo:
    """One bare project repository."""

    def __init__(self, path: Path, known: _Known | None = None) -> None:
        try:
            self.repo = pygit2.Repository(str(path))
        except pygit2.GitError as exc:
            raise NotFound(f"no project repository at {path}") from exc
        self.path = path
        self._known = known or _Known()

    @classmethod
    def create(cls, path: Path) -> ProjectRepo:
        pygit2.init_repository(str(path), bare=True, initial_head="main")
        return cls(path)

    def tip(self) -> str | None:
        try:
            return str(self.repo.references[BRANCH].target)
        except KeyError:
            return None

    def commit(self, rev: str) -> pygit2.Commit:
        try:
            obj = self.repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            raise NotFound(f"no commit {rev!r} in {self.path.name}") from exc
        return commit

    def resolve(self, rev: str) -> str:
        """The full id of the commit `rev` names (a branch, a short id); NotFound when none."""
        return str(self.commit(rev).id)

    def view(self, rev: str | None) -> GitTree:
        if rev is None:
            return GitTree(self.repo, None)
        return GitTree(self.repo, self.commit(rev).tree)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when `ancestor` is `descendant` or reachable from it.

        A commit's ancestry never changes, so the latest descendant each ancestor was found under
        is remembered: a leaf's base checked against a tip hundreds of landings later then walks
        only from the tip down to the tip it was last checked against, not down to the base."""
        if ancestor == descendant:
            return True
        memo = self._known
        known = memo.descends.get(ancestor)
        found = (known == descendant or (known is not None and self._descendant_of(descendant, known))
                 or self._descendant_of(descendant, ancestor))
        if found:
            with memo.lock:
                if len(memo.descends) >= _ANCESTRY_KEPT:
                    memo.descends.clear()
                memo.descends[ancestor] = descendant
        return found

    def _descendant_of(self, descendant: str, ancestor: str) -> bool:
        try:
            return bool(self.repo.descendant_of(descendant, ancestor))
        except (KeyError, ValueError, pygit2.GitError):
            return False

    def has_object(self, oid: str) -> bool:
        try:
            return oid in self.repo.odb
        except ValueError:
            return False

    def build_tree(self, base: str | None, writes: Mapping[str, bytes | None]) -> str:
        """Write blobs and trees for `writes` laid over `base`'s tree; return the new tree id."""
        tree = self.commit(base).tree if base else None
        oid = self._build(tree, writes)
        if oid is None:
            oid = _written(self.repo.TreeBuilder().write)
        return str(oid)

    def _build(self, tree: pygit2.Tree | None, writes: Mapping[str, bytes | None]) -> pygit2.Oid | None:
        # Order matters when one patch swaps a file and a folder of the same name: deletions
        # here first, then the folders below, then new files here (a folder emptied below is gone
        # by then, and a file deleted here no longer blocks a folder).
        builder = self.repo.TreeBuilder(tree) if tree is not None else self.repo.TreeBuilder()
        nested: dict[str, dict[str, bytes | None]] = defaultdict(dict)
        direct: dict[str, bytes | None] = {}
        for path, data in writes.items():
            head, sep, rest = path.partition("/")
            if sep:
                nested[head][rest] = data
            else:
                direct[head] = data
        for head in [head for head, data in direct.items() if data is None]:
            self._remove_file(builder, head)
        for name, sub_writes in nested.items():
            self._build_folder(builder, name, sub_writes)
        for head, data in direct.items():
            if data is not None:
                existing = builder.get(head)
                if existing is not None and existing.type == pygit2.enums.ObjectType.TREE:
                    raise ConflictError(f"{head} is a directory; a file cannot replace it")
                blob = _written(functools.partial(self.repo.create_blob, data))
                if len(data) >= _LARGE_BLOB_BYTES:  # the next landing's history check reads it
                    _large_blobs.put(blob, data)
                builder.insert(head, blob, _BLOB)
        if len(builder) == 0:
            return None
        return _written(builder.write)

    @staticmethod
    def _remove_file(builder: pygit2.TreeBuilder, name: str) -> None:
        existing = builder.get(name)
        if existing is None:
            return
        if existing.type == pygit2.enums.ObjectType.TREE:
            raise ConflictError(f"{name} is a directory; a file deletion cannot remove it")
        builder.remove(name)

    def _build_folder(self, builder: pygit2.TreeBuilder, name: str, writes: Mapping[str, bytes | None]) -> None:
        existing = builder.get(name)
        subtree = None
        if existing is not None:
            if existing.type != pygit2.enums.ObjectType.TREE:
                raise ConflictError(f"{name} is a file; it cannot hold {next(iter(writes))}")
            found = self.repo[existing.id]
            assert isinstance(found, pygit2.Tree)
            subtree = found
        sub_oid = self._build(subtree, writes)
        if sub_oid is None:
            if existing is not None:
                builder.remove(name)
        else:
            builder.insert(name, sub_oid, _TREE)

    def amend(self, commit: str, writes: Mapping[str, bytes | None]) -> str:
        """`commit` made again (the same parents, author, committer and message) over its own
        tree with `writes` laid on; the new commit's id. `commit` itself is left as it was."""
        old = self.commit(commit)
        tree = self._build(old.tree, writes) or _written(self.repo.TreeBuilder().write)
        return str(_written(lambda: self.repo.create_commit(None, old.author, old.committer, old.message, tree,
                                                            old.parent_ids)))

    def tree_of(self, commit: str) -> str:
        """The id of a commit's tree."""
        return str(self.commit(commit).tree_id)

    def create_commit(
        self, *, tree: str, parents: list[str], author: Person, committer: Person,
        message: str, when: datetime,
    ) -> str:
        oid = _written(lambda: self.repo.create_commit(
            None, author.signature(when), committer.signature(when), message,
            pygit2.Oid(hex=tree), [pygit2.Oid(hex=parent) for parent in parents],
        ))
        return str(oid)

    def move_branch(self, new: str, expected: str | None) -> None:
        """Point main at `new` if it still points at `expected` (compare-and-swap).

        Callers hold the project's writer lock, so the comparison cannot race another writer of
        ours; the check still catches anything else that moved the branch under us.
        """
        self._move(BRANCH, new, expected)

    def staged(self) -> str | None:
        """Where the staged landings end (a project on a git host), None when nothing is staged."""
        try:
            return str(self.repo.references[STAGED].target)
        except KeyError:
            return None

    def move_staged(self, new: str, expected: str | None) -> None:
        """Point refs/rw/staged at `new` if it still points at `expected` (compare-and-swap)."""
        self._move(STAGED, new, expected)

    def _move(self, ref: str, new: str, expected: str | None) -> None:
        current = self.tip() if ref == BRANCH else self.staged()
        if current != expected:
            raise ConflictError(f"{ref} moved from {expected} to {current} during the write")
        if _durable:  # everything the new tip reaches is on disk before any ref names it
            sync_filesystem(self.path)
        if expected is None:
            self.repo.references.create(ref, pygit2.Oid(hex=new))
        else:
            self.repo.references[ref].set_target(pygit2.Oid(hex=new), "researchwiki verifier")
        if _durable:  # and the ref itself before the caller acknowledges it (or writes the anchor)
            sync_filesystem(self.path)

    def changes(self, before: str | None, after: str, path: str) -> list[Change]:
        """(status A/M/D, path, old blob, new blob) for each file under the folder `path` that
        differs between two commits (`before` None: the folder as `after` added it).

        Walks only the subtrees whose ids differ, parsing each raw tree once: a landing changes a
        few files in a corpus of tens of thousands, and libgit2's tree diff reads every subtree of
        the folder (about 7 ms a call on a 10,000-finding project, a fifth of a landing's CPU)."""
        old = self._folder(before, path) if before is not None else None
        new = self._folder(after, path)
        out: list[Change] = []
        if old != new:
            self._diff(old, new, path, out)
        return out

    def _folder(self, commit: str, path: str) -> bytes | None:
        """The raw id of the tree at `path` in `commit`, or None when there is no folder there."""
        try:
            entry = self.commit(commit).tree[path]
        except KeyError:
            return None
        return entry.id.raw if entry.type == pygit2.enums.ObjectType.TREE else None

    def _entries(self, tree: bytes | None) -> frozenset[bytes]:
        """The raw entries of a tree (`<mode> <name>\\0<20-byte id>` each), as a set: two versions
        of a folder of thousands of files then differ by a set difference made in C. The last few
        are kept: one landing's `after` is the next one's `before`."""
        if tree is None:
            return frozenset()
        memo = self._known
        kept = memo.trees.get(tree)
        if kept is not None:
            return kept
        _, data = self.repo.read(pygit2.Oid(raw=tree))
        found = _TREE_ENTRY.findall(data)
        if sum(map(len, found)) != len(data):
            raise ValueError(f"tree {pygit2.Oid(raw=tree)} is not a well-formed tree")  # never one libgit2 wrote
        entries = frozenset(found)
        with memo.lock:
            memo.trees[tree] = entries
            while len(memo.trees) > _TREES_KEPT:
                memo.trees.popitem(last=False)
        return entries

    def _diff(self, old: bytes | None, new: bytes | None, base: str, out: list[Change]) -> None:
        before, after = self._entries(old), self._entries(new)
        was: dict[bytes, tuple[bytes, bytes]] = {}
        now: dict[bytes, tuple[bytes, bytes]] = {}
        for entries, into in ((before - after, was), (after - before, now)):
            for entry in entries:
                mode, _, rest = entry.partition(b" ")
                into[rest[:-21]] = (mode, rest[-20:])
        for name in sorted(was.keys() | now.keys()):
            path = f"{base}/{name.decode('utf-8', 'surrogateescape')}"
            old_entry, new_entry = was.get(name), now.get(name)
            old_tree = old_entry[1] if old_entry is not None and old_entry[0] == _TREE_MODE else None
            new_tree = new_entry[1] if new_entry is not None and new_entry[0] == _TREE_MODE else None
            if old_tree is not None or new_tree is not None:
                self._diff(old_tree, new_tree, path, out)
            old_blob = old_entry[1].hex() if old_entry is not None and old_tree is None else None
            new_blob = new_entry[1].hex() if new_entry is not None and new_tree is None else None
            if old_blob is not None or new_blob is not None:
                status = "A" if old_blob is None else "D" if new_blob is None else "M"
                out.append((status, path, old_blob, new_blob))

    def changed_paths(self, old: str, new: str) -> list[str]:
        """Paths whose content differs between two commits (for replay and reverts)."""
        diff = self.commit(old).tree.diff_to_tree(self.commit(new).tree)
        paths: set[str] = set()
        for delta in diff.deltas:
            paths.add(delta.old_file.path)
            paths.add(delta.new_file.path)
        return sorted(paths)


def tune_object_cache() -> None:
    """Let libgit2 keep trees of any size in its object cache (its default limit is 4 KiB, so the
    large shard and root trees of a project would be re-read and re-parsed on every lookup), and
    bound the cache of the whole process (libgit2 counts every repository's cache against one
    budget), since repositories stay open per thread (open_repo)."""
    pygit2.settings.cache_object_limit(pygit2.enums.ObjectType.TREE, 16 * 1024 * 1024)
    pygit2.settings.cache_max_size(_CACHE_BYTES)


# A busy project's working set of trees is a few MB (its root, leaves/, the shard folders a landing
# touches); libgit2's own default, 256 MB, would let a long-running server grow far past that. At
# 64 MB a served worker's peak grew by 100 MB over a 30 s run of bench_throughput (each thread's
# repository caches what it reads); at 16 MB it stays within the 400 MB budget, as fast.
_CACHE_BYTES = 16 * 1024 * 1024
# Repositories each thread keeps open: a served landing opens its project a dozen times (the
# writer, the judge's reads, the notifier), and each fresh open starts with a cold object cache.
_REPOS_KEPT = 4
# Ancestry facts a repository remembers (is_ancestor): a busy project checks a few hundred bases.
_ANCESTRY_KEPT = 4096
# Trees whose entries a repository keeps for `changes`: the folders of the last landing or two.
_TREES_KEPT = 16
# Repositories whose facts (_Known) the process keeps for its threads' handles.
_KNOWN_KEPT = 64
_kept = threading.local()
_known: OrderedDict[tuple[str, int, int], _Known] = OrderedDict()
_known_lock = threading.Lock()


def _known_of(key: tuple[str, int, int]) -> _Known:
    with _known_lock:
        known = _known.get(key)
        if known is None:
            known = _known[key] = _Known()
            while len(_known) > _KNOWN_KEPT:
                _known.popitem(last=False)
        else:
            _known.move_to_end(key)
        return known


class _Lent:
    """The process's one landing handle on a repository, and who holds it."""

    def __init__(self, repo: ProjectRepo) -> None:
        self.repo = repo
        self.lock = threading.Lock()


_lent: dict[tuple[str, int, int], _Lent] = {}


@contextlib.contextmanager
def landing_handle(path: Path) -> Iterator[None]:
    """For the block, this thread's open_repo(path) is the process's one landing handle on the
    repository: landings of one project are made by one thread at a time (pipeline.group's
    leader), each by whichever thread leads, so a handle handed from leader to leader keeps its
    object cache warm where each thread's own would start cold. Waits while another thread
    holds it."""
    key = _key(path)
    mine: dict[tuple[str, int, int], ProjectRepo] | None = getattr(_kept, "held", None)
    if mine is not None and key in mine:  # held by this thread already
        yield
        return
    with _known_lock:
        lent = _lent.get(key)
    if lent is None:
        made = _Lent(ProjectRepo(path, _known_of(key)))
        with _known_lock:
            lent = _lent.setdefault(key, made)
    with lent.lock:
        held: dict[tuple[str, int, int], ProjectRepo] = getattr(_kept, "held", None) or {}
        _kept.held = held
        held[key] = lent.repo
        try:
            yield
        finally:
            del held[key]


def _key(path: Path) -> tuple[str, int, int]:
    try:
        st = path.stat()
    except OSError as exc:
        raise NotFound(f"no project repository at {path}") from exc
    return (str(path), st.st_dev, st.st_ino)


def open_repo(path: Path) -> ProjectRepo:
    """The project repository at `path`, reused by this thread while the folder is the same one
    (same device and inode: a repository removed and made again is opened afresh).

    Per thread because a libgit2 repository is for one thread at a time; reuse is safe because
    objects never change and every ref read goes to disk, so a kept repository sees what other
    processes landed. What the objects were found to say (ancestry, tree entries) is shared by
    the process's threads."""
    key = _key(path)
    held: dict[tuple[str, int, int], ProjectRepo] | None = getattr(_kept, "held", None)
    if held and key in held:
        return held[key]
    repos: OrderedDict[tuple[str, int, int], ProjectRepo] | None = getattr(_kept, "repos", None)
    if repos is None:
        repos = _kept.repos = OrderedDict()
    repo = repos.get(key)
    if repo is None:
        repo = repos[key] = ProjectRepo(path, _known_of(key))
        while len(repos) > _REPOS_KEPT:
            repos.popitem(last=False)
    else:
        repos.move_to_end(key)
    return repo


tune_object_cache()


_durable = False  # process-wide, as libgit2's own settings are


def set_durable(enabled: bool) -> None:
    """Make every ref move durable (process-wide), so an acknowledged acceptance survives a
    machine crash and not only a killed process.

    libgit2 could fsync each object it writes, but a landing writes a dozen (blobs, trees, two
    commits) and a group of landings many dozens: instead objects are written unsynced and each
    ref move first syncs the file system once (store.files.sync_filesystem), then the ref, so
    nothing a ref names can be lost while the ref survives."""
    global _durable  # noqa: PLW0603 - one switch for the process, set once by the wiring root
    _durable = enabled
    pygit2.settings.enable_fsync_gitdir(False)
