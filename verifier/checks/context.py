"""What a leaf-kind check is handed, and what it hands back. Plain data only: the tree a check
reads is the state room's read model over the overlay (`state`), never a walk of its own."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING

from verifier.errors import Rejection
from verifier.formats.leaf import LeafContract
from verifier.formats.project import ProjectFile
from verifier.state.view import TreeView

if TYPE_CHECKING:
    # Only scouts fetch: the fetch record's model is loaded by what fills `fetches`. The read
    # model is loaded when a check first reads `state`: it parses every format, and the extract
    # check (`rw check`'s commonest kind) never reads it (issue 26).
    from verifier.formats.fetch import FetchOutcome
    from verifier.state.project import ProjectView


@dataclass(frozen=True)
class CheckContext:
    """Everything a check may look at. `tree` is the project as it would be after landing."""

    leaf: LeafContract | None  # None for a person's edit outside any leaf
    actor: str
    project: ProjectFile
    tree: TreeView
    writes: Mapping[str, bytes | None]
    now: datetime
    # Derived (normalized) text of the sources the leaf reads, by source_id.
    source_texts: Mapping[str, str] = field(default_factory=dict)
    # Outcome of fetching each new source's URL, by the URL as written in the record.
    fetches: Mapping[str, FetchOutcome] = field(default_factory=dict)
    # The tree the writes land on, before them (to compare old and new versions of a file).
    base_tree: TreeView | None = None
    actor_type: str = "agent"
    # What a handle is in the identity registry ("human", "agent", None: nobody), or None when not
    # known here: a person's edit of PROJECT.md naming a new steward or maintainer who is not a
    # registered person gets a note.
    handle_kind: Callable[[str], str | None] | None = None

    @cached_property
    def state(self) -> ProjectView:
        """The project as it would be after landing, read through the one read model."""
        from verifier.state.project import ProjectView  # noqa: PLC0415 - see the import above

        return ProjectView(self.tree)

    @cached_property
    def base_state(self) -> ProjectView | None:
        """The project before the writes (None when the check is handed no base)."""
        from verifier.state.project import ProjectView  # noqa: PLC0415 - see the import above

        return None if self.base_tree is None else ProjectView(self.base_tree)


@dataclass(frozen=True)
class CheckResult:
    rejections: list[Rejection]
    summary: str  # one line for the commit subject and the ledger ("5 findings from src_...")
    notes: list[str] = field(default_factory=list)  # facts worth keeping in the ledger row
    # Paths a person must look at before they enter the corpus, whatever PROJECT.md holds.
    hold_paths: frozenset[str] = frozenset()

    @property
    def accepted(self) -> bool:
        return not self.rejections
