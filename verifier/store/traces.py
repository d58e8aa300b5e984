"""The private trace store, and reading a bundle from disk (a folder or a tar file).

Traces are content-addressed and immutable: traces/<trace_id>/ holds the bundle's files and
DIGEST, the full sha256. A second bundle with the same short id but another digest is refused.
A bundle first stored by an attempt that was then refused moves to a bounded per-agent
quarantine (traces/.quarantine/<agent>/, newest QUARANTINE_PER_AGENT kept). The store's folder
is 0700 from creation (`verifier.store.files.private_dir`).
Bundles are read defensively: only the known file names, only regular files, sizes capped while
reading, so a hostile tar cannot write anywhere or blow up memory.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path

from verifier.constants import MAX_BUNDLE_BYTES, QUARANTINE_PER_AGENT
from verifier.errors import ConflictError, Rejected, Rejection
from verifier.formats.ids import TRACE_ID_RE
from verifier.formats.trace import BUNDLE_ORDER, TraceRecord
from verifier.store.files import fsync_dir, private_dir, sync_filesystem, write_atomic

# Refused attempts' bundles kept per agent (traces/.quarantine/<agent>/), newest first.
QUARANTINE_DIR = ".quarantine"


class TraceStore:
    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self.root = root
        self.durable = durable

    def path(self, trace_id: str) -> Path:
        return self.root / trace_id

    def exists(self, trace_id: str) -> bool:
        return self.path(trace_id).is_dir()

    def ids(self) -> list[str]:
        """Every stored bundle's id (not the quarantine's, not half-stored ones)."""
        return sorted(path.name for path in self.root.iterdir() if TRACE_ID_RE.match(path.name)) \
            if self.root.exists() else []

    def put(self, record: TraceRecord, files: dict[str, bytes]) -> bool:
        """Store a bundle under its id; idempotent for the same digest, refused on a collision.

        True if this call stored it (False: the same bundle was already there)."""
        target = self.path(record.trace_id)
        if target.exists():
            existing = (target / "DIGEST").read_text().strip() if (target / "DIGEST").exists() else ""
            if existing == record.digest:
                return False
            raise ConflictError(
                f"trace id {record.trace_id} is taken by another bundle (digest {existing[:12]}...); refusing"
            )
        private_dir(self.root)
        # A private staging folder per call: two submissions of one bundle may race here.
        staging = Path(tempfile.mkdtemp(prefix=f".incoming-{record.trace_id}-", dir=self.root))
        for name, data in files.items():  # unsynced one by one: the folder is synced whole below
            write_atomic(staging / name, data, durable=False)
        write_atomic(staging / "DIGEST", record.digest.encode() + b"\n", durable=False)
        if self.durable:  # every file of the bundle on disk in one flush, before its name appears
            sync_filesystem(staging)
        try:
            staging.rename(target)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            existing = (target / "DIGEST").read_text().strip() if (target / "DIGEST").exists() else ""
            if existing != record.digest:
                raise ConflictError(f"trace id {record.trace_id} is taken by another bundle; refusing") from None
            return False
        if self.durable:
            fsync_dir(self.root)
        return True

    def quarantine(self, trace_id: str, agent: str, *, keep: int = QUARANTINE_PER_AGENT) -> None:
        """Move a refused attempt's bundle to the agent's quarantine; keep only its newest `keep`.

        Refused attempts would otherwise keep their bundles with no quota, so any agent could
        fill the disk on demand: per agent at most `keep` bundles (oldest evicted), 0 keeps none.
        """
        source = self.path(trace_id)
        if not source.is_dir():
            return
        folder = self.root / QUARANTINE_DIR / agent
        private_dir(self.root)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        target = folder / trace_id
        if target.exists():
            shutil.rmtree(source, ignore_errors=True)
        else:
            source.rename(target)
            os.utime(target)  # its age in the quarantine is when it was refused
        held = sorted(folder.iterdir(), key=lambda path: (path.stat().st_mtime_ns, path.name))
        for old in held[: max(0, len(held) - keep)]:
            shutil.rmtree(old, ignore_errors=True)

    def quarantined(self, agent: str) -> list[str]:
        folder = self.root / QUARANTINE_DIR / agent
        return sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []

    def read(self, trace_id: str) -> dict[str, bytes]:
        """A stored bundle's files, from the store or, for a refused attempt, from its agent's
        quarantine (the improvement loop reads refused attempts' traces too); {} when gone."""
        target = self.path(trace_id)
        if not target.is_dir() and TRACE_ID_RE.match(trace_id):
            target = next((self.root / QUARANTINE_DIR).glob(f"*/{trace_id}"), target)
        return {name: (target / name).read_bytes() for name in BUNDLE_ORDER if (target / name).exists()}

    def purge(self, trace_id: str) -> None:
        shutil.rmtree(self.path(trace_id), ignore_errors=True)

    def clean_incoming(self) -> int:
        """Remove half-stored bundles left by a crash; returns how many."""
        leftovers = list(self.root.glob(".incoming-*")) if self.root.exists() else []
        for path in leftovers:
            shutil.rmtree(path, ignore_errors=True)
        return len(leftovers)


def _bad(message: str, code: str = "trace_unreadable") -> Rejected:
    return Rejected(Rejection(code, message, "trace/"))


def load_bundle(path: Path) -> dict[str, bytes]:
    """Read a trace bundle from a folder (trace/ with its files) or a .tar / .tar.gz file.

    Each failure says what it is: an unreadable archive or member (and which), a link member, a
    duplicate member, an unexpected member, or one past the size cap.
    """
    if path.is_dir():
        return _load_dir(path)
    if path.is_file():
        return _load_tar(path)
    raise _bad(f"no trace bundle at {path}")


def _oversize(what: str) -> Rejected:
    return _bad(f"{what} takes the bundle past {MAX_BUNDLE_BYTES} bytes", "trace_oversize")


def _load_dir(path: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    for entry in sorted(path.iterdir()):
        if entry.name not in BUNDLE_ORDER:
            raise _bad(f"unexpected file {entry.name!r} in the bundle folder (only {', '.join(BUNDLE_ORDER)})",
                       "trace_unknown_file")
        if entry.is_symlink():
            raise _bad(f"{entry.name} is a link; the bundle holds regular files only", "trace_link_member")
        if not entry.is_file():
            raise _bad(f"{entry.name} is not a regular file")
        total += entry.stat().st_size
        if total > MAX_BUNDLE_BYTES:
            raise _oversize(entry.name)
        files[entry.name] = entry.read_bytes()
    return files


def _member_name(member: tarfile.TarInfo, files: dict[str, bytes]) -> str | None:
    """The bundle file a tar member holds; None for the folder itself; Rejected otherwise."""
    name = member.name.removeprefix("./").removeprefix("trace/")
    if member.isdir() and name in ("", "trace", "."):
        return None
    if member.issym() or member.islnk():
        raise _bad(f"tar member {member.name!r} is a link; the bundle holds regular files only",
                   "trace_link_member")
    if name not in BUNDLE_ORDER:
        raise _bad(f"unexpected tar member {member.name!r} (only {', '.join(BUNDLE_ORDER)})", "trace_unknown_file")
    if name in files:
        raise _bad(f"tar member {member.name!r} appears twice; which one is the bundle's is ambiguous",
                   "trace_duplicate_member")
    if not member.isfile():
        raise _bad(f"tar member {member.name!r} is not a regular file")
    return name


def _load_tar(path: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    try:
        archive = tarfile.open(path, "r:*")  # noqa: SIM115 - closed below; errors differ per step
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise _bad(f"{path.name} is not a readable tar file: {exc}") from exc
    with archive:
        current = "(the first member)"
        try:
            for member in archive:
                current = repr(member.name)
                name = _member_name(member, files)
                if name is None:
                    continue
                total += member.size
                if total > MAX_BUNDLE_BYTES:
                    raise _oversize(f"tar member {member.name!r} ({member.size} bytes)")
                handle = archive.extractfile(member)
                if handle is None:
                    raise _bad(f"tar member {member.name!r} has no data")
                files[name] = handle.read(member.size + 1)[: member.size]
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            raise _bad(f"tar member {current} cannot be read: {exc}") from exc
    return files
