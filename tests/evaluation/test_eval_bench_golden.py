"""The eval document over the benchmark's synthetic histories is byte for byte the golden one:
making `rw eval` faster must not move a single printed number (a change of method, such as the
platform's stratified bootstrap, renews the golden with RW_UPDATE_GOLDEN=1 and says so in
docs/eval.md)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.eval_bench_home import eval_document

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "eval" / "bench_synthetic.json"


def test_eval_document_over_synthetic_histories_matches_golden(tmp_path: Path) -> None:
    document = eval_document(tmp_path)
    if os.environ.get("RW_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(document)
    assert document == GOLDEN.read_text(), "differs from tests/golden/eval/bench_synthetic.json"
