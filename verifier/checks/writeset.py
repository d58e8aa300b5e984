"""The write-set firewall: which paths a leaf's patch may create, modify or delete.

Every change the patch makes must be consumed by one of the leaf's `may_write` rules; the final
rule is an implicit DISALLOW, so anything unexplained is refused. Paths only the verifier writes,
and paths only people write, are refused before any rule is consulted, whatever the leaf says.
The returned trace says which rule took which change, for the ledger and for debugging leaves.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from verifier.errors import Rejection
from verifier.formats.leaf import WriteRule
from verifier.patch.parse import ParsedPatch
from verifier.state.layout import is_human_only, is_verifier_only


def glob_match(pattern: str, path: str) -> bool:
    """Match segment by segment: `*`, `?` and `[..]` stay inside one segment, `**` spans any
    number of segments (including none)."""
    return _match(pattern.split("/"), path.split("/"))


def _match(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(rest, parts[index:]) for index in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _match(rest, parts[1:])


@dataclass(frozen=True)
class Decision:
    op: str
    path: str
    rule: int | None  # index of the may_write rule that allowed it; None when refused


def _allowed(rule: WriteRule, op: str, path: str) -> bool:
    return rule.op in ("write", op) and glob_match(rule.path, path)


def requested_ops(patch: ParsedPatch) -> list[tuple[str, str]]:
    """(op, path) pairs a patch needs; a rename needs delete of the old and create of the new."""
    ops: list[tuple[str, str]] = []
    for change in patch.changes:
        if change.op == "rename":
            assert change.old_path is not None
            ops += [("delete", change.old_path), ("create", change.path)]
        else:
            ops.append((change.op, change.path))
    return ops


def evaluate(
    patch: ParsedPatch, rules: list[WriteRule], *, human: bool = False
) -> tuple[list[Decision], list[Rejection]]:
    """Decide every change of `patch` against `rules`; refusals come back as rejections."""
    decisions: list[Decision] = []
    rejections: list[Rejection] = []
    for op, path in requested_ops(patch):
        if is_verifier_only(path):
            rejections.append(Rejection("verifier_only", f"only the verifier writes {path}", path))
            decisions.append(Decision(op, path, None))
            continue
        if is_human_only(path) and not human:
            rejections.append(
                Rejection("human_only", f"{path} is edited by people (the steward), not by leaves", path)
            )
            decisions.append(Decision(op, path, None))
            continue
        chosen = next((index for index, rule in enumerate(rules) if _allowed(rule, op, path)), None)
        decisions.append(Decision(op, path, chosen))
        if chosen is None:
            allowed = ", ".join(f"{rule.op} {rule.path}" for rule in rules) or "nothing"
            rejections.append(
                Rejection("outside_write_set", f"{op} {path} is outside the leaf's write set ({allowed})", path)
            )
    return decisions, rejections
