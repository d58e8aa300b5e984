"""People act in the browser (issue 22, point 3), in a real headless Chromium against a real
`rw serve`: a steward signs in with their token, approves a held link on the "needs you" page and
sees it on the findings page; a forged cross-site POST changes nothing; a bad token is refused at
sign-in; signing out, or a revoked token, ends the session on the server."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from tests.support import service_harness
from tests.support.browser import chromium
from tests.support.people import error_code, evil_site, get_json, post, result_text, session_cookie, sign_in, wait_for
from tests.support.ui import UiProject, copied_ui_project
from tests.support.world import NOW, SLUG, World
from verifier.formats.ledger import LedgerRow
from verifier.pipeline.ledger import read_chain
from verifier.state.project import ProjectView

pytestmark = pytest.mark.slow  # a real `rw serve` and headless Chromium


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[UiProject, service_harness.Server]]:
    project = copied_ui_project(tmp_path)
    server = service_harness.start(project.world.home.root)
    try:
        yield project, server
    finally:
        server.stop()


def rows_of(world: World) -> list[LedgerRow]:
    return [row for _, row in read_chain(world.repo.view(world.tip()))]


def held_ids(world: World) -> list[str]:
    return [item.object_id for item in ProjectView(world.repo.view(world.tip())).held]


def test_a_steward_signs_in_approves_a_held_link_and_sees_it_on_the_findings_page(
        served: tuple[UiProject, service_harness.Server], tmp_path: Path) -> None:
    project, server = served
    world = project.world
    with chromium(tmp_path / "profile") as driver:
        sign_in(driver, server.url, project.scenario.steward_token)
        assert driver.find_element(By.ID, "who").text == "ericxtang"
        assert project.scenario.steward_token not in driver.page_source  # never in the page
        cookie = session_cookie(driver)
        assert cookie is not None and cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
        assert driver.execute_script("return document.cookie") == ""  # the script cannot read the session
        held = driver.find_element(By.ID, f"held-{project.held_link}")
        assert "new file" in held.text and "Held for a person" in held.text  # the object's diff
        held.find_element(By.CSS_SELECTOR, ".reason").send_keys("A pasted note is context for H3.")
        held.find_element(By.CSS_SELECTOR, 'button[data-action="approve"]').click()
        shown = result_text(driver, "act-result")
        assert f"approved held link {project.held_link}" in shown, shown
        assert project.held_link not in held_ids(world)
        driver.get(server.url + f"/p/{SLUG}/findings/source/{project.hostile_source}/1.html")
        finding = driver.find_element(By.ID, project.hostile_finding)
        assert project.held_link in finding.text and "H3" in finding.text
    (row,) = [r for r in rows_of(world) if r.action == "hold" and r.actor == "ericxtang"]
    assert row.reason_code == "approve" and "A pasted note is context for H3." in row.description


def test_a_forged_cross_site_post_is_refused_and_changes_nothing(
        served: tuple[UiProject, service_harness.Server], tmp_path: Path) -> None:
    project, server = served
    world = project.world
    tip = world.tip()
    act = f"{server.url}/ui/act/{SLUG}"
    body = f'{{"action": "approve", "object_id": "{project.held_link}", "reason": "forged"}}'
    page = (f"<!doctype html><title>evil</title><form id=f method=post action='{act}' enctype=text/plain>"
            f"<input type=hidden name='{body[:-1]}, \"x\": \"' value='\"}}'></form><script>"
            f"fetch('{act}', {{method: 'POST', mode: 'no-cors', credentials: 'include', "
            f"headers: {{'Content-Type': 'text/plain'}}, body: '{body}'}})"
            ".finally(function () { document.title = 'sent'; document.getElementById('f').submit(); });"
            "</script>")
    with chromium(tmp_path / "profile") as driver:
        sign_in(driver, server.url, project.scenario.steward_token)
        with evil_site(page) as evil:
            driver.get(evil)
            wait_for(driver, lambda d: d.current_url.startswith(server.url))  # the form's POST was answered
            assert "cross_origin" in driver.page_source
        # Same origin, signed in, but without the page's CSRF token: refused as well.
        answer = driver.execute_async_script(
            "var done = arguments[arguments.length - 1];"
            f"fetch('/ui/act/{SLUG}', {{method: 'POST', headers: {{'Content-Type': 'application/json'}}, "
            f"body: JSON.stringify({{action: 'approve', object_id: '{project.held_link}', reason: 'no csrf'}})}})"
            ".then(function (r) { return r.json().then(function (j) { done([r.status, j.error.code]); }); });")
        assert answer == [403, "bad_csrf"]
    assert world.tip() == tip and project.held_link in held_ids(world)  # no state change


def test_a_bad_token_is_refused_at_sign_in_and_sets_no_cookie(
        served: tuple[UiProject, service_harness.Server], tmp_path: Path) -> None:
    project, server = served
    agent_token = project.world.agent.token
    with chromium(tmp_path / "profile") as driver:
        for token, expected in (("rwt_" + "A" * 43, "401 bad_token"), ("not a token", "401 bad_token"),
                                (agent_token, "401 bad_token")):
            driver.get(server.url + "/sign-in.html")
            driver.find_element(By.ID, "token").send_keys(token)
            driver.find_element(By.ID, "sign-in-button").click()
            shown = result_text(driver, "sign-in-result")
            assert shown.startswith(f"Refused ({expected})"), shown
            assert session_cookie(driver) is None
            assert driver.find_element(By.ID, "token").get_attribute("value") == ""
        driver.get(server.url + "/needs-you.html")
        assert driver.current_url.endswith("/sign-in.html")  # no session: sent to sign in


def test_sign_out_ends_the_session_on_the_server(served: tuple[UiProject, service_harness.Server],
                                                 tmp_path: Path) -> None:
    project, server = served
    with chromium(tmp_path / "profile") as driver:
        sign_in(driver, server.url, project.scenario.steward_token)
        cookie = session_cookie(driver)
        assert cookie is not None
        old = str(cookie["value"])
        assert get_json(server.url + "/needs-you.json", cookie=old)[0] == 200
        driver.find_element(By.ID, "sign-out").click()
        wait_for(driver, lambda d: d.current_url.endswith("/sign-in.html"))
        assert session_cookie(driver) is None
        driver.get(server.url + "/needs-you.html")
        assert driver.current_url.endswith("/sign-in.html")
    status, answer = get_json(server.url + "/needs-you.json", cookie=old)  # the old cookie, replayed
    assert status == 401 and error_code(answer) == "no_session"


def test_a_revoked_token_ends_its_session(served: tuple[UiProject, service_harness.Server], tmp_path: Path) -> None:
    project, server = served
    with chromium(tmp_path / "profile") as driver:
        sign_in(driver, server.url, project.scenario.steward_token)
        cookie = session_cookie(driver)
        assert cookie is not None
        revoked = project.world.home.identities.revoke_leaked([project.scenario.steward_token],
                                                              NOW + timedelta(minutes=1), "a test")
        assert revoked == ["ericxtang"]
        driver.get(server.url + "/needs-you.html")
        assert driver.current_url.endswith("/sign-in.html")
    status, _answer = post(f"{server.url}/ui/act/{SLUG}", {"action": "approve", "object_id": project.held_link,
                                                           "reason": "after revocation"},
                           cookie=str(cookie["value"]), csrf="x" * 64, origin=server.url)
    assert status == 401 and project.held_link in held_ids(project.world)


def test_a_refused_decision_is_shown_on_the_page_and_changes_nothing(
        served: tuple[UiProject, service_harness.Server], tmp_path: Path) -> None:
    project, server = served
    world = project.world
    tip = world.tip()
    with chromium(tmp_path / "profile") as driver:
        sign_in(driver, server.url, project.scenario.steward_token)
        held = driver.find_element(By.ID, f"held-{project.held_link}")
        held.find_element(By.CSS_SELECTOR, 'button[data-action="approve"]').click()  # no reason given
        shown = result_text(driver, "act-result")
        assert shown.startswith("Refused (409 unreadable)") and "needs a reason" in shown, shown
        assert "refused" in (driver.find_element(By.ID, "act-result").get_attribute("class") or "")
    assert world.tip() == tip and project.held_link in held_ids(world)
