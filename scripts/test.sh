#!/usr/bin/env bash
# Set up, then lint, type-check and run the whole test suite on every core (pytest-xdist; pass
# `-n 0` to run in one process), its temporary files in a tmpfs when /dev/shm is there
# (RW_TEST_ON_DISK=1: on disk). Exits non-zero on any failure, including a run that collects no tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check verifier tests scripts
.venv/bin/mypy
# Bytecode is kept even where the environment says not to write it (as tests/support/bytecode.py
# does inside pytest): otherwise every `rw` process a test starts compiles the package again.
unset PYTHONDONTWRITEBYTECODE
# The tests' homes and repositories live in a tmpfs where there is one: the suite writes, fsyncs and
# removes many thousands of small files, which on a shared disk cost more than the tests' own work.
if [ -z "${RW_TEST_ON_DISK:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  scratch=$(mktemp -d /dev/shm/rw-tests.XXXXXX)
  trap 'rm -rf "$scratch"' EXIT
  export TMPDIR="$scratch"
fi
set +e
.venv/bin/pytest -q -p no:cacheprovider -n auto --dist worksteal "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests" >&2
  exit 1
fi
exit "$code"
