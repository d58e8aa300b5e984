"""The evaluation as one self-contained HTML file: the honesty check stated plainly, four plots
drawn by matplotlib as inline SVG, and the tables. Only `rw eval --html` imports this module, so
matplotlib never loads at `rw` start-up.

The SVG is reproducible: no creation date, and element ids hashed from a fixed salt.
"""

from __future__ import annotations

import html
import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: files only

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from verifier.evaluation.report import render_text
from verifier.store.files import write_atomic

matplotlib.rcParams["svg.hashsalt"] = "researchwiki-eval"
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, searchable
SIZE = (7.0, 3.2)


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prologue and doctype: it sits inside HTML


def _day(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%m-%d")


def acceptance_plot(document: dict[str, Any]) -> str:
    figure, axes = plt.subplots(figsize=SIZE)
    for kind, buckets in document["acceptance_over_time"].items():
        xs = [_day(start) for start, _, _ in buckets]
        axes.plot(xs, [k / n for _, k, n in buckets], marker="o", label=f"{kind} (n={sum(n for *_, n in buckets)})")
    axes.set_ylim(-0.05, 1.05)
    axes.set_ylabel("acceptance rate")
    axes.set_xlabel("week starting")
    axes.set_title("Acceptance rate by leaf kind, week by week")
    if document["acceptance_over_time"]:
        axes.legend(fontsize="small")
    return _svg(figure)


def cost_plot(document: dict[str, Any]) -> str:
    figure, axes = plt.subplots(figsize=SIZE)
    models = document["platform"]["by_model"]
    for index, metrics in enumerate(models.values()):
        estimate = metrics["cost_per_accepted_object_usd"]
        if estimate["value"] is None:
            axes.annotate(f"unknown (n={estimate['n']}, {estimate['excluded']} undisclosed)", (index, 0),
                          rotation=90, fontsize="small", va="bottom", ha="center")
            continue
        low, high = estimate["interval"] or [estimate["value"], estimate["value"]]
        axes.bar(index, estimate["value"], color="#4c72b0")
        axes.errorbar(index, estimate["value"], yerr=[[estimate["value"] - low], [high - estimate["value"]]],
                      color="black", capsize=4)
        axes.annotate(f"n={estimate['n']}", (index, high), ha="center", va="bottom", fontsize="small")
    axes.set_xticks(range(len(models)), list(models), rotation=20, ha="right")
    axes.set_ylabel("usd per accepted object")
    axes.set_title("Cost per accepted object by model (95% bootstrap interval)")
    return _svg(figure)


def lift_plot(document: dict[str, Any]) -> str:
    lift = document["lift"]
    figure, axes = plt.subplots(figsize=(SIZE[0], 2.4))
    axes.axvline(lift["kill_line"], color="#c44e52", linestyle="--", label="kill line (lift = 0)")
    overall = lift["overall"]
    if overall["lift"] is not None:
        low, high = lift["interval"] or [overall["lift"], overall["lift"]]
        axes.errorbar([overall["lift"]], [0], xerr=[[overall["lift"] - low], [high - overall["lift"]]], fmt="o",
                      color="black", capsize=5)
        axes.annotate(f"lift {overall['lift']:+.3f}, n={overall['n']} (kill test needs {lift['kill_min_resolved']})",
                      (overall["lift"], 0.1), ha="center")
    else:
        axes.annotate("lift unknown: no resolved hypothesis with a baseline", (0, 0.1), ha="center")
    axes.set_xlim(-1.05, 1.05)
    axes.set_ylim(-0.5, 0.5)
    axes.set_yticks([])
    axes.set_xlabel("pooled lift (95% bootstrap interval)")
    axes.set_title("Lift against the kill line")
    axes.legend(fontsize="small", loc="lower right")
    return _svg(figure)


def signal_plot(document: dict[str, Any]) -> str:
    signal = document["twelve_month_signal"]
    figure, axes = plt.subplots(figsize=SIZE)
    weeks = signal["by_week"]
    axes.bar([w["week_start"][5:] for w in weeks], [w["operators"] for w in weeks], color="#55a868",
             label="unrecruited operators contributing that week")
    axes.axhline(signal["target"], color="#c44e52", linestyle="--", label=f"target ({signal['target']})")
    axes.axhline(signal["count"], color="black", linestyle=":",
                 label=f"contributing every week ({signal['count']})")
    axes.set_xlabel("week starting")
    axes.set_ylabel("operators")
    axes.set_title("The 12-month signal, week by week")
    axes.legend(fontsize="small")
    return _svg(figure)


def _table(groups: dict[str, Any]) -> str:
    def cell(estimate: dict[str, Any]) -> str:
        if estimate["value"] is None:
            text = "unknown"
        else:
            interval = estimate["interval"]
            text = f"{estimate['value']:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")
        extra = f"; {estimate['excluded']} left out" if estimate["excluded"] else ""
        return f"<td>{html.escape(text)}<br><small>n={estimate['n']}{extra}</small></td>"

    columns = ("acceptance_rate", "cost_per_accepted_object_usd", "time_to_accept_s", "use_per_accepted_object",
               "resolution_accuracy")
    head = "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in columns)
    rows = "".join(f"<tr><th>{html.escape(label)}</th>{''.join(cell(m[c]) for c in columns)}</tr>"
                   for label, m in groups.items())
    return f"<table><tr><th></th>{head}</tr>{rows}</table>"


STYLE = ("body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}"
         "table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid #ccc;padding:.3rem;text-align:left}"
         ".kill{font-size:1.2rem;font-weight:bold}pre{white-space:pre-wrap;font-size:.8rem}")


def render_html(document: dict[str, Any]) -> str:
    lift = document["lift"]
    sections = [
        f"<p class=kill>{html.escape(lift['statement'])}</p>",
        "<h2>Acceptance over time</h2>", acceptance_plot(document),
        "<h2>Cost by model</h2>", cost_plot(document),
        "<h2>Lift</h2>", lift_plot(document),
        "<h2>The 12-month signal</h2>", signal_plot(document),
        "<h2>Per leaf kind (platform)</h2>", _table(document["platform"]["by_kind"]),
        "<h2>Per model (platform)</h2>", _table(document["platform"]["by_model"]),
        "<h2>Everything, as text</h2>", f"<pre>{html.escape(render_text(document))}</pre>",
    ]
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><title>ResearchWiki swarm evaluation</title>"
            f"<style>{STYLE}</style></head><body><h1>Swarm evaluation at {html.escape(document['now'])}</h1>"
            + "\n".join(sections) + "</body></html>\n")


def write_html(document: dict[str, Any], path: Path) -> None:
    write_atomic(path, render_html(document).encode("utf-8"))
