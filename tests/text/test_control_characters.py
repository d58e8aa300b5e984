"""The rule for text others' terminals and logs print (verifier.text.visible.control_problem): no
control character but the tab (and line feeds where lines are allowed), no bidirectional override;
what is wrong is named with its code point and position. Applied to reasons, thread messages and
a trace manifest's model and skill version; and what was stored before the rule, or is quoted by a
refusal, is printed with those characters as escapes (`shown`)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from tests.support.world import SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.errors import FormatError
from verifier.formats.trace import TraceManifest
from verifier.service.schemas import ThreadPost
from verifier.text.visible import control_problem, require_reason, shown

assert COMMAND_MODULES  # the commands register on import

MANIFEST = {"leaf_id": "extract-1", "agent": "agent-a", "operator": "op-a", "base_revision": "a" * 40,
            "skill_version": "sk-0123456789ab", "level": "L1"}


@pytest.mark.parametrize(("text", "lines", "seen"), [
    ("one\ntwo", False, "a line break (U+000A) at character 4"),
    ("a\r\nb", False, "a line break (U+000D) at character 2"),
    ("over\rwrite", True, "a line break (U+000D) at character 5"),
    ("clear \x1b[2J", True, "a control character (U+001B) at character 7"),
    ("nul\x00", True, "a control character (U+0000)"),
    ("c1 \x9b", True, "a control character (U+009B)"),
    ("\u2066isolate", True, "a bidirectional control (U+2066) at character 1"),
    ("para\u2029graph", True, "a line break (U+2029)"),
])
def test_what_acts_on_a_terminal_is_named_where_it_is(text: str, lines: bool, seen: str) -> None:
    problem = control_problem(text, lines=lines)
    assert problem is not None and problem.startswith("holds ") and seen in problem, problem


@pytest.mark.parametrize("text", ["plain", "tab\there", "Grüße, 東京, مرحبا", "zero\u200bwidth", "mark\u200f"])
def test_plain_text_in_any_script_passes(text: str) -> None:
    assert control_problem(text) is None


def test_lines_allow_line_feeds_and_crlf_only() -> None:
    assert control_problem("one\ntwo\r\nthree", lines=True) is None
    assert control_problem("one\ntwo", lines=False) is not None


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Zl", "Zp", "Cs"))))
def test_text_without_controls_or_format_characters_always_passes(text: str) -> None:
    assert control_problem(text, lines=True) is None and control_problem(text) is None


def test_a_reason_is_one_line() -> None:
    with pytest.raises(FormatError) as info:
        require_reason("undo\nOperator: someone-else", "a revert")
    assert info.value.message.startswith("a revert needs a reason of plain text on one line")


@pytest.mark.parametrize("field", ["model", "skill_version"])
def test_a_manifest_label_with_a_control_or_override_is_refused(field: str) -> None:
    with pytest.raises(ValueError, match="must be one line of plain text; it holds"):
        TraceManifest.model_validate({**MANIFEST, field: "sk-\u202eforged\u0007"})
    assert TraceManifest.model_validate({**MANIFEST, field: "gpt-5.1 codex"})


def test_a_thread_message_keeps_its_lines_but_not_escape_sequences() -> None:
    assert ThreadPost.model_validate({"body": "a question\nwith two lines"})
    with pytest.raises(ValueError, match="must be plain text; it holds a control character"):
        ThreadPost.model_validate({"body": "hi \u001b]0;title\u0007"})


def test_shown_writes_what_acts_as_its_escape_and_leaves_the_rest() -> None:
    assert shown("plain, Grüße") == "plain, Grüße"
    assert shown("a\x1b[2Jb\u202ec\nd") == "a\\x1b[2Jb\\u202ec\\nd"
    assert shown("one\ntwo\r\nthree\rfour", lines=True) == "one\ntwo\r\nthree\\rfour"


def test_rw_ledger_prints_a_refusal_quoting_an_escape_sequence_safely(world: World) -> None:
    world.leaf("extract-1")
    submission = world.extract("extract-1")
    manifest = json.loads(submission.bundle["manifest.json"])
    manifest["\x1b]0;pwned\x07"] = 1  # an unknown field, named by the refusal, kept in the ledger
    refused = world.submit(replace(submission, bundle={**submission.bundle,
                                                       "manifest.json": json.dumps(manifest).encode()}))
    assert refused.outcome == "rejected"
    result = CliRunner().invoke(cli, ["ledger", SLUG], env={"RW_HOME": str(world.home.root)})
    assert result.exit_code == 0 and "\\x1b]0;pwned\\x07" in result.output, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
