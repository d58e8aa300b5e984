"""Charts as inline SVG, rendered on the server: use score over time (a line) and acceptance by
leaf kind (bars). Pure. Every label is escaped; the SVG uses presentation attributes, never a
`style` attribute or a script, so the page's Content-Security-Policy holds."""

from __future__ import annotations

from markupsafe import Markup, escape

WIDTH, HEIGHT, PAD = 560, 180, 36


def _number(value: float) -> str:
    return f"{value:.1f}"


def line_chart(points: list[tuple[str, float]], label: str) -> Markup:
    """A line over (time label, value) points, oldest first."""
    if not points:
        return Markup('<p class="empty">no history yet</p>')
    top = max(*(v for _, v in points), 1e-9)
    step = (WIDTH - 2 * PAD) / max(1, len(points) - 1)
    xy = [(PAD + i * step, HEIGHT - PAD - (v / top) * (HEIGHT - 2 * PAD)) for i, (_, v) in enumerate(points)]
    path = " ".join(f"{_number(x)},{_number(y)}" for x, y in xy)
    dots = "".join(f'<circle cx="{_number(x)}" cy="{_number(y)}" r="2.5" fill="#1f5f8b"><title>{escape(at)}: '
                   f"{value:g}</title></circle>" for (x, y), (at, value) in zip(xy, points, strict=True))
    first, last = escape(points[0][0][:10]), escape(points[-1][0][:10])
    return Markup(  # noqa: S704 - every text in it went through escape() above
        f'<svg class="chart" role="img" aria-label="{escape(label)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" stroke="#999"/>'
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#999"/>'
        f'<polyline points="{path}" fill="none" stroke="#1f5f8b" stroke-width="2"/>{dots}'
        f'<text x="{PAD}" y="{HEIGHT - 10}" font-size="11" fill="#444">{first}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - 10}" font-size="11" fill="#444" text-anchor="end">{last}</text>'
        f'<text x="{PAD - 4}" y="{PAD + 4}" font-size="11" fill="#444" text-anchor="end">{top:g}</text>'
        f"</svg>")


def bar_chart(rows: list[tuple[str, int, int]], label: str) -> Markup:
    """Horizontal bars of accepted out of total, one per (kind, accepted, total)."""
    if not rows:
        return Markup('<p class="empty">no submissions yet</p>')
    bar_h, gap, left = 18, 8, 90
    height = len(rows) * (bar_h + gap) + gap
    span = WIDTH - left - 90
    parts = []
    for i, (kind, accepted, total) in enumerate(rows):
        y = gap + i * (bar_h + gap)
        share = accepted / total if total else 0.0
        parts.append(
            f'<text x="{left - 6}" y="{y + 13}" font-size="12" fill="#222" text-anchor="end">{escape(kind)}</text>'
            f'<rect x="{left}" y="{y}" width="{span}" height="{bar_h}" fill="#e6e6e6"/>'
            f'<rect x="{left}" y="{y}" width="{_number(span * share)}" height="{bar_h}" fill="#2e7d32">'
            f"<title>{escape(kind)}: {accepted} of {total} accepted</title></rect>"
            f'<text x="{left + span + 6}" y="{y + 13}" font-size="12" fill="#222">{accepted}/{total} '
            f"({share:.0%})</text>")
    return Markup(  # noqa: S704 - every text in it went through escape() above
        f'<svg class="chart" role="img" aria-label="{escape(label)}" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>')
