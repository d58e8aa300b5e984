#!/usr/bin/env bash
# Set up, then lint, type-check and run the whole test suite on every core (pytest-xdist; pass
# `-n 0` to run in one process). Exits non-zero on any failure,
# including a run that collects no tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check verifier tests scripts
.venv/bin/mypy
set +e
.venv/bin/pytest -q -p no:cacheprovider -n auto --dist worksteal "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests" >&2
  exit 1
fi
exit "$code"
