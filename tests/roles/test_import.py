"""`rw import`: loose hypotheses from a plain list, a YAML or a CSV file, into a new project or, as
a person's edit through the verifier, into an existing one; the Planner then asks about the
ones without a resolution and plans on the ones with one."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.world import NOW, SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.errors import FormatError
from verifier.formats.project import parse_project
from verifier.roles.importing import hypothesis_file, parse_import, with_hypotheses
from verifier.roles.planner import local_commons, wake
from verifier.state.layout import PROJECT_FILE
from verifier.state.project import current_hypothesis

assert COMMAND_MODULES  # the commands register on import

CSV = (b"statement,criterion,check_date,measure\n"
       b"Robots ship with verifiers,\"Half of 2027 launches name one\",2027-12-31,Count launch notes\n"
       b"Clips get cheap,,,\n")


def rw(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_the_three_formats_parse() -> None:
    assert [i.statement for i in parse_import(b"# theses\nOne thing\n\nAnother thing\n", "list.txt")] == [
        "One thing", "Another thing"]
    items = parse_import(CSV, "theses.csv")
    assert items[0].check_date == date(2027, 12, 31) and items[1].criterion is None
    yaml = b"- statement: A\n  criterion: C\n  check_date: 2027-01-01\n  measure: M\n  imported_from: THESES.md#D2\n"
    assert parse_import(yaml, "t.yaml")[0].imported_from == "THESES.md#D2"


@pytest.mark.parametrize(("data", "name", "expected"), [
    (b"statement,criterion\nA,only a criterion\n", "t.csv", "row 2: has criterion but not check_date, measure"),
    (b"- statement: A\n  check_date: soon\n  criterion: c\n  measure: m\n", "t.yaml", "is not a date"),
    (b"- statment: typo\n", "t.yaml", "unknown field 'statment'"),
    (b"\n# nothing\n", "t.txt", "lists no hypotheses"),
    # Read one way here and another by the steward's spreadsheet, or not text at all: refused, named.
    (b"statement,statement\nA,B\n", "t.csv", "row 1: the header names 'statement' twice"),
    (b"statement\nA,extra\n", "t.csv", "row 2: 2 fields under a header of 1"),
    (b"statement\n" + b"x" * 200_000 + b"\n", "t.csv", "not CSV: field larger than field limit"),
    (b"- statement: 12\n", "t.yaml", "item 1: statement must be text, not int"),
    (b"One thing\na\x00b\n", "t.txt", "line 2: statement holds a control character \\(U\\+0000\\)"),
    (b"One thing\nescape \x1b[2J\n", "t.txt", "line 2: statement holds a control character"),
])
def test_bad_lists_are_refused_by_row(data: bytes, name: str, expected: str) -> None:
    with pytest.raises(FormatError, match=expected):
        parse_import(data, name)


def test_a_statement_too_long_for_a_hypothesis_names_its_line() -> None:
    (item,) = parse_import(b"x" * 300_000 + b"\n", "list.txt")
    with pytest.raises(FormatError, match=r"list.txt: line 1: statement: String should have at most"):
        hypothesis_file("H1", item)


def test_the_hypotheses_line_is_rewritten_and_nothing_else() -> None:
    before = b"---\nproject: p\nhypotheses: [ H1 ]   # order\nholds: []\n---\nBody.\n"
    assert with_hypotheses(before, ["H1", "H2"]) == b"---\nproject: p\nhypotheses: [ H1, H2 ]\nholds: []\n---\nBody.\n"


def test_import_creates_a_project_and_the_planner_asks_about_the_loose_one(world: World, tmp_path: Path) -> None:
    source = tmp_path / "theses.csv"
    source.write_bytes(CSV)
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z"}
    code, out = rw(env, "import", "compass-theses", str(source))
    assert code == 0, out
    repo = world.home.project("compass-theses")
    view = repo.view(repo.tip())
    project, _ = parse_project(view.read(PROJECT_FILE) or b"", PROJECT_FILE)
    assert project.hypotheses == ["H1", "H2"]
    first, second = current_hypothesis(view, "H1"), current_hypothesis(view, "H2")
    assert first is not None and second is not None
    assert (first.status, first.resolution is not None, second.resolution) == ("loose", True, None)
    result = wake(world.home, "compass-theses", NOW, commons=local_commons(world.home))
    assert result.plan is not None
    assert result.plan.targets == ["H1"] and [q.hypothesis_id for q in result.plan.questions] == ["H2"]


def test_import_into_an_existing_project_is_a_persons_edit(world: World, tmp_path: Path) -> None:
    source = tmp_path / "more.txt"
    source.write_text("Verification layers get cheaper every quarter\n")
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30T12:00:00Z", "RW_TOKEN": world.agent.token}
    code, out = rw(env, "import", SLUG, str(source))
    assert code == 1 and "REJECTED" in out  # an agent's token: a person's edit only (the ledger keeps the attempt)
    assert world.repo.view(world.tip()).read("hypotheses/H4.md") is None
    env["RW_TOKEN"] = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)  # the steward
    code, out = rw(env, "import", SLUG, str(source))
    assert code == 0, out
    view = world.repo.view(world.tip())
    assert parse_project(view.read(PROJECT_FILE) or b"", PROJECT_FILE)[0].hypotheses == ["H1", "H2", "H3", "H4"]
    h4 = current_hypothesis(view, "H4")
    assert h4 is not None and h4.statement == "Verification layers get cheaper every quarter"
