#!/usr/bin/env bash
# Create .venv (if missing) and install the package with its development tools. Done once per
# pyproject.toml: a stamp in .venv names the pyproject.toml it installed (the package itself is an
# editable install, so changed sources need no new install), and with it in place this is a no-op.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ -e "$stamp" ]; then
  exit 0
fi
# One pip run with the venv's own pip (new enough for an editable pyproject install; upgrading it
# first cost a download and an install on every fresh clone). Its byte-compiling is left to one
# compileall over the site-packages on every core afterwards: the same files compiled (so each
# process, the `rw` commands and the benchmarks, starts as fast), in parallel instead of one by one.
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile -e '.[dev]'
.venv/bin/python -m compileall -q -j 0 "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" >/dev/null
rm -f .venv/.installed-*
touch "$stamp"
