"""What a server pays for at start: the service's app imports without the text extractor's
parsers (bs4, pypdf) and the evaluation's numpy, which only a source's text or an evaluation
needs (each `rw serve` and each of its workers imports the app)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("bs4", "pypdf", "numpy")


def test_the_service_app_imports_without_the_extractor_or_the_evaluation() -> None:
    probe = ("import json, sys; import verifier.service.app; "
             f"print(json.dumps([name for name in {list(HEAVY)!r} if name in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == []


def test_a_text_and_an_evaluation_still_load_what_they_need() -> None:
    probe = ("import json, sys; from verifier.ui.site import uncached_text; "
             "text = uncached_text('', b'<p>Hello <b>there</b></p>', 'text/html'); "
             "print(json.dumps([text.strip(), 'bs4' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == ["Hello there", True]
