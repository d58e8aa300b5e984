"""Test state built once per test process and copied for each test that changes it.

Building a home with the fixture project (and, for some tests, a first accepted submission) costs
tens of milliseconds of git writes and fsyncs; copying its folder costs a few. So `built(name,
build)` runs `build` once per process (each pytest-xdist worker is one) in a folder of its own,
removed when the process ends, and hands back what it returned; the caller copies the home out
of it (tests.support.world.copied_world) before changing anything. The built state is read only.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast

__all__ = ["built"]

T = TypeVar("T")
_built: dict[str, object] = {}
_root: list[Path] = []


def _folder(name: str) -> Path:
    if not _root:
        _root.append(Path(tempfile.mkdtemp(prefix="rw-test-templates-")))
        atexit.register(shutil.rmtree, _root[0], True)
    folder = _root[0] / name
    folder.mkdir()
    return folder


def built(name: str, build: Callable[[Path], T]) -> T:
    """What `build(folder)` returned, built on the first call for `name` in this process."""
    if name not in _built:
        _built[name] = build(_folder(name))
    return cast(T, _built[name])
