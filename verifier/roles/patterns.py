"""The Wiki Maintainer's deterministic pass: sample, find root causes, render pattern pages. Pure.

Input: outcome entries (verifier/roles/outcomes.py) and the events of the sampled traces. Output:
pattern pages `patterns/<kind>/<pattern>.md`, each a failure mode (rejections grouped by rejection
code and the trace step where the leaf went wrong) or a working strategy (what accepted leaves of
the kind did), with trace ids as evidence; the index; one log entry. A model's root-cause text,
when there is one, is passed in as plain strings; nothing here calls out.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from verifier.errors import FormatError
from verifier.formats.frontmatter import load_front_matter
from verifier.formats.yamlout import dump_yaml
from verifier.roles.outcomes import OutcomeEntry

# How many of the newest traces the pass reads per (kind, outcome): failures weigh more, since
# root causes are what the proposer acts on. The budget, not the store's size, bounds a pass.
SAMPLE_PER_OUTCOME = {"rejected": 40, "crash": 40, "accepted": 20, "held": 10}
EVIDENCE_KEPT = 50  # trace ids a page keeps as evidence, newest first
QUOTES_KEPT = 3
_SLUG_RE = re.compile(r"[^a-z0-9]+")
_ID_RE = re.compile(r"(src|fnd|lnk|rev|trc)_[0-9a-f]{8,}")
_SHARD_RE = re.compile(r"/[0-9a-f]{2}/")


@dataclass(frozen=True)
class TraceFacts:
    """What the pass needs from one sampled trace."""

    entry: OutcomeEntry
    tools: tuple[str, ...]  # tool names in call order
    steps: int  # events in the trace
    failing_step: str  # the last tool called before the trace ended ("no tool call" if none)
    where: str | None  # the file or field the rejection named, ids generalised to `*`


@dataclass
class Pattern:
    kind: str
    name: str
    type: str  # "failure" or "strategy"
    title: str
    reason_code: str | None
    failing_step: str | None
    facts: list[TraceFacts]
    contrast: list[str] = field(default_factory=list)
    analysis: str | None = None  # the model's root cause and advice, when a model was asked

    @property
    def path(self) -> str:
        return f"patterns/{self.kind}/{self.name}.md"


def slug(text: str) -> str:
    return _SLUG_RE.sub("-", text.lower()).strip("-")[:60] or "unnamed"


def one_line(text: str, limit: int) -> str:
    """Agent-supplied text as one plain line: no newlines to forge a heading or front matter, no
    backticks or pipes to break the page's code spans and the index table."""
    return " ".join(text.replace("`", "'").replace("|", "/").split())[:limit]


_SHELLS = frozenset({"bash", "shell", "command_execution"})  # tools whose call is a command line
_TWO_WORDS = frozenset({"new", "source", "leaf", "planner", "trace"})  # rw subcommands of two words


def _command_of(content: Mapping[str, object]) -> str | None:
    command = content.get("command")
    payload = content.get("input")
    if command is None and isinstance(payload, dict):
        command = payload.get("command")
    return command if isinstance(command, str) and command.strip() else None


def _command_label(command: str) -> str:
    """What a command line did, without its arguments (ids, paths, slugs): `rw check`, `rw new
    finding`, `git diff`, `curl`."""
    words = command.split()
    if words[0] in ("rw", "git") and len(words) > 1:
        two = len(words) > 2 and words[0] == "rw" and words[1] in _TWO_WORDS
        return " ".join(words[:3] if two else words[:2])
    return words[0].rsplit("/", 1)[-1]


def tool_label(content: object) -> str:
    """A tool call as the page names it: the tool, and for a command (rw's own steps, a shell's
    line) the command it ran, so a page says `rw work -> rw check`, never `rw -> rw`."""
    if not isinstance(content, dict):
        return "tool"
    name = content.get("tool") or content.get("name")
    label = str(name) if name else "tool"
    command = _command_of(content)
    if command is not None:
        ran = _command_label(command if label != "rw" or command.split()[0] == "rw" else f"rw {command}")
        if label == "rw" or label.lower() in _SHELLS:
            label = ran if label == "rw" or ran.startswith(("rw ", "git ")) else f"{label}: {ran}"
    return one_line(label, 60) or "tool"


def bounded_events(events_jsonl: bytes, limit: int, chars: int) -> list[str]:
    """A trace's last `limit` events, each one line of at most `chars` characters, for a model to
    read (the end of a trace is where it went wrong); a first line says how many were left out."""
    lines = [" ".join(line.decode("utf-8", "replace").split()) for line in events_jsonl.split(b"\n") if line.strip()]
    kept = [line if len(line) <= chars else line[:chars - 1] + "\u2026" for line in lines[-limit:]] if limit else []
    left_out = len(lines) - len(kept)
    return ([f"({left_out} earlier events left out)"] if left_out else []) + kept


