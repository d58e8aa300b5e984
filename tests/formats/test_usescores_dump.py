"""The use-score summary's dump: written row by row (the text of rows a landing did not touch
taken as it was), it is the bytes of json.dumps of the whole summary, for any summary."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.formats.usescores import OperatorUse, UseSummary, row_text

NUMBERS = st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
COUNTS = st.none() | st.integers(0, 10**6)
ROWS = st.builds(OperatorUse, accepted_leaves=st.integers(0, 99), accepted_objects=st.integers(0, 99),
                 use_score=NUMBERS, tokens=st.none() | NUMBERS, usd=st.none() | NUMBERS, tokens_objects=COUNTS,
                 tokens_undisclosed=COUNTS, usd_objects=COUNTS, usd_undisclosed=COUNTS,
                 usd_per_accepted_object=st.none() | NUMBERS, has_per_object=st.booleans())
NAMES = st.text(max_size=6)
SUMMARIES = st.builds(UseSummary, hypotheses=st.dictionaries(NAMES, NUMBERS, max_size=4),
                      reports=st.dictionaries(NAMES, NUMBERS, max_size=4),
                      operators=st.dictionaries(NAMES, ROWS, max_size=5),
                      weights=st.dictionaries(NAMES, NUMBERS, max_size=3))


@settings(max_examples=150, deadline=None)
@given(SUMMARIES, st.data())
def test_the_summary_dumped_row_by_row_is_json_dumps_of_it_whole(summary: UseSummary, data: st.DataObject) -> None:
    whole = json.dumps(summary.to_json(), sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False).encode()
    whole += b"\n"
    assert summary.dump() == whole
    known = {name: row_text(row) for name, row in summary.operators.items() if data.draw(st.booleans())}
    assert summary.dump(known) == whole
    assert UseSummary.parse(whole, "scores/use.json").dump() == whole
