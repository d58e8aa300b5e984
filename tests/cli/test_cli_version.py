"""`rw --version` names the verifier it was built from (verifier/version.py), not only the release."""

from __future__ import annotations

import subprocess

from tests.support.agent import RW
from verifier import VERSION
from verifier.version import verifier_version


def test_rw_version_names_the_release_and_the_verifier_source_digest() -> None:
    shown = subprocess.run([RW, "--version"], capture_output=True, text=True, check=True, timeout=120)
    assert shown.stdout == f"rw {VERSION} (verifier {verifier_version()})\n"
    assert verifier_version().startswith(f"{VERSION}+src.")
