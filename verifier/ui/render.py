"""Templates to HTML: one Jinja2 environment with autoescaping on for every template, and the
page paths that are the same on the service and in a static site. Pure (templates are package
data).

Page paths, relative to the site root (the service serves each at `/<path>`):

    index.html                                   the project list
    p/<slug>/index.html                          the project page
    p/<slug>/hypotheses.html                     every hypothesis card, in PROJECT.md's order
    p/<slug>/hypotheses/<H>.html                 one card
    p/<slug>/findings/<facet>/<value>/<n>.html   findings, page n; facet all (value all), source,
                                                 operator or hypothesis
    p/<slug>/ledger/<n>.html                     the ledger, newest first, page n
    p/<slug>/holds.html                          the hold queues
    p/<slug>/who/<key>.html                      an operator's or an agent's page

Each page's view-model is also served as JSON at the same path with `.json` for `.html`. Links
between pages are relative, so the same HTML works from the service, any static host or a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from verifier.ui.charts import bar_chart, line_chart

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
STATIC_FILES = ("ui.css", "ui.js")
# No inline script anywhere (inline SVG is markup, not script); styles only from our own file; the
# script may call only this origin (the sign-in and the decisions are same-origin JSON POSTs).
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.globals.update(line_chart=line_chart, bar_chart=bar_chart)
    env.filters["num"] = lambda v: "–" if v is None else (f"{v:.2f}".rstrip("0").rstrip(".")
                                                         if isinstance(v, float) else str(v))
    env.filters["short"] = lambda v: (v or "")[:10]
    return env


ENV = _environment()


def root_of(page_path: str) -> str:
    """The relative prefix from a page back to the site root."""
    return "../" * page_path.count("/")


def render(template: str, model: dict[str, Any], page_path: str) -> str:
    return ENV.get_template(template).render(m=model, root=root_of(page_path), page_path=page_path)


def model_json(model: dict[str, Any]) -> bytes:
    return json.dumps(model, sort_keys=True, indent=1, ensure_ascii=False, default=str).encode("utf-8") + b"\n"


def static_file(name: str) -> bytes | None:
    return (STATIC / name).read_bytes() if name in STATIC_FILES else None
