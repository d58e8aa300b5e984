"""Golden tests for the extract and scout checks: each rejection reason, on plain data.

The checks are pure, so every case builds a tree in memory (DictTree), the writes a patch would
make, and the fetch outcomes, and compares the rejections with tests/golden/checks.json.
Regenerate after an intended change with RW_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from datetime import date, timedelta
from pathlib import Path

import pytest

from tests.support.golden import BASE_FILES, NOW, SENTENCES, SOURCE_ID, TEXT
from verifier.agentkit.objects import finding_file, source_files
from verifier.checks.context import CheckContext
from verifier.checks.registry import check_for
from verifier.formats.fetch import FetchOutcome, FetchStatus
from verifier.formats.leaf import LeafContract
from verifier.formats.project import ProjectFile, SourcePolicy
from verifier.state.layout import default_write_rules, queue_path
from verifier.state.view import DictTree, Overlay
from verifier.text.extract import extract_text

GOLDEN = Path(__file__).parents[1] / "golden" / "checks.json"
POLICY = SourcePolicy(deny_domains=["farm.example.com"], languages=["en"], rights=["public"],
                      min_date=date(2025, 1, 1))


def leaf(kind: str) -> LeafContract:
    inputs = {"source_id": SOURCE_ID} if kind == "extract" else {}
    return LeafContract.model_validate({
        "leaf_id": f"{kind}-1", "kind": kind, "inputs": inputs, "base_revision": "a" * 40,
        "may_write": [r.model_dump() for r in default_write_rules(kind)],  # type: ignore[arg-type]
        "check": kind, "created_at": NOW, "created_by": "planner", "expires_at": NOW + timedelta(days=1)})


def findings(count: int = 3, /, **overrides: str) -> dict[str, bytes]:
    files = {}
    for sentence in SENTENCES[:count]:
        path, data = finding_file(source_id=SOURCE_ID, source_text=TEXT, excerpt=sentence,
                                  statement="A claim.", limitation="A limit.", leaf_id="extract-1")
        files[path] = data
    for key, value in overrides.items():
        target = next(path for path in sorted(files) if key.encode() in files[path])
        files[target] = files[target].replace(key.encode(), str(value).encode(), 1)
    return files


def first_id(prefix: str) -> str:
    data = findings()[sorted(findings())[0]].decode()
    return data.split(prefix, 1)[1].split("\n", 1)[0]


def run(kind: str, writes: Mapping[str, bytes | None], *, base: dict[str, bytes] | None = None,
        fetch: FetchStatus = FetchStatus.OK, actor: str = "agent-a") -> list[list[str]]:
    tree = DictTree(BASE_FILES if base is None else base)
    fetches = {}
    for path, data in writes.items():
        if path.endswith(".yaml") and data and b"url: " in data:
            url = data.split(b"url: ")[1].split(b"\n")[0].decode()
            ok = fetch is FetchStatus.OK
            fetches[url] = FetchOutcome(url, url if ok else None, fetch, 200 if ok else 503,
                                        "0" * 64 if ok else None, 10 if ok else None, "text/plain" if ok else None,
                                        (), "fetched" if ok else "HTTP 503 from the server")
    ctx = CheckContext(leaf=leaf(kind), actor=actor, project=ProjectFile(project="demo", source_policy=POLICY),
                       tree=Overlay(tree, writes), writes=writes, now=NOW,
                       source_texts={SOURCE_ID: extract_text(TEXT.encode(), "text/plain")}, fetches=fetches)
    result = check_for(kind)(ctx)
    return [[r.code, r.render()] for r in result.rejections]


def scout(url: str = "https://news.example.net/story", **record: object) -> dict[str, bytes | None]:
    fields: dict[str, object] = {"data": b"A new source with quotable text.\n", "media_type": "text/plain",
                                 "fetched_by": "agent-a", "retrieved_at": NOW, "language": "en",
                                 "rights": "public", "published": date(2026, 2, 1), "title": None,
                                 "leaf_id": "scout-1"}
    fields.update(record)
    return dict(source_files(url=url, **fields))  # type: ignore[arg-type]


def tamper(files: dict[str, bytes | None], old: str, new: str) -> dict[str, bytes | None]:
    path = next(p for p in files if p.endswith(".yaml"))
    data = files[path]
    assert data is not None and old.encode() in data
    return {**files, path: data.replace(old.encode(), new.encode())}


CASES: dict[str, Callable[[], list[list[str]]]] = {
    "extract/accepted": lambda: run("extract", findings()),
    "extract/too_few": lambda: run("extract", findings(2)),
    "extract/excerpt_not_substring": lambda: run("extract", findings(**{"Seven of eleven": "Seven of twelve"})),
    "extract/wrong_location": lambda: run("extract", findings(**{"start: ": "start: 1", "end: ": "end: 1"})),
    "extract/limitation_blank": lambda: run("extract", findings(**{"limitation: A limit.": "limitation: '  '"})),
    "extract/bad_id": lambda: run("extract", findings(**{first_id("finding_id: "): "fnd_0000000000000000"})),
    "extract/wrong_source": lambda: run(
        "extract", findings(**{f"source_id: {SOURCE_ID}": "source_id: src_0000000000000000"})),
    "extract/wrong_leaf": lambda: run("extract", findings(**{"leaf_id: extract-1": "leaf_id: extract-2"})),
    "extract/unknown_field": lambda: run("extract", findings(**{"statement:": "mood: happy\nstatement:"})),
    "extract/source_missing": lambda: run("extract", findings(), base={}),
    "extract/source_held": lambda: run("extract", findings(), base={queue_path("sources", p): d
                                                                  for p, d in BASE_FILES.items()}),
    "extract/unexpected_file": lambda: run("extract", {**findings(), "notes/x.md": b"hi\n"}),
    "scout/accepted": lambda: run("scout", scout()),
    "scout/none": lambda: run("scout", {}),
    "scout/denied_domain": lambda: run("scout", scout("https://www.farm.example.com/x")),
    "scout/language": lambda: run("scout", scout(language="fr")),
    "scout/rights": lambda: run("scout", scout(rights="paywalled")),
    "scout/too_old": lambda: run("scout", scout(published=date(2024, 6, 1))),
    "scout/no_date": lambda: run("scout", scout(published=None)),
    "scout/hash_mismatch": lambda: run("scout", tamper(scout(), "size: 33", "size: 34")),
    "scout/not_staged": lambda: run("scout", scout(status="included")),
    "scout/someone_else_fetched": lambda: run("scout", scout(fetched_by="agent-b")),
    "scout/url_not_canonical": lambda: run("scout", tamper(scout(), "https://news.example.net/story",
                                                            "HTTPS://News.Example.net:443/story")),
    "scout/url_unresolved": lambda: run("scout", scout(), fetch=FetchStatus.HTTP_ERROR),
    "scout/duplicate_held": lambda: run("scout", scout(), base={
        queue_path("sources", p): d for p, d in scout().items() if d is not None}),
    "scout/bytes_missing": lambda: run("scout", {p: d for p, d in scout().items() if p.endswith(".yaml")}),
    "scout/record_missing": lambda: run("scout", {p: d for p, d in scout().items() if not p.endswith(".yaml")}),
    "scout/no_text": lambda: run("scout", scout(data=b"\xff\xfe not utf-8")),
    "scout/six_sources": lambda: run("scout", {p: d for n in range(6) for p, d in scout(
        f"https://news.example.net/{n}").items()}),
}


def test_golden_file_matches() -> None:
    actual = {name: case() for name, case in sorted(CASES.items())}
    if os.environ.get("RW_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    expected = json.loads(GOLDEN.read_text())
    assert actual == expected


@pytest.mark.parametrize("name", ["extract/accepted", "scout/accepted"])
def test_good_cases_have_no_rejections(name: str) -> None:
    assert CASES[name]() == []


@pytest.mark.parametrize("name", sorted(set(CASES) - {"extract/accepted", "scout/accepted"}))
def test_each_bad_case_is_rejected(name: str) -> None:
    assert CASES[name](), f"{name} should be rejected"
