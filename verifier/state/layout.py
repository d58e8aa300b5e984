"""Where every file lives in a project repository, and who may write each place: the one module
that names a repository path (tests/suite/test_layout_once.py holds every other module to that).

Objects that grow with the corpus are sharded by the first two hex digits of their id
(sources/ab/src_ab....yaml): one flat folder of 10,000 files makes every commit rewrite one huge
tree, a sharded one rewrites three small ones.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from verifier.formats.leaf import LeafKind, WriteOp, WriteRule

PROJECT_FILE = "PROJECT.md"
FIELD_GUIDE = "FIELD-GUIDE.md"
LEDGER_DIR = "ledger"
LEAVES_DIR = "leaves"
QUEUE_DIR = "queue"
SCORES_DIR = "scores"
HYPOTHESES_DIR = "hypotheses"
REPORTS_DIR = "reports"
PLANS_DIR = "plans"
SOURCES_DIR = "sources"
FINDINGS_DIR = "findings"
LINKS_DIR = "links"
REVIEWS_DIR = "reviews"
NOTES_DIR = "notes"
# The use scores (verifier.scoring.use): the summary, and one shard file per pair of id digits.
USE_SCORES = f"{SCORES_DIR}/use.json"
USE_SHARD_ROOT = f"{SCORES_DIR}/use"
# What rests on what (verifier.scoring.rests): the marker of a built index, and its shards. A
# source's findings and a hypothesis's links can be many, so theirs are sharded again by the
# dependant's digits; everything else by the digits of the object rested on.
RESTS_INDEX = f"{SCORES_DIR}/rests.json"
RESTS_ROOT = f"{SCORES_DIR}/rests"
# Each scored object's U as the evaluation counts it (verifier.scoring.useindex), kept beside the
# use shards: the marker of an index that covers every shard, and one file per first id digit pair.
USE_INDEX = f"{SCORES_DIR}/use-index.json"
USE_INDEX_ROOT = f"{SCORES_DIR}/use-index"
# The Resolver's records (verifier.roles.records) and the score files built from them.
RECORDS_DIR = f"{SCORES_DIR}/resolutions"
PROPOSALS_DIR = f"{QUEUE_DIR}/verdicts"
RESOLUTION_SCORES = f"{SCORES_DIR}/resolution.json"
PLANNER_SCORES = f"{SCORES_DIR}/planner.json"
DELTAS_DIR = f"{SCORES_DIR}/credit-deltas"
# The sealed baselines (verifier.writes.baseline): <H>.sealed, <H>.request.json, <H>.json.
SEAL_DIR = f"{SCORES_DIR}/baseline"
SEAL_SUFFIX = ".sealed"
# Plans held for a person's approval: the plan's own path under queue/plans/.
PLANS_QUEUE = f"{QUEUE_DIR}/{PLANS_DIR}/{PLANS_DIR}"
LEAF_RESULT_SUFFIX = ".result.json"

# Paths only the verifier itself writes: a leaf can never grant them, and a patch touching them
# is refused whatever its leaf says.
VERIFIER_ONLY_NAMES = (LEDGER_DIR, SCORES_DIR, LEAVES_DIR, QUEUE_DIR)  # a file there would block the folder
VERIFIER_ONLY_PREFIXES = tuple(f"{name}/" for name in VERIFIER_ONLY_NAMES)
# The leaf_id a person's hand-written finding carries: it came from no leaf.
HUMAN_LEAF = "human-edit"
# Paths a person edits through the human path (issue: evidence graph); no agent leaf writes them.
HUMAN_ONLY = (PROJECT_FILE,)
HUMAN_ONLY_PREFIXES = (f"{HYPOTHESES_DIR}/",)

ObjectType = Literal[
    "source", "source-bytes", "finding", "link", "plan", "report", "review", "note", "hypothesis"
]
# Object type -> the PROJECT.md hold that routes it to queue/<hold>/.
HOLD_OF: dict[str, str] = {
    "source": "sources",
    "source-bytes": "sources",
    "plan": "plans",
    "link": "links",
}

_PATTERNS: tuple[tuple[ObjectType, re.Pattern[str]], ...] = (
    ("source", re.compile(r"^sources/([0-9a-f]{2})/(src_\1[0-9a-f]{14})\.yaml$")),
    ("source-bytes", re.compile(r"^sources/([0-9a-f]{2})/(src_\1[0-9a-f]{14})\.(txt|html|pdf)$")),
    ("finding", re.compile(r"^findings/([0-9a-f]{2})/(fnd_\1[0-9a-f]{14})\.yaml$")),
    ("link", re.compile(r"^links/([0-9a-f]{2})/(lnk_\1[0-9a-f]{14})\.yaml$")),
    ("review", re.compile(r"^reviews/([0-9a-f]{2})/(rev_\1[0-9a-f]{14})\.yaml$")),
    ("note", re.compile(r"^notes/()([a-z0-9][a-z0-9-]{2,63})\.yaml$")),
    ("hypothesis", re.compile(r"^hypotheses/()(H[1-9][0-9]{0,5})\.md$")),
    ("plan", re.compile(r"^plans/()([a-z0-9][a-z0-9-]{2,63})\.md$")),
    ("report", re.compile(r"^reports/()([a-z0-9][a-z0-9-]{2,63})\.md$")),
)


@dataclass(frozen=True)
class ObjectPath:
    type: ObjectType
    object_id: str


def classify(path: str) -> ObjectPath | None:
    """Which object a path holds, or None for files that are not corpus objects."""
    for object_type, pattern in _PATTERNS:
        match = pattern.match(path)
        if match:
            return ObjectPath(object_type, match.group(2))
    return None


def _shard(object_id: str) -> str:
    return object_id[4:6]


def source_record_path(source_id: str) -> str:
    return f"{SOURCES_DIR}/{_shard(source_id)}/{source_id}.yaml"


def source_bytes_path(source_id: str, extension: str) -> str:
    return f"{SOURCES_DIR}/{_shard(source_id)}/{source_id}.{extension}"


def finding_path(finding_id: str) -> str:
    return f"{FINDINGS_DIR}/{_shard(finding_id)}/{finding_id}.yaml"


def link_path(link_id: str) -> str:
    return f"{LINKS_DIR}/{_shard(link_id)}/{link_id}.yaml"


def review_path(review_id: str) -> str:
    return f"{REVIEWS_DIR}/{_shard(review_id)}/{review_id}.yaml"


def note_path(leaf_id: str) -> str:
    return f"{NOTES_DIR}/{leaf_id}.yaml"


def plan_path(plan_id: str) -> str:
    return f"{PLANS_DIR}/{plan_id}.md"


def report_path(report_id: str) -> str:
    return f"{REPORTS_DIR}/{report_id}.md"


def object_path(object_id: str) -> str | None:
    """Where an object named by id lives (findings, links, source records)."""
    if object_id.startswith("fnd_"):
        return finding_path(object_id)
    if object_id.startswith("lnk_"):
        return link_path(object_id)
    if object_id.startswith("src_"):
        return source_record_path(object_id)
    return None


def leaf_path(leaf_id: str) -> str:
    return f"{LEAVES_DIR}/{leaf_id}.yaml"


def leaf_result_path(leaf_id: str) -> str:
    return f"{LEAVES_DIR}/{leaf_id}{LEAF_RESULT_SUFFIX}"


def leaf_id_of(name: str) -> str | None:
    """The leaf a file directly in leaves/ is the contract of (`<id>.yaml`), or None."""
    return name[:-5] if name.endswith(".yaml") else None


def queue_path(hold: str, path: str) -> str:
    return f"{QUEUE_DIR}/{hold}/{path}"


def hypothesis_path(hypothesis_id: str) -> str:
    return f"{HYPOTHESES_DIR}/{hypothesis_id}.md"


def segment_path(seq: int) -> str:
    """The ledger segment that holds row `seq` (verifier.formats.ledger: ROWS_PER_SEGMENT a file)."""
    # Imported here: the ledger's models are not needed by what imports the layout only for paths
    # (`rw check`, issue 26); after the first call this is a dictionary lookup.
    from verifier.formats.ledger import ROWS_PER_SEGMENT  # noqa: PLC0415

    return f"{LEDGER_DIR}/{seq // ROWS_PER_SEGMENT:06d}.jsonl"


def use_shard_path(object_id: str) -> str:
    """The use-score shard of an object: by the id's hex digits; plans and reports (named, not
    hashed) by sha256 of their id."""
    digits = _digits(object_id)
    return f"{USE_SHARD_ROOT}/{digits[:2]}/{digits[2:]}.json"


def use_index_path(object_id: str) -> str:
    """The use-index file holding an object's U: one per pair of the digits its shard is under."""
    return f"{USE_INDEX_ROOT}/{_digits(object_id)[:2]}.json"