def facts_from_events(entry: OutcomeEntry, events_jsonl: bytes) -> TraceFacts:
    """Read the tool sequence and the failing step from a trace's events (already validated at ingest)."""
    tools: list[str] = []
    steps = 0
    for line in events_jsonl.split(b"\n"):
        if not line.strip():
            continue
        steps += 1
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "tool_call":
            tools.append(tool_label(event.get("content")))
    return TraceFacts(entry, tuple(tools), steps, tools[-1] if tools else "no tool call",
                      _where(entry.description) if entry.outcome != "accepted" else None)


def _where(description: str) -> str | None:
    head, sep, _rest = description.partition(": ")
    if not sep or " " in head:
        return None
    return _SHARD_RE.sub("/*/", _ID_RE.sub(r"\1_*", head))


def failure_patterns(facts: Iterable[TraceFacts]) -> list[Pattern]:
    """Rejections and crashes grouped by (kind, rejection code, failing step), biggest group first."""
    groups: dict[tuple[str, str, str], list[TraceFacts]] = {}
    for item in facts:
        if item.entry.outcome in ("rejected", "crash"):
            code = item.entry.reason_code or item.entry.outcome
            groups.setdefault((item.entry.kind, code, item.failing_step), []).append(item)
    patterns = [
        Pattern(kind=kind, name=slug(f"{code}-after-{step}"), type="failure",
                title=f"{kind}: `{code}` after `{step}`", reason_code=code, failing_step=step, facts=members)
        for (kind, code, step), members in groups.items()
    ]
    return sorted(patterns, key=lambda p: (-len(p.facts), p.kind, p.name))


def strategy_patterns(facts: Iterable[TraceFacts]) -> list[Pattern]:
    """Per kind, what accepted leaves did: their most common tool sequence."""
    by_kind: dict[str, list[TraceFacts]] = {}
    for item in facts:
        if item.entry.outcome == "accepted":
            by_kind.setdefault(item.entry.kind, []).append(item)
    return [Pattern(kind=kind, name="accepted-workflow", type="strategy", title=f"{kind}: what accepted leaves did",
                    reason_code=None, failing_step=None, facts=members)
            for kind, members in sorted(by_kind.items())]


def add_contrast(failures: list[Pattern], strategies: list[Pattern]) -> None:
    """What accepted leaves of the same kind did differently from each failure group."""
    accepted = {pattern.kind: pattern.facts for pattern in strategies}
    for pattern in failures:
        good = accepted.get(pattern.kind, [])
        if not good:
            pattern.contrast = [f"No accepted {pattern.kind} leaf in the sample to compare with."]
            continue
        bad_tools = {tool for item in pattern.facts for tool in item.tools}
        good_tools = Counter(tool for item in good for tool in set(item.tools))
        missing = [tool for tool, _n in good_tools.most_common() if tool not in bad_tools]
        lines = [f"Accepted {pattern.kind} leaves in the sample: {len(good)} "
                 f"(e.g. {', '.join(item.entry.trace_id for item in good[:3])})."]
        if missing:
            lines.append("They called tools this group never called: " + ", ".join(f"`{t}`" for t in missing[:5]) + ".")
        lines.append(f"Mean events per trace: accepted {_mean(len_steps(good)):.1f}, "
                     f"this group {_mean(len_steps(pattern.facts)):.1f}.")
        pattern.contrast = lines


def len_steps(facts: Iterable[TraceFacts]) -> list[int]:
    return [item.steps for item in facts]


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def _existing_evidence(existing: str | None, where: str) -> tuple[list[str], int]:
    if not existing:
        return [], 0
    try:
        meta, _body = load_front_matter(existing, where)
    except FormatError:
        return [], 0
    if not isinstance(meta, dict):
        return [], 0
    evidence = [str(item) for item in meta.get("evidence", []) if isinstance(item, str)]
    return evidence, int(meta.get("seen", 0) or 0)


