#!/usr/bin/env bash
# Set up, then lint, type-check and run the whole test suite on every core (pytest-xdist; pass
# `-n 0` to run in one process), its temporary files in a tmpfs when /dev/shm is there
# (tests/support/scratch.py; RW_TEST_ON_DISK=1: on disk). Exits non-zero on any failure, including a
# run that collects no tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check verifier tests scripts
# mypy runs beside the tests: they leave about a third of the two cores idle (waiting on the
# processes and servers they start), which mypy's one thread fills; its report follows theirs.
mypy_log=$(mktemp)
.venv/bin/mypy >"$mypy_log" 2>&1 &
mypy_pid=$!
trap 'kill "$mypy_pid" 2>/dev/null || true; rm -f "$mypy_log"' EXIT  # an interrupted run leaves no mypy behind
# Bytecode is kept even where the environment says not to write it (as tests/support/bytecode.py
# does inside pytest): otherwise every `rw` process a test starts compiles the package again.
unset PYTHONDONTWRITEBYTECODE
set +e
.venv/bin/pytest -q -p no:cacheprovider -n auto --dist worksteal "$@"
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
