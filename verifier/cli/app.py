"""The `rw` command group and what its commands share: exit codes, time, home, output.

Exit codes (stable, documented in README): 0 accepted/held/ok, 1 rejected (or a check such as
`ledger --verify` failed), 2 usage or input error, 3 authentication error, 4 verifier crash (any
error nobody expected, one line, never a traceback), 5 service unreachable, 6 a fault of the
machine (full disk, failed write: nothing kept, try again), 7 the project refuses writes until
`rw repair`. Each error class carries its code (`verifier.errors`); `exit_code_of` is the one map
from an error to a code, `exit_code_of_reply` from a service's error answer, and
`exit_code_of_outcome` from a verdict's outcome. `rw` (cli.main) applies the first.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, NoReturn

import click

from verifier import VERSION
from verifier.cli.table import COMMAND_MODULES, COMMANDS, PACKAGE
from verifier.errors import (
    EXIT_AUTH,
    EXIT_BUSY,
    EXIT_CRASH,
    EXIT_HISTORY,
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_RETRY,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    AuthError,
    FormatError,
    NotAuthorised,
    Rejected,
    ScopeError,
    UntrustedReply,
    VerifierError,
)

if TYPE_CHECKING:
    from verifier.store.fetcher import Fetcher
    from verifier.store.home import Home
    from verifier.store.identities import Actor

__all__ = ["EXIT_AUTH", "EXIT_BUSY", "EXIT_CRASH", "EXIT_HISTORY", "EXIT_OK", "EXIT_REJECTED", "EXIT_RETRY",
           "EXIT_UNREACHABLE", "EXIT_USAGE"]

# A verdict's outcome as the command's exit code: held waits only for a person, so it passed.
_OUTCOME_EXIT = {"accepted": EXIT_OK, "held": EXIT_OK, "rejected": EXIT_REJECTED, "crash": EXIT_CRASH}
# A service's error answer as the error that would have said it in-process: 401 is an AuthError;
# 403 and 409 refuse the request as a rejection does (another's claim, another agent named).
_REPLY_ERRORS: Mapping[int, type[VerifierError]] = {401: AuthError, 403: Rejected, 409: Rejected}


def exit_code_of(exc: BaseException) -> int:
    """The exit code of an error that reached the top: ours by its class, a full disk or failed
    write as retryable, another OSError as input, anything else a crash."""
    if isinstance(exc, click.ClickException):
        return exc.exit_code
    if isinstance(exc, VerifierError):
        return exc.exit_code
    if isinstance(exc, OSError):
        return EXIT_RETRY if exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT) else EXIT_USAGE
    return EXIT_CRASH


def exit_code_of_reply(status: int, code: str | None = None) -> int:
    """The exit code of a service's error answer (any other status is the request's fault: usage).
    A 403 `not_authorised` is the refusal of the project's authority rule, with its own code; a 403
    `token_scope` a good token used for what it was not made for, an AuthError as in-process."""
    if status == NotAuthorised.http_status and code == NotAuthorised.code:
        return NotAuthorised.exit_code
    if status == ScopeError.http_status and code == ScopeError.code:
        return ScopeError.exit_code
    return _REPLY_ERRORS.get(status, FormatError).exit_code


def exit_code_of_outcome(outcome: str) -> int:
    """The exit code of a verdict: 0 accepted or held, 1 rejected, 4 crash (or an outcome we do not know)."""
    return _OUTCOME_EXIT.get(outcome, EXIT_CRASH)


class RwError(click.ClickException):
    """A user-facing error with its own exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it per class; ours vary per error


def untrusted(message: str) -> RwError:
    """The error of a served value or tree the client refuses (`UntrustedReply`'s exit code).
    Here, not with the client (cli.remote): `rw check` refuses a folder without loading HTTP."""
    return RwError(f"[{UntrustedReply.code}] {message}", UntrustedReply.exit_code)


def now_from_env() -> datetime:
    """The reference time for one command: RW_NOW (ISO 8601) when set, else the clock."""
    raw = os.environ.get("RW_NOW")
    if not raw:
        return datetime.now(UTC).replace(microsecond=0)
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError as exc:
        raise RwError(f"RW_NOW={raw!r} is not an ISO 8601 time") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_moment(text: str, option: str) -> datetime:
    """A command's time option: a date (midnight UTC) or an ISO 8601 time (UTC when it has no zone)."""
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise RwError(f"{option} {text!r}: expected a date (2027-07-01) or an ISO 8601 time") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def now_or(text: str | None) -> datetime:
    """`--now`: the given time, else the command's reference time (RW_NOW or the clock)."""
    return now_from_env() if text is None else parse_moment(text, "--now")


def home_from_env() -> Home:
    """The home of RW_HOME; every project's hooks are put back if someone removed them."""
    # Imported on use: the client commands (board, check, work...) never open a home, and the
    # store is most of the start-up time of a command that imports it.
    from verifier.store.hooks import ensure_hooks  # noqa: PLC0415
    from verifier.wiring import open_home  # noqa: PLC0415

    try:
        home = open_home()
    except FormatError as exc:
        raise RwError(str(exc)) from exc
    ensure_hooks(home.root, [home.repo_path(slug) for slug in home.projects()])
    _deliver_on_close(home)
    return home


