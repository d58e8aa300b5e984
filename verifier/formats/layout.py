"""Where every object lives in a project repository, and who may write each place.

Objects that grow with the corpus are sharded by the first two hex digits of their id
(sources/ab/src_ab....yaml): one flat folder of 10,000 files makes every commit rewrite one huge
tree, a sharded one rewrites three small ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

PROJECT_FILE = "PROJECT.md"
FIELD_GUIDE = "FIELD-GUIDE.md"
USE_SCORES = "scores/use.json"
LEDGER_DIR = "ledger"
LEAVES_DIR = "leaves"
QUEUE_DIR = "queue"

# Paths only the verifier itself writes: a leaf can never grant them, and a patch touching them
# is refused whatever its leaf says.
VERIFIER_ONLY_PREFIXES = ("ledger/", "scores/", "leaves/", "queue/")
VERIFIER_ONLY_NAMES = ("ledger", "scores", "leaves", "queue")  # a file there would block the folder
# The leaf_id a person's hand-written finding carries: it came from no leaf.
HUMAN_LEAF = "human-edit"
# Paths a person edits through the human path (issue: evidence graph); no agent leaf writes them.
HUMAN_ONLY = ("PROJECT.md",)
HUMAN_ONLY_PREFIXES = ("hypotheses/",)

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
    return f"sources/{_shard(source_id)}/{source_id}.yaml"


def source_bytes_path(source_id: str, extension: str) -> str:
    return f"sources/{_shard(source_id)}/{source_id}.{extension}"


def finding_path(finding_id: str) -> str:
    return f"findings/{_shard(finding_id)}/{finding_id}.yaml"


def link_path(link_id: str) -> str:
    return f"links/{_shard(link_id)}/{link_id}.yaml"


def review_path(review_id: str) -> str:
    return f"reviews/{_shard(review_id)}/{review_id}.yaml"


def note_path(leaf_id: str) -> str:
    return f"notes/{leaf_id}.yaml"


def plan_path(plan_id: str) -> str:
    return f"plans/{plan_id}.md"


def report_path(report_id: str) -> str:
    return f"reports/{report_id}.md"


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
    return f"{LEAVES_DIR}/{leaf_id}.result.json"


def queue_path(hold: str, path: str) -> str:
    return f"{QUEUE_DIR}/{hold}/{path}"


def hypothesis_path(hypothesis_id: str) -> str:
    return f"hypotheses/{hypothesis_id}.md"


def is_verifier_only(path: str) -> bool:
    # In any case: `Ledger/x` is `ledger/x` on a case-insensitive disk.
    folded = path.casefold()
    return folded.startswith(VERIFIER_ONLY_PREFIXES) or folded in VERIFIER_ONLY_NAMES


def is_human_only(path: str) -> bool:
    folded = path.casefold()
    return folded in _HUMAN_ONLY_FOLDED or folded.startswith(HUMAN_ONLY_PREFIXES)


_HUMAN_ONLY_FOLDED = tuple(name.casefold() for name in HUMAN_ONLY)