def render_page(pattern: Pattern, existing: str | None, now_iso: str) -> str:
    """The page for `pattern`, patching `existing`: evidence is merged, newest first, and `seen` grows."""
    old_evidence, old_seen = _existing_evidence(existing, pattern.path)
    fresh = [item.entry.trace_id for item in sorted(pattern.facts, key=lambda f: f.entry.at, reverse=True)]
    evidence = list(dict.fromkeys(fresh + old_evidence))[:EVIDENCE_KEPT]
    new_ids = [trace for trace in fresh if trace not in old_evidence]
    meta = {"kind": pattern.kind, "pattern": pattern.name, "type": pattern.type, "reason_code": pattern.reason_code,
            "failing_step": pattern.failing_step, "seen": old_seen + len(new_ids), "updated": now_iso,
            "evidence": evidence}
    body = [f"# {pattern.title}", ""]
    body += _failure_body(pattern) if pattern.type == "failure" else _strategy_body(pattern)
    if pattern.analysis:
        body += ["", "## Root cause (model analysis)", "", pattern.analysis.strip()]
    body += ["", "## Evidence", ""]
    body += [f"- {item.entry.trace_id}: {item.entry.project} `{item.entry.leaf_id}`, {item.entry.outcome} "
             f"at {item.entry.at}" for item in sorted(pattern.facts, key=lambda f: f.entry.at, reverse=True)]
    return "---\n" + dump_yaml(meta).decode() + "---\n" + "\n".join(body) + "\n"


def _failure_body(pattern: Pattern) -> list[str]:
    quotes = list(dict.fromkeys(item.entry.description for item in pattern.facts if item.entry.description))
    wheres = Counter(item.where for item in pattern.facts if item.where)
    lines = [f"**Failure mode.** {len(pattern.facts)} sampled {pattern.kind} leaves ended `{pattern.reason_code}`; "
             f"the last tool each called before finishing was `{pattern.failing_step}`.", "",
             "## What the verifier said", ""]
    lines += [f"- {one_line(quote, 400)}" for quote in quotes[:QUOTES_KEPT]]
    if wheres:
        lines += ["", "## Where it failed", ""]
        lines += [f"- `{where}` ({count}x)" for where, count in wheres.most_common(QUOTES_KEPT)]
    lines += ["", f"## What accepted {pattern.kind} leaves did differently", ""]
    lines += [f"- {line}" for line in pattern.contrast]
    return lines


def _strategy_body(pattern: Pattern) -> list[str]:
    sequences = Counter(" -> ".join(item.tools) or "(no tool calls)" for item in pattern.facts)
    calls = Counter(tool for item in pattern.facts for tool in set(item.tools))
    total = len(pattern.facts)
    lines = [f"**Working strategy.** {total} sampled {pattern.kind} leaves were accepted.", "",
             "## Tool calls that mattered", ""]
    lines += [f"- `{tool}`: called in {count} of {total} accepted traces" for tool, count in calls.most_common()]
    if not calls:
        lines.append("- (no tool calls recorded)")
    lines += ["", "## Tool sequences, most common first", ""]
    lines += [f"- `{sequence}` ({count}x)" for sequence, count in sequences.most_common(QUOTES_KEPT)]
    return lines


@dataclass(frozen=True)
class PageMeta:
    path: str
    kind: str
    type: str
    title: str
    seen: int
    updated: str


def page_meta(path: str, text: str) -> PageMeta | None:
    """The index line's data from a page's front matter; None for pages without one (READMEs)."""
    try:
        meta, body = load_front_matter(text, path)
    except FormatError:
        return None
    if not isinstance(meta, dict) or "pattern" not in meta:
        return None
    title = next((line[2:] for line in body.splitlines() if line.startswith("# ")), str(meta["pattern"]))
    return PageMeta(path, str(meta.get("kind")), str(meta.get("type")), title, int(meta.get("seen", 0) or 0),
                    str(meta.get("updated", "")))


def render_index(pages: Iterable[PageMeta]) -> str:
    rows = sorted(pages, key=lambda p: (p.kind, p.type, -p.seen, p.path))
    lines = ["# Pattern index", "", "One line per pattern page, by leaf kind; `seen` counts distinct traces cited.", "",
             "| kind | type | pattern | seen | updated |", "|---|---|---|---|---|"]
    lines += [f"| {p.kind} | {p.type} | [{p.title}]({p.path}) | {p.seen} | {p.updated} |" for p in rows]
    return "\n".join(lines) + "\n"


def log_entry(now_iso: str, sampled: Mapping[tuple[str, str], int], written: list[str], model: str | None) -> str:
    strata = ", ".join(f"{kind}/{outcome} {n}" for (kind, outcome), n in sorted(sampled.items()) if n) or "none"
    pages = ", ".join(written) or "none"
    analysis = f"; root causes by {model}" if model else "; deterministic pass only"
    total = sum(sampled.values())
    return f"\n## {now_iso}\n\n- sampled {total} traces ({strata}){analysis}\n- pages written: {pages}\n"
