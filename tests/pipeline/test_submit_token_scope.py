"""The submission row's first step holds a token to its scope: a person's edit outside any leaf
needs the person's `steward` scope for the project, and a token for another project lands nothing."""

from __future__ import annotations

import pytest

from tests.support.edits import edit
from tests.support.world import NOW, World
from verifier.errors import ScopeError
from verifier.pipeline.submit import submit
from verifier.store.identities import Grant


def test_a_read_only_persons_edit_is_refused_with_token_scope_and_nothing_lands(world: World) -> None:
    token = world.home.identities.add("reader", "reader", "human", NOW, Grant(scopes=("read", "leaf")))
    tip = world.tip()
    with pytest.raises(ScopeError, match="needs 'steward'"):
        submit(world.home, edit(world, token, {"NOTES.md": b"a note\n"}), now=NOW, fetcher=world.fetcher)
    assert world.tip() == tip


def test_a_persons_edit_with_a_token_for_another_project_is_refused(world: World) -> None:
    token = world.home.identities.add("elsewhere", "elsewhere", "human", NOW, Grant(projects=("other-project",)))
    tip = world.tip()
    with pytest.raises(ScopeError, match="not world-model-eval"):
        submit(world.home, edit(world, token, {"NOTES.md": b"a note\n"}), now=NOW, fetcher=world.fetcher)
    assert world.tip() == tip