# Two lowercase hex digits: two set lookups decide four digits, cheaper than a regex match, and
# this runs per object id when a use-index file is rewritten or rw eval reads one.
_HEX_PAIRS = frozenset(f"{n:02x}" for n in range(256))


def _digits(object_id: str) -> str:
    digits = object_id[4:8]
    if digits[:2] not in _HEX_PAIRS or digits[2:] not in _HEX_PAIRS:
        digits = hashlib.sha256(object_id.encode()).hexdigest()[:4]
    return digits


def id_digits(object_id: str) -> str:
    """The four hex digits that place an object's use-score shard (and, the first two, its
    use-index file): the id's own, or sha256's of a named id (plans, reports)."""
    return _digits(object_id)


def rests_fanout_dir(target_id: str) -> str | None:
    """The folder of a source's or a hypothesis's dependants' shards, or None for other objects."""
    if target_id.startswith("src_"):
        return f"{RESTS_ROOT}/{SOURCES_DIR}/{target_id}"
    if re.fullmatch(r"H[1-9][0-9]{0,5}", target_id):
        return f"{RESTS_ROOT}/{HYPOTHESES_DIR}/{target_id}"
    return None


def rests_shard_path(target_id: str, dependant_id: str) -> str:
    """The shard naming `dependant_id` among what rests on `target_id` (see RESTS_ROOT)."""
    fanout = rests_fanout_dir(target_id)
    if fanout is not None:
        return f"{fanout}/{_digits(dependant_id)[:2]}.json"
    digits = _digits(target_id)
    return f"{RESTS_ROOT}/{digits[:2]}/{digits[2:]}.json"


