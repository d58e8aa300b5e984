"""Telling Commons about verdicts off the answer path: one background thread per service process
runs the notifier's catch-up (verifier.messages.notifier) of each project that landed something,
after the submission's answer has gone.

Nothing can be lost, because the queue holds projects, not notifications: the notifier reads each
project's ledger from its durable cursor in Commons, so one pass carries every row landed since
the last pass, whoever landed it. A project asked for again while it waits is asked for once
(the queue is bounded by the number of projects, however many landings arrive), and a pass
asked for while one runs runs again after it, so it sees that landing too. A pass that fails
(the Commons away) is asked for again after NOTIFY_RETRY_S. A process that stops before a pass
ran leaves the rows to the next pass of any process: the project's next landing on whichever
instance writes it, or start-up recovery's catch-up of every project.

Read your writes: `wait` returns once every pass asked for before it was called has run (at most
`timeout_s`), so the service's message reads (an inbox, a leaf's thread) see the messages of the
verdicts this process answered before them.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from verifier.constants import NOTIFY_RETRY_S

log = logging.getLogger("rw.service")


class NotifyQueue:
    """Projects waiting for a notifier pass, and the thread that runs them (`catch_up(slug)`)."""

    def __init__(self, catch_up: Callable[[str], object], *, retry_s: float = NOTIFY_RETRY_S) -> None:
        self._catch_up = catch_up
        self._retry_s = retry_s
        self._cond = threading.Condition()
        self._ticket = 0
        self._asked: dict[str, int] = {}  # slug -> the latest ask no pass has begun for
        self._later: dict[str, tuple[float, int]] = {}  # slug -> (due, ticket): a failed pass, again
        self._running: dict[str, int] = {}  # slug -> the ticket the running pass covers
        self._done: dict[str, int] = {}  # slug -> every ask up to this ticket has had its pass
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._stopping = False

    def ask(self, slug: str) -> None:
        """A pass of `slug` after whatever landed now; returns at once."""
        with self._cond:
            self._ticket += 1
            self._asked[slug] = self._ticket
            self._later.pop(slug, None)  # this ask covers the retry too
            self._start()
            self._cond.notify_all()

    def wait(self, timeout_s: float) -> bool:
        """Wait until every pass asked for so far has run; False if `timeout_s` passed first."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            wanted = {**{slug: t for slug, (_due, t) in self._later.items()}, **self._running, **self._asked}
            while any(self._done.get(slug, 0) < ticket for slug, ticket in wanted.items()):
                left = deadline - time.monotonic()
                if left <= 0 or self._thread is None:
                    return False
                self._cond.wait(left)
            return True

    def close(self, timeout_s: float) -> bool:
        """Run what is asked (at most `timeout_s`), then stop the thread; False if some was left."""
        drained = self.wait(timeout_s)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=max(0.0, timeout_s))
        return drained

    def _start(self) -> None:
        """The thread, started on the first ask (a forked process starts its own)."""
        if self._pid != os.getpid():
            self._pid, self._thread = os.getpid(), None
        if self._thread is None and not self._stopping:
            self._thread = threading.Thread(target=self._run, daemon=True, name="rw-notify")
            self._thread.start()

    def _next(self) -> tuple[str, int] | None:
        """The next project to pass (the longest waiting first), waiting for one; None: stop."""
        with self._cond:
            while True:
                now = time.monotonic()
                for slug, (due, ticket) in list(self._later.items()):
                    if due <= now:
                        del self._later[slug]
                        self._asked.setdefault(slug, ticket)
                if self._asked:
                    slug = next(iter(self._asked))
                    ticket = self._asked.pop(slug)
                    self._running[slug] = ticket
                    return slug, ticket
                if self._stopping:
                    return None
                soonest = min((due for due, _t in self._later.values()), default=None)
                self._cond.wait(None if soonest is None else max(0.0, soonest - now))

    def _run(self) -> None:
        while (job := self._next()) is not None:
            slug, ticket = job
            failed = False
            try:
                self._catch_up(slug)
            except Exception:  # logged; the cursor keeps the rows for the retry
                log.exception("telling Commons about the verdicts in %s failed; trying again in %gs",
                              slug, self._retry_s)
                failed = True
            with self._cond:
                del self._running[slug]
                if failed and slug not in self._asked:
                    self._later[slug] = (time.monotonic() + self._retry_s, ticket)
                elif not failed:
                    self._done[slug] = max(self._done.get(slug, 0), ticket)
                self._cond.notify_all()
