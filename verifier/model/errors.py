"""The model adapter's errors: one tree, each saying what happened and, apart, what was said.

A sealed (baseline) call's error carries its headline only (`withhold`): even a malformed answer or
a provider's error body can give the verdict away, and error messages reach ledger rows and logs.
"""

from __future__ import annotations

from verifier.errors import VerifierError

STDERR_TAIL = 2000  # kept on the error
MESSAGE_TAIL = 400  # shown in its message


def _shown_tail(tail: str) -> str:
    return tail if len(tail) <= MESSAGE_TAIL else "..." + tail[-MESSAGE_TAIL:]


WITHHELD = "details withheld: what a baseline call said stays sealed until resolution"


class ModelError(VerifierError):
    """A model call failed. `request_sha256` names the call, so a failure can be recorded too.

    `headline` says what happened; `detail` is what the model or its command said (stderr, the
    start of a malformed answer, a wrong value). For a baseline call the message carries the
    headline only (`withheld`): even a malformed answer or a stderr line can give the verdict
    away, and error messages reach ledger rows and logs.
    """

    def __init__(self, headline: str, *, request_sha256: str, detail: str = "",
                 sealed_headline: str | None = None) -> None:
        self.headline = headline
        self.detail = detail
        self.request_sha256 = request_sha256
        self.withheld = False
        # What a sealed call's message may say: the headline without anything the command chose
        # (its exit status, how long it took), which could spell a verdict as well as text can.
        self.sealed_headline = sealed_headline if sealed_headline is not None else headline
        super().__init__(f"{headline}; {detail}" if detail else headline)

    def withhold(self) -> ModelError:
        """The same error, its message without the detail (which stays on `.detail`)."""
        clone = self.__class__.__new__(self.__class__)
        clone.__dict__.update(self.__dict__)
        clone.withheld = True
        clone.args = (f"{self.sealed_headline}; {WITHHELD}",)
        return clone


class ModelStartError(ModelError):
    """The configured command could not be started (not found, not executable, bad config)."""


class ModelExitError(ModelError):
    """The command exited with a non-zero status."""

    def __init__(self, headline: str, *, request_sha256: str, returncode: int, stderr_tail: str,
                 sealed_headline: str | None = None) -> None:
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        super().__init__(headline, request_sha256=request_sha256, detail=f"stderr ends: {_shown_tail(stderr_tail)}",
                         sealed_headline=sealed_headline)


class ModelTimeoutError(ModelError):
    """The command ran past its timeout; its process group was killed."""

    def __init__(self, headline: str, *, request_sha256: str, timeout_s: float, stderr_tail: str) -> None:
        self.timeout_s = timeout_s
        self.stderr_tail = stderr_tail
        super().__init__(headline, request_sha256=request_sha256, detail=f"stderr ends: {_shown_tail(stderr_tail)}")


class ModelOutputTooLargeError(ModelError):
    """The command wrote more than the output cap; its process group was killed."""


class ModelNotJSONError(ModelError):
    """The answer bytes are not a JSON document."""

    def __init__(self, headline: str, *, request_sha256: str, answer_sha256: str, detail: str) -> None:
        self.answer_sha256 = answer_sha256
        super().__init__(headline, request_sha256=request_sha256, detail=detail)


class ModelAnswerInvalidError(ModelError):
    """The answer is JSON but does not match the answer schema of the request's kind."""

    def __init__(self, headline: str, *, request_sha256: str, answer_sha256: str, detail: str) -> None:
        self.answer_sha256 = answer_sha256
        super().__init__(headline, request_sha256=request_sha256, detail=detail)


class RecordingMissingError(ModelError):
    """The recorded backend has no answer for this request."""


class ModelKeyError(ModelStartError):
    """A provider backend has no usable API key (unset, empty, or a key file others can read)."""


class ModelProviderError(ModelError):
    """A provider API refused the call (a 4xx), or kept failing (429 or 5xx) past the retry budget."""

    def __init__(self, headline: str, *, request_sha256: str, status: int | None, attempts: int,
                 detail: str = "") -> None:
        self.status = status
        self.attempts = attempts
        super().__init__(headline, request_sha256=request_sha256, detail=detail)
