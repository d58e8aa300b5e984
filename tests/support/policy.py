"""Tests that fetch from a loopback HTTP server must say so in the project's source policy."""

from __future__ import annotations

from tests.support.patches import modify
from tests.support.world import NOW, SLUG, World
from verifier.pipeline.submit import Submission
from verifier.state.layout import PROJECT_FILE
from verifier.store.home import Settings


def allow_loopback_sources(world: World) -> None:
    """An admin's edit of PROJECT.md: plain http allowed, and the loopback address named."""
    old = (world.repo.view(world.tip()).read(PROJECT_FILE) or b"").decode()
    new = old.replace("  allow_domains: []  # empty = any", '  allow_http: true\n  allow_domains: [ "127.0.0.1" ]')
    assert new != old, "the fixture PROJECT.md changed; update this edit"
    # The home's admin may edit PROJECT.md (docs/authority.md) whoever else the test registers.
    settings = Settings.model_validate({**world.home.settings.model_dump(), "admins": ["policy-steward"]})
    world.home.save_settings(settings)
    world.home.settings = settings
    token = world.home.identities.add("policy-steward", "policy-steward", "human", NOW)
    verdict = world.submit(Submission(SLUG, None, modify(PROJECT_FILE, old, new), {}, token))
    assert verdict.outcome == "accepted", verdict.line()
