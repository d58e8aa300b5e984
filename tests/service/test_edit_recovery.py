"""A person's edit the service died under (its journal row still `running`) is settled at start-up
as a submission is: answered from the `human` row it landed, or, when nothing landed, left for the
same Idempotency-Key to run again, with no crash row (the ledger records attempts on leaves)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.edits import edit
from tests.support.world import NOW, SLUG, World
from verifier.commons.db import Database
from verifier.pipeline.ledger import ledger_head, read_chain
from verifier.pipeline.submit import HUMAN_EDIT
from verifier.service.journal import Journal
from verifier.service.recovery import settle


@pytest.fixture
def journal(world: World) -> Iterator[Journal]:
    db = Database(world.home.layout.commons)
    yield Journal(db)
    db.close()


def _begun(world: World, journal: Journal, handle: str, key: str) -> str:
    seq, _ = ledger_head(world.repo.view(world.tip()))
    return journal.begin(agent=handle, project=SLUG, leaf_id=HUMAN_EDIT, key=key, digest="d" * 64,
                         trace_id="trc_" + "0" * 16, base_revision=None, ledger_from=seq, now=NOW).record.id


def test_an_edit_that_landed_before_the_crash_is_answered_from_its_row(world: World, journal: Journal) -> None:
    token = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    record_id = _begun(world, journal, "ericxtang", "edit-key-0001")
    old = (world.repo.view(world.tip()).read("PROJECT.md") or b"").decode()
    landed = world.submit(edit(world, token, {"PROJECT.md": old.replace("cares about", "cares most about").encode()}))
    assert landed.outcome == "accepted"
    record = journal.get(record_id)
    assert record is not None
    verdict = settle(world.home, journal, record, NOW)
    assert (verdict["outcome"], verdict["ledger_seq"], verdict["leaf_id"]) == ("accepted", landed.ledger_seq, None)
    settled = journal.get(record_id)
    assert settled is not None and settled.state == "done" and settled.verdict is not None
    assert settled.verdict["verdict"]["ledger_seq"] == landed.ledger_seq


def test_an_edit_that_never_landed_is_run_again_by_its_key_and_writes_no_row(world: World, journal: Journal) -> None:
    world.home.identities.add("ericxtang", "ericxtang", "human", NOW)
    rows = len(list(read_chain(world.repo.view(world.tip()))))
    record_id = _begun(world, journal, "ericxtang", "edit-key-0002")
    record = journal.get(record_id)
    assert record is not None
    assert settle(world.home, journal, record, NOW)["outcome"] == "crash"
    assert len(list(read_chain(world.repo.view(world.tip())))) == rows  # no row for what never landed
    assert (journal.get(record_id) or record).state == "interrupted"
    again = journal.begin(agent="ericxtang", project=SLUG, leaf_id=HUMAN_EDIT, key="edit-key-0002", digest="d" * 64,
                          trace_id="trc_" + "0" * 16, base_revision=None, ledger_from=0, now=NOW)
    assert again.fresh  # the same key runs the edit again
