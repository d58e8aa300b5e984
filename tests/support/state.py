"""Helpers for the read-model tests: a tree view that remembers what was read, and small valid
project files."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from verifier.formats.leaf import LeafContract
from verifier.formats.yamlout import dump_yaml
from verifier.state.layout import default_write_rules
from verifier.state.view import DictTree

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BASE = "a" * 40


class ReadLog(DictTree):
    """A DictTree that records every path read, so a test can say what was never parsed."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        super().__init__(files)
        self.reads: list[str] = []

    def read(self, path: str) -> bytes | None:
        self.reads.append(path)
        return super().read(path)


def contract_bytes(leaf_id: str, source_id: str, *, expires_in: timedelta = timedelta(days=1)) -> bytes:
    contract = LeafContract.model_validate({
        "leaf_id": leaf_id, "kind": "extract", "inputs": {"source_id": source_id}, "base_revision": BASE,
        "may_write": [rule.model_dump() for rule in default_write_rules("extract")], "check": "extract",
        "created_at": NOW - timedelta(days=2), "created_by": "planner", "expires_at": NOW + expires_in})
    return dump_yaml(contract.model_dump(mode="json", exclude_none=True))
