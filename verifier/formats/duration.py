"""Durations as people write them (`90s`, `15m`, `1h`, `7d`): the one reader of every option and
field that takes one (`--retry-for`, `--ttl`, `--expires-in`, `--every`, `--limit`, PROJECT.md's
`loop_cadence`). Pure."""

from __future__ import annotations

import re
from datetime import timedelta

from verifier.errors import FormatError

# At most six digits: a million days is already past any date a datetime can hold.
_DURATION = re.compile(r"([0-9]{1,6})([smhd])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str, what: str = "duration", *, positive: bool = False) -> timedelta:
    """`text` as a duration; `what` names the option or field in the error. `positive` refuses
    zero (a pause or a limit of nothing); a retry window of `0s` means "do not retry"."""
    found = _DURATION.fullmatch(text)
    if found is None or (positive and int(found[1]) == 0):
        least = "a positive number" if positive else "a number"
        raise FormatError(f"{what} {text!r}: expected {least} and s, m, h or d, like 90s or 15m")
    return timedelta(seconds=int(found[1]) * _UNIT_S[found[2]])
