"""The UI's decisions over real HTTP (issue 22, point 3), against a real `rw serve`: a signed-in
steward rejects a held link, overrides a verdict and reverts a contribution through the same
writes as `rw hold reject`, `rw verdict set` and `rw revert`, each landing a ledger row as them;
a POST without proof of its origin, without the session's CSRF token, with a malformed body, or
that the write itself refuses changes nothing and answers the refusal's own status and code."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import service_harness
from tests.support.people import error_code, get_json, newest_revertable, post, signed_in
from tests.support.ui import UiProject, copied_ui_project
from tests.support.world import SLUG
from verifier.pipeline.ledger import read_chain
from verifier.state.project import ProjectView

pytestmark = pytest.mark.slow  # a real `rw serve`


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[UiProject, service_harness.Server]]:
    project = copied_ui_project(tmp_path)
    server = service_harness.start(project.world.home.root)
    try:
        yield project, server
    finally:
        server.stop()


def test_a_steward_rejects_overrides_and_reverts_from_the_ui_as_themselves(
        served: tuple[UiProject, service_harness.Server]) -> None:
    project, server = served
    world = project.world
    sid, csrf = signed_in(server.url, project.scenario.steward_token)
    before = len(list(read_chain(world.repo.view(world.tip()))))
    act = f"{server.url}/ui/act/{SLUG}"
    status, answer = post(act, {"action": "reject", "object_id": project.held_link, "reason": "Not about H3."},
                          cookie=sid, csrf=csrf, origin=server.url)
    assert status == 200 and f"rejected held link {project.held_link}" in str(answer["description"]), answer
    status, answer = post(act, {"action": "verdict_set", "hypothesis_id": "H1", "value": "false", "confidence": 0.6,
                                "reason": "The survey was withdrawn."}, cookie=sid, csrf=csrf, origin=server.url)
    assert status == 200, answer
    _status, page = get_json(server.url + "/needs-you.json", cookie=sid)
    target = newest_revertable(page, SLUG)
    status, answer = post(act, {"action": "revert", "commit": target, "reason": "Planted by mistake."},
                          cookie=sid, csrf=csrf, origin=server.url)
    assert status == 200, answer
    rows = [row for _, row in read_chain(world.repo.view(world.tip()))][before:]
    mine = [row for row in rows if row.actor == "ericxtang"]
    assert [row.action for row in mine] == ["hold", "resolve", "revert"], [(r.action, r.actor) for r in rows]
    assert "Not about H3." in mine[0].description and f"reverted {target}" in mine[2].description


def test_a_decision_without_origin_csrf_or_a_good_body_changes_nothing(
        served: tuple[UiProject, service_harness.Server]) -> None:
    project, server = served
    world = project.world
    tip = world.tip()
    sid, csrf = signed_in(server.url, project.scenario.steward_token)
    act = f"{server.url}/ui/act/{SLUG}"
    good = {"action": "approve", "object_id": project.held_link, "reason": "fine"}
    cases = [
        (dict(good), {"cookie": sid, "csrf": csrf}, 403, "cross_origin"),  # no Origin, no Sec-Fetch-Site
        (dict(good), {"cookie": sid, "csrf": "0" * 64, "origin": server.url}, 403, "bad_csrf"),
        (dict(good), {"cookie": sid, "origin": server.url}, 403, "bad_csrf"),
        (dict(good), {"csrf": csrf, "origin": server.url}, 401, "no_session"),
        ({**good, "extra": 1}, {"cookie": sid, "csrf": csrf, "origin": server.url}, 400, "bad_request"),
        ({"action": "approve", "reason": "fine"}, {"cookie": sid, "csrf": csrf, "origin": server.url}, 400,
         "bad_request"),
        ({**good, "object_id": "lnk_0000000000000000"}, {"cookie": sid, "csrf": csrf, "origin": server.url}, 404,
         "not_found"),
    ]
    for body, how, status, code in cases:
        got, answer = post(act, body, **how)  # type: ignore[arg-type]
        assert (got, error_code(answer)) == (status, code), (body, how, answer)
    got, answer = post(act, {**good, "reason": "   "}, cookie=sid, csrf=csrf, origin=server.url)
    assert got >= 400 and error_code(answer), answer  # the write's own refusal, with its code
    assert world.tip() == tip
    assert project.held_link in [h.object_id for h in ProjectView(world.repo.view(tip)).held]


def test_the_session_cookie_is_secure_when_the_page_is_served_over_tls(
        served: tuple[UiProject, service_harness.Server]) -> None:
    project, server = served
    tls_origin = server.url.replace("http://", "https://")  # a proxy in front ends TLS; the page is https
    for origin, secure in ((server.url, False), (tls_origin, True)):
        request = urllib.request.Request(server.url + "/ui/session",
                                         data=json.dumps({"token": project.scenario.steward_token}).encode(),
                                         headers={"content-type": "application/json", "origin": origin},
                                         method="POST")
        with urllib.request.urlopen(request, timeout=60) as reply:
            flags = [part.strip() for part in reply.headers["set-cookie"].split(";")]
        assert ("Secure" in flags) is secure and "HttpOnly" in flags and "SameSite=strict" in flags, flags
