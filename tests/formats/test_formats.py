"""Property and unit tests for ids, canonical URLs, model round trips and front matter."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.errors import FormatError
from verifier.formats.finding import Finding, Location
from verifier.formats.frontmatter import load_yaml
from verifier.formats.ids import canonical_url, finding_id_for, source_id_for
from verifier.formats.ledger import LedgerRow, Outcome, parse_row, row_line
from verifier.formats.project import parse_project
from verifier.formats.schema import MODELS
from verifier.formats.source import MediaType, SourceRecord
from verifier.formats.yamlout import dump_yaml
from verifier.text.normalize import normalize
from verifier.writes.project import TEMPLATE

hex16 = st.text(alphabet="0123456789abcdef", min_size=16, max_size=16)
words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
                max_size=80).filter(lambda s: s.strip() != "")


@given(st.sampled_from(["http", "HTTP", "https"]), st.sampled_from(["example.org", "Example.ORG", "a.b.example.org"]),
       st.lists(st.from_regex(r"[a-z0-9_~-]{1,8}", fullmatch=True), max_size=4))
def test_canonical_url_is_idempotent_and_case_insensitive_in_host(scheme: str, host: str, path: list[str]) -> None:
    url = f"{scheme}://{host}/{'/'.join(path)}#fragment"
    canonical = canonical_url(url)
    assert canonical_url(canonical) == canonical
    assert canonical == canonical_url(url.lower().split("#")[0]) or "/" in canonical
    assert source_id_for(url) == source_id_for(canonical)
    assert "#" not in canonical and canonical.startswith(("http://", "https://"))


def test_canonical_url_examples() -> None:
    assert canonical_url("HTTPS://Example.ORG:443") == "https://example.org/"
    assert canonical_url("http://example.org:8080/a%7eb?x=1") == "http://example.org:8080/a~b?x=1"
    assert canonical_url("https://user:pw@example.org/a b".replace(" ", "%20")) == "https://example.org/a%20b"
    for bad in ("ftp://example.org/", "https:///nohost", "javascript:alert(1)", "https://exa mple.org/"):
        with pytest.raises(ValueError):
            canonical_url(bad)


@given(hex16, words, words)
def test_finding_id_depends_on_source_and_normalized_excerpt_only(h: str, excerpt: str, other: str) -> None:
    source = f"src_{h}"
    assert finding_id_for(source, excerpt) == finding_id_for(source, "  " + excerpt.replace(" ", "\n") + "\t")
    if normalize(excerpt) != normalize(other):
        assert finding_id_for(source, excerpt) != finding_id_for(source, other)


@pytest.mark.parametrize("text", ["N", "yes", "Off", "0755", "1:30", "0b101", "1e5", "<<"])
def test_what_the_reader_refuses_plain_the_writer_quotes(text: str) -> None:
    # Found by the property below: a limitation "N" was written plain and then refused on reading.
    data = dump_yaml({"limitation": text, "list": [text]})
    assert load_yaml(data, "x.yaml") == {"limitation": text, "list": [text]}


@given(hex16, hex16, words, words, words, st.integers(0, 10_000), st.integers(1, 2000))
def test_finding_round_trips_through_yaml(a: str, b: str, excerpt: str, statement: str, limitation: str,
                                          start: int, length: int) -> None:
    finding = Finding(finding_id=f"fnd_{a}", source_id=f"src_{b}", excerpt=excerpt,
                      location=Location(start=start, end=start + length),
                      statement=statement, limitation=limitation, leaf_id="extract-1")
    data = dump_yaml(finding.model_dump(mode="json"))
    assert Finding.model_validate(load_yaml(data, "x.yaml")) == finding


@given(hex16, st.integers(0, 10**9), st.sampled_from(["text/plain", "text/html", "application/pdf"]),
       st.dates(min_value=date(1990, 1, 1), max_value=date(2100, 1, 1)))
def test_source_round_trips(h: str, size: int, media: MediaType, published: date) -> None:
    record = SourceRecord(source_id=f"src_{h}", url="https://example.org/x", sha256="0" * 64, media_type=media,
                          size=size, retrieved_at=datetime(2026, 1, 1, tzinfo=UTC), fetched_by="agent-a",
                          language="en", rights="public", date=published)
    data = dump_yaml(record.model_dump(mode="json"))
    assert SourceRecord.model_validate(load_yaml(data, "s.yaml")) == record


@given(st.integers(0, 10**6), st.sampled_from(["accepted", "rejected", "crash", "held"]), words)
def test_ledger_row_round_trips_byte_for_byte(seq: int, outcome: Outcome, description: str) -> None:
    row = LedgerRow(seq=seq, prev="a" * 64, at=datetime(2026, 11, 30, 12, tzinfo=UTC), action="submit",
                    outcome=outcome, description=description[:4000], actor="agent-a", actor_type="agent",
                    verifier_version="0.1.0")
    line = row_line(row)
    assert parse_row(line, "ledger") == row
    assert row_line(parse_row(line, "ledger")) == line
    assert line.count(b"\n") == 1


def test_untouched_template_parses_with_defaults() -> None:
    text = (TEMPLATE / "PROJECT.md").read_text().replace("{slug}", "demo")
    project, body = parse_project(text, "PROJECT.md")
    assert project.holds == [] and project.source_policy.allow_domains == []
    assert project.budget_per_loop.tokens == 2_000_000 and project.loop_cadence == "20m"
    assert "steward" in body


def test_broken_project_names_line_and_field() -> None:
    text = (TEMPLATE / "PROJECT.md").read_text().replace("{slug}", "demo").replace("holds: []", "holds: [ nope ]")
    with pytest.raises(FormatError) as info:
        parse_project(text, "PROJECT.md")
    assert info.value.where == "PROJECT.md:5"
    assert "holds.0" in info.value.message


def test_unknown_field_is_an_error() -> None:
    with pytest.raises(FormatError) as info:
        parse_project("---\nproject: demo\ncolour: blue\n---\n", "PROJECT.md")
    assert "colour" in info.value.message and "unknown field" in info.value.message


@pytest.mark.parametrize("text", ["a: &x [1]\nb: *x\n", "a: [" * 40 + "]" * 40, "a: 1\n---\nb: 2\n", "a: [1,\n",
                                  "!!python/object:os.system x\n"])
def test_hostile_yaml_is_refused(text: str) -> None:
    with pytest.raises(FormatError):
        load_yaml(text, "evil.yaml")


def test_every_schema_exports() -> None:
    for name, model in MODELS.items():
        schema = model.model_json_schema()
        assert schema["type"] == "object", name
        json.dumps(schema)
