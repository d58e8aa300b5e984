"""The client package the service hands out: a wheel of the running verifier, built from its own files.

Built at serve time, on the first request for it in each worker, from the `verifier` package this
service imports (every file under it but byte-code) plus the distribution's own metadata (its
dependencies and the `rw` entry point, read with importlib.metadata), with no build tool and no
source checkout needed. The build is deterministic (fixed file times and order), so every worker
serves the same bytes under the same sha256, and the client it installs reports the same verifier
version as the service (`verifier.version`: its digest covers these very files).

The file name carries the package version only (`researchwiki_verifier-0.1.0-py3-none-any.whl`), so
the URL skill/SKILL.md gives stays put between releases; `rw --version` of the installed client
names the exact verifier (`0.1.0+src.<digest>`).
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

from verifier import VERSION
from verifier.version import PACKAGE

DISTRIBUTION = "researchwiki-verifier"
WHEEL_NAME = f"{DISTRIBUTION.replace('-', '_')}-{VERSION}-py3-none-any.whl"
REQUIRES_PYTHON = ">=3.11"
_DIST_INFO = f"{DISTRIBUTION.replace('-', '_')}-{VERSION}.dist-info"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip can hold: no build time in the bytes
_SKIPPED_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True)
class Wheel:
    name: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def _metadata_lines() -> list[str]:
    """METADATA: name, version, what it needs (the running distribution's own Requires-Dist)."""
    lines = ["Metadata-Version: 2.1", f"Name: {DISTRIBUTION}", f"Version: {VERSION}",
             "Summary: ResearchWiki: the verifier's client (rw) and service", f"Requires-Python: {REQUIRES_PYTHON}"]
    try:
        installed = metadata.metadata(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return lines
    lines += [f"Provides-Extra: {extra}" for extra in installed.get_all("Provides-Extra") or []]
    lines += [f"Requires-Dist: {requirement}" for requirement in installed.get_all("Requires-Dist") or []]
    return lines


def _entry_points() -> str:
    try:
        points = metadata.distribution(DISTRIBUTION).entry_points
        found = [point for point in points if point.group == "console_scripts"]
    except metadata.PackageNotFoundError:
        found = []
    scripts = {point.name: point.value for point in found} or {"rw": "verifier.cli.main:main"}
    return "[console_scripts]\n" + "".join(f"{name} = {value}\n" for name, value in sorted(scripts.items()))


def package_files(root: Path = PACKAGE) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.is_file() and "__pycache__" not in path.parts
                  and not path.name.endswith(_SKIPPED_SUFFIXES))


def _record_row(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(root: Path = PACKAGE) -> Wheel:
    """The wheel of the verifier package at `root`: the same files give the same bytes."""
    members: list[tuple[str, bytes]] = [(f"verifier/{path.relative_to(root).as_posix()}", path.read_bytes())
                                        for path in package_files(root)]
    members += [
        (f"{_DIST_INFO}/METADATA", ("\n".join(_metadata_lines()) + "\n").encode("utf-8")),
        (f"{_DIST_INFO}/WHEEL", b"Wheel-Version: 1.0\nGenerator: researchwiki-verifier\nRoot-Is-Purelib: true\n"
                                b"Tag: py3-none-any\n"),
        (f"{_DIST_INFO}/entry_points.txt", _entry_points().encode("utf-8")),
    ]
    record = "".join(_record_row(name, data) + "\n" for name, data in members) + f"{_DIST_INFO}/RECORD,,\n"
    members.append((f"{_DIST_INFO}/RECORD", record.encode("utf-8")))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return Wheel(WHEEL_NAME, buffer.getvalue())


@cache
def served_wheel() -> Wheel:
    """The running verifier's wheel, built once per process."""
    return build_wheel()
