"""Reading one project's evaluation inputs from a tree: the ledger (chain checked), the use scores
of the objects accepted submissions brought (from the use index, verifier.scoring.useindex, when
the tree holds one), the decided resolution records and the Planner's
unresolved_count, and the active hypotheses whose baseline is not sealed, with the recorded reason
(seal.status: they would drop out of lift silently otherwise). Works on any TreeView: the tip,
or the tip overlaid with `rw replay`'s rebuild.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import replace
from datetime import datetime

from verifier.errors import FormatError
from verifier.evaluation.rows import UNKNOWN_KIND, Attempt, ProjectHistory, ResolvedHypothesis, attempt_of
from verifier.formats.leaf import parse_leaf
from verifier.formats.ledger import LedgerRow
from verifier.formats.usescores import UseEntry, load_shard
from verifier.pipeline.ledger import read_chain
from verifier.roles.records import ResolutionRecord, read_records
from verifier.scoring.useindex import counted_use, is_live, parse_index_file
from verifier.seal.status import hypothesis_ids, unsealed
from verifier.state.layout import PLANNER_SCORES, id_digits, leaf_path, use_index_path, use_shard_path
from verifier.state.view import TreeView


def read_use(view: TreeView, object_ids: set[str]) -> dict[str, float]:
    """U of each object that has a use entry (a withdrawn object: 0): from the use index when the
    tree holds a complete one (one small file per pair of id digits), else from the shards."""
    if is_live(view.read):
        return _use_from_index(view, object_ids)
    return read_use_from_shards(view, object_ids)


def _use_from_index(view: TreeView, object_ids: set[str]) -> dict[str, float]:
    # Grouped by the ids' first two digits, each file's path made once from one of its ids: rw
    # eval asks for every accepted object of a project, and a path formatted per id costs more
    # than the lookup.
    wanted: dict[str, list[str]] = defaultdict(list)
    for object_id in object_ids:
        wanted[id_digits(object_id)[:2]].append(object_id)
    use: dict[str, float] = {}
    for ids in wanted.values():
        path = use_index_path(ids[0])
        data = view.read(path)
        if not data:
            continue
        values = parse_index_file(data, path)
        for object_id in ids:
            value = values.get(object_id)
            if value is not None:
                use[object_id] = float(value)
    return use


def read_use_from_shards(view: TreeView, object_ids: set[str]) -> dict[str, float]:
    """`read_use` from the shards themselves. Each shard is read and decoded once, and only the
    entries asked for are checked and typed: a shard holds the entries of every object whose id
    shares its digits, most of which the evaluation never looks at."""
    wanted: dict[str, list[str]] = defaultdict(list)
    for object_id in object_ids:
        wanted[use_shard_path(object_id)].append(object_id)
    use: dict[str, float] = {}
    for path, ids in wanted.items():
        data = view.read(path)
        if not data:
            continue
        entries = load_shard(data, path)
        for object_id in ids:
            value = entries.get(object_id)
            if value is not None:
                use[object_id] = float(counted_use(UseEntry.from_json(value, f"{path}:{object_id}")))
    return use


def resolved_of(record: ResolutionRecord) -> ResolvedHypothesis:
    resolution, links, reviews, findings = record.scoring()
    return ResolvedHypothesis(resolution, record.decided_at, tuple(links), tuple(reviews), tuple(findings))


def read_history(view: TreeView, project: str) -> ProjectHistory:
    # Each row made into an Attempt as it is read, its LedgerRow let go at once: holding a project's
    # whole ledger of models (kilobytes a row) to the end costs a read of it again in cache misses.
    # The seal status reads only `resolve` rows (seal.status.recorded_reasons): they are kept.
    resolving: list[LedgerRow] = []
    attempts: list[Attempt] = []
    kindless: list[int] = []  # agent submissions whose row names no kind
    keep = attempts.append  # one loop, no generator between the reader and the rows: 100,000 rows
    for _, row in read_chain(view):
        if row.action == "resolve":
            resolving.append(row)
        elif row.kind is None and row.action == "submit" and row.actor_type == "agent":
            kindless.append(len(attempts))
        keep(attempt_of(project, row))
    if kindless:
        _fill_kinds(view, attempts, kindless)
    rows = tuple(attempts)
    needed = {object_id for row in rows if row.accepted and row.objects for object_id in row.objects}
    records = read_records(view)
    resolutions = tuple(resolved_of(records[h]) for h in sorted(records) if records[h].outcome is not None)
    planner = view.read(PLANNER_SCORES)
    unresolved: int | None = None
    if planner is not None:
        try:
            unresolved = int(json.loads(planner)["unresolved_count"])
        except (ValueError, KeyError, TypeError) as exc:
            raise FormatError(f"no readable unresolved_count: {exc}", PLANNER_SCORES) from exc
    not_sealed = tuple((item.hypothesis_id, item.why) for item in unsealed(view, hypothesis_ids(view), resolving))
    unclaimed = {row.leaf_id for row in rows if row.is_agent_submission and row.accepted and row.leaf_id
                 and row.claimed_at is None}
    return ProjectHistory(project=project, rows=rows, use=read_use(view, needed), resolutions=resolutions,
                          unresolved_count=unresolved, unsealed=not_sealed,
                          opened=read_openings(view, unclaimed))


def _fill_kinds(view: TreeView, attempts: list[Attempt], kindless: list[int]) -> None:
    """An agent's submission refused before its leaf was read (a bad trace, patch or secret, by a
    verifier before its rows named the kind then) still counts among its kind's attempts: the kind
    from the leaf's contract, else from the leaf's `leaf` row, else UNKNOWN_KIND."""
    written = {row.leaf_id: row.kind for row in attempts if row.action == "leaf" and row.leaf_id and row.kind}
    kinds: dict[str, str] = {}
    for index in kindless:
        leaf_id = attempts[index].leaf_id or ""
        if leaf_id not in kinds:
            kinds[leaf_id] = _contract_kind(view, leaf_id) or written.get(leaf_id) or UNKNOWN_KIND
        attempts[index] = replace(attempts[index], kind=kinds[leaf_id])


def _contract_kind(view: TreeView, leaf_id: str) -> str | None:
    if not leaf_id:
        return None
    path = leaf_path(leaf_id)
    data = view.read(path)
    if data is None:
        return None
    try:
        return parse_leaf(data, path).kind
    except FormatError:
        return None


def read_openings(view: TreeView, leaf_ids: set[str]) -> dict[str, datetime]:
    """Each named leaf's created_at, from its contract (a leaf whose file is gone or unreadable is
    left out, and its time to accept counted as unknown)."""
    opened: dict[str, datetime] = {}
    for leaf_id in sorted(leaf_ids):
        path = leaf_path(leaf_id)
        data = view.read(path)
        if data is None:
            continue
        try:
            opened[leaf_id] = parse_leaf(data, path).created_at
        except FormatError:
            continue
    return opened
