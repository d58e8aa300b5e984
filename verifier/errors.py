"""The verifier's error tree: one exception family per trust boundary, what each face says about
each error, and the rejection value.

A rejection is a plain value (code, message, where) that stops the submission row where it
arose. `Rejected` only carries it up the stack to the one place that turns it into a ledger row.

Every error class carries how it is reported, as click's exceptions carry their exit code: its
`exit_code` for `rw` (the table in README.md; `verifier.cli.app.exit_code_of` reads it), and its
`http_status`, `code` and `headers` for the service (docs/api.md; `verifier.service.errors`
turns any of them into the one error answer). A subclass inherits its parent's, unless it says
otherwise; `tests/suite/test_error_codes.py` holds the classes and the README table to each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from verifier.constants import RETRY_AFTER_S

# The exit codes of `rw`, stable and documented in README.md ("Verdicts, exit codes, settings").
EXIT_OK = 0  # accepted, held, or the command succeeded
EXIT_REJECTED = 1  # rejected, or a check (`ledger --verify`, `replay`, `leaks`) found a problem
EXIT_USAGE = 2  # usage or input error
EXIT_AUTH = 3  # authentication failed
EXIT_CRASH = 4  # the verifier crashed (any error nobody expected)
EXIT_UNREACHABLE = 5  # the service could not be reached, after retrying
EXIT_RETRY = 6  # a fault of the machine: nothing kept, try again
EXIT_HISTORY = 7  # the project refuses writes until `rw repair`
EXIT_BUSY = 9  # another live process held the project's lock past the bound: try again later
EXIT_UNTRUSTED = 8  # the agent's client refused what the server sent (nothing written outside its folder)
EXIT_FORBIDDEN = 10  # the caller is known, but the project gives them no authority for this (docs/authority.md)

_NO_HEADERS: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Rejection:
    """Why a submission was refused: a stable code for agents, a sentence for people.

    The message says what was observed and what was expected; `where` names the file (and field
    or line) at fault when there is one.
    """

    code: str
    message: str
    where: str | None = None

    def render(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message

    def line(self) -> str:
        """As every verdict line shows it (`rw submit`, `rw check`, a push's `remote:` lines):
        `[code] where: message`."""
        return f"[{self.code}] {self.render()}"


class VerifierError(Exception):
    """Base of every error the verifier raises on purpose.

    One that no subclass describes is reported as a crash: exit 4, and HTTP 500 `internal` with
    a generic sentence (the service logs it; its text may name internals)."""

    exit_code: int = EXIT_CRASH
    http_status: int = 500
    code: str = "internal"
    headers: Mapping[str, str] = _NO_HEADERS

    def __init__(self, *args: object, code: str | None = None) -> None:
        """`code`, when given, is more specific than the class's (`no_leaf` for a NotFound); the
        exit code and the status stay the class's."""
        super().__init__(*args)
        if code is not None:
            self.code = code


class Rejected(VerifierError):  # noqa: N818 - it names an outcome, not a failure of ours
    """A submission was refused; carries one or more rejections, the first is the headline."""

    exit_code = EXIT_REJECTED
    http_status = 422
    code = "rejected"  # each raise answers with its headline's own code

    def __init__(self, rejections: list[Rejection] | Rejection) -> None:
        self.rejections = [rejections] if isinstance(rejections, Rejection) else list(rejections)
        if not self.rejections:
            raise ValueError("Rejected needs at least one rejection")
        self.code = self.rejections[0].code
        super().__init__(self.rejections[0].render())

    @property
    def headline(self) -> Rejection:
        return self.rejections[0]


class FormatError(VerifierError):
    """A repository file or an untrusted document does not match its format.

    `where` is the file and, when known, the line and field at fault. Over HTTP a stored file
    that cannot be read is the project's state, not the request's fault: 409 `unreadable`.
    """

    exit_code = EXIT_USAGE
    http_status = 409
    code = "unreadable"

    def __init__(self, message: str, where: str | None = None, *, code: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message, code=code)


class InvalidRequest(FormatError):  # noqa: N818 - names what was sent, as NotFound names what is missing
    """What a caller asked for is not well formed (a leaf's id, its inputs): the request's fault,
    not the project's state, so 422 `invalid_body` over HTTP, the way a bad JSON field is."""

    http_status = 422
    code = "invalid_body"


class AuthError(VerifierError):
    """The caller could not be authenticated, or asserted an identity that is not theirs."""

    exit_code = EXIT_AUTH
    http_status = 401
    code = "bad_token"
    headers = MappingProxyType({"www-authenticate": 'Bearer error="invalid_token"'})


class NotAuthorised(VerifierError):  # noqa: N818 - names the condition it reports
    """The caller is authenticated, but the project gives them no authority for this action
    (verifier.roles.authority, docs/authority.md). The message names the role it needs and who
    holds it; nothing was written, and the refusal is in the home's audit log."""

    exit_code = EXIT_FORBIDDEN
    http_status = 403
    code = "not_authorised"

    def __init__(self, message: str, *, who: str = "unknown", action: str = "", project: str | None = None) -> None:
        """`who`, `action` and `project` are what the audit log keeps of the refusal."""
        super().__init__(message)
        self.who, self.action, self.project = who, action, project


class ScopeError(AuthError):
    """A valid token used for what it was not made for: another project, or another kind of
    action (its scopes: read, leaf, steward; docs/api.md "Tokens and invites")."""

    http_status = 403
    code = "token_scope"
    headers = MappingProxyType({})


class NotFound(VerifierError):  # noqa: N818 - reads as the condition it reports
    """A named project, leaf, agent, source or commit does not exist."""

    exit_code = EXIT_USAGE
    http_status = 404
    code = "not_found"


class ConflictError(VerifierError):
    """A state change was refused because the state is not what the caller expected."""

    exit_code = EXIT_USAGE
    http_status = 409
    code = "conflict"


class LedgerIntegrityError(VerifierError):
    """The ledger chain, or its agreement with the branch, is broken."""

    exit_code = EXIT_REJECTED
    http_status = 409
    code = "ledger_unreadable"


class HistoryBrokenError(VerifierError):
    """The project's branch is not what its anchor and ledger say (a push or an edit outside the
    verifier): every write is refused until a person runs `rw repair`."""

    exit_code = EXIT_HISTORY
    http_status = 409
    code = "history_broken"


class RetryableError(VerifierError):
    """A fault of the machine, not of the request (full disk, failed object write): nothing was
    kept, and the same request may simply be tried again."""

    exit_code = EXIT_RETRY
    http_status = 503
    code = "retry_later"
    headers = MappingProxyType({"retry-after": str(RETRY_AFTER_S)})


class Unreachable(VerifierError):  # noqa: N818 - names the condition the caller reports
    """The service did not answer within the retry window (the client's side of a 502-504).

    Relayed by a service (an instance that did not answer), it is the same 503 as a fault of the
    machine: nothing was kept, try again."""

    exit_code = EXIT_UNREACHABLE
    http_status = 503
    code = "retry_later"
    headers = MappingProxyType({"retry-after": str(RETRY_AFTER_S)})


class UntrustedReply(VerifierError):  # noqa: N818 - names what the client refused
    """The agent's client refused what a server sent it: an id or path that breaks the verifier's
    own rules, a link in the served tree. Nothing was written outside the working folder. The
    service never raises it (it is the client's judgement of the service)."""

    exit_code = EXIT_UNTRUSTED
    http_status = 502
    code = "untrusted_reply"


class RequestError(VerifierError):
    """A request the service refuses for a reason of HTTP itself (a bad form, a body too large, a
    leaf claimed by another): its status, code and headers are the raise's own, not the class's.

    `detail` is structured data for the client (`leaf_claimed`: who holds it, until when)."""

    exit_code = EXIT_USAGE

    def __init__(self, status: int, code: str, message: str, *, headers: Mapping[str, str] | None = None,
                 detail: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.http_status = status
        self.code = code
        self.message = message
        self.headers = MappingProxyType(dict(headers or {}))
        self.detail = detail

    @property
    def status(self) -> int:
        """The HTTP status (the routes' and their tests' name for `http_status`)."""
        return self.http_status

class BusyError(RetryableError):
    """Another live process held the lock this write needs for longer than the bound
    (verifier.constants.LOCK_WAIT_S): nothing was done, and the same request may be tried again
    once the holder lets go. Its own exit code and HTTP answer, so a caller tells a hung writer
    from a full disk."""

    exit_code = EXIT_BUSY
    http_status = 503
    code = "busy"
