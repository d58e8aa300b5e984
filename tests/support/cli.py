"""`rw` run in this process: the console script's own entry point (verifier.cli.main.main, with its
one map from errors to exit codes), given argv and an environment, its exit code and output caught.
The same answers as a subprocess, without starting an interpreter per call."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from verifier.cli.main import main


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def rw_here(*args: str, env: dict[str, str], exact_env: bool = False, cwd: Path | None = None) -> Ran:
    """`rw ARGS` with `env` laid over this process's environment for the call (or, with
    `exact_env`, as the whole environment), in `cwd` when given; all restored afterwards."""
    saved_env, saved_argv, saved_cwd = dict(os.environ), sys.argv, Path.cwd()
    out, err = io.StringIO(), io.StringIO()
    code = 0
    if exact_env:
        os.environ.clear()
    os.environ.update(env)
    sys.argv = ["rw", *args]
    if cwd is not None:
        os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
    return Ran(code, out.getvalue(), err.getvalue())
