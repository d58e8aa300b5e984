"""Which model answers which role: config.json's `models` by role, `model` as the default.

The roles are the calls the platform makes: `baseline` (the sealed prior, design §3.5.1),
`resolve` (the Resolver), `plan` (the Planner's judgement), `diagnose` (the Wiki Maintainer),
`propose` (the Skill Proposer) and `worker` (the platform's own worker, verifier/agentkit/modelworker.py).
A role not named in `models` takes `models.default`, then the single `model` block of earlier
configs, so a config with only `model` keeps working as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Protocol, get_args

from verifier.model.adapter import Backend, ModelConfig, backend_from_config

Role = Literal["baseline", "resolve", "plan", "diagnose", "propose", "worker"]
ROLES: tuple[Role, ...] = get_args(Role)
RoleKey = Literal["baseline", "resolve", "plan", "diagnose", "propose", "worker", "default"]


def role_config(models: Mapping[RoleKey, ModelConfig], default: ModelConfig | None, role: Role) -> ModelConfig | None:
    """The model block that answers `role`: its own, else `models.default`, else `model`; None: none."""
    return models.get(role) or models.get("default") or default


class HasModels(Protocol):
    """What picking a role's backend needs of a home (verifier.store.home.Home)."""

    @property
    def root(self) -> Path: ...

    def model_config(self, role: Role) -> ModelConfig | None: ...


def role_backend(home: HasModels, role: Role, env: Mapping[str, str] | None = None) -> Backend | None:
    """The backend configured for `role`, or None when no model block answers it."""
    config = home.model_config(role)
    return backend_from_config(config, base=home.root, env=env) if config is not None else None
