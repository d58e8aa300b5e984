#!/usr/bin/env bash
# Create .venv (if missing) and install the package with its development tools. Done once per
# pyproject.toml and interpreter: a stamp in .venv names both (the package itself is an editable
# install, so changed sources need no new install), and with it in place this is a no-op.
set -euo pipefail
cd "$(dirname "$0")/.."
# The interpreter: RW_PYTHON if set; else the distribution's own /usr/bin/python3 when it is 3.11
# or newer and can make a venv; else python3 on PATH. Distributions build their Python with
# profile-guided and link-time optimisation, which a from-source build (pyenv's default) leaves
# off: on the same machine the distribution's 3.11 ran `rw check` in 0.24 s of CPU against 0.32,
# the whole first minute in 2.2 s against 3.2 and the landing in 33 ms against 38 (issue 26).
usable() { "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }
if [ -n "${RW_PYTHON:-}" ]; then
  python="$RW_PYTHON"
  usable "$python" || { echo "RW_PYTHON=$python is not a Python 3.11+ that can make a venv" >&2; exit 1; }
elif [ -x /usr/bin/python3 ] && usable /usr/bin/python3; then
  python=/usr/bin/python3
else
  python=python3
fi
python=$("$python" -c 'import os, sys; print(os.path.realpath(sys.executable))')
# A .venv made from another interpreter is made again (its stamp names the one it was made from).
if [ -x .venv/bin/python ] && ! grep -qx "executable = $python" .venv/pyvenv.cfg 2>/dev/null; then
  echo "setup: .venv was made from another interpreter; making it again from $python" >&2
  rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
stamp=".venv/.installed-$(cat pyproject.toml <(echo "$python") | sha256sum | cut -c1-16)"
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
