"""scripts/bench_throughput.py in small: 16 agents to one project through a real server beside a
bare-git loop; the last line is the JSON object issue 26 asks for, and no acknowledged acceptance
is lost or landed twice. (The full run is `.venv/bin/python scripts/bench_throughput.py`.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.world import ROOT

pytestmark = pytest.mark.slow  # scripts/bench_throughput.py through a real server


def test_bench_throughput_small_loses_and_duplicates_nothing() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_throughput.py"), "--findings", "200", "--sources", "20",
         "--seconds", "3", "--planned", "64", "--no-fsync"],
        capture_output=True, text=True, timeout=300, check=False)
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert result.returncode == 0, result.stderr
    assert set(summary) >= {"landings_per_s", "bare_git_per_s", "ratio", "p50_ms", "p99_ms", "lost", "duplicated",
                            "peak_rss_mb"}
    assert summary["lost"] == summary["duplicated"] == summary["errors"] == 0
    assert summary["landed"] > 0 and summary["landings_per_s"] > 0 and summary["bare_git_per_s"] > 0
    assert summary["peak_rss_mb"] > 0
