"""Creating a project and writing leaf contracts: verifier commits with their ledger rows.

`init_project` makes the bare repository and its first commit from a template folder (the
built-in one, or a fixture project); `add_leaf` writes leaves/<id>.yaml as the Planner's write
path. Both validate what they write with the same models the pipeline reads with. A new leaf is
refused (`key_held`) when an open leaf, or one waiting in a held plan, already holds one of its
keys (design §5.4: leaves are disjoint by construction; the keys are the Planner's,
roles.planning), naming that leaf.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from verifier.checks.failed_sources import extract_refusal
from verifier.errors import AuthError, ConflictError, FormatError, InvalidRequest
from verifier.formats.base import HANDLE_RE, check_slug
from verifier.formats.duration import parse_duration
from verifier.formats.entries import InitEntry, LeafEntry
from verifier.formats.leaf import LeafContract
from verifier.formats.project import parse_project
from verifier.formats.yamlout import dump_yaml
from verifier.patch.paths import path_problem
from verifier.pipeline.landing import Landed
from verifier.pipeline.secrets_gate import refuse_secret_files
from verifier.pipeline.writer import ProjectWriter
from verifier.roles.leafgate import input_problems
from verifier.roles.planning import Settings, leaf_keys
from verifier.roles.planstate import read_state
from verifier.state.layout import (
    LEAVES_DIR,
    PROJECT_FILE,
    classify,
    default_write_rules,
    is_verifier_only,
    leaf_path,
)
from verifier.store.audit import Door
from verifier.store.home import Home
from verifier.store.hooks import install_hooks
from verifier.store.identities import Actor
from verifier.writes.authority import enforce_at


class KeyHeld(ConflictError):  # noqa: N818 - reads as the condition it reports
    """A new leaf would hold a key an open leaf already holds."""

    code = "key_held"


TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "project"


_STEWARD_LINE = re.compile(rb"^steward:.*$", re.MULTILINE)


def _named_steward(data: bytes, steward: str) -> bytes:
    """PROJECT.md with its `steward:` line naming `steward` (the admin names the first one)."""
    if not re.match(HANDLE_RE, steward):
        raise FormatError(f"steward {steward[:70]!r} must be a handle: 1-63 of a-z, 0-9, '_', '.', '-'", "--steward")
    named, count = _STEWARD_LINE.subn(b"steward: " + steward.encode(), data, count=1)
    if count == 0:
        raise FormatError("the template's PROJECT.md has no `steward:` line to name the steward in", PROJECT_FILE)
    return named


def _template_files(folder: Path, slug: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            raise FormatError("symbolic links are not allowed in a project template", str(path))
        if not path.is_file():
            continue
        relative = path.relative_to(folder).as_posix()
        problem = path_problem(relative)
        if problem is not None:
            raise FormatError(problem.message, str(path))
        if is_verifier_only(relative) and not relative.startswith(f"{LEAVES_DIR}/"):
            raise FormatError("the verifier writes this path itself", str(path))
        data = path.read_bytes()
        if relative == PROJECT_FILE:
            data = data.replace(b"{slug}", slug.encode())
        files[relative] = data
    if PROJECT_FILE not in files:
        raise FormatError(f"a project template needs {PROJECT_FILE}", str(folder))
    project, _ = parse_project(files[PROJECT_FILE], PROJECT_FILE)
    if project.project != slug:
        raise FormatError(f"project is {project.project!r}, expected {slug!r}", PROJECT_FILE)
    return files


def init_project(home: Home, slug: str, *, now: datetime, template: Path | None = None,
                 steward: str = "verifier", first_steward: str | None = None) -> Landed:
    """Create projects/<slug>.git with one commit holding the template and ledger row 0. The
    home's admin creates projects (at its shell: `rw init`) and names the first steward
    (`first_steward`, written into PROJECT.md's `steward:`; docs/authority.md)."""
    check_slug(slug)
    files = _template_files(template or TEMPLATE, slug)
    if first_steward is not None:
        files[PROJECT_FILE] = _named_steward(files[PROJECT_FILE], first_steward)
        if parse_project(files[PROJECT_FILE], PROJECT_FILE)[0].steward != first_steward:
            raise FormatError("the steward could not be named in the template's PROJECT.md", PROJECT_FILE)
    for relative in files:
        kind = classify(relative)
        if kind is not None and kind.type == "finding":
            raise FormatError("a new project starts without findings", relative)
    with ProjectWriter.create(home, slug) as writer:
        install_hooks(home.root, writer.repo.path)  # the verifier is the only writer: pushes are refused
        return writer.land(InitEntry(at=now, actor=steward, actor_type="verifier",
                                     description=f"project {slug} created from {(template or TEMPLATE).name}"),
                           bookkeeping=dict(files))


def add_leaf(home: Home, slug: str, contract: LeafContract, *, now: datetime, actor: str,
             actor_type: Literal["planner", "verifier", "human"] = "planner", disjoint: bool = True,
             person: Actor | None = None, door: Door = "cli") -> Landed:
    """Write leaves/<leaf_id>.yaml as a verifier commit (`rw leaf add`, the demo). With
    `disjoint` (the default) a key an open leaf holds is refused (`KeyHeld`); a harness that
    replays pinned leaves one by one on one source (the validation set) passes False. A person's
    leaf (`actor_type` human) names the authenticated `person`, who must be the project's
    steward or a maintainer (docs/authority.md)."""
    if actor_type == "human" and (person is None or person.handle != actor):
        raise AuthError("a person's leaf names the authenticated person who writes it")
    for rule in contract.may_write:
        if is_verifier_only(rule.path.replace("*", "x")) or rule.path.startswith(("*", "**")):
            raise FormatError(f"may_write rule {rule.path!r} would reach files only the verifier writes")
    with ProjectWriter.open(home, slug) as writer:
        if person is not None:
            enforce_at(home, slug, writer.view(), person, "add_leaf", now=now, door=door)
        if writer.view().read(leaf_path(contract.leaf_id)) is not None:
            raise ConflictError(f"leaf {contract.leaf_id} already exists")
        assert writer.tip is not None
        if (refusal := extract_refusal(writer.view(), contract)) is not None:
            raise ConflictError(refusal)  # no extract leaf on a failed source
        if not writer.repo.is_ancestor(contract.base_revision, writer.tip):
            raise FormatError(f"base_revision {contract.base_revision} is not on the branch")
        open_leaves = [] if not disjoint else read_state(writer.view(), slug, writer.tip, now, settings=Settings(),
                                 asked=lambda _h, _r: False).state.open_leaves
        holders = {key: leaf.leaf_id for leaf in open_leaves for key in leaf.keys}
        taken = sorted(key for key in leaf_keys(contract) if key in holders)
        if taken:
            raise KeyHeld(f"key_held: leaf {contract.leaf_id} would hold {taken[0]}, which open leaf "
                          f"{holders[taken[0]]} already holds (leaves are disjoint by construction, design §5.4); "
                          f"wait until {holders[taken[0]]} closes or expires, or work on that leaf")
        body = contract.model_dump(mode="json", exclude_none=True)
        refuse_secret_files({leaf_path(contract.leaf_id): dump_yaml(body)})  # a leaf is shown to every agent
        return writer.land(LeafEntry(at=now, leaf_id=contract.leaf_id, kind=contract.kind, actor=actor,
                                     actor_type=actor_type,
                                     description=f"leaf {contract.leaf_id} ({contract.kind}) written"),
                           bookkeeping={leaf_path(contract.leaf_id): dump_yaml(body)})


@dataclass(frozen=True)
class LeafRequest:
    """What a person asks for in `rw leaf add` or `POST /projects/{slug}/leaves`: the kind, its
    inputs, and optionally the id, the base revision, the lifetime and a title."""

    kind: str
    leaf_id: str | None = None
    source_id: str | None = None
    hypothesis_id: str | None = None
    revision: int | None = None
    gap: str | None = None
    object_path: str | None = None
    finding_ids: tuple[str, ...] = ()
    base: str | None = None
    expires_in: str = "24h"
    title: str | None = None


def person_leaf(home: Home, slug: str, person: Actor, request: LeafRequest, *, now: datetime,
                door: Door = "cli") -> LeafContract:
    """Write a person's leaf (the steward's or a maintainer's, docs/authority.md): the contract
    built from the request, every input present at the base revision, landed by `add_leaf`."""
    if person.type != "human":
        raise AuthError(f"{person.handle} is an agent; only a person writes leaves by hand "
                        "(register one with `rw agent add HANDLE --operator OP --human`)")
    repo = home.project(slug)
    base_revision = str(repo.commit(request.base).id) if request.base else repo.tip()
    inputs = {"source_id": request.source_id, "hypothesis_id": request.hypothesis_id,
              "hypothesis_revision": request.revision, "gap": request.gap, "object_path": request.object_path}
    chosen: dict[str, object] = {k: v for k, v in inputs.items() if v is not None}
    if request.finding_ids:
        chosen["finding_ids"] = list(request.finding_ids)
    body = {
        "kind": request.kind, "title": request.title, "inputs": chosen,
        "base_revision": base_revision, "check": request.kind, "created_at": now, "created_by": person.handle,
        "expires_at": now + parse_duration(request.expires_in, "expires_in", positive=True),
        "may_write": [rule.model_dump() for rule in default_write_rules(request.kind)],  # type: ignore[arg-type]
    }
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    try:
        contract = LeafContract.model_validate({**body, "leaf_id": request.leaf_id or f"{request.kind}-{digest[:10]}"})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "leaf"
        raise InvalidRequest(f"invalid leaf: {field}: {first['msg']}", "leaf") from exc
    problems = input_problems(repo.view(base_revision), contract)
    if problems:
        raise InvalidRequest("refused: " + "; ".join(problems), f"leaf {contract.leaf_id}")
    add_leaf(home, slug, contract, now=now, actor=person.handle, actor_type="human", person=person, door=door)
    return contract
