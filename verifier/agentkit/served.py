"""What the service hands the agent's client, checked before the client acts on it.

The client trusts nothing it is served: a leaf id becomes a folder name, a source id a file name,
a base revision a git argument, a handle a manifest field. Each is checked with the verifier's own
rule (the leaf contract's model, `formats.ids` for ids, `patch.paths` for object paths, the handle
pattern), so a served `../x`, `/abs`, `--option` or a payload for another leaf is refused by name
before anything is written or cloned. Pure: values in, checked values or `Untrusted` out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from verifier.errors import FormatError
from verifier.formats.base import HANDLE_RE
from verifier.formats.ids import SOURCE_ID_RE
from verifier.formats.leaf import LeafContract
from verifier.formats.skill import sections, skill_version
from verifier.patch.paths import path_problem

# The leaf id rule of formats.leaf (LeafId), which also names leaves/<leaf_id>.yaml.
LEAF_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{2,63}$")
_HANDLE = re.compile(HANDLE_RE)
_SHOWN = 80


class Untrusted(ValueError):  # noqa: N818 - names the refusal the caller reports
    """A served value the client refuses: the message names the field, what came and the rule."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def leaf_id(value: object, where: str) -> str:
    if not isinstance(value, str) or not LEAF_ID_RE.match(value):
        raise Untrusted(f"{where}: leaf id {_shown(value)} is not a leaf id (a-z, 0-9 and '-', 3-64 characters)")
    return value


def source_id(value: object, where: str) -> str:
    if not isinstance(value, str) or not SOURCE_ID_RE.match(value):
        raise Untrusted(f"{where}: source id {_shown(value)} is not a source id (src_ and 16 hex digits)")
    return value


def handle(value: object, where: str) -> str:
    if not isinstance(value, str) or not _HANDLE.match(value):
        raise Untrusted(f"{where}: handle {_shown(value)} is not a handle (a-z, 0-9, '_', '.', '-')")
    return value


def object_path(value: object, where: str) -> str:
    problem = path_problem(value) if isinstance(value, str) else None
    if not isinstance(value, str) or problem is not None:
        reason = problem.message if problem is not None else "not a string"
        raise Untrusted(f"{where}: object path {_shown(value)} refused ({reason})")
    return value


@dataclass(frozen=True)
class Identity:
    agent: str
    operator: str


def whoami(body: Mapping[str, object]) -> Identity:
    """The /whoami answer: the caller's handle and operator, both handles."""
    return Identity(handle(body.get("agent"), "/whoami agent"), handle(body.get("operator"), "/whoami operator"))


@dataclass(frozen=True)
class ServedLeaf:
    """A leaf payload the client may act on: the contract as the verifier's model reads it, and the
    ids of the sources whose text it fetches (each a checked source id)."""

    contract: LeafContract
    source_ids: list[str]


def _source_ids(payload: Mapping[str, object], contract: LeafContract) -> list[str]:
    """The sources whose text the agent needs: the extract leaf's source, a reviewed finding's."""
    found: list[str] = [contract.inputs.source_id] if contract.inputs.source_id else []

    def walk(value: object, where: str) -> None:
        if isinstance(value, dict):
            if "source_id" in value:
                checked = source_id(value["source_id"], f"{where}.source_id")
                if checked not in found:
                    found.append(checked)
            for key, item in value.items():
                walk(item, f"{where}.{key}")
        elif isinstance(value, list):
            for number, item in enumerate(value):
                walk(item, f"{where}[{number}]")

    walk(payload.get("inputs", {}), "payload inputs")
    return found


def leaf_payload(payload: Mapping[str, object], claimed: str) -> ServedLeaf:
    """The payload of leaf `claimed`, refused unless its contract is a valid contract of that leaf."""
    raw = payload.get("contract")
    if not isinstance(raw, dict):
        raise Untrusted("payload: no contract object")
    try:
        contract = LeafContract.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise Untrusted(f"payload contract.{field}: {first['msg']} (got {_shown(first.get('input'))})") from None
    if contract.leaf_id != claimed:
        raise Untrusted(f"payload contract.leaf_id: {_shown(contract.leaf_id)} is not the leaf claimed, {claimed!r}")
    if contract.inputs.object_path is not None:
        object_path(contract.inputs.object_path, "payload contract.inputs.object_path")
    guide = payload.get("field_guide", "")
    if not isinstance(guide, str):
        raise Untrusted("payload field_guide: not a string")
    return ServedLeaf(contract, _source_ids(payload, contract))


LEVEL_RANK = {"L1": 1, "L2": 2, "L3": 3}


def live_skill(body: Mapping[str, object]) -> tuple[bytes, str]:
    """`GET /skill`'s answer: the skill's bytes and their version, which must be the version the
    service named (computed here from the bytes, never taken on its word)."""
    text = body.get("text")
    if not isinstance(text, str) or not text:
        raise Untrusted("GET /skill: no skill text")
    data = text.encode("utf-8")
    try:
        sections(text, "the served skill")
    except FormatError as exc:
        raise Untrusted(f"GET /skill: the served skill is not a skill file: {exc}") from exc
    version = skill_version(data)
    if body.get("skill_version") != version:
        raise Untrusted(f"GET /skill: the service names version {_shown(body.get('skill_version'))} "
                        f"but the text it sent is {version}")
    return data, version


def trace_level_asked(payload: Mapping[str, object]) -> str | None:
    """The trace level the leaf asks for (`trace_level` in the payload), checked; None when none."""
    value = payload.get("trace_level")
    if value is None:
        return None
    if value not in LEVEL_RANK:
        raise Untrusted(f"payload: trace_level {_shown(value)} is not one of L1, L2, L3")
    return str(value)
