"""A model per role (verifier/model/roles.py): `models.<role>`, then `models.default`, then `model`;
and the baseline seal's refusal of a recorded backend that is not a marked fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.world import make_home
from verifier.model.adapter import CommandBackend, ModelConfig, RecordedBackend
from verifier.model.roles import ROLES, role_backend
from verifier.store.home import Settings
from verifier.writes.baseline import BaselineError, model_backend

RECORDED = ModelConfig(backend="recorded", recordings="recorded")
COMMAND = ModelConfig(backend="command", command=["my-model", "--json"])


def test_the_single_model_setting_still_answers_every_role(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    home.save_settings(Settings(durable=False, model=COMMAND))
    assert all(home.model_config(role) == COMMAND for role in ROLES)


def test_a_role_of_its_own_wins_then_the_default_then_model(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    worker = ModelConfig(backend="openai", name="llama-3.1-8b", base_url="http://127.0.0.1:8000/v1")
    home.save_settings(Settings(durable=False, model=COMMAND, models={"worker": worker, "default": RECORDED}))
    assert home.model_config("worker") == worker
    assert home.model_config("plan") == RECORDED  # models.default before the old `model`
    assert isinstance(role_backend(home, "plan"), RecordedBackend)
    home.save_settings(Settings(durable=False, models={"worker": worker}))
    assert home.model_config("resolve") is None and role_backend(home, "resolve") is None


def test_the_baseline_seal_refuses_a_recorded_backend_that_is_not_a_marked_fixture(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    home.save_settings(Settings(durable=False, models={"baseline": RECORDED, "resolve": RECORDED}))
    with pytest.raises(BaselineError, match="a baseline must be a live frontier call"):
        model_backend(home)
    assert isinstance(model_backend(home, "resolve"), RecordedBackend)  # only the sealed prior must be live
    fixture = RECORDED.model_copy(update={"sealed_replay": True})
    home.save_settings(Settings(durable=False, models={"baseline": fixture}))
    assert isinstance(model_backend(home), RecordedBackend)
    home.save_settings(Settings(durable=False, models={"baseline": COMMAND}))
    assert isinstance(model_backend(home), CommandBackend)
