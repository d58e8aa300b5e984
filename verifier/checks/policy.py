"""A project's source policy (PROJECT.md source_policy) as plain predicates."""

from __future__ import annotations

from datetime import date

from verifier.formats.ids import UrlError, canonical_url, url_host
from verifier.formats.project import SourcePolicy


def _within(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def url_problem(url: str, policy: SourcePolicy) -> str | None:
    """None if the URL's domain is inside the policy, else why not."""
    try:
        host = url_host(canonical_url(url))
    except UrlError as exc:
        return f"URL {url!r} is not usable: {exc}"
    denied = next((domain for domain in policy.deny_domains if _within(host, domain)), None)
    if denied:
        return f"domain {host} is denied by source_policy.deny_domains ({denied})"
    if policy.allow_domains and not any(_within(host, domain) for domain in policy.allow_domains):
        return f"domain {host} is not in source_policy.allow_domains ({', '.join(policy.allow_domains)})"
    return None


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
