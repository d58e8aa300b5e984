"""PROJECT.md: the one file a steward edits (design §4). Every field has a default, so an
untouched template still runs. `steward` and `maintainers` name who holds authority over the
project (the table: docs/authority.md; the rule: verifier.roles.authority)."""

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from verifier.constants import MIN_EXCERPT_CHARS
from verifier.formats.base import HANDLE_RE, Day, Strict, no_items, parse_front_matter_model

HoldType = Literal["sources", "plans", "links", "verdicts"]
# A few letters occur in any source: an excerpt this short could pin any claim to it.
HOLD_TYPES: tuple[HoldType, ...] = ("sources", "plans", "links", "verdicts")
HypothesisId = Annotated[str, StringConstraints(pattern=r"^H[1-9][0-9]{0,5}$")]
_DOMAIN_RE = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9-]{1,63}$")


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class SourcePolicy(Strict):
    """Which sources scouts may bring in. Empty lists mean "any".

    Only https, unless allow_http; a host written as an IP address only if allow_domains names
    that address (deny_domains may name addresses too).
    """

    allow_http: bool = False

    allow_domains: list[str] = Field(default_factory=no_items)
    deny_domains: list[str] = Field(default_factory=no_items)
    languages: list[Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")]] = (
        Field(default_factory=no_items)
    )
    rights: list[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,31}$")]] = Field(
        default_factory=no_items
    )
    min_date: Day | None = None

    @field_validator("allow_domains", "deny_domains")
    @classmethod
    def _domains(cls, value: list[str]) -> list[str]:
        for domain in value:
            if not _DOMAIN_RE.match(domain) and not _is_address(domain):
                raise ValueError(f"{domain!r} is not a lower-case domain name like example.org, or an IP address")
        return value


class Budget(Strict):
    tokens: int = Field(default=2_000_000, ge=0)
    usd: float = Field(default=20.0, ge=0)
    leaves_max: int = Field(default=40, ge=0)


class ProjectFile(Strict):
    """The front matter of PROJECT.md."""

    project: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{1,62}$")]
    question: str = ""
    steward: Annotated[str, StringConstraints(pattern=HANDLE_RE)] | None = None
    # People who revert and repair beside the steward (docs/authority.md); handles, each once.
    maintainers: list[Annotated[str, StringConstraints(pattern=HANDLE_RE)]] = Field(default_factory=no_items)
    holds: list[HoldType] = Field(default_factory=no_items)
    source_policy: SourcePolicy = Field(default_factory=SourcePolicy)
    budget_per_loop: Budget = Field(default_factory=Budget)
    loop_cadence: Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,4}[smhd]$")] = "20m"
    hypotheses: list[HypothesisId] = Field(default_factory=no_items)
    # How many sources a "none found" counter-evidence note must list (issue 10).
    counter_evidence_min_sources: int = Field(default=3, ge=1, le=100)
    # The shortest excerpt a finding may quote, in characters after normalization.
    min_excerpt_chars: int = Field(default=MIN_EXCERPT_CHARS, ge=1, le=2000)

    @field_validator("holds", "hypotheses", "maintainers")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        seen = [item for index, item in enumerate(value) if item in value[:index]]
        if seen:
            raise ValueError(f"{seen[0]!r} is listed twice")
        return value


def parse_project(data: bytes | str, where: str) -> tuple[ProjectFile, str]:
    return parse_front_matter_model(ProjectFile, data, where)
