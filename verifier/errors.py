"""The verifier's error tree: one exception family per trust boundary, and the rejection value.

A rejection is a plain value (code, message, where) that stops the submission row where it
arose. `Rejected` only carries it up the stack to the one place that turns it into a ledger row.
"""

from __future__ import annotations

from dataclasses import dataclass


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


class VerifierError(Exception):
    """Base of every error the verifier raises on purpose."""


class Rejected(VerifierError):  # noqa: N818 - it names an outcome, not a failure of ours
    """A submission was refused; carries one or more rejections, the first is the headline."""

    def __init__(self, rejections: list[Rejection] | Rejection) -> None:
        self.rejections = [rejections] if isinstance(rejections, Rejection) else list(rejections)
        if not self.rejections:
            raise ValueError("Rejected needs at least one rejection")
        super().__init__(self.rejections[0].render())

    @property
    def headline(self) -> Rejection:
        return self.rejections[0]


class FormatError(VerifierError):
    """A repository file or an untrusted document does not match its format.

    `where` is the file and, when known, the line and field at fault.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class AuthError(VerifierError):
    """The caller could not be authenticated, or asserted an identity that is not theirs."""


class NotFound(VerifierError):  # noqa: N818 - reads as the condition it reports
    """A named project, leaf, agent, source or commit does not exist."""


class ConflictError(VerifierError):
    """A state change was refused because the state is not what the caller expected."""


class LedgerIntegrityError(VerifierError):
    """The ledger chain, or its agreement with the branch, is broken."""


class HistoryBrokenError(VerifierError):
    """The project's branch is not what its anchor and ledger say (a push or an edit outside the
    verifier): every write is refused until a person runs `rw repair`."""


class RetryableError(VerifierError):
    """A fault of the machine, not of the request (full disk, failed object write): nothing was
    kept, and the same request may simply be tried again."""


class BusyError(RetryableError):
    """Another live process held the lock this write needs for longer than the bound
    (verifier.store.files.LOCK_WAIT_S): nothing was done, and the same request may be tried again
    once the holder lets go. Its own exit code and HTTP answer, so a caller tells a hung writer
    from a full disk."""

    exit_code = 8
    http_status = 503
    code = "busy"
