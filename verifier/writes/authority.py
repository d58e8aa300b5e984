"""The authority rule at the doors' side: read who holds which role (PROJECT.md at the tree the
write is decided on, the home's admins), ask the one pure rule (verifier.roles.authority), and
on a refusal keep the denial in the audit log (verifier.store.audit) before raising it.

Every write of writes/ and the roles' shells that act for a person calls `enforce` with the
tree it read under the project's lock, so the check and the landing see the same PROJECT.md.
"""

from __future__ import annotations

from datetime import datetime

from verifier.errors import FormatError, NotAuthorised
from verifier.formats.project import parse_project
from verifier.roles.authority import Action, Authority, authorise
from verifier.state.layout import PROJECT_FILE
from verifier.state.view import TreeView
from verifier.store.audit import Door, record_denial
from verifier.store.home import Home
from verifier.store.identities import Actor


def authority_at(home: Home, view: TreeView) -> Authority:
    """Who holds which role in the project as `view` has it (an unreadable PROJECT.md names nobody,
    so only the home's admins keep their rows: they are the ones who can fix it)."""
    try:
        project, _ = parse_project(view.read(PROJECT_FILE) or b"", PROJECT_FILE)
    except FormatError:
        return Authority("(unreadable PROJECT.md)", None, (), tuple(home.settings.admins))
    return Authority.of(project, home.settings.admins)


def authority_of(home: Home, slug: str) -> Authority:
    """`authority_at` the project's tip (for the reads, which take no lock)."""
    repo = home.project(slug)
    return authority_at(home, repo.view(repo.tip()))


def denied(home: Home, exc: NotAuthorised, *, now: datetime, door: Door) -> NotAuthorised:
    """Keep a refusal raised elsewhere (the judge's) in the audit log; returns it to raise."""
    record_denial(home, kind="authority", who=exc.who, action=exc.action, project=exc.project, why=str(exc), at=now,
                  door=door)
    return exc


def enforce(home: Home, authority: Authority, actor: Actor, action: Action, *, now: datetime,
            door: Door = "cli", project: str | None = None) -> None:
    """Allowed, or the refusal kept in the audit log and raised as NotAuthorised (403, exit 10).
    `project` names the slug when PROJECT.md's own name cannot be trusted (unreadable)."""
    refusal = authorise(authority, actor, action, now)
    if refusal is None:
        return
    exc = refusal.error()
    if project is not None:
        exc.project = project
    raise denied(home, exc, now=now, door=door)


def enforce_at(home: Home, slug: str, view: TreeView, actor: Actor, action: Action, *, now: datetime,
               door: Door = "cli") -> None:
    """`enforce` against the project as `view` has it."""
    enforce(home, authority_at(home, view), actor, action, now=now, door=door, project=slug)
