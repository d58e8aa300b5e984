"""A skill proposal's shape rules: exactly one leaf kind's section changes, nothing else. Pure."""

from __future__ import annotations

import hashlib

from verifier.errors import FormatError, VerifierError
from verifier.formats.skill import SKILL_KINDS, outside_sections_equal, replace_section, sections


class ProposalRefused(VerifierError):  # noqa: N818 - it names an outcome, like Rejected
    """A proposal that is not one atomic change to one section of the skill."""


def candidate_from_section(live: str, kind: str, body: str) -> str:
    """The live skill with `kind`'s section body replaced by `body`."""
    if kind not in SKILL_KINDS:
        raise ProposalRefused(f"no skill section for leaf kind {kind!r} (one of {', '.join(SKILL_KINDS)})")
    try:
        return replace_section(live, kind, body, "proposal")
    except FormatError as exc:
        raise ProposalRefused(f"the proposed {kind} section is refused: {exc}") from exc


def check_one_section(live: str, candidate: str, kind: str) -> None:
    """Raise ProposalRefused unless `candidate` differs from `live` inside `kind`'s section only."""
    if kind not in SKILL_KINDS:
        raise ProposalRefused(f"no skill section for leaf kind {kind!r}")
    try:
        sections(candidate, "candidate skill")
    except FormatError as exc:
        raise ProposalRefused(f"the candidate skill does not keep the section markers: {exc}") from exc
    if not outside_sections_equal(live, candidate, kind):
        raise ProposalRefused(f"the candidate changes the skill outside the {kind} section; a proposal may "
                              "change one section only")
    if candidate == live:
        raise ProposalRefused(f"the candidate does not change the {kind} section")


def proposal_id(kind: str, candidate: str) -> str:
    return f"prop-{kind}-" + hashlib.sha256(candidate.encode("utf-8")).hexdigest()[:10]
