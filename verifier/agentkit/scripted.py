"""A scripted agent: does an extract leaf the way an outside agent would, without a model.

It clones the project at the leaf's base, asks for the source's derived text, writes findings
from a script (a list of excerpt/statement/limitation), makes the patch with git, records a
trace and returns a Submission ready for the verifier. The demo, the tests and the benchmarks
use it; it is also the reference for what the researchwiki skill must produce.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from verifier.agentkit.bundle import TraceRecorder
from verifier.agentkit.objects import finding_file
from verifier.agentkit.workspace import clone, make_patch, write_files
from verifier.checks.citation import ExcerptFound, locate_excerpt
from verifier.errors import FormatError
from verifier.formats.frontmatter import load_yaml
from verifier.formats.leaf import parse_leaf
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE, parse_source
from verifier.pipeline.submit import Submission
from verifier.pipeline.trace import asked_level
from verifier.state.layout import leaf_path, source_bytes_path, source_record_path
from verifier.store.home import Home


@dataclass(frozen=True)
class ScriptedAgent:
    home: Home
    handle: str
    operator: str
    token: str

    def source_text(self, slug: str, source_id: str, revision: str) -> str:
        view = self.home.project(slug).view(revision)
        record = parse_source(view.read(source_record_path(source_id)) or b"", source_record_path(source_id))
        path = source_bytes_path(source_id, EXTENSION_BY_MEDIA_TYPE[record.media_type])
        data, blob = view.read(path), view.blob_id(path)
        assert data is not None and blob is not None
        return self.home.source_text(blob, data, record.media_type)

    def extract(self, slug: str, leaf_id: str, findings: list[dict[str, Any]], *, now: datetime,
                workdir: Path | None = None) -> Submission:
        """Build the submission for an extract leaf from scripted findings."""
        repo_path = self.home.project(slug).path
        tip = self.home.project(slug).tip()
        leaf = parse_leaf(self.home.project(slug).view(tip).read(leaf_path(leaf_id)) or b"", leaf_path(leaf_id))
        source_id = leaf.inputs.source_id
        assert source_id is not None
        trace = TraceRecorder()
        clock = now - timedelta(seconds=30)
        trace.add(clock, "reasoning", f"Leaf {leaf_id}: extract findings from {source_id}.")
        trace.add(clock, "tool_call", {"tool": "rw source text", "args": [slug, source_id]})
        text = self.source_text(slug, source_id, leaf.base_revision)
        trace.add(clock, "tool_result", {"chars": len(text), "head": text[:200]})
        files: dict[str, bytes] = {}
        for item in findings:
            match = locate_excerpt(text, item["excerpt"])
            # A careless agent may quote wrongly; it still writes the finding (the verifier decides).
            location = (match.start, match.end) if isinstance(match, ExcerptFound) else (0, len(item["excerpt"]))
            path, data = finding_file(source_id=source_id, source_text=text, excerpt=item["excerpt"],
                                      statement=item["statement"], limitation=item["limitation"],
                                      leaf_id=leaf_id, location=location)
            files[path] = data
            trace.add(clock, "reasoning", f"Quote for: {item['statement']}")
        with tempfile.TemporaryDirectory(dir=workdir) as scratch:
            checkout = clone(repo_path, Path(scratch) / "clone", revision=leaf.base_revision)
            write_files(checkout, files)
            patch = make_patch(checkout)
        trace.add(now, "final", f"Wrote {len(files)} findings from {source_id}, each quoting the source exactly.")
        level = asked_level(leaf) or "L2"  # a warm leaf asks for L3: the starting context goes in too
        context = leaf.model_dump_json(indent=2) if level == "L3" else None
        bundle = trace.bundle(leaf_id=leaf_id, agent=self.handle, operator=self.operator,
                              base_revision=leaf.base_revision, patch=patch, level=level,
                              tokens=1200 * len(files), duration_s=30.0,
                              summary=f"{len(files)} findings from {source_id}", context=context)
        return Submission(slug, leaf_id, patch, bundle, self.token)


def load_script(path: Path) -> list[dict[str, Any]]:
    """The findings of an example submission file (fixtures/submissions/*.yaml)."""
    data = load_yaml(path.read_bytes(), str(path))
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise FormatError("an example submission is a mapping with a `findings:` list", str(path))
    findings: list[dict[str, Any]] = data["findings"]
    return findings
