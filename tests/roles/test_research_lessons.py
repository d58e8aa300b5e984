"""The Field Guide's leaves come from research lessons (issue 23 point 5): a Planner wake over a
project whose history holds repeated paywalled failed sources posts a guide leaf stating the
lesson; repeated rejection codes (leaf craft) never do."""

from __future__ import annotations

from datetime import date

from tests.support.paywall import paywalled_site
from tests.support.policy import allow_loopback_sources
from tests.support.world import NOW, SLUG, World
from verifier.agentkit.objects import source_files
from verifier.formats.leaf import parse_leaf
from verifier.roles.planner import local_commons, wake
from verifier.state.layout import leaf_path
from verifier.store.fetcher import HttpFetcher

PAGE = b"Quillmark reported 14 paying customers for Anchor in February 2026.\n"


def scout_a_paywalled_url(world: World, leaf_id: str, url: str) -> None:
    world.leaf(leaf_id, "scout", source_id=None, gap=f"customer counts ({leaf_id})")
    files = source_files(url=url, data=PAGE, media_type="text/plain", fetched_by="agent-a", retrieved_at=NOW,
                         language="en", rights="public", published=date(2026, 2, 1), title="Anchor update",
                         leaf_id=leaf_id)
    verdict = world.submit(world.creation(leaf_id, files))
    assert verdict.outcome == "rejected" and verdict.rejections[0].code == "url_unresolved", verdict.line()


def test_a_wake_over_repeated_paywalled_failed_sources_posts_a_guide_leaf_stating_the_lesson(world: World) -> None:
    world.fetcher = HttpFetcher(user_agent="ResearchWiki-Verifier/test", timeout_s=5.0, allow_private_addresses=True)
    allow_loopback_sources(world)
    with paywalled_site() as site:
        scout_a_paywalled_url(world, "scout-pay-1", f"{site}/2026/anchor.txt")
        scout_a_paywalled_url(world, "scout-pay-2", f"{site}/2026/quillmark.txt")
    result = wake(world.home, SLUG, NOW, commons=local_commons(world.home))
    assert result.plan is not None and result.landed is not None
    guides = [c for c in result.plan.leaves if c.kind == "guide"]
    assert len(guides) == 1, [c.kind for c in result.plan.leaves]
    gap = guides[0].inputs.gap or ""
    assert gap.startswith("127.0.0.1 paywalls its documents: 2 scouted sources from it failed"), gap
    posted = parse_leaf(world.repo.view(world.tip()).read(leaf_path(guides[0].leaf_id)) or b"", "leaf")
    assert posted.inputs.gap == gap
    assert any("the Field Guide does not say this yet" in d for d in result.plan.decisions)


def test_one_failed_source_is_no_lesson_and_asks_for_no_guide_leaf(world: World) -> None:
    world.fetcher = HttpFetcher(user_agent="ResearchWiki-Verifier/test", timeout_s=5.0, allow_private_addresses=True)
    allow_loopback_sources(world)
    with paywalled_site() as site:
        scout_a_paywalled_url(world, "scout-pay-1", f"{site}/2026/anchor.txt")
    result = wake(world.home, SLUG, NOW, commons=local_commons(world.home))
    assert result.plan is not None
    assert "guide" not in [c.kind for c in result.plan.leaves]