def record_path(hypothesis_id: str) -> str:
    return f"{RECORDS_DIR}/{hypothesis_id}.json"


def proposal_path(hypothesis_id: str) -> str:
    return f"{PROPOSALS_DIR}/{hypothesis_id}.json"


def deltas_path(seq: int) -> str:
    return f"{DELTAS_DIR}/{seq:06d}.json"


def seal_path(hypothesis_id: str) -> str:
    return f"{SEAL_DIR}/{hypothesis_id}{SEAL_SUFFIX}"


def request_record_path(hypothesis_id: str) -> str:
    return f"{SEAL_DIR}/{hypothesis_id}.request.json"


def opened_path(hypothesis_id: str) -> str:
    """Where the Resolver commits the opened baseline."""
    return f"{SEAL_DIR}/{hypothesis_id}.json"


def is_seal_file(path: str) -> bool:
    return path.startswith(f"{SEAL_DIR}/") and path.endswith(SEAL_SUFFIX)


def default_write_rules(kind: LeafKind) -> list[WriteRule]:
    """The write set a leaf of each kind gets unless its author says otherwise."""
    rules: dict[str, list[tuple[WriteOp, str]]] = {
        "extract": [("create", "findings/*/fnd_*.yaml")],
        "scout": [("create", "sources/*/src_*.yaml"), ("create", "sources/*/src_*.txt"),
                  ("create", "sources/*/src_*.html"), ("create", "sources/*/src_*.pdf")],
        "skeptic": [("create", "links/*/lnk_*.yaml"), ("create", "notes/*.yaml")],
        "link": [("create", "links/*/lnk_*.yaml"), ("create", "notes/*.yaml")],
        "review": [("create", "reviews/*/rev_*.yaml")],
        "guide": [("modify", FIELD_GUIDE)],
    }
    return [WriteRule(op=op, path=path) for op, path in rules[kind]]


def is_verifier_only(path: str) -> bool:
    # In any case: `Ledger/x` is `ledger/x` on a case-insensitive disk.
    folded = path.casefold()
    return folded.startswith(VERIFIER_ONLY_PREFIXES) or folded in VERIFIER_ONLY_NAMES


def is_human_only(path: str) -> bool:
    folded = path.casefold()
    return folded in _HUMAN_ONLY_FOLDED or folded.startswith(HUMAN_ONLY_PREFIXES)


_HUMAN_ONLY_FOLDED = tuple(name.casefold() for name in HUMAN_ONLY)