def _deliver_on_close(home: Home) -> None:
    """When the command ends (however it ends), post the messages its landings caused: messages
    are an outbox, delivered with or without the service (commons.outbox)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.meta.get("rw.deliver"):
        return
    ctx.meta["rw.deliver"] = True

    def deliver() -> None:
        from verifier.messages.outbox import deliver_quietly  # noqa: PLC0415 - keep `rw` start-up light

        if home.root.exists():
            deliver_quietly(home, now_from_env())

    ctx.call_on_close(deliver)


def fetcher_for(home: Home) -> Fetcher:
    from verifier.store.fetcher import HttpFetcher, OfflineFetcher  # noqa: PLC0415 - see home_from_env

    mode = os.environ.get("RW_FETCH", home.settings.fetch)
    if mode == "offline":
        return OfflineFetcher()
    if mode != "online":
        raise RwError(f"RW_FETCH={mode!r}: expected online or offline")
    return HttpFetcher(user_agent=home.settings.user_agent,
                       allow_private_addresses=home.settings.allow_private_addresses)


def emit(data: Any, as_json: bool, text: str) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True, default=str) if as_json else text)


def fail(exc: Exception) -> NoReturn:
    """An expected error as the command's `Error: ...` line, with its class's exit code."""
    if isinstance(exc, AuthError):
        raise RwError(f"authentication failed: {exc}", exc.exit_code) from exc
    if isinstance(exc, VerifierError):
        raise RwError(str(exc), exc.exit_code) from exc
    raise exc


def actor_from_env(home: Home, action: str = "", project: str | None = None) -> Actor:
    """The caller RW_TOKEN names; a refused token is kept in the home's audit log (never the
    token itself) and is the command's error (exit 3)."""
    from verifier.store.audit import record_denial  # noqa: PLC0415 - keep `rw` start-up light

    try:
        return home.identities.authenticate(os.environ.get("RW_TOKEN", ""))
    except AuthError as exc:
        record_denial(home, kind="authentication", who="unknown", action=action or "rw", project=project,
                      why=str(exc), at=now_from_env(), door="cli")
        fail(exc)


def person_or_owner(home: Home, action: str = "", project: str | None = None) -> Actor | None:
    """The person RW_TOKEN names (held to the project's authority rule by the write), or None
    when it is unset: the home's owner at its own shell, who owns the files anyway."""
    return actor_from_env(home, action, project) if os.environ.get("RW_TOKEN", "") else None


class LazyGroup(click.Group):
    """A command group whose commands live in modules imported on first use.

    `lazy` maps a command name to (module, one-line help), so `rw --help` lists every command and
    `rw board` imports only the module that defines `board`. `modules` are the command modules;
    any of them that `lazy` does not name is imported whenever the full list is needed (help, an
    unknown name), so a module registered only there still works, just without the fast start.
    """

    lazy: Mapping[str, tuple[str, str]] = {}
    modules: tuple[str, ...] = ()
    # Called once the command to run is found (its module imported): `rw` (cli.main) ends its
    # start-up there (see main()).
    on_resolved: Callable[[], None] | None = None

    def configure(self, lazy: Mapping[str, tuple[str, str]], modules: tuple[str, ...]) -> None:
        self.lazy, self.modules = lazy, modules

    def _load_unnamed(self) -> None:
        named = {module for module, _help in self.lazy.values()}
        for module in self.modules:
            if module not in named:
                importlib.import_module(module)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_unnamed()
        return sorted(set(self.commands) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            if cmd_name in self.lazy:
                importlib.import_module(self.lazy[cmd_name][0])
            else:
                self._load_unnamed()
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        found = super().resolve_command(ctx, args)
        if self.on_resolved is not None:
            self.on_resolved()
        return found

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None:
                if loaded.hidden:
                    continue
                rows.append((name, loaded.get_short_help_str(limit)))
            else:
                text = self.lazy[name][1]
                rows.append((name, text if len(text) <= limit else text[: max(limit - 3, 1)].rstrip() + "..."))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """`rw --version`: the package version and the verifier it was built from (verifier.version)."""
    if not value or ctx.resilient_parsing:
        return
    from verifier.version import verifier_version  # noqa: PLC0415 - it reads the package's files: only here

    click.echo(f"rw {VERSION} (verifier {verifier_version()})")
    ctx.exit()


@click.group(cls=LazyGroup)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version, and the verifier (source digest included) it was built from, and exit.")
def cli() -> None:
    """ResearchWiki verifier. The home folder is RW_HOME (default ~/.researchwiki)."""


assert isinstance(cli, LazyGroup)
cli.configure({name: (PACKAGE + module, text) for name, (module, text) in COMMANDS.items()},
              tuple(PACKAGE + module for module in COMMAND_MODULES))
