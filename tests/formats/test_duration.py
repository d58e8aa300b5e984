"""One reader of durations (`90s`, `15m`, `1h`, `7d`) for every option and field that takes one."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.errors import FormatError
from verifier.formats.duration import parse_duration
from verifier.roles.planning import cadence

ROOT = Path(__file__).resolve().parents[2]


def test_each_unit_reads_as_its_seconds() -> None:
    assert [parse_duration(t) for t in ("90s", "15m", "1h", "7d", "0s")] == [
        timedelta(seconds=90), timedelta(minutes=15), timedelta(hours=1), timedelta(days=7), timedelta(0)]
    assert cadence("20m") == timedelta(minutes=20)  # PROJECT.md's loop_cadence goes through the same reader


@pytest.mark.parametrize("text", ["", "15", "m", "1.5h", "15M", "1 h", "-1m", "15m\n", "\u0661\u0665m", "1234567s",
                                  "15mm", "0x1h"])
def test_anything_else_is_refused_naming_the_option(text: str) -> None:
    with pytest.raises(FormatError, match="--limit"):
        parse_duration(text, "--limit")


def test_a_pause_or_a_limit_must_be_more_than_nothing() -> None:
    with pytest.raises(FormatError, match="positive"):
        parse_duration("0m", "--every", positive=True)
    assert parse_duration("1s", "--every", positive=True) == timedelta(seconds=1)


@given(st.integers(0, 999_999), st.sampled_from([("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]))
def test_written_and_read_back_agree(number: int, unit: tuple[str, int]) -> None:
    assert parse_duration(f"{number}{unit[0]}").total_seconds() == number * unit[1]


def test_no_other_module_keeps_a_table_of_duration_units() -> None:
    unit_table = re.compile(r"""["']h["']\s*:\s*3600""")
    holders = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "verifier").rglob("*.py")
                     if unit_table.search(path.read_text(encoding="utf-8")))
    assert holders == ["verifier/formats/duration.py"]
