"""The placement rule of several instances (verifier.deploy.placement): a project nobody holds
goes to the least-loaded live instance, every instance names the same one, assigning one project
after another keeps the instances within one of each other, and only a difference of two or more
makes an instance let a project go."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from verifier.deploy.placement import place, surplus

NAMES = st.text(alphabet="abcdefgh0123456789-", min_size=1, max_size=8)
LOADS = st.dictionaries(NAMES, st.integers(min_value=0, max_value=50), min_size=1, max_size=8)


def test_no_live_instance_places_nothing() -> None:
    assert place("p", {}) is None


@given(LOADS, st.text(min_size=1, max_size=20))
def test_a_project_goes_to_a_least_loaded_instance(load: dict[str, int], project: str) -> None:
    chosen = place(project, load)
    assert chosen in load and load[chosen] == min(load.values())


@given(LOADS, st.text(min_size=1, max_size=20))
def test_every_instance_names_the_same_one_whatever_order_it_reads_them_in(load: dict[str, int],
                                                                           project: str) -> None:
    assert place(project, load) == place(project, dict(reversed(list(load.items()))))


@given(st.lists(NAMES, min_size=1, max_size=6, unique=True), st.lists(st.text(min_size=1, max_size=12),
                                                                    max_size=60, unique=True))
def test_projects_placed_one_after_another_stay_balanced(names: list[str], projects: list[str]) -> None:
    load = dict.fromkeys(names, 0)
    for project in projects:
        chosen = place(project, load)
        assert chosen is not None
        load[chosen] += 1
    assert max(load.values()) - min(load.values()) <= 1
    assert not any(surplus(name, load) for name in names)  # balanced: nobody lets a project go


def test_ties_are_spread_by_project_not_all_on_one_instance() -> None:
    chosen = {place(f"project-{n}", {"a": 0, "b": 0, "c": 0}) for n in range(30)}
    assert chosen == {"a", "b", "c"}


def test_only_a_difference_of_two_is_a_surplus() -> None:
    assert not surplus("a", {"a": 3, "b": 2})
    assert surplus("a", {"a": 4, "b": 2})
    assert not surplus("b", {"a": 4, "b": 2})
    assert not surplus("a", {"a": 9})  # alone: nowhere to go
    assert not surplus("z", {"a": 9, "b": 0})  # not live: not asked


@given(LOADS, st.text(min_size=1, max_size=20), NAMES)
def test_the_instance_that_received_the_write_keeps_a_tie(load: dict[str, int], project: str, here: str) -> None:
    chosen = place(project, load, here=here)
    assert chosen is not None and load[chosen] == min(load.values())
    if here in load and load[here] == min(load.values()):
        assert chosen == here  # no forward when this instance has as much room as any
