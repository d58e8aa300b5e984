"""Regenerate the three seed projects (fixtures/seed-*/) from fixtures/seed-sources-raw/ (deterministic).

Each seed project is in the shape of a steward's first thesis (design §14, §16): one hypothesis
with a criterion, a check date and a measure, and three warm sources (`warm: true`, included)
with their retained bytes, so the Planner's warm-leaf pool has something to offer on the first
wake. Run `python scripts/build_seed_projects.py` after changing a raw source or a thesis; a test
checks that the committed files are what this script writes.
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
RAW = ROOT / "fixtures" / "seed-sources-raw"
RETRIEVED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

# slug -> (question, statement, criterion, check date, measure, [(file, url, date, title)])
SEEDS: dict[str, tuple[str, str, str, date, str, list[tuple[str, str, date, str]]]] = {
    "edge-inference": (
        "Will assistants on phones run on the device rather than in the cloud?",
        "By 2028-06-30, most flagship phones launched in the preceding year ship an on-device assistant model "
        "of at least 3 billion parameters.",
        "Of the flagship phones launched between 2027-07-01 and 2028-06-30, more than half have a published model "
        "card for an on-device assistant model with 3 billion parameters or more.",
        date(2028, 6, 30),
        "Count flagship launches (list price USD 800 or more) and read each vendor's model card or teardown.",
        [("handset-survey-2026.txt", "https://surveys.example.org/edge/handset-teardown-2026.txt", date(2026, 10, 2),
          "On-device assistants in 2026 flagship handsets"),
         ("memory-pricing-brief.txt", "https://briefs.example.org/edge/memory-pricing-2026.txt", date(2026, 8, 14),
          "Mobile memory pricing and the on-device model budget"),
         ("developer-poll-2026.txt", "https://polls.example.org/edge/developer-poll-2026.txt", date(2026, 9, 20),
          "Developer poll: where do assistant features run?")],
    ),
    "grid-storage": (
        "Will batteries, not gas, set the evening electricity price?",
        "In summer 2027, batteries set the marginal price in the 19:00-20:00 hour on most weekdays.",
        "On more than half of the weekdays between 2027-06-01 and 2027-09-30, the market operator's records name a "
        "battery as the marginal unit in the 19:00-20:00 hour.",
        date(2027, 10, 31),
        "The market operator's published marginal-unit records for each weekday of the period.",
        [("iso-evening-peak-review.txt", "https://markets.example.org/grid/evening-peak-review-2026.txt",
          date(2026, 10, 5), "Evening peak review: batteries and price setting, summer 2026"),
         ("storage-pipeline-report.txt", "https://reports.example.org/grid/storage-pipeline-2026.txt",
          date(2026, 7, 18), "Storage interconnection pipeline, mid-2026"),
         ("gas-fleet-outlook.txt", "https://outlooks.example.org/grid/gas-peakers-2026.txt", date(2026, 5, 9),
          "Gas peaker fleet outlook")],
    ),
    "open-weights": (
        "How quickly do open-weight models catch up with closed frontier models on coding?",
        "Through 2027, the best open-weight model matches each new closed frontier model's coding score within "
        "six months of its release.",
        "For every closed frontier model released in 2027 with a public coding-benchmark score, an open-weight "
        "model reaches that score on the same benchmark within 183 days.",
        date(2028, 3, 31),
        "Public leaderboard history of the coding track, with release dates from the developers' announcements.",
        [("benchmark-lag-study.txt", "https://studies.example.org/open/benchmark-lag-2026.txt", date(2026, 11, 3),
          "How far behind are open-weight models on coding benchmarks?"),
         ("leaderboard-notes.txt", "https://leaderboard.example.org/notes/2026-q3.txt", date(2026, 10, 10),
          "Leaderboard maintainer notes, Q3 2026"),
         ("inference-cost-memo.txt", "https://memos.example.org/open/inference-cost-2026.txt", date(2026, 9, 1),
          "Inference cost memo: open-weight versus closed models for code assistants")],
    ),
}


def project_md(slug: str, question: str) -> bytes:
    return (f"""---
project: {slug}
question: "{question}"
steward: steward
holds: []
source_policy:
  allow_domains: []
  deny_domains: []
  languages: [ en ]
  rights: [ public ]
  min_date: 2025-01-01
budget_per_loop: {{ tokens: 2_000_000, usd: 20, leaves_max: 12 }}
loop_cadence: 20m
hypotheses: [ H1 ]
---
A seed project (design §14): one thesis, three warm sources. Replace the steward's handle and
the thesis with your own; `rw import` adds more hypotheses from a list.
""").encode()


def hypothesis_md(statement: str, criterion: str, check: date, measure: str) -> bytes:
    front = {"hypothesis_id": "H1", "revision": 1, "statement": statement,
             "resolution": {"criterion": criterion, "check_date": check.isoformat(), "measure": measure},
             "status": "active", "verdict": {"current": {"value": "none", "confidence": 0.0}, "history": []}}
    return b"---\n" + dump_yaml(front) + b"---\nThe steward's first thesis for this project.\n"


def build(slug: str) -> dict[str, bytes]:
    question, statement, criterion, check, measure, sources = SEEDS[slug]
    files = {"PROJECT.md": project_md(slug, question), "hypotheses/H1.md": hypothesis_md(statement, criterion, check,
                                                                                         measure),
             "FIELD-GUIDE.md": b"# Field Guide\n\nOnly surprising, reusable lessons about this project's sources.\n"}
    for name, url, published, title in sources:
        made = source_files(url=url, data=(RAW / slug / name).read_bytes(), media_type="text/plain",
                            fetched_by="seed-curator", retrieved_at=RETRIEVED, language="en", rights="public",
                            published=published, title=title, leaf_id=None, status="included")
        for path, data in made.items():
            if path.endswith(".yaml"):
                record = load_yaml(data, path)
                assert isinstance(record, dict)  # source_files wrote it as a mapping
                record["warm"] = True  # a steward's mark: known to yield findings (§9.1)
                files[path] = dump_yaml(record)
            else:
                files[path] = data
    return files


def main() -> int:
    for slug in SEEDS:
        target = ROOT / "fixtures" / f"seed-{slug}"
        shutil.rmtree(target, ignore_errors=True)
        for relative, data in build(slug).items():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            (target / relative).write_bytes(data)
            print(f"seed-{slug}/{relative}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
