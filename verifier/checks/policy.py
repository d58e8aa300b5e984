"""A project's source policy (PROJECT.md source_policy) as plain predicates."""

from __future__ import annotations

import ipaddress
from datetime import date
from urllib.parse import urlsplit

from verifier.formats.ids import UrlError, canonical_url, url_host
from verifier.formats.project import SourcePolicy


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _within(host: str, domain: str) -> bool:
    address = _address(host)
    if address is not None:  # an address is named exactly, never by a suffix
        return address == _address(domain)
    return host == domain or host.endswith("." + domain)


def url_problem(url: str, policy: SourcePolicy) -> str | None:
    """None if the URL is inside the policy, else why not.

    Asked again for every URL of a redirect chain (the fetcher calls it per hop), so the deny
    list applies after every redirect.
    """
    try:
        canonical = canonical_url(url)
        host = url_host(canonical)
    except UrlError as exc:
        return f"URL {url!r} is not usable: {exc}"
    scheme = urlsplit(canonical).scheme
    if scheme != "https" and not (scheme == "http" and policy.allow_http):
        return f"{scheme}:// is not allowed: sources are fetched over https (source_policy.allow_http is off)"
    if _address(host) is not None and not any(_within(host, domain) for domain in policy.allow_domains):
        return f"host {host} is an IP address the policy does not name (list it in source_policy.allow_domains)"
    denied = next((domain for domain in policy.deny_domains if _within(host, domain)), None)
    if denied:
        return f"domain {host} is denied by source_policy.deny_domains ({denied})"
    if policy.allow_domains and not any(_within(host, domain) for domain in policy.allow_domains):
        return f"domain {host} is not in source_policy.allow_domains ({', '.join(policy.allow_domains)})"
    return None


def address_problem(address: str, policy: SourcePolicy) -> str | None:
    """None unless the deny list names this address (a host resolved to it): a denied address is
    denied under every name that resolves to it."""
    denied = next((domain for domain in policy.deny_domains if _within(address, domain)), None)
    return f"address {address} is denied by source_policy.deny_domains ({denied})" if denied else None


def record_problems(
    policy: SourcePolicy, *, language: str, rights: str, published: date | None
) -> list[str]:
    """Why a source's language, rights or date fall outside the policy (empty if inside)."""
    problems: list[str] = []
    base_language = language.split("-", maxsplit=1)[0]
    if policy.languages and base_language not in policy.languages and language not in policy.languages:
        problems.append(f"language {language} is not in source_policy.languages ({', '.join(policy.languages)})")
    if policy.rights and rights not in policy.rights:
        problems.append(f"rights {rights} is not in source_policy.rights ({', '.join(policy.rights)})")
    if policy.min_date is not None:
        if published is None:
            problems.append(f"date is required: source_policy.min_date is {policy.min_date}")
        elif published < policy.min_date:
            problems.append(f"date {published} is before source_policy.min_date {policy.min_date}")
    return problems
