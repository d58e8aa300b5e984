"""Run benchmarks on two checkouts side by side, alternating, and print both figures.

    .venv/bin/python scripts/bench_side_by_side.py --before ../before bench_submit bench_push ...

Each named benchmark (scripts/<name>.py) runs with each checkout's own .venv, `--rounds` times,
alternating before and after so both see the same load; the last JSON line of every run is kept.
For each numeric field the median of each side and their ratio (after / before) is printed; the
last line is one JSON object with every benchmark's medians and ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _run(checkout: Path, name: str, extra: list[str]) -> dict[str, object]:
    done = subprocess.run([str(checkout / ".venv" / "bin" / "python"), str(checkout / "scripts" / f"{name}.py"),
                           *extra], cwd=checkout, capture_output=True, text=True, timeout=3600, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{name} failed in {checkout} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    value = json.loads(lines[-1])
    assert isinstance(value, dict)
    return value


def _medians(runs: list[dict[str, object]]) -> dict[str, float]:
    keys = [key for key, value in runs[0].items() if isinstance(value, int | float) and not isinstance(value, bool)]
    medians: dict[str, float] = {}
    for key in keys:
        values = [float(value) for run in runs if isinstance(value := run.get(key), int | float)]
        medians[key] = statistics.median(values)
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the other checkout (with its own .venv)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arg", action="append", default=[], help="NAME=ARGS passed to one benchmark")
    parser.add_argument("names", nargs="+")
    args = parser.parse_args()
    extra = {name: value.split() for name, _, value in (item.partition("=") for item in args.arg)}
    report: dict[str, dict[str, object]] = {}
    for name in args.names:
        before: list[dict[str, object]] = []
        after: list[dict[str, object]] = []
        for _ in range(args.rounds):
            before.append(_run(args.before.resolve(), name, extra.get(name, [])))
            after.append(_run(HERE, name, extra.get(name, [])))
        old, new = _medians(before), _medians(after)
        ratios = {key: round(new[key] / old[key], 3) for key in old if key in new and old[key]}
        for key in old:
            print(f"{name:22s} {key:28s} before {old[key]:12.4g}  after {new.get(key, float('nan')):12.4g}  "
                  f"ratio {ratios.get(key, float('nan'))}")
        report[name] = {"before": old, "after": new, "ratio": ratios}
        sys.stdout.flush()
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
