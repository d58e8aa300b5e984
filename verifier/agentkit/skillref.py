"""Which skill file the agent is following, and its version for the trace manifest.

The version is `verifier.formats.skill.skill_version` of the file's bytes, never a number someone
typed, so a manifest names exactly the text the agent read. RW_SKILL points at another copy.
"""

from __future__ import annotations

import os
from pathlib import Path

from verifier.formats.skill import skill_version

UNKNOWN = "sk-unknown"


def skill_path() -> Path:
    configured = os.environ.get("RW_SKILL")
    if configured:
        return Path(configured).expanduser()
    return Path(__file__).resolve().parents[2] / "skill" / "SKILL.md"


def current_skill_version() -> str:
    """The version of the skill file in use; `sk-unknown` when there is none to read."""
    try:
        return skill_version(skill_path().read_bytes())
    except OSError:
        return UNKNOWN
