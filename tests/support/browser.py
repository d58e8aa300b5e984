"""Headless Chromium for the UI's browser tests: the system's `chromium` and `chromedriver`
(Debian's packages; `.ci/run` installs them), driven by Selenium with the driver's path given, so
Selenium Manager never downloads anything. Where no Chromium exists the tests skip, saying so."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM_ARGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--window-size=1280,1400")


def _binaries() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@contextmanager
def chromium(profile: Path) -> Iterator[webdriver.Chrome]:
    found = _binaries()
    if found is None:
        pytest.skip("no Chromium here: install Debian's `chromium` and `chromium-driver` (as .ci/run does)")
    browser, driver_path = found
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager: never reach the network
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in (*CHROMIUM_ARGS, f"--user-data-dir={profile}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
