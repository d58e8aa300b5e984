"""The UI's edge: open a project at its tip, derive source text, read the use-score history, and
turn a page path into bytes. The service (`verifier.service.ui_routes`), `rw ui build` and the leak test all
go through `render_path` / `project_files`, so the three see the same pages.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pygit2

from verifier.errors import FormatError, NotFound
from verifier.formats.base import iso
from verifier.formats.source import EXTENSION_BY_MEDIA_TYPE, parse_source
from verifier.formats.usescores import UseSummary
from verifier.state.layout import USE_SCORES, source_bytes_path, source_record_path
from verifier.store.gitrepo import GitTree, ProjectRepo
from verifier.store.home import Home
from verifier.ui import pages
from verifier.ui.readmodel import ProjectReader, TextOf
from verifier.ui.render import model_json, render, static_file
from verifier.ui.router import Lookups, page_model, project_paths

HISTORY_POINTS = 60
CHANGED_PATHS_SHOWN = 500
Deriver = Callable[[str, bytes, str], str]  # (blob id, bytes, media type) -> derived text


def text_reader(view: GitTree, derive: Deriver) -> TextOf:
    """source id -> derived text (None when the source has no quotable text), once per source."""

    @cache
    def text_of(source_id: str) -> str | None:
        record_path = source_record_path(source_id)
        data = view.read(record_path)
        if data is None:
            return None
        try:
            record = parse_source(data, record_path)
            path = source_bytes_path(source_id, EXTENSION_BY_MEDIA_TYPE[record.media_type])
            raw, blob = view.read(path), view.blob_id(path)
            return None if raw is None or blob is None else derive(blob, raw, record.media_type)
        except (FormatError, ValueError):
            return None

    return text_of


def uncached_text(_blob: str, data: bytes, media_type: str) -> str:
    # The extractor brings bs4 and pypdf (a quarter of a second to import): only a reader that
    # derives a text without the home's cache pays for them.
    from verifier.text.extract import extract_text  # noqa: PLC0415

    return extract_text(data, media_type)


def open_reader(repo: ProjectRepo, slug: str, now: datetime, derive: Deriver = uncached_text) -> ProjectReader:
    tip = repo.tip()
    if tip is None:
        raise NotFound(f"project {slug} has no commits yet")
    view = repo.view(tip)
    return ProjectReader(view, slug, now, text_reader(view, derive), commit=tip)


def use_history(repo: ProjectRepo, tip: str, limit: int = HISTORY_POINTS) -> list[tuple[str, UseSummary]]:
    """scores/use.json along the branch's first-parent history, oldest first, at most `limit`
    versions (evenly sampled, the newest always kept)."""
    walker = repo.repo.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    versions: list[tuple[str, str]] = []
    for commit in walker:
        try:
            blob = commit.tree[USE_SCORES].id
        except KeyError:
            continue
        moment = iso(datetime.fromtimestamp(commit.commit_time, UTC))
        if not versions or versions[-1][1] != str(blob):
            versions.append((moment, str(blob)))
        else:
            versions[-1] = (moment, str(blob))  # the oldest commit with this version
    versions.reverse()
    if len(versions) > limit:
        step = len(versions) / limit
        versions = [versions[int(i * step)] for i in range(limit - 1)] + [versions[-1]]
    out: list[tuple[str, UseSummary]] = []
    for moment, blob_id in versions:
        found = repo.repo[blob_id]
        if isinstance(found, pygit2.Blob):
            out.append((moment, UseSummary.parse(found.data, USE_SCORES)))
    return out


def commit_facts(repo: ProjectRepo, sha: str) -> dict[str, Any] | None:
    """A commit's message, author, time and changed paths (against its first parent)."""
    if not repo.has_object(sha):
        return None
    commit = repo.repo[sha]
    if not isinstance(commit, pygit2.Commit):
        return None
    parent = commit.parents[0].tree if commit.parents else None
    diff = commit.tree.diff_to_tree(parent, swap=True) if parent is not None else commit.tree.diff_to_tree(swap=True)
    changed = sorted(delta.new_file.path for delta in diff.deltas)
    return {"commit": str(commit.id), "message": commit.message, "author": commit.author.name,
            "at": iso(datetime.fromtimestamp(commit.commit_time, UTC)),
            "parents": [str(p) for p in commit.parent_ids], "changed": changed[:CHANGED_PATHS_SHOWN],
            "changed_total": len(changed)}


def lookups(repo: ProjectRepo, tip: str | None) -> Lookups:
    history: list[list[tuple[str, UseSummary]]] = []

    def once() -> list[tuple[str, UseSummary]]:
        if not history:
            history.append(use_history(repo, tip) if tip else [])
        return history[0]

    return Lookups(history=once, commit=lambda sha: commit_facts(repo, sha))


def _as(path: str, template: str, model: dict[str, Any]) -> tuple[bytes, str]:
    if path.endswith(".json"):
        return model_json(model), "application/json"
    return render(template, model, path).encode("utf-8"), "text/html; charset=utf-8"


def project_page(reader: ProjectReader, repo: ProjectRepo, path: str) -> tuple[bytes, str] | None:
    """The page at `path` (p/<slug>/..., .html or .json) of the project `reader` reads."""
    prefix = f"p/{reader.slug}/"
    if not path.startswith(prefix):
        return None
    rel = path[len(prefix):]
    html = rel[:-5] + ".html" if rel.endswith(".json") else rel
    found = page_model(reader, html, lookups(repo, reader.commit))
    if found is None:
        return None
    return _as(path, *found)


def projects_page(home: Home, now: datetime, path: str = "index.html",
                  slugs: list[str] | None = None) -> tuple[bytes, str]:
    entries = []
    for slug in slugs if slugs is not None else home.projects():
        try:
            entries.append(pages.project_entry(open_reader(home.project(slug), slug, now)))
        except (NotFound, FormatError):
            continue
    return _as(path, "projects.html", pages.projects_page(entries))


def project_files(reader: ProjectReader, repo: ProjectRepo) -> dict[str, bytes]:
    """Every page of one project as HTML and JSON, by path from the site root."""
    shared = lookups(repo, reader.commit)
    files = {}
    for rel in project_paths(reader):
        found = page_model(reader, rel, shared)
        if found is None:
            continue
        path = f"p/{reader.slug}/{rel}"
        files[path] = _as(path, *found)[0]
        files[path[:-5] + ".json"] = model_json(found[1])
    return files


def build_site(home: Home, slug: str, now: datetime) -> dict[str, bytes]:
    """The static site of one project: its pages, a project list naming it, and the static files."""
    repo = home.project(slug)
    reader = open_reader(repo, slug, now, home.source_text)
    files = project_files(reader, repo)
    files["index.html"] = projects_page(home, now, "index.html", [slug])[0]
    files["index.json"] = projects_page(home, now, "index.json", [slug])[0]
    for name in ("ui.css", "ui.js"):
        files[f"static/{name}"] = static_file(name) or b""
    return files


def write_site(files: dict[str, bytes], out: Path) -> int:
    """Write the built files under `out` (made if missing); returns how many were written."""
    root = out.resolve()
    for path, data in sorted(files.items()):
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            raise FormatError(f"page path {path!r} would leave {out}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return len(files)


def ui_payloads(repo: ProjectRepo, slug: str, now: datetime) -> dict[str, bytes]:
    """Every UI page and its JSON, named `ui:<path>`, for the leak test."""
    if repo.tip() is None:
        return {}
    reader = open_reader(repo, slug, now)
    return {f"ui:{path}": data for path, data in project_files(reader, repo).items()}
