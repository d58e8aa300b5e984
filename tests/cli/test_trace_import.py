"""`rw trace import --from claude-stream-json|codex-jsonl` and `rw trace meta` in a working folder
(issue 24 points 1 and 2): events recorded with secrets stripped, the disclosure kept for the
manifest, a malformed line refused by number with nothing recorded, a cut-short last line noted."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import rw_here
from tests.support.transcripts import bare_folder, fixture
from verifier.agentkit.tracing import marker

ENV = {"RW_TOKEN": "rwt_unused"}


def _events(folder: Path) -> list[dict[str, object]]:
    path = folder / ".rw" / "trace" / "events.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_importing_a_claude_transcript_records_its_events_stripped_and_discloses_its_cost(tmp_path: Path) -> None:
    bare_folder(tmp_path)
    ran = rw_here("trace", "import", "--from", "claude-stream-json", str(fixture("claude-stream-extract")),
                  "--json", env=ENV, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    said = json.loads(ran.stdout)
    assert said["recorded"] == 13 and said["outcome"] == "success" and "GitHub Token" in said["stripped"]
    events = _events(tmp_path)
    assert [e["type"] for e in events].count("tool_call") == 4 and events[-1]["type"] == "final"
    text = (tmp_path / ".rw" / "trace" / "events.jsonl").read_text(encoding="utf-8")
    assert "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" not in text and marker("GitHub Token") in text
    meta = json.loads(rw_here("trace", "meta", "--json", env=ENV, cwd=tmp_path).stdout)
    assert meta == {"model": "claude-sonnet-4-5-20250929", "tokens_in": 83798, "tokens_out": 860,
                    "tokens_cached": 72304, "usd": 0.0831275, "duration_s": 48.213, "tokens": None}


def test_a_codex_transcript_leaves_cost_unknown_until_meta_discloses_model_and_duration(tmp_path: Path) -> None:
    bare_folder(tmp_path)
    ran = rw_here("trace", "import", "--from", "codex-jsonl", str(fixture("codex-exec-extract")), env=ENV, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "AKIAZ7QX4M2LRT8VWN3K" not in (tmp_path / ".rw" / "trace" / "events.jsonl").read_text(encoding="utf-8")
    meta = json.loads(rw_here("trace", "meta", "--json", env=ENV, cwd=tmp_path).stdout)
    assert meta["usd"] is None and meta["model"] is None and meta["tokens_in"] == 55865
    rw_here("trace", "meta", "--model", "gpt-5-codex", "--duration", "5m", env=ENV, cwd=tmp_path)
    meta = json.loads(rw_here("trace", "meta", "--json", env=ENV, cwd=tmp_path).stdout)
    assert (meta["model"], meta["duration_s"], meta["usd"], meta["tokens_out"]) == ("gpt-5-codex", 300.0, None, 180)


def test_a_malformed_line_is_refused_with_the_file_and_line_and_nothing_is_recorded(tmp_path: Path) -> None:
    bare_folder(tmp_path)
    lines = fixture("claude-stream-extract").read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join([*lines[:5], "{\"type\": \"user\", oops\n", *lines[5:]]), encoding="utf-8")
    ran = rw_here("trace", "import", "--from", "claude-stream-json", str(bad), env=ENV, cwd=tmp_path)
    assert ran.returncode != 0
    assert f"{bad}: line 6: not JSON" in ran.stderr and "nothing was recorded" in ran.stderr
    assert _events(tmp_path) == []
    assert not (tmp_path / ".rw" / "disclosure.json").exists()


def test_a_cut_short_last_line_is_left_out_and_reported(tmp_path: Path) -> None:
    bare_folder(tmp_path)
    ran = rw_here("trace", "import", "--from", "codex-jsonl", str(fixture("codex-exec-failed")), env=ENV, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "line 13, the last, is cut short" in ran.stderr
    assert len(_events(tmp_path)) == 11


def test_disclosure_flags_are_checked(tmp_path: Path) -> None:
    bare_folder(tmp_path)
    ran = rw_here("trace", "meta", "--duration", "soon", env=ENV, cwd=tmp_path)
    assert ran.returncode != 0 and "--duration 'soon'" in ran.stderr
    ran = rw_here("trace", "meta", "--usd", "-1", env=ENV, cwd=tmp_path)
    assert ran.returncode != 0 and "--usd" in ran.stderr
    assert rw_here("trace", "meta", "--duration", "12.5", env=ENV, cwd=tmp_path).returncode == 0
    assert json.loads(rw_here("trace", "meta", "--json", env=ENV, cwd=tmp_path).stdout)["duration_s"] == 12.5


def test_the_generic_jsonl_import_still_takes_rws_own_events(tmp_path: Path) -> None:
    bare_folder(tmp_path)
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"ts": "2026-11-30T12:00:00Z", "type": "reasoning", "content": "Read it."}) + "\n",
                   encoding="utf-8")
    ran = rw_here("trace", "import", str(own), env=ENV, cwd=tmp_path)
    assert ran.returncode == 0 and ran.stdout.strip() == "recorded 1 event(s)"


def test_a_bad_line_in_rws_own_events_records_none_of_them(tmp_path: Path) -> None:
    bare_folder(tmp_path)
    own = tmp_path / "own.jsonl"
    good = json.dumps({"ts": "2026-11-30T12:00:00Z", "type": "reasoning", "content": "Read it."})
    own.write_text(good + "\n" + json.dumps({"ts": "2026-11-30T12:00:01Z", "type": "musing", "content": "x"}) + "\n",
                   encoding="utf-8")
    ran = rw_here("trace", "import", str(own), env=ENV, cwd=tmp_path)
    assert ran.returncode != 0 and "event line 2" in ran.stderr
    assert _events(tmp_path) == []
