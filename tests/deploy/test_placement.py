"""The placement rule of several instances (verifier.deploy.placement): a project nobody holds
goes to the live instance with the fewest recent landings, every instance names the same one, and
an instance lets a project go by the work it carries (its projects' recent landings), not by how
many projects it holds, without ever overshooting (nothing moves back)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from verifier.deploy.placement import MIN_GAP, Load, place, to_let_go

NAMES = st.text(alphabet="abcdefgh0123456789-", min_size=1, max_size=8)
LOADS = st.dictionaries(NAMES, st.builds(Load, st.integers(min_value=0, max_value=500),
                                         st.integers(min_value=0, max_value=50)), min_size=1, max_size=8)


def _least(load: dict[str, Load]) -> tuple[int, int]:
    return min((x.landings, x.held) for x in load.values())


def test_no_live_instance_places_nothing() -> None:
    assert place("p", {}) is None


@given(LOADS, st.text(min_size=1, max_size=20))
def test_a_project_goes_to_the_instance_with_the_fewest_recent_landings(load: dict[str, Load], project: str) -> None:
    chosen = place(project, load)
    assert chosen in load and (load[chosen].landings, load[chosen].held) == _least(load)


def test_placement_weighs_recent_landings_not_the_count_of_projects() -> None:
    # a holds one busy project, b ten quiet ones: the next project goes to b.
    assert place("new", {"a": Load(landings=120, held=1), "b": Load(landings=3, held=10)}) == "b"


@given(LOADS, st.text(min_size=1, max_size=20))
def test_every_instance_names_the_same_one_whatever_order_it_reads_them_in(load: dict[str, Load],
                                                                           project: str) -> None:
    assert place(project, load) == place(project, dict(reversed(list(load.items()))))


def test_ties_are_spread_by_project_not_all_on_one_instance() -> None:
    chosen = {place(f"project-{n}", dict.fromkeys("abc", Load(0, 0))) for n in range(30)}
    assert chosen == {"a", "b", "c"}


@given(LOADS, st.text(min_size=1, max_size=20), NAMES)
def test_the_instance_that_received_the_write_keeps_a_tie(load: dict[str, Load], project: str, here: str) -> None:
    chosen = place(project, load, here=here)
    assert chosen is not None and (load[chosen].landings, load[chosen].held) == _least(load)
    if here in load and (load[here].landings, load[here].held) == _least(load):
        assert chosen == here  # no forward when this instance has as much room as any


def test_the_busy_instance_lets_go_the_project_closest_to_half_the_gap() -> None:
    load = {"a": Load(landings=100, held=3), "b": Load(landings=0, held=0)}
    assert to_let_go("a", load, {"quiet": 10, "busy": 60, "half": 45}) == "half"


def test_a_busy_project_never_moves_to_overshoot_and_nothing_moves_back() -> None:
    # Two equally busy instances: neither moves anything.
    even = {"a": Load(60, 2), "b": Load(58, 2)}
    assert to_let_go("a", even, {"p0": 30, "p2": 30}) is None
    # One project carries all of a's work: moving it would only swap the sides.
    assert to_let_go("a", {"a": Load(50, 1), "b": Load(10, 5)}, {"only": 50}) is None


@given(st.lists(st.integers(min_value=0, max_value=80), min_size=1, max_size=8),
       st.integers(min_value=0, max_value=200))
def test_letting_go_evens_the_work_and_the_receiver_never_gives_it_back(weights: list[int], other: int) -> None:
    mine = {f"p{n}": w for n, w in enumerate(weights)}
    load = {"a": Load(sum(weights), len(weights)), "b": Load(other, 1)}
    slug = to_let_go("a", load, mine)
    if slug is None or mine[slug] == 0:
        return
    moved = mine[slug]
    before = abs(load["a"].landings - load["b"].landings)
    after = {"a": Load(load["a"].landings - moved, len(weights) - 1), "b": Load(other + moved, 2)}
    assert abs(after["a"].landings - after["b"].landings) < before
    assert after["b"].landings <= after["a"].landings
    assert to_let_go("b", after, {slug: moved}) is None  # it does not come straight back


def test_a_gap_of_a_few_landings_moves_nothing() -> None:
    assert to_let_go("a", {"a": Load(MIN_GAP - 1, 2), "b": Load(0, 0)}, {"p": 1, "q": 1}) is None


def test_quiet_projects_are_spread_by_count_only_when_a_holds_two_more() -> None:
    assert to_let_go("a", {"a": Load(0, 3), "b": Load(0, 2)}, {"p": 0, "q": 0, "r": 0}) is None
    assert to_let_go("a", {"a": Load(0, 4), "b": Load(0, 2)}, {"p": 0, "q": 0, "r": 0, "s": 0}) == "p"
    assert to_let_go("a", {"a": Load(0, 9)}, {"p": 0}) is None  # alone: nowhere to go
    assert to_let_go("z", {"a": Load(0, 9), "b": Load(0, 0)}, {"p": 0}) is None  # not live: not asked
