"""The steward's inbox (issue 22): what waits for a person, as one message each, with what to do next. Pure.

Who is told is read from PROJECT.md: the `steward`, and `maintainers` where the event is theirs to
act on (a broken history is repaired by a maintainer or the steward). `maintainers` is read
defensively from the raw front matter: a list of handles when present, nothing otherwise, so a
PROJECT.md written before the field existed still works and a malformed entry is skipped, never fatal.

Each message's key is derived from the event (the ledger row, the hypothesis revision, the broken
tip), so re-running a catch-up, the Planner or the history check posts it once.

- held           an object (finding, link, source, plan) landed held: approve or reject it
- verdict        the Resolver's proposal waits (PROJECT.md holds verdicts): approve or set
- date_question  the Planner cannot target a hypothesis: set its criterion, measure and check date
- revoked        a leaked bearer token was revoked: its owner needs a new one, the leak a look
- history_broken the project refuses writes: verify the ledger, then repair (steward and maintainers)

Return triggers (design §9.2: outcomes, links, hypothesis moves, new leaves, reverts) are not here:
they keep going to the agent and its operator (`triggers`).
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass

from verifier.commons.adapter import OutgoingMessage
from verifier.errors import FormatError
from verifier.formats.base import HANDLE_RE
from verifier.formats.frontmatter import load_front_matter
from verifier.formats.ledger import LedgerRow
from verifier.state.layout import PROJECT_FILE, hypothesis_path

_HANDLE = re.compile(HANDLE_RE)
_REVOKED = re.compile(r"revoked the bearer token of: ([a-z0-9_.,\s-]+)")
SECRET_CODES = ("secret_in_trace", "secret_in_patch", "secret_in_answer")
MAX_MAINTAINERS = 50  # a hostile PROJECT.md cannot make one event into thousands of messages


@dataclass(frozen=True)
class Stewards:
    """Who answers for a project: the steward, and the maintainers (repair and revert)."""

    steward: str | None = None
    maintainers: tuple[str, ...] = ()

    def for_steward(self) -> list[str]:
        return [self.steward] if self.steward else []

    def for_repair(self) -> list[str]:
        """The steward and every maintainer, once each, steward first."""
        people = self.for_steward()
        return people + [m for m in self.maintainers if m not in people]


def _handle(value: object) -> str | None:
    return value if isinstance(value, str) and _HANDLE.fullmatch(value) else None


# The notifier asks for every row it passes, and PROJECT.md changes only when a steward edits it:
# its front matter (holds, policy, budget: kilobytes of YAML) is parsed once per version, not per row.
@functools.lru_cache(maxsize=32)
def stewards_of(project_md: bytes | None) -> Stewards:
    """The steward and maintainers named in PROJECT.md's front matter; nobody when it is unreadable.
    Stewards is frozen, so one answer is shared by every caller given the same bytes."""
    if project_md is None:
        return Stewards()
    try:
        front, _body = load_front_matter(project_md, PROJECT_FILE)
    except FormatError:
        return Stewards()
    if not isinstance(front, dict):
        return Stewards()
    raw = front.get("maintainers")
    listed = raw if isinstance(raw, list) else []
    maintainers = [h for h in (_handle(item) for item in listed[:MAX_MAINTAINERS]) if h is not None]
    return Stewards(_handle(front.get("steward")), tuple(dict.fromkeys(maintainers)))


def _message(key: str, body: str, slug: str, leaf_id: str | None, to: str, data: dict[str, object],
             event: str) -> OutgoingMessage:
    return OutgoingMessage(f"{key}:{to}", "needs_you", body[:4000], slug, leaf_id, to,
                           data={**data, "event": event, "project": slug})


def held_messages(slug: str, row: LedgerRow, who: Stewards) -> list[OutgoingMessage]:
    """A submission (or a plan) landed held: the steward decides it."""
    if row.outcome != "held" or row.action not in ("submit", "plan", "human") or row.reason_code == "verdict_held":
        return []
    what = row.kind or "object"
    body = (f"Held for you in {slug}: a {what} from {row.actor} ({row.operator or 'no operator'}), leaf "
            f"{row.leaf_id or '-'}: {row.description[:600]}. Next: look at it on the UI's \"needs you\" page "
            f"(/needs-you) or `rw hold list {slug}`, then `rw hold approve|reject {slug} OBJECT_ID --reason ...`.")
    data: dict[str, object] = {"seq": row.seq, "kind": row.kind, "leaf_id": row.leaf_id, "actor": row.actor}
    return [_message(f"{slug}:{row.seq}:held", body, slug, row.leaf_id, to, data, "held")
            for to in who.for_steward()]


def verdict_messages(slug: str, row: LedgerRow, who: Stewards) -> list[OutgoingMessage]:
    """The Resolver's proposal waits for a person (PROJECT.md holds verdicts)."""
    if row.reason_code != "verdict_held":
        return []
    hypothesis = row.description.split(":", 1)[0][:40]
    body = (f"A verdict waits for you in {slug}: {row.description[:600]}. Next: `rw verdict approve {slug} "
            f"{hypothesis} --reason ...` to accept it, or `rw verdict set {slug} {hypothesis} true|false|unresolved "
            "--confidence C --reason ...` to decide otherwise (or on the UI's \"needs you\" page).")
    return [_message(f"{slug}:{row.seq}:verdict", body, slug, None, to, {"seq": row.seq, "hypothesis_id": hypothesis},
                     "verdict") for to in who.for_steward()]


