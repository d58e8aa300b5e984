"""Regenerate fixtures/demo-project/sources/ from fixtures/sources-raw/ (deterministic).

Run after changing a raw source: `python scripts/build_fixture_project.py`. A test checks that the
committed records match what this script writes, so the fixture cannot drift from its bytes.
"""

from __future__ import annotations

import shutil
import sys
from datetime import UTC, date, datetime
from pathlib import Path

from verifier.agentkit.objects import source_files
from verifier.formats.frontmatter import load_yaml
from verifier.formats.yamlout import dump_yaml

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "fixtures" / "sources-raw"
PROJECT = ROOT / "fixtures" / "demo-project"

# (file, url, media type, language, rights, publication date, title)
SOURCES = [
    ("analyst-note-2026-03-12.txt", "https://notes.example.org/world-models/analyst-note-2026-03-12.txt",
     "text/plain", "en", "public", date(2026, 3, 12), "World models for robotics: where the first revenue shows up"),
    ("conditioning-layers-buyers-guide.html", "https://guides.example.org/conditioning-layers-buyers-guide",
     "text/html", "en", "public", date(2026, 5, 4), "Conditioning layers: a buyer's guide"),
    ("verification-layer-eval-2026.pdf", "https://reports.example.org/verification-layer-eval-2026.pdf",
     "application/pdf", "en", "licensed", date(2026, 7, 20), "Evaluating verification layers, 2026"),
]
RETRIEVED = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
# A steward's mark (design §9.1): sources known to yield findings, small enough for a first-minute
# leaf, so `rw init` of the demo leaves a warm pool ready (the Planner's first wake offers them).
WARM = ("analyst-note-2026-03-12.txt", "conditioning-layers-buyers-guide.html")


def build() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name, url, media, language, rights, published, title in SOURCES:
        made = source_files(
            url=url, data=(RAW / name).read_bytes(), media_type=media, fetched_by="fixture-curator",
            retrieved_at=RETRIEVED, language=language, rights=rights, published=published, title=title,
            leaf_id=None, status="included",
        )
        for path, data in made.items():
            if path.endswith(".yaml") and name in WARM:
                record = load_yaml(data, path)
                assert isinstance(record, dict)  # a source record this script just wrote
                files[path] = dump_yaml({**record, "warm": True})
            else:
                files[path] = data
    return files


def main() -> int:
    shutil.rmtree(PROJECT / "sources", ignore_errors=True)
    for relative, data in build().items():
        target = PROJECT / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        print(relative)
    return 0


if __name__ == "__main__":
    sys.exit(main())
