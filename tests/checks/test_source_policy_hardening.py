"""Source policy: https only unless the policy allows http; a host written as an IP address only
when the policy names it; the deny list matches addresses as well as names, and is asked again
for every hop of a redirect chain."""

from __future__ import annotations

from datetime import date

import pytest

from tests.support.hostile import assert_refused_cleanly
from tests.support.world import NOW, World
from verifier.agentkit.objects import source_files
from verifier.checks.policy import url_problem
from verifier.formats.project import SourcePolicy


def _policy(**fields: object) -> SourcePolicy:
    return SourcePolicy.model_validate(fields)


def test_plain_http_is_refused_unless_allowed() -> None:
    assert "https" in (url_problem("http://news.example.net/a", _policy()) or "")
    assert url_problem("http://news.example.net/a", _policy(allow_http=True)) is None
    assert url_problem("https://news.example.net/a", _policy()) is None


@pytest.mark.parametrize("url", ["https://127.0.0.1/x", "https://10.0.0.7/x", "https://[::1]/x",
                                 "https://93.184.216.34/x", "https://[2606:2800:220:1::]/x"])
def test_ip_literal_hosts_are_refused_unless_named(url: str) -> None:
    assert "IP address" in (url_problem(url, _policy()) or "")
    assert "IP address" in (url_problem(url, _policy(deny_domains=["example-content-farm.com"])) or "")


def test_a_named_address_is_allowed_and_a_denied_address_refused() -> None:
    assert url_problem("https://93.184.216.34/x", _policy(allow_domains=["93.184.216.34"])) is None
    assert url_problem("https://[::1]/x", _policy(allow_domains=["::1"])) is None
    denied = _policy(allow_domains=["93.184.216.34"], deny_domains=["93.184.216.34"])
    assert "denied" in (url_problem("https://93.184.216.34/x", denied) or "")


def test_an_address_is_never_matched_by_suffix() -> None:
    assert "IP address" in (url_problem("https://10.0.0.1/x", _policy(allow_domains=["0.0.1"])) or "")


def test_the_deny_list_is_asked_for_every_hop() -> None:
    policy = _policy(deny_domains=["bad.example"])
    hops = ["https://good.example/a", "https://cdn.bad.example/b"]
    assert [url_problem(hop, policy) is None for hop in hops] == [True, False]


def test_a_loopback_source_is_refused_cleanly_end_to_end(world: World) -> None:
    world.leaf("scout-1", "scout", source_id=None, gap="customer counts")
    files = source_files(url="https://127.0.0.1:8080/doc.txt", data=b"page\n", media_type="text/plain",
                         fetched_by="agent-a", retrieved_at=NOW, language="en", rights="public",
                         published=date(2026, 2, 1), title="Loopback", leaf_id="scout-1")
    verdict = assert_refused_cleanly(world, world.creation("scout-1", files), "source_policy")
    assert "IP address" in verdict.rejections[0].message
