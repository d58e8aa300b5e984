"""Messages are an outbox, not a side effect of the service (issue 10).

Every landing writes its ledger row; the notifier turns rows into Commons messages exactly once
(a cursor per project, idempotent keys, one flock per project). The service drains it after each
of its landings; this module drains it everywhere else: after every `rw` command that used a home
(a local `rw submit`, a hold decision, a revert, `rw resolve`, ...) and at service start-up
(recovery). A project whose history broke is not caught up; its steward and maintainers are told
once (`Notifier.history_alarm`). So a message caused by a command-line landing is in Commons when the command returns,
with no service running, and the service that starts later posts nothing twice.

Messages to an agent are also addressed to its operator (design §9.1, §11: "operator notified"):
`triggers.operator_copies` adds one copy per message, to the operator's handle, under its own key.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import datetime

from verifier.messages.notifier import Notifier
from verifier.store.home import Home


def deliver(home: Home, *, now: datetime, slugs: Iterable[str] | None = None) -> int:
    """Drain the outbox: post the messages of every row landed since the last catch-up of each
    project (all projects by default); returns how many messages were new."""
    from verifier.commons.backend import commons_database  # noqa: PLC0415 - imported lazily
    from verifier.commons.local import LocalCommons  # noqa: PLC0415
    from verifier.pipeline.digest import digest  # noqa: PLC0415

    projects = list(slugs) if slugs is not None else home.projects()
    if not projects:
        return 0
    db = commons_database(home)
    try:
        notifier = Notifier(home, LocalCommons(db, home.identities), db, digest)
        return sum(notifier.catch_up_checked(slug, now=now) for slug in projects)
    finally:
        db.close()


def deliver_quietly(home: Home, now: datetime) -> None:
    """`deliver`, for the end of a command: a failure to post is reported, never changes the
    command's outcome (the rows are in the ledger; the next catch-up posts them)."""
    try:
        deliver(home, now=now)
    except Exception as exc:
        print(f"note: messages not delivered yet ({type(exc).__name__}: {exc}); the next command or "
              "the service will post them", file=sys.stderr)
