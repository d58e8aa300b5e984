"""The client the service hands out (verifier/service/client_package.py, client_routes.py): a wheel
of the running verifier that installs a working `rw` in a fresh virtual environment, by the one
command skill/SKILL.md gives."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
import urllib.request
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from tests.support.first_hour import copied_initialised, serving
from verifier import VERSION
from verifier.service.client_package import WHEEL_NAME, build_wheel, package_files
from verifier.version import PACKAGE, verifier_version

ROOT = Path(__file__).resolve().parents[2]
SLUG = "world-model-eval"


def test_the_wheel_is_the_same_bytes_every_build_and_its_record_holds() -> None:
    first, second = build_wheel(), build_wheel()
    assert first.data == second.data and first.name == WHEEL_NAME == f"researchwiki_verifier-{VERSION}-py3-none-any.whl"
    archive = zipfile.ZipFile(BytesIO(first.data))
    names = archive.namelist()
    assert {f"verifier/{path.relative_to(PACKAGE).as_posix()}" for path in package_files()} <= set(names)
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    info = f"researchwiki_verifier-{VERSION}.dist-info"
    assert "rw = verifier.cli.main:main" in archive.read(f"{info}/entry_points.txt").decode()
    metadata = archive.read(f"{info}/METADATA").decode()
    assert "Requires-Python: >=3.11" in metadata and "Requires-Dist: pygit2==1.21.0" in metadata
    assert "Requires-Dist: mcp==2.3.0" in metadata  # `rw mcp` works in the installed client too
    for row in archive.read(f"{info}/RECORD").decode().splitlines():
        name, digest, size = row.split(",")
        if name.endswith("RECORD"):
            continue
        data = archive.read(name)
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, size) == (f"sha256={expected}", str(len(data))), name


def test_the_skill_gives_the_install_command_of_this_version() -> None:
    skill = (ROOT / "skill" / "SKILL.md").read_text(encoding="utf-8")
    assert f"pip install http://SERVER/client/{WHEEL_NAME}" in skill
    assert "Python 3.11" in skill


def _get(url: str) -> tuple[bytes, dict[str, str]]:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return answer.read(), {key.lower(): value for key, value in answer.headers.items()}


@pytest.mark.slow
def test_a_fresh_virtual_environment_installs_a_working_rw_by_the_documented_command(tmp_path: Path) -> None:
    steward = copied_initialised(tmp_path, SLUG, "demo-project")
    with serving(steward.home) as server:
        version = json.loads(_get(f"{server.url}/version")[0])
        assert version["verifier_version"] == verifier_version() and version["requires_python"] == ">=3.11"
        command = version["client"]["install"]
        assert command == f"pip install {server.url}/client/{WHEEL_NAME}"
        index = _get(f"{server.url}/simple/researchwiki-verifier/")[0].decode()
        wheel, headers = _get(f"{server.url}/client/{WHEEL_NAME}")
        assert f"#sha256={hashlib.sha256(wheel).hexdigest()}" in index and headers["etag"].strip('"') in index
        assert re.search(r'href="/simple/researchwiki-verifier/"', _get(f"{server.url}/simple/")[0].decode())

        venv = tmp_path / "fresh"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        # The documented command as is; pip finds the dependencies where its own configuration
        # says (its cache, a local wheel folder or index, or the registry): docs/mcp.md "Installing".
        pip = [str(venv / "bin" / "python"), "-m", *command.split()[:-1], "--disable-pip-version-check", "-q",
               "--no-compile", command.split()[-1]]
        installed = subprocess.run(pip, capture_output=True, text=True, check=False, timeout=1500)
        assert installed.returncode == 0, installed.stderr[-3000:]
        rw = str(venv / "bin" / "rw")
        shown = subprocess.run([rw, "--version"], capture_output=True, text=True, check=True, timeout=120)
        assert shown.stdout.strip() == f"rw {VERSION} (verifier {verifier_version()})"
        board = subprocess.run([rw, "board", SLUG, "--server", server.url], capture_output=True, text=True,
                               check=False, timeout=120, cwd=tmp_path)
        assert board.returncode == 0, board.stderr
        assert board.stdout.startswith("LEAF\tKIND\tSTATE") and "extract" in board.stdout
        sdk = subprocess.run([str(venv / "bin" / "python"), "-c", "import verifier.mcp.server"], capture_output=True,
                             text=True, check=False, timeout=120)
        assert sdk.returncode == 0, sdk.stderr  # the MCP server's SDK came with it
