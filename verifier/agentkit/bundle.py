"""Making a trace bundle (design §3.10) from what the agent did."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from verifier.formats.base import iso


@dataclass
class TraceRecorder:
    """Collects events as the agent works, then writes the bundle's files."""

    events: list[dict[str, Any]] = field(default_factory=list)

    def add(self, when: datetime, kind: str, content: str | dict[str, Any]) -> None:
        self.events.append({"ts": iso(when), "type": kind, "content": content})

    def bundle(self, *, leaf_id: str, agent: str, operator: str, base_revision: str, patch: bytes,
               level: str = "L2", skill_version: str = "rw-skill/0", model: str | None = None,
               tokens: int | None = None, duration_s: float | None = None, summary: str | None = None,
               context: str | None = None) -> dict[str, bytes]:
        manifest: dict[str, Any] = {
            "leaf_id": leaf_id, "agent": agent, "operator": operator, "base_revision": base_revision,
            "skill_version": skill_version, "level": level,
        }
        for key, value in (("model", model), ("tokens", tokens), ("duration_s", duration_s),
                           ("summary", summary)):
            if value is not None:
                manifest[key] = value
        files = {
            "manifest.json": json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n",
            "events.jsonl": b"".join(
                json.dumps(event, sort_keys=True, ensure_ascii=False).encode() + b"\n" for event in self.events
            ),
            "patch.diff": patch,
        }
        if context is not None:
            files["context.md"] = context.encode("utf-8")
        return files


def write_bundle(files: dict[str, bytes], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder
