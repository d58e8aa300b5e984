"""The UI in a real headless Chromium, served by a real `rw serve` on loopback: every page of the
fixture project opens, the cards, findings, ledger and a hold are there, a filter is clicked, the
shipped script filters under the Content-Security-Policy, and a hostile excerpt renders as text
and runs no script. A screenshot of each page is saved under the test's tmp folder (and under
$RW_UI_SCREENSHOTS when set, which is how docs/img/ was made)."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.support import service_harness
from tests.support.browser import chromium
from tests.support.ui import HOSTILE, UiProject, copied_ui_project
from tests.support.world import SLUG

pytestmark = pytest.mark.slow  # a real `rw serve` and headless Chromium


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[UiProject, service_harness.Server]]:
    project = copied_ui_project(tmp_path)
    server = service_harness.start(project.world.home.root)
    try:
        yield project, server
    finally:
        server.stop()


def shoot(driver: WebDriver, folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(folder / f"{name}.png"))
    extra = os.environ.get("RW_UI_SCREENSHOTS")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(extra) / f"{name}.png"))


def count(driver: WebDriver, css: str) -> int:
    return len(driver.find_elements(By.CSS_SELECTOR, css))


def test_every_page_in_a_real_browser(served: tuple[UiProject, service_harness.Server], tmp_path: Path) -> None:
    project, server = served
    shots = tmp_path / "screenshots"
    with chromium(tmp_path / "profile") as driver:
        driver.get(server.url + "/")
        shoot(driver, shots, "projects")
        driver.find_element(By.LINK_TEXT, SLUG).click()
        assert driver.current_url.endswith(f"/p/{SLUG}/index.html")
        assert count(driver, "#leaders tbody tr") == 4 and "op-a" in driver.find_element(By.ID, "leaders").text
        assert "1 held object(s)" in driver.page_source
        shoot(driver, shots, "project")
        driver.find_element(By.ID, "nav-hypotheses").click()
        assert count(driver, "article.card") == 3
        h1 = driver.find_element(By.ID, "H1")
        assert "Resolved:" in h1.text and "Baseline, unsealed at resolution" in h1.text
        assert "Resolved:" not in driver.find_element(By.ID, "H3").text
        shoot(driver, shots, "hypotheses")
        driver.find_element(By.CSS_SELECTOR, "#H1 h2 a").click()
        assert count(driver, "article.card") == 1
        shoot(driver, shots, "hypothesis-card")
        driver.find_element(By.ID, "nav-findings").click()
        assert count(driver, "li.finding") == 5
        shoot(driver, shots, "findings")
        driver.find_element(By.CSS_SELECTOR, '.facet[data-facet="hypothesis"] a[data-value="H1"]').click()
        assert driver.current_url.endswith("/findings/hypothesis/H1/1.html")
        assert count(driver, "li.finding") == 4
        assert "active" in (driver.find_element(By.CSS_SELECTOR, 'a[data-value="H1"]').get_attribute("class") or "")
        shoot(driver, shots, "findings-H1")
        driver.find_element(By.ID, "nav-ledger").click()
        assert count(driver, "tr.row") >= 20 and count(driver, "tr.rejected") == 1
        assert "outside_write_set" in driver.find_element(By.ID, "rejections").text
        shoot(driver, shots, "ledger")
        driver.find_element(By.CSS_SELECTOR, "tr.accepted a.commit").click()
        assert "/commits/" in driver.current_url and "Changed paths" in driver.page_source
        shoot(driver, shots, "commit")
        driver.back()
        driver.find_element(By.ID, "nav-holds").click()
        held = driver.find_element(By.ID, f"held-{project.held_link}")
        assert "rw hold approve" in held.text and "Held for a person" in held.text
        shoot(driver, shots, "holds")
        driver.find_element(By.ID, "nav-project").click()
        driver.find_element(By.CSS_SELECTOR, "#leaders a[href$='who/op-b.html']").click()
        assert count(driver, "#use-over-time svg polyline") == 1 and count(driver, "#by-kind svg rect") >= 4
        shoot(driver, shots, "operator")
    assert len(list(shots.glob("*.png"))) == 10


def test_a_hostile_excerpt_renders_as_text_and_runs_no_script(served: tuple[UiProject, service_harness.Server],
                                                              tmp_path: Path) -> None:
    project, server = served
    with chromium(tmp_path / "profile") as driver:
        driver.get(server.url + f"/p/{SLUG}/findings/source/{project.hostile_source}/1.html")
        mark = driver.find_element(By.CSS_SELECTOR, f"#{project.hostile_finding} mark.excerpt")
        assert mark.text == HOSTILE
        assert driver.title != "pwned" and driver.execute_script("return window.pwned === undefined")
        assert count(driver, "li.finding script") == 0
        # The shipped script runs (it is not inline): the quick filter hides what does not match.
        driver.get(server.url + f"/p/{SLUG}/findings/all/all/1.html")
        driver.find_element(By.ID, "quick-filter").send_keys("pasted")
        visible = [e for e in driver.find_elements(By.CSS_SELECTOR, "li.finding") if e.is_displayed()]
        assert [e.get_attribute("id") for e in visible] == [project.hostile_finding]
        assert driver.execute_script("return window.pwned === undefined")
        shoot(driver, tmp_path / "screenshots", "hostile")


def test_ui_responses_forbid_inline_script_and_serve_their_json(
        served: tuple[UiProject, service_harness.Server]) -> None:
    _, server = served
    for path in ("/", f"/p/{SLUG}/index.html", f"/p/{SLUG}/findings/all/all/1.html", "/static/ui.js"):
        with urllib.request.urlopen(server.url + path, timeout=30) as reply:
            csp = reply.headers["content-security-policy"]
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    with urllib.request.urlopen(server.url + f"/p/{SLUG}/findings/all/all/1.json", timeout=30) as reply:
        assert reply.headers["content-type"].startswith("application/json")
        assert json.loads(reply.read())["total"] == 5
    with urllib.request.urlopen(server.url + f"/p/{SLUG}", timeout=30) as reply:  # redirected to the project page
        assert reply.url.endswith(f"/p/{SLUG}/index.html") and b"Use score leaders" in reply.read()
    for missing in (f"/p/{SLUG}/findings/all/all/9.html", "/p/no-such-project/index.html", "/static/../x",
                    f"/p/{SLUG}/who/..%2F..%2Fetc.html"):
        try:
            urllib.request.urlopen(server.url + missing, timeout=30)
            raise AssertionError(f"{missing} answered")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404, missing
