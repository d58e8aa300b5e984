"""Every error class carries how each face reports it (exit code, HTTP status, code), the README's
exit-code table and docs/api.md say the same, and `rw` and the service read them from the class."""

from __future__ import annotations

import errno
import importlib
import json
import pkgutil
import re
from pathlib import Path

import click
import pytest

import verifier
from verifier.cli.app import RwError, exit_code_of, exit_code_of_outcome, exit_code_of_reply
from verifier.errors import (
    EXIT_AUTH,
    EXIT_BUSY,
    EXIT_CRASH,
    EXIT_FORBIDDEN,
    EXIT_HISTORY,
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_RETRY,
    EXIT_UNREACHABLE,
    EXIT_UNTRUSTED,
    EXIT_USAGE,
    AuthError,
    ConflictError,
    FormatError,
    HistoryBrokenError,
    LedgerIntegrityError,
    NotAuthorised,
    NotFound,
    Rejected,
    Rejection,
    RequestError,
    RetryableError,
    Unreachable,
    VerifierError,
)
from verifier.service.errors import error_response

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
API = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
SKILL_CODES = (ROOT / "skill" / "rejection-codes.md").read_text(encoding="utf-8")
CODE = re.compile(r"^[a-z][a-z0-9_]+$")
# What the README's row for each class's exit code must say (its meaning, in the table's words).
MEANING: dict[type[VerifierError], str] = {
    Rejected: "rejected", LedgerIntegrityError: "`rw ledger --verify`", NotFound: "usage or input error",
    FormatError: "usage or input error", ConflictError: "usage or input error", AuthError: "authentication failed",
    VerifierError: "the verifier crashed", Unreachable: "could not be reached",
    RetryableError: "a fault of the machine", HistoryBrokenError: "history was changed outside the verifier",
    NotAuthorised: "not authorised",
}


def readme_exit_table() -> dict[int, str]:
    section = README[README.index("| exit code | meaning |"):]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", section.split("\n\n", 1)[0], re.MULTILINE)
    return {int(code): meaning for code, meaning in rows}


def api_error_table() -> dict[int, str]:
    section = API[API.index("| status | codes |"):].split("\n\n", 1)[0]
    table: dict[int, str] = {}
    for statuses, codes in re.findall(r"^\| ([0-9, ]+) \| (.+) \|$", section, re.MULTILINE):
        for status in statuses.split(","):
            table[int(status)] = table.get(int(status), "") + codes
    return table


def error_classes() -> list[type[VerifierError]]:
    """Every VerifierError subclass in the package (each module imported, so none is missed)."""
    for module in pkgutil.walk_packages(verifier.__path__, "verifier."):
        importlib.import_module(module.name)
    found: list[type[VerifierError]] = []
    todo: list[type[VerifierError]] = [VerifierError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_error_class_carries_its_exit_code_status_and_code() -> None:
    classes = error_classes()
    assert len(classes) > 20  # the walk found the package's errors, not only the base
    exits, statuses, documented = readme_exit_table(), api_error_table(), api_error_table()
    for cls in classes:
        assert cls.exit_code in exits, (cls, cls.exit_code)
        assert cls.http_status in statuses, (cls, cls.http_status)
        assert CODE.match(cls.code), (cls, cls.code)
        assert f"`{cls.code}`" in documented[cls.http_status], (cls, cls.http_status, cls.code)
        assert f"`{cls.code}`" in SKILL_CODES, (cls, cls.code)


def test_the_readme_exit_table_and_the_classes_agree() -> None:
    table = readme_exit_table()
    assert table, "README.md lost its exit-code table"
    carried = {cls.exit_code for cls in error_classes()}
    assert set(table) == carried | {EXIT_OK}  # no code without a class, no class without a row
    for cls, words in MEANING.items():
        assert words in table[cls.exit_code], (cls, cls.exit_code, table[cls.exit_code])
    constants = (EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_AUTH, EXIT_CRASH, EXIT_UNREACHABLE, EXIT_RETRY, EXIT_HISTORY,
                 EXIT_UNTRUSTED, EXIT_BUSY, EXIT_FORBIDDEN)
    assert constants == tuple(range(11)) == tuple(sorted(table))


def test_rw_exits_with_the_code_its_error_class_carries() -> None:
    assert exit_code_of(NotFound("no project x")) == EXIT_USAGE
    assert exit_code_of(AuthError("unknown token")) == EXIT_AUTH
    assert exit_code_of(HistoryBrokenError("moved")) == EXIT_HISTORY
    assert exit_code_of(Rejected(Rejection("bad_slug", "no"))) == EXIT_REJECTED
    assert exit_code_of(Unreachable("gone")) == EXIT_UNREACHABLE
    assert exit_code_of(OSError(errno.ENOSPC, "disk full")) == EXIT_RETRY
    assert exit_code_of(FileNotFoundError(errno.ENOENT, "no file")) == EXIT_USAGE
    assert exit_code_of(KeyError("a bug")) == EXIT_CRASH
    assert exit_code_of(RwError("usage", EXIT_AUTH)) == EXIT_AUTH
    assert exit_code_of(click.UsageError("no such option")) == EXIT_USAGE


def test_a_service_reply_and_a_verdict_exit_by_one_map_each() -> None:
    assert [exit_code_of_reply(s) for s in (401, 403, 409, 404, 422, 400)] == [3, 1, 1, 2, 2, 2]
    assert exit_code_of_reply(403, "not_authorised") == EXIT_FORBIDDEN  # the authority rule's refusal, as in-process
    assert [exit_code_of_outcome(o) for o in ("accepted", "held", "rejected", "crash", "odd")] == [0, 0, 1, 4, 4]


@pytest.mark.parametrize(("error", "status", "code", "header"), [
    (NotFound("no commit abc"), 404, "not_found", None),
    (AuthError("unknown token"), 401, "bad_token", "www-authenticate"),
    (HistoryBrokenError("the branch moved"), 409, "history_broken", None),
    (RetryableError("disk full"), 503, "retry_later", "retry-after"),
    (FormatError("bad field", "leaves/x.yaml"), 409, "unreadable", None),
    (Rejected(Rejection("secret_in_trace", "a key")), 422, "secret_in_trace", None),
    (RequestError(413, "too_large", "too big"), 413, "too_large", None),
])
def test_the_service_answers_each_error_by_its_class(error: VerifierError, status: int, code: str,
                                                     header: str | None) -> None:
    answer = error_response(error)
    body = json.loads(bytes(answer.body))
    assert (answer.status_code, body["error"]["code"], body["error"]["message"]) == (status, code, str(error))
    assert answer.headers["cache-control"] == "no-store"
    if header is not None:
        assert header in answer.headers


def test_an_error_nobody_described_is_a_500_that_names_nothing_inside() -> None:
    for error in (VerifierError("/srv/rw/secret path"), KeyError("/srv/rw/secret path")):
        answer = error_response(error)
        body = json.loads(bytes(answer.body))
        assert answer.status_code == 500 and body["error"]["code"] == "internal"
        assert "secret" not in body["error"]["message"]
