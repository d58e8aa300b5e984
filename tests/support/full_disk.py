"""A real full disk for one project repository: the repository moved onto a small tmpfs of its own
(linked back in place), and the tmpfs filled until only a few pages are free, so the next writes
fail with ENOSPC from the kernel, not from a test double: room for a few objects of a landing,
not for all of them. Needs the right to mount (root in a
container that allows it); the tests that use it are skipped where it is not given."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from verifier.client.http import Client, Reply, encode_form
from verifier.pipeline.submit import Submission

PAGE = 4096
SIZE = 8 << 20


def loose_objects(repo: Path) -> set[str]:
    """The ids of the loose objects in a bare repository (what a failed write leaves)."""
    return {folder.name + path.name for folder in (repo / "objects").glob("[0-9a-f][0-9a-f]")
            for path in folder.iterdir()}


def free_bytes(path: Path) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


@dataclass(frozen=True)
class SmallDisk:
    """The tmpfs a repository was moved onto."""

    mount: Path

    def fill(self, *, pages_free: int = 2) -> None:
        """Fill the disk until `pages_free` pages are left: room for that many small objects."""
        with (self.mount / "filler").open("ab") as out:
            out.write(b"\0" * (free_bytes(self.mount) - pages_free * PAGE))

    def empty(self) -> None:
        (self.mount / "filler").unlink()

    def free(self) -> int:
        return free_bytes(self.mount)


@contextlib.contextmanager
def small_disk_under(repo: Path, mount: Path) -> Iterator[SmallDisk]:
    """Put `repo` on its own tmpfs at `mount` (skip the test where mounting is not allowed); put
    it back and unmount after."""
    mount.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here for a real full disk: {done.stderr.strip()[:200]}")
    moved = mount / repo.name
    try:
        shutil.copytree(repo, moved, symlinks=True)
        shutil.rmtree(repo)
        repo.symlink_to(moved, target_is_directory=True)
        yield SmallDisk(mount)
    finally:
        if repo.is_symlink():
            repo.unlink()
            shutil.copytree(moved, repo, symlinks=True)
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def submit_once(client: Client, submission: Submission, *, key: str) -> Reply:
    """One POST of a submission, without the client's retries (a 503 is the answer under test)."""
    body, content_type = encode_form(dict(submission.bundle))
    return client.once("POST", f"/projects/{submission.slug}/leaves/{submission.leaf_id}/submissions", body=body,
                       content_type=content_type, headers={"Idempotency-Key": key})
