"""scripts/load.py in small: concurrent agents through a real server, then every submission has
exactly one ledger row, accepted rows are the contribution commits, and nothing but documented
verdicts came back. (The full run, 16 agents on 4 projects, is `.venv/bin/python scripts/load.py`.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.world import ROOT

pytestmark = pytest.mark.slow  # scripts/load.py through a real server


def test_load_small() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "load.py"), "--agents", "8", "--projects", "4", "--per-project", "24",
         "--seconds", "4", "--reject-every", "5", "--no-fsync"],
        capture_output=True, text=True, timeout=300, check=False)
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert result.returncode == 0, result.stderr
    assert summary["submissions"] > 0
    assert summary["lost"] == summary["duplicated"] == summary["errors"] == 0
    assert summary["server_per_s"] > 0 and summary["inprocess_per_s"] > 0
    assert set(summary) >= {"submissions", "lost", "duplicated", "server_per_s", "inprocess_per_s", "ratio", "p50_ms",
                            "p95_ms"}
