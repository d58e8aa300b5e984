"""A pytest plugin (pyproject.toml's addopts: `-p tests.support.bytecode`) that lets the suite
keep compiled bytecode even where the environment says not to write it (PYTHONDONTWRITEBYTECODE).

Without bytecode every pytest-xdist worker compiles the package and rewrites every test module's
asserts again on each run (about 8 s of CPU of a worker's 16 s of collection), and so does every
`rw` process a test starts. The files go where Python puts them by default, `__pycache__/` beside
each source (ignored by git). Loaded with `-p`, before any test module, conftest or product
module is imported, so pytest's assertion rewriter caches what it rewrites too.
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # and the processes the tests start
