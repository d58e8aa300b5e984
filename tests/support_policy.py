"""Tests that fetch from a loopback HTTP server must say so in the project's source policy."""

from __future__ import annotations

import difflib

from verifier.formats.layout import PROJECT_FILE
from verifier.patch.apply import split_lines
from verifier.pipeline.submit import Submission

from .conftest import NOW, SLUG, World


def modify(path: str, old: str, new: str) -> bytes:
    """A git diff turning `old` into `new` at `path` (both end with a newline)."""
    diff = "".join(difflib.unified_diff(split_lines(old), split_lines(new), f"a/{path}", f"b/{path}", n=3))
    return f"diff --git a/{path} b/{path}\n{diff}".encode()


def allow_loopback_sources(world: World) -> None:
    """A steward's edit of PROJECT.md: plain http allowed, and the loopback address named."""
    old = (world.repo.view(world.tip()).read(PROJECT_FILE) or b"").decode()
    new = old.replace("  allow_domains: []  # empty = any", '  allow_http: true\n  allow_domains: [ "127.0.0.1" ]')
    assert new != old, "the fixture PROJECT.md changed; update this edit"
    token = world.home.identities.add("policy-steward", "policy-steward", "human", NOW)
    verdict = world.submit(Submission(SLUG, None, modify(PROJECT_FILE, old, new), {}, token))
    assert verdict.outcome == "accepted", verdict.line()
