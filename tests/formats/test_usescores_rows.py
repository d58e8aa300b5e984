"""The use-score summary's operator rows: the one-pass read of a row as the scorer writes it gives
the same values as the field-by-field checks, and anything else still gets their errors."""

from __future__ import annotations

import json

import pytest

from verifier.errors import FormatError
from verifier.formats.usescores import OperatorUse, UseSummary

WHERE = "scores/use.json"


def _summary(row: object) -> bytes:
    return json.dumps({"operators": {"op": row}}).encode()


def test_a_scorer_written_row_reads_back_to_the_same_bytes() -> None:
    rows = {
        "full": {"accepted_leaves": 3, "accepted_objects": 7, "use_score": 2.25, "tokens": 1200, "usd": 0.5,
                 "tokens_objects": 7, "tokens_undisclosed": 0, "usd_objects": 7, "usd_undisclosed": 0,
                 "usd_per_accepted_object": 0.071429},
        "old": {"accepted_leaves": 1, "accepted_objects": 1, "use_score": 1, "tokens": None, "usd": None},
    }
    data = json.dumps({"hypotheses": {}, "operators": rows, "reports": {},
                       "weights": {"cross_operator": 1.0, "same_operator": 0.25}}, sort_keys=True, indent=1).encode()
    summary = UseSummary.parse(data + b"\n", WHERE)
    assert summary.dump() == data + b"\n"
    assert summary.operators["full"].usd == 0.5 and summary.operators["old"].use_score == 1
    assert summary.operators["old"].tokens_objects is None and summary.operators["old"].has_per_object is False


def test_a_row_missing_its_fields_reads_as_nothing_counted_yet() -> None:
    sparse = UseSummary.parse(_summary({}), WHERE).operators["op"]
    assert sparse == OperatorUse(tokens_objects=None, tokens_undisclosed=None, usd_objects=None, usd_undisclosed=None)
    assert sparse.has_per_object is False and sparse.use_score == 0.0


@pytest.mark.parametrize(("row", "message"), [
    ({"accepted_leaves": True}, "expected an integer, found True"),
    ({"accepted_objects": 1.5}, "expected an integer, found 1.5"),
    ({"use_score": "1"}, "expected a number, found '1'"),
    ({"usd": False}, "expected a number, found False"),
    ({"tokens_objects": None}, "expected an integer, found None"),
    ({"usd_per_accepted_object": [1]}, "expected a number, found [1]"),
    ({"score": 1}, "unknown field 'score'"),
])
def test_a_row_of_another_shape_is_refused_naming_what_is_wrong(row: dict[str, object], message: str) -> None:
    with pytest.raises(FormatError, match=message.replace("[", r"\[").replace("]", r"\]")):
        UseSummary.parse(_summary(row), WHERE)
