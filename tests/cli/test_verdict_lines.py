"""One verdict renderer: a verdict shown in-process and the same verdict read back from the
service's JSON print the same lines (`rw submit`, `rw submit --server`, a working folder's submit),
and a pushed commit's `remote:` line is built by the same function."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner

from verifier.cli.verdicts import show_verdict
from verifier.errors import Rejection
from verifier.pipeline.verdict import Verdict, verdict_line
from verifier.writes.push import PushVerdict

REJECTED = Verdict("rejected", "world-model-eval", "extract-1", "agent-a", "", rejections=[
    Rejection("excerpt_not_found", "the excerpt is not in the source", "findings/f_1.md"),
    Rejection("bad_slug", "no such id")])
HELD = Verdict("held", "world-model-eval", None, "alice", "edit of 2 files", commit="a" * 40, holds=["h1"])


def test_a_verdict_read_back_from_json_prints_the_same_lines() -> None:
    for verdict in (REJECTED, HELD):
        assert Verdict.from_json(json.loads(json.dumps(verdict.to_json()))).lines() == verdict.lines()


def test_the_lines_name_the_code_the_place_and_the_reason_then_every_other_rejection() -> None:
    assert REJECTED.lines() == [
        "REJECTED world-model-eval/extract-1 by agent-a: [excerpt_not_found] findings/f_1.md: the excerpt is not "
        "in the source (+1 more)",
        "  also [bad_slug] no such id"]
    assert HELD.lines() == [f"HELD world-model-eval/edit by alice: edit of 2 files -> queue/h1 commit {'a' * 12}"]


def test_show_verdict_prints_text_or_json_and_returns_the_outcome_s_exit_code() -> None:
    @click.command()
    @click.option("--json", "as_json", is_flag=True)
    def show(as_json: bool) -> None:
        raise SystemExit(show_verdict(REJECTED.to_json(), as_json, "sub_1"))

    text = CliRunner().invoke(show, [])
    assert text.exit_code == 1 and text.output.splitlines() == REJECTED.lines()
    shown = CliRunner().invoke(show, ["--json"])
    assert shown.exit_code == 1 and json.loads(shown.output) == {**REJECTED.to_json(), "submission_id": "sub_1"}


def test_a_pushed_commit_s_remote_line_is_the_same_verdict_line() -> None:
    refused = Rejection("verifier_only", "only the verifier writes this file", "scores/use.json")
    line = PushVerdict("9f8e7d6c5b4a" + "0" * 28, "REJECTED", "touch the scores", refused).line()
    assert line == ("REJECTED 9f8e7d6c5b4a touch the scores: [verifier_only] scores/use.json: only the verifier "
                    "writes this file")
    assert line.split(": ", 1)[1] == verdict_line("rejected", "x", [refused]).split(": ", 1)[1]
    landed = PushVerdict("1a2b3c4d5e6f" + "0" * 28, "ACCEPTED", "as abc (edit of 1 file)").line()
    assert landed == "ACCEPTED 1a2b3c4d5e6f as abc (edit of 1 file)"
