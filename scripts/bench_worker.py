"""Benchmark: the platform worker (verifier/agentkit/modelworker.py) on the validation set, with recorded answers.

First a recording session writes the model's answers for every request the worker makes on the
validation set (tests/support/model_worker.py's Scribe: exact excerpts but one per extract leaf,
which the worker's own excerpt check catches and asks again for); then `--rounds` replays run on
those recordings only (a RecordedBackend, as `models.worker` = `recorded` configures it), through
the real verifier (verifier.roles.validation.replay: scratch home, pinned sources on loopback).

Measured per replay: the whole replay's wall time, and the time inside the worker's own calls
(reading the source text, the model exchange, the local excerpt check, building patch and trace).
`worker_s` is the replay's wall time, `verifier_s` the part not spent in the worker (setting the
scratch home up, creating leaves, and the verifier's submissions), so `worker_s - verifier_s` is the
worker's own overhead; figures are the median round. Last line: one JSON object with `leaves`,
`accepted`, `acceptance_rate`, `worker_s`, `verifier_s`, `overhead_per_leaf_s`, `model_calls`.
Targets: acceptance_rate >= 0.9, overhead per leaf <= 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support, from a fresh checkout

from tests.support.loop import SEED_SKILL, with_extract
from tests.support.model_worker import Scribe
from tests.support.world import NOW
from verifier.agentkit.modelworker import ModelWorker
from verifier.model.adapter import Backend, RecordedBackend
from verifier.roles.validation import WorkerResult, WorkerTask, load_validation_set, replay

SKILL = with_extract(SEED_SKILL, "## Extract\n\nQuote every excerpt verbatim: copy it from `rw source text`.\n")


@dataclass
class Timed:
    """The platform worker, timed call by call."""

    backend: Backend
    seconds: list[float] = field(default_factory=list)

    def __call__(self, task: WorkerTask) -> WorkerResult:
        started = time.perf_counter()
        try:
            return ModelWorker(self.backend)(task)
        finally:
            self.seconds.append(time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    validation = load_validation_set()
    with tempfile.TemporaryDirectory(prefix="rw-bench-worker-") as folder:
        recordings = Path(folder) / "recorded"
        replay(validation, SKILL, ModelWorker(Scribe(recordings)), now=NOW)  # the recording session
        calls = len(list(recordings.glob("*.json")))
        rounds: list[tuple[float, float, int, int]] = []
        for index in range(args.rounds):
            worker = Timed(RecordedBackend(recordings))
            started = time.perf_counter()
            scores = replay(validation, SKILL, worker, now=NOW)
            wall = time.perf_counter() - started
            accepted = sum(1 for score in scores if score.outcome == "accepted")
            rounds.append((wall, sum(worker.seconds), len(scores), accepted))
            print(f"round {index + 1}: {accepted}/{len(scores)} accepted, replay {wall:.2f} s, "
                  f"in the worker {sum(worker.seconds):.3f} s")
    wall = statistics.median(r[0] for r in rounds)
    inside = statistics.median(r[1] for r in rounds)
    leaves, accepted = rounds[-1][2], min(r[3] for r in rounds)
    print(json.dumps({"leaves": leaves, "accepted": accepted, "acceptance_rate": round(accepted / leaves, 3),
                      "worker_s": round(wall, 3), "verifier_s": round(wall - inside, 3),
                      "overhead_per_leaf_s": round(inside / leaves, 3), "model_calls": calls,
                      "rounds": args.rounds}))


if __name__ == "__main__":
    main()
