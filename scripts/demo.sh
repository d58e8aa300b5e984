#!/usr/bin/env bash
# Set up, then run the demo end to end on the embedded defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/rw demo "$@"
