"""A project with its people, for the authority tests and scripts/bench_people.py: the demo
project's steward (ericxtang), a maintainer the steward names in PROJECT.md, another person who
holds no role, an admin named in config.json, and held objects waiting in the queue.

Held sources are planted by one verifier landing (as a scout leaf's held sources land), so a test
or a benchmark has as many distinct held objects as it asks for without running scouts."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from tests.support.graph import edit_file, read
from tests.support.world import NOW, SLUG, World
from verifier.formats.entries import LeafEntry
from verifier.formats.ids import source_id_for
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.writer import ProjectWriter
from verifier.state.layout import queue_path, source_bytes_path, source_record_path
from verifier.store.home import Home, Settings
from verifier.store.identities import Actor

STEWARD, MAINTAINER, STRANGER, ADMIN = "ericxtang", "mia", "sam", "ada"


@dataclass(frozen=True)
class People:
    """Each role's token and actor."""

    tokens: dict[str, str]
    actors: dict[str, Actor]

    def token(self, handle: str) -> str:
        return self.tokens[handle]

    def actor(self, handle: str) -> Actor:
        return self.actors[handle]


def with_people(world: World, *, holds: str = "[ sources, links ]") -> People:
    """Register the four people, name the admin in config.json, and have the steward name the
    maintainer and the holds in PROJECT.md (one accepted edit)."""
    home = world.home
    settings = home.settings.model_dump()
    home.save_settings(Settings.model_validate({**settings, "admins": [ADMIN]}))
    world.home.settings = Settings.model_validate({**settings, "admins": [ADMIN]})
    tokens = {handle: home.identities.add(handle, handle, "human", NOW) for handle in (STEWARD, MAINTAINER, STRANGER,
                                                                                      ADMIN)}
    old = (read(world, "PROJECT.md") or b"").decode()
    new = old.replace("steward: ericxtang\n", f"steward: ericxtang\nmaintainers: [ {MAINTAINER} ]\n").replace(
        "holds: []", f"holds: {holds}")
    verdict = edit_file(world, tokens[STEWARD], "PROJECT.md", new)
    assert verdict.outcome == "accepted", verdict.line()
    return People(tokens, {handle: home.identities.authenticate(token) for handle, token in tokens.items()})


def plant_held_sources(home: Home, slug: str, count: int) -> list[str]:
    """`count` distinct sources waiting in queue/sources/, landed by the verifier in one commit;
    returns their ids, in the queue's order."""
    files: dict[str, bytes | None] = {}
    ids: list[str] = []
    for number in range(count):
        url = f"https://held.example.org/notes/{number:05d}.txt"
        source_id = source_id_for(url)
        text = f"Held note {number}: robotics teams pay for world models when the data is scarce.\n".encode()
        record = {"source_id": source_id, "url": url, "sha256": hashlib.sha256(text).hexdigest(),
                  "media_type": "text/plain", "size": len(text), "retrieved_at": "2026-09-01T12:00:00Z",
                  "fetched_by": "agent-a", "language": "en", "rights": "public", "status": "staged",
                  "title": f"Held note {number}"}
        files[queue_path("sources", source_record_path(source_id))] = dump_yaml(record)
        files[queue_path("sources", source_bytes_path(source_id, "txt"))] = text
        ids.append(source_id)
    with ProjectWriter.open(home, slug) as writer:
        writer.land(LeafEntry(at=NOW, leaf_id="scout-planted", kind="scout", actor="planner", actor_type="planner",
                              description=f"{count} held sources planted for a test"), bookkeeping=files)
    return sorted(ids)


def tip_and_rows(world: World) -> tuple[str, int]:
    """The branch tip and the ledger's length: what a refusal must leave unchanged."""
    anchor = world.home.read_anchor(SLUG)
    assert anchor is not None
    return world.tip(), anchor.seq
