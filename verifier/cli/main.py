"""`rw`: the verifier's command line. Commands are imported lazily (the table in
verifier.cli.table), so a command pays only for what it uses (`rw --help`, `rw board --server`
and `rw check` start without the store or the service).

`rw check` and `rw check --json`, typed as they are (CHECK_WITHOUT_CLICK), start without click
too: click is a tenth of the check's CPU (issue 26). They run the very function the click command
runs (verifier.cli.checking.check_here) and print its lines as click.echo would (a line click
would treat differently, with an escape sequence or not ASCII, goes through click.echo itself);
an error the check raises is handed to click's own handling and then this module's, as if click
had run the command. tests/cli/test_check_fast_path.py checks that the click command still takes
exactly these arguments and that both ways say the same. Any other argument list (`rw check
--help`, a typo) goes through click.
"""

from __future__ import annotations

import gc
import os
import sys
import types
from typing import TYPE_CHECKING

# The verifier uses no pydantic plugins, and looking for them reads the metadata of every
# installed distribution at the first model built (a few hundredths of a second of each command's
# start-up, issue 26). A PYDANTIC_DISABLE_PLUGINS already in the environment is left as it is.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from verifier.cli.table import COMMAND_MODULES, COMMANDS, PACKAGE

if TYPE_CHECKING:
    from verifier.cli.checking import FolderError

__all__ = ["CHECK_WITHOUT_CLICK", "COMMANDS", "COMMAND_MODULES", "main"]

_PACKAGE = PACKAGE


def _no_plugins() -> tuple[()]:
    return ()


def _skip_the_plugin_loader() -> None:
    """With every plugin disabled, pydantic's plugin loader answers "none" at its first line, but
    importing it loads importlib.metadata (email, zipfile, csv: about 0.02 s of CPU at every
    start of a command that validates a model). So, only then, its one function pydantic calls
    (`get_plugins`, from pydantic.plugin._schema_validator) is put in its place, answering the
    same. tests/cli/test_cli_startup.py checks that pydantic still calls only that and that its
    own loader answers the same; any other setting of the variable loads pydantic's own."""
    name = "pydantic.plugin._loader"
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") != "__all__" or name in sys.modules:
        return
    stand_in = types.ModuleType(name, "Stands in for pydantic's plugin loader when every plugin is disabled.")
    stand_in.__dict__["get_plugins"] = _no_plugins
    sys.modules[name] = stand_in


_skip_the_plugin_loader()


# The argument lists `rw check` runs without click, and whether each asks for --json.
CHECK_WITHOUT_CLICK: dict[tuple[str, ...], bool] = {("check",): False, ("check", "--json"): True}


def _start_up_done() -> None:
    """The collector back on, with what start-up made (modules, classes, functions: kept to the
    end) frozen out of its view, so its later passes do not walk them again."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _echo(line: str) -> None:
    """One line on stdout, as click.echo writes it: click strips escape sequences when stdout is
    not a terminal and may re-wrap a stream it finds misconfigured for other text, so such a line
    goes through click.echo itself."""
    if line.isascii() and "\x1b" not in line:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        return
    import click  # noqa: PLC0415 - only for a line click would write differently

    click.echo(line)


def _through_click(exc: FolderError | Exception | KeyboardInterrupt) -> None:
    """Raise `exc` from inside a click command, so click handles it as it would have had it run
    `rw check` (Ctrl-C as Abort, a broken pipe quietly, a refusal as click's `Error: ...`)."""
    import click  # noqa: PLC0415 - the error path only

    from verifier.cli.check_cmds import click_error  # noqa: PLC0415
    from verifier.cli.checking import FolderError  # noqa: PLC0415

    error = click_error(exc) if isinstance(exc, FolderError) else exc

    def fail() -> None:
        raise error

    click.Command("check", callback=fail).main([], standalone_mode=False)


def _check_without_click(as_json: bool) -> None:
    from verifier.cli.checking import check_here  # noqa: PLC0415 - the check's modules

    _start_up_done()  # as when click has found the command (LazyGroup.on_resolved)
    try:
        said = check_here(as_json)
        for line in said.lines:
            _echo(line)
    except (Exception, KeyboardInterrupt) as exc:
        _through_click(exc)
        raise  # click re-raises every error in this mode; here for the type checker
    if said.exit_code:
        raise SystemExit(said.exit_code)


def _with_click() -> None:
    from verifier.cli.app import cli  # noqa: PLC0415 - `rw check` as typed starts without click

    cli.on_resolved = _start_up_done
    cli.main(standalone_mode=False)


def _report(exc: Exception) -> None:
    """The one way an error ends `rw`: click's own, then the one map from errors to exit codes."""
    import click  # noqa: PLC0415

    from verifier.cli.app import EXIT_CRASH, EXIT_USAGE, exit_code_of  # noqa: PLC0415

    if isinstance(exc, click.exceptions.Abort):
        click.echo("Aborted!", err=True)
        sys.exit(EXIT_USAGE)
    if isinstance(exc, click.ClickException):
        exc.show()
        sys.exit(exc.exit_code)
    code = exit_code_of(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    prefix = "the verifier crashed: " if code == EXIT_CRASH else ""
    click.echo(f"Error: {prefix}{text}", err=True)
    sys.exit(code)


def main() -> None:
    # Importing a command's modules makes tens of thousands of objects that live until the
    # process ends; the cyclic collector walked them some 60 times for nothing during `rw check`'s
    # start-up (about 0.015 s of CPU, issue 26). It is off until the command is found, then on
    # again (`_start_up_done`), so a long-running command (`rw serve`) collects as usual.
    gc.disable()
    as_json = CHECK_WITHOUT_CLICK.get(tuple(sys.argv[1:]))
    try:
        if as_json is None:
            _with_click()
        else:
            _check_without_click(as_json)
    except Exception as exc:  # every error ends here, as `_report` says
        _report(exc)
