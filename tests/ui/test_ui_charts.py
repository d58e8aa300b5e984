"""The server-rendered SVG charts: labels are escaped, nothing in them is script or a style
attribute (the CSP forbids both), and the geometry follows the data."""

from __future__ import annotations

import re

from verifier.ui.charts import bar_chart, line_chart

HOSTILE = '<script>alert(1)</script>" onload="x'


def test_chart_labels_are_escaped_and_carry_no_script_or_style() -> None:
    bars = str(bar_chart([(HOSTILE, 1, 2), ("link", 2, 2)], HOSTILE))
    line = str(line_chart([(HOSTILE, 1.0), ("2026-12-01T00:00:00Z", 3.0)], HOSTILE))
    for svg in (bars, line):
        assert "<script" not in svg and 'onload="' not in svg and "style=" not in svg
        assert "&lt;script&gt;" in svg and "&#34;" in svg


def test_bars_are_as_long_as_the_acceptance_rate() -> None:
    svg = str(bar_chart([("extract", 1, 4), ("link", 4, 4)], "rates"))
    assert "1/4 (25%)" in svg and "4/4 (100%)" in svg
    widths = [float(w) for w in re.findall(r'width="([0-9.]+)" height="18" fill="#2e7d32"', svg)]
    assert len(widths) == 2 and widths[1] == 4 * widths[0] > 0


def test_empty_charts_say_so() -> None:
    assert "no history yet" in str(line_chart([], "use"))
    assert "no submissions yet" in str(bar_chart([], "kinds"))


def test_the_line_reaches_the_top_at_the_largest_value() -> None:
    svg = str(line_chart([("a", 0.0), ("b", 2.0), ("c", 1.0)], "use"))
    points = svg.split('points="')[1].split('"', maxsplit=1)[0].split(" ")
    ys = [float(point.split(",")[1]) for point in points]
    assert ys[1] < ys[2] < ys[0]  # SVG's y grows downwards
