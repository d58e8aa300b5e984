#!/usr/bin/env bash
# Set up, then lint, type-check and run the whole test suite on every core (pytest-xdist, three
# workers per two cores; pass `-n 0` to run in one process), its temporary files in a tmpfs when /dev/shm is there
# (tests/support/scratch.py; RW_TEST_ON_DISK=1: on disk). Exits non-zero on any failure, including a
# run that collects no tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check verifier tests scripts
# mypy runs beside the tests: seconds once its cache is warm (.ci/run warms it while the system's
# packages install), under a minute of one core cold; its report follows theirs.
mypy_log=$(mktemp)
.venv/bin/mypy >"$mypy_log" 2>&1 &
mypy_pid=$!
trap 'kill "$mypy_pid" 2>/dev/null || true; rm -f "$mypy_log"' EXIT  # an interrupted run leaves no mypy behind
# Bytecode is kept even where the environment says not to write it (as tests/support/bytecode.py
# does inside pytest): otherwise every `rw` process a test starts compiles the package again.
unset PYTHONDONTWRITEBYTECODE
set +e
# Three workers per two cores: a test spends about a third of its time waiting on the processes
# and servers it starts, and the third worker runs while the other two wait (five slow rooms on a
# shared 2-core machine: 292 s of wall time against 316 s with two workers, no more CPU).
# worksteal: a worker that runs dry takes half of another's queue, so no long test ends alone.
.venv/bin/pytest -q -p no:cacheprovider -n "$(( $(nproc) * 3 / 2 ))" --dist worksteal "$@"
code=$?
wait "$mypy_pid"
mypy_code=$?
set -e
cat "$mypy_log"
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests" >&2
  exit 1
fi
if [ "$mypy_code" -ne 0 ]; then
  echo "mypy failed (exit $mypy_code)" >&2
  [ "$code" -ne 0 ] || code=$mypy_code
fi
exit "$code"
