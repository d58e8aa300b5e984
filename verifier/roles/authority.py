"""Who may do what in a project: the one authority rule (docs/authority.md), pure.

A project names its people in PROJECT.md (`steward`, `maintainers`); the home names its admins
(config.json `admins`, the platform's operators). `authorise` takes that view, the actor, the
kind of action and `now`, and returns None (allowed) or a `Refusal` naming the role the action
needs and who holds it. Every door asks it before it writes anything: the push gate and a
person's edit (`edit_actions` says which rows a set of paths falls under), holds, verdicts,
reverts, repair, leaf add, seal, the Planner's wake, and the steward's reads, over the CLI and
HTTP alike. The table is `NEEDS`, fail closed: an action not in it is allowed to nobody.

Taste (design §8: PROJECT.md, hypotheses, holds, verdicts) is the steward's alone; upkeep
(reverts, repair, leaves, seals, wakes) is shared with the maintainers; any person may bring
evidence (sources, findings, links, reviews, reports, plans by hand). An admin creates projects,
names and replaces their steward (PROJECT.md), repairs, seals and wakes, and reads the audit
log, but decides no hold or verdict: that is taste. Agents act only through leaves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Literal

from verifier.errors import NotAuthorised
from verifier.formats.project import ProjectFile
from verifier.state.layout import PROJECT_FILE, classify
from verifier.store.identities import Actor

Action = Literal["edit_project", "edit_corpus", "decide_hold", "set_verdict", "approve_verdict", "revert", "repair",
                 "add_leaf", "seal", "wake_planner", "read_traces", "read_audit", "create_project", "invite"]
Role = Literal["steward", "maintainer", "admin", "person"]

# The authority table (docs/authority.md says the same, and tests/roles/test_authority.py holds them to each other).
NEEDS: Mapping[Action, tuple[Role, ...]] = MappingProxyType({
    "edit_project": ("steward", "admin"),  # PROJECT.md and hypotheses/; the admin names the steward
    "edit_corpus": ("person",),  # sources, findings, links, reviews, reports, plans, the Field Guide
    "decide_hold": ("steward",),
    "set_verdict": ("steward",),
    "approve_verdict": ("steward",),
    "revert": ("steward", "maintainer"),
    "repair": ("steward", "maintainer", "admin"),
    "add_leaf": ("steward", "maintainer"),
    "seal": ("steward", "maintainer", "admin"),
    "wake_planner": ("steward", "maintainer", "admin"),
    "read_traces": ("steward", "admin"),
    "read_audit": ("steward", "admin"),
    "create_project": ("admin",),
    "invite": ("steward", "admin"),  # an invite registers a person and their agents for the project
})
# What each action is called in a refusal.
WORDS: Mapping[Action, str] = MappingProxyType({
    "edit_project": "edit PROJECT.md or a hypothesis", "edit_corpus": "add to the evidence by hand",
    "decide_hold": "decide a held object", "set_verdict": "set a verdict", "approve_verdict": "approve a verdict",
    "revert": "revert a contribution", "repair": "repair the history", "add_leaf": "add a leaf",
    "seal": "seal baselines", "wake_planner": "wake the Planner", "read_traces": "read the project's traces",
    "read_audit": "read the audit log", "create_project": "create a project", "invite": "invite people",
})


@dataclass(frozen=True)
class Authority:
    """Who holds which role over one project: its PROJECT.md's people and the home's admins."""

    project: str
    steward: str | None
    maintainers: tuple[str, ...] = ()
    admins: tuple[str, ...] = ()

    @classmethod
    def of(cls, project: ProjectFile, admins: Iterable[str] = ()) -> Authority:
        return cls(project.project, project.steward, tuple(project.maintainers), tuple(admins))

    def holders(self, role: Role) -> tuple[str, ...]:
        """The handles holding `role` ("person": anyone, so none are named)."""
        if role == "steward":
            return (self.steward,) if self.steward else ()
        if role == "maintainer":
            return self.maintainers
        if role == "admin":
            return self.admins
        return ()

    def roles_of(self, handle: str) -> frozenset[Role]:
        roles: set[Role] = {"person"}
        roles |= {role for role in ("steward", "maintainer", "admin") if handle in self.holders(role)}
        return frozenset(roles)


@dataclass(frozen=True)
class Refusal:
    """Why an actor may not: the action, the roles that may, and who holds them (for the
    refusal's message, the audit log and the error)."""

    project: str
    actor: str
    action: Action
    needs: tuple[Role, ...]
    holders: tuple[tuple[Role, tuple[str, ...]], ...]
    at: datetime
    agent: bool = False

    @property
    def message(self) -> str:
        if self.agent:
            return (f"{self.actor} is an agent: agents act through leaves, and to {WORDS[self.action]} in "
                    f"{self.project} needs a person who is its {_roles(self.needs)} ({self.named()})")
        return (f"{self.actor} may not {WORDS[self.action]} in {self.project}: that needs its "
                f"{_roles(self.needs)} ({self.named()})")

    def named(self) -> str:
        """Who holds the needed roles, or what to do when nobody does."""
        parts = [f"{role}: {', '.join(handles)}" for role, handles in self.holders if handles]
        if parts:
            return "; ".join(parts)
        if "steward" in self.needs:
            return f"nobody: {PROJECT_FILE} names no steward; the home's admin names one (`steward:`)"
        return "nobody holds it; the home's admin lists admins in config.json `admins`"

    def error(self) -> NotAuthorised:
        return NotAuthorised(self.message, who=self.actor, action=self.action, project=self.project)


def _roles(roles: tuple[Role, ...]) -> str:
    names = [f"{role}s" if role in ("maintainer", "admin") else role for role in roles]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def authorise(authority: Authority, actor: Actor, action: Action, now: datetime) -> Refusal | None:
    """None when `actor` may do `action` in the project, else the refusal (fail closed)."""
    needs = NEEDS.get(action, ())
    # An admin is named in config.json `admins`, or holds a token the home's owner made with
    # `rw agent add --admin` (the token registry's grant): either is the home's admin.
    roles = authority.roles_of(actor.handle) | ({"admin"} if actor.admin else set())
    if actor.type == "human" and roles & set(needs):
        return None
    holders = tuple((role, authority.holders(role)) for role in needs if role != "person")
    return Refusal(authority.project, actor.handle, action, needs, holders, now, agent=actor.type != "human")


def require(authority: Authority, actor: Actor, action: Action, now: datetime) -> None:
    """`authorise`, raising NotAuthorised with the refusal's words."""
    refusal = authorise(authority, actor, action, now)
    if refusal is not None:
        raise refusal.error()


def edit_actions(paths: Iterable[str]) -> tuple[Action, ...]:
    """The rows a person's edit falls under, by the paths it writes: PROJECT.md and hypotheses
    (the project's taste) are `edit_project`, anything else a person may write `edit_corpus`."""
    actions: set[Action] = set()
    for path in paths:
        kind = classify(path)
        actions.add("edit_project" if path == PROJECT_FILE or (kind is not None and kind.type == "hypothesis")
                    else "edit_corpus")
    return tuple(sorted(actions))


def first_refusal(authority: Authority, actor: Actor, actions: Iterable[Action], now: datetime) -> Refusal | None:
    """The first of `actions` the actor may not do, or None."""
    for action in actions:
        refusal = authorise(authority, actor, action, now)
        if refusal is not None:
            return refusal
    return None
