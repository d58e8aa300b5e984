"""The landing side of failed sources (issue 10): a rejected scout attempt whose URL did not
resolve still lands one contribution commit, authored by the agent, holding only the failed
source records (checks.failed_sources), so the source is recorded and nobody scouts it blind
again. The ledger row stays `rejected` and names that commit."""

from __future__ import annotations

from collections.abc import Mapping

from verifier.checks.failed_sources import failed_records
from verifier.errors import Rejection
from verifier.formats.fetch import FetchOutcome
from verifier.formats.trace import TraceRecord
from verifier.patch.parse import ParsedPatch
from verifier.pipeline.landing import Contribution
from verifier.pipeline.patching import apply_to
from verifier.store.gitrepo import Person, ProjectRepo, agent_email
from verifier.store.identities import Actor


def failed_source_contribution(repo: ProjectRepo, actor: Actor, trace: TraceRecord | None, leaf_id: str | None,
                               patch: ParsedPatch | None, fetches: Mapping[str, FetchOutcome],
                               rejections: list[Rejection]) -> Contribution | None:
    """The contribution recording the attempt's failed sources, or None when there are none."""
    if patch is None or not fetches or not any(r.code == "url_unresolved" for r in rejections):
        return None
    tip = repo.tip()
    view = repo.view(tip)
    try:
        writes = apply_to(view, patch)
    except Exception:
        return None
    records = {path: data for path, data in failed_records(writes, rejections, fetches).items()
               if view.read(path) is None}
    if not records:
        return None
    trailers = {"Operator": actor.operator}
    if leaf_id:
        trailers["Leaf"] = leaf_id
    if trace is not None:
        trailers["Trace"] = trace.trace_id
    names = ", ".join(path.rsplit("/", 1)[1][:-5] for path in sorted(records))
    return Contribution(writes=records, author=Person(actor.handle, agent_email(actor.handle)),
                        subject=f"scout: failed source {names} (the attempt was rejected)", trailers=trailers)
