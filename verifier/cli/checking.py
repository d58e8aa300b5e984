"""What `rw check` does, without the command line: find the working folder, run the verifier's
checks on it (verifier.agentkit.localcheck) and say the result as lines and an exit code.

Click-free on purpose: `rw check` as typed runs it straight from `rw`'s entry point
(verifier.cli.main), and `rw check` through click (check_cmds) runs the same function, so the two
cannot say different things (tests/cli/test_check_fast_path.py runs both)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from verifier.agentkit.localcheck import result_json, run_checks
from verifier.agentkit.safefiles import LinkRefused
from verifier.agentkit.workdir import Work, find_work
from verifier.errors import EXIT_OK, EXIT_REJECTED


class FolderError(Exception):
    """The folder cannot be checked: the command's `Error: ...` line (`untrusted`: what it refuses
    is a tree or file that is not what the service serves, verifier.cli.check_cmds.click_error)."""

    def __init__(self, message: str, *, untrusted: bool = False) -> None:
        super().__init__(message)
        self.message, self.untrusted = message, untrusted


def _skill_version(work: Work) -> str:
    """The skill the folder was claimed under; a folder `rw work` made names it, so the skill file
    is read (and its format loaded) only for an older folder."""
    if work.state.skill_version:
        return work.state.skill_version
    from verifier.agentkit.skillref import current_skill_version  # noqa: PLC0415

    return current_skill_version()


class Said:
    """What `rw check` prints (one line each) and its exit code. (A plain class: a frozen
    dataclass costs `rw check` about a millisecond to make at every start, issue 26.)"""

    __slots__ = ("exit_code", "lines")

    def __init__(self, lines: list[str], exit_code: int) -> None:
        self.lines, self.exit_code = lines, exit_code


def check_here(as_json: bool) -> Said:
    """The checks of the working folder holding the current directory, as `rw check` says them."""
    try:
        work = find_work(Path.cwd())
    except FileNotFoundError as exc:
        raise FolderError(str(exc)) from exc
    except LinkRefused as exc:
        raise FolderError(str(exc), untrusted=True) from exc
    try:
        result = run_checks(work, datetime.now(UTC).replace(microsecond=0), _skill_version(work))
    except RuntimeError as exc:
        raise FolderError(str(exc)) from exc
    except LinkRefused as exc:
        raise FolderError(str(exc), untrusted=True) from exc
    lines: list[str] = []
    if as_json:
        lines.append(json.dumps(result_json(result), indent=2, sort_keys=True))
    else:
        # In the verifier's order: the trace is checked before the patch.
        lines.extend(f"{problem.line()} (trace)" for problem in result.trace_problems)
        lines.extend(rejection.line() for rejection in result.rejections)
        if result.ok and not result.trace_problems and result.holds:
            lines.append(f"OK {result.summary}; the service will hold it for a person ({', '.join(result.holds)})")
        elif result.ok and not result.trace_problems:
            lines.append(f"OK {result.summary}".rstrip())
        lines.extend(f"  note: {note}" for note in result.notes)
    # The verifier would reject either.
    return Said(lines, EXIT_OK if result.ok and not result.trace_problems else EXIT_REJECTED)