def revocation_messages(slug: str, key: str, handles: list[str], where: str, leaf_id: str | None,
                        who: Stewards, data: dict[str, object]) -> list[OutgoingMessage]:
    """Bearer tokens found where they must not be were revoked: the steward hears whose, and what next."""
    if not handles:
        return []
    body = (f"A leaked bearer token was revoked in {slug}: the token of {', '.join(handles)} appeared in {where}. "
            "Nothing of it was kept. Next: give the owner a new token (`rw agent add HANDLE --operator OP` again "
            "reissues it) and ask how it leaked.")
    return [_message(key, body, slug, leaf_id, to, {**data, "revoked": handles}, "revoked")
            for to in who.for_steward()]


def revoked_messages(slug: str, row: LedgerRow, who: Stewards) -> list[OutgoingMessage]:
    """A bearer token found in a refused submission (or a model's answer) was revoked."""
    match = _REVOKED.search(row.description) if row.reason_code in SECRET_CODES else None
    if match is None:
        return []
    handles = [handle.strip() for handle in match.group(1).split(",") if handle.strip()]
    what = (row.reason_code or "secret_in_submission").removeprefix("secret_in_")
    return revocation_messages(slug, f"{slug}:{row.seq}:revoked", handles,
                               f"a refused {what} (ledger row {row.seq}, from {row.actor})", row.leaf_id, who,
                               {"seq": row.seq})


def date_question_messages(slug: str, hypothesis_id: str, revision: int, question: str, plan_id: str | None,
                           who: Stewards) -> list[OutgoingMessage]:
    """The Planner's activation gate asks about a hypothesis (on the plan's thread): the steward's
    inbox gets the question too, with what to do next."""
    body = (f"The Planner asks you about {slug}: {question[:1500]} Next: edit {hypothesis_path(hypothesis_id)} to "
            "give it resolution.criterion, resolution.measure and a resolution.check_date after today (a person's "
            "edit: `rw submit` or a push to refs/for/main); the Planner targets it on its next wake.")
    data: dict[str, object] = {"hypothesis_id": hypothesis_id, "revision": revision, "plan_id": plan_id}
    return [_message(f"{slug}:date:{hypothesis_id}:{revision}", body, slug, plan_id, to, data, "date_question")
            for to in who.for_steward()]


def history_messages(slug: str, why: str, who: Stewards) -> list[OutgoingMessage]:
    """The project refuses writes: the steward and the maintainers repair it. One message per break
    (the key is the refusal's text, which names the tip and the anchor)."""
    digest = hashlib.sha256(why.encode("utf-8")).hexdigest()[:16]
    body = (f"{slug} refuses every write: {why[:1200]} Next: `rw ledger {slug} --verify` to see what changed, "
            f"then `rw repair {slug} --to COMMIT --reason ...`; until then every submission is refused.")
    return [_message(f"{slug}:history:{digest}", body, slug, None, to, {"why": why[:1200]}, "history_broken")
            for to in who.for_repair()]


def row_messages(slug: str, row: LedgerRow, who: Stewards) -> list[OutgoingMessage]:
    """Every steward message one ledger row causes."""
    return [*held_messages(slug, row, who), *verdict_messages(slug, row, who), *revoked_messages(slug, row, who)]
