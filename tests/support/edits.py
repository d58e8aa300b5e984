"""People's edits for the tests: a patch of existing files as their clone would make it, a report
document to edit in, and the extracted findings such edits cite."""

from __future__ import annotations

from tests.support.graph import land_findings
from tests.support.patches import modify
from tests.support.world import SLUG, World
from verifier.agentkit.workspace import creation_patch
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.submit import Submission


def landed_findings(world: World) -> list[str]:
    """agent-a extracts the fixture note's findings (leaf extract-1); returns their sorted ids."""
    return land_findings(world, "extract-1")[1]


def edit(world: World, token: str, files: dict[str, bytes], base: str | None = None) -> Submission:
    """A person's edit of existing files, as a patch made in their own clone."""
    view = world.repo.view(world.tip())
    patch = b""
    for path, new in files.items():
        old = view.read(path)
        patch += creation_patch({path: new}) if old is None else modify(path, old.decode(), new.decode())
    return Submission(SLUG, None, patch, {}, token, base=base)


def report_doc(report_id: str, introduced: list[str], cites: list[str]) -> bytes:
    """A report by ericxtang introducing `introduced` and citing `cites`."""
    front = dump_yaml({"report_id": report_id, "title": "Who pays first", "introduced": introduced,
                       "cites": cites, "author": "ericxtang", "created_at": "2026-11-30T12:00:00Z"}).decode()
    return f"---\n{front}---\nVerification layers sell first.\n".encode()
