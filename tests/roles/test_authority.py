"""The authority rule (verifier.roles.authority): every row of the table, allowed and refused,
the refusal's words (the role it needs, who holds it), agents refused everything, and the table
in docs/authority.md agreeing with the code."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from verifier.errors import NotAuthorised
from verifier.roles.authority import NEEDS, Action, Authority, authorise, edit_actions, require
from verifier.store.identities import Actor

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DOC = (Path(__file__).resolve().parents[2] / "docs" / "authority.md").read_text(encoding="utf-8")
PROJECT = Authority("demo", "stella", ("max",), ("ada",))
WHO = {"steward": Actor("stella", "stella", "human"), "maintainer": Actor("max", "max", "human"),
       "admin": Actor("ada", "ada", "human"), "person": Actor("pat", "pat", "human")}
# Who may, by row: the table written out once more, so a change to NEEDS is a decision a test sees.
ALLOWED: dict[Action, set[str]] = {
    "edit_project": {"steward", "admin"}, "edit_corpus": {"steward", "maintainer", "admin", "person"},
    "decide_hold": {"steward"}, "set_verdict": {"steward"}, "approve_verdict": {"steward"},
    "revert": {"steward", "maintainer"}, "repair": {"steward", "maintainer", "admin"},
    "add_leaf": {"steward", "maintainer"}, "seal": {"steward", "maintainer", "admin"},
    "wake_planner": {"steward", "maintainer", "admin"}, "read_traces": {"steward", "admin"},
    "read_audit": {"steward", "admin"}, "create_project": {"admin"}, "invite": {"steward", "admin"},
}


def test_the_table_has_a_row_for_every_action() -> None:
    assert set(NEEDS) == set(ALLOWED)


@pytest.mark.parametrize("action", sorted(ALLOWED))
@pytest.mark.parametrize("role", sorted(WHO))
def test_each_role_may_do_exactly_its_rows(action: Action, role: str) -> None:
    refusal = authorise(PROJECT, WHO[role], action, NOW)
    assert (refusal is None) == (role in ALLOWED[action]), (role, action)
    if refusal is not None:
        assert refusal.error().code == "not_authorised" and refusal.error().http_status == 403
        assert refusal.error().exit_code == 10


def test_a_refusal_names_the_role_it_needs_and_who_holds_it() -> None:
    refusal = authorise(PROJECT, WHO["maintainer"], "decide_hold", NOW)
    assert refusal is not None
    assert refusal.message == "max may not decide a held object in demo: that needs its steward (steward: stella)"
    refusal = authorise(PROJECT, WHO["person"], "revert", NOW)
    assert refusal is not None and "steward or maintainers (steward: stella; maintainer: max)" in refusal.message


def test_a_project_without_a_steward_says_the_admin_names_one() -> None:
    unclaimed = Authority("demo", None, (), ())
    refusal = authorise(unclaimed, WHO["person"], "decide_hold", NOW)
    assert refusal is not None and "names no steward; the home's admin names one" in refusal.message


def test_an_agent_is_refused_every_row_even_under_a_stewards_handle() -> None:
    agent = Actor("stella", "op", "agent")  # an agent can never be the steward, whatever its handle
    for action in NEEDS:
        refusal = authorise(PROJECT, agent, action, NOW)
        assert refusal is not None and "agents act through leaves" in refusal.message


def test_require_raises_not_authorised_with_what_the_audit_log_keeps() -> None:
    with pytest.raises(NotAuthorised) as caught:
        require(PROJECT, WHO["person"], "set_verdict", NOW)
    assert (caught.value.who, caught.value.action, caught.value.project) == ("pat", "set_verdict", "demo")


def test_an_edit_is_the_stewards_when_it_touches_project_md_or_a_hypothesis() -> None:
    assert edit_actions(["PROJECT.md"]) == ("edit_project",)
    assert edit_actions(["hypotheses/H1.md", "reports/r-one.md"]) == ("edit_corpus", "edit_project")
    assert edit_actions(["reports/r-one.md", "FIELD-GUIDE.md"]) == ("edit_corpus",)


def test_docs_authority_md_shows_the_same_table() -> None:
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| [^|]+ \| ([^|]+) \|$", DOC, re.MULTILINE))
    assert set(rows) == set(NEEDS)
    for action, roles in NEEDS.items():
        named = {word.strip() for word in rows[action].split(",")}
        assert named == {"any person" if role == "person" else role for role in roles}, action


def test_a_token_the_homes_owner_made_admin_holds_the_admin_rows_too() -> None:
    granted = Actor("root", "root", "human", admin=True)  # `rw agent add --admin`, not in config.json
    assert authorise(PROJECT, granted, "repair", NOW) is None and authorise(PROJECT, granted, "invite", NOW) is None
    assert authorise(PROJECT, granted, "decide_hold", NOW) is not None  # taste stays the steward's
