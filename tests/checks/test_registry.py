"""The check registry names a module and function per kind, loaded when the kind is checked
(issue 26), and still fails closed on a kind it does not know."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime

from verifier.checks.context import CheckContext
from verifier.checks.registry import CHECKS, check_for
from verifier.formats.project import ProjectFile
from verifier.state.view import Overlay


class _EmptyTree:
    def read(self, path: str) -> bytes | None:
        return None

    def is_dir(self, path: str) -> bool:
        return False

    def list_dir(self, path: str) -> list[str]:
        return []

    def blob_id(self, path: str) -> str | None:
        return None


def test_every_kind_resolves_to_the_function_its_entry_names() -> None:
    for kind, (module, function) in CHECKS.items():
        check = check_for(kind)
        assert check is getattr(importlib.import_module(f"verifier.checks.{module}"), function), kind


def test_a_kind_without_a_check_is_refused() -> None:
    context = CheckContext(leaf=None, actor="a", project=ProjectFile(project="demo"), tree=Overlay(_EmptyTree(), {}),
                           writes={}, now=datetime(2026, 12, 1, tzinfo=UTC))
    for kind in ("planner", "__class__", "extract "):
        assert [r.code for r in check_for(kind)(context).rejections] == ["no_check"], kind
