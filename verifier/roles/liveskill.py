"""The live skill: the researchwiki skill the platform serves to workers, under `$RW_HOME/skill/`.

The checked-in `skill/SKILL.md` is only the seed: on first use it is copied to
`$RW_HOME/skill/SKILL.md`. From then on only the gate changes the live file, and only with a kept
proposal, so a proposal never edits the source tree. Every version ever served is kept as
`$RW_HOME/skill/history/<skill_version>.md`, so a trace's manifest always names a text that exists.
"""

from __future__ import annotations

from pathlib import Path

from verifier.formats.skill import sections, skill_version
from verifier.store.files import exclusive_lock, write_atomic
from verifier.store.home import Home

SEED = Path(__file__).resolve().parents[2] / "skill" / "SKILL.md"


def live_skill_path(home: Home) -> Path:
    return home.layout.skill / "SKILL.md"


def _write(home: Home, data: bytes) -> str:
    version = skill_version(data)
    write_atomic(home.layout.skill / "history" / f"{version}.md", data, durable=home.settings.durable)
    write_atomic(live_skill_path(home), data, durable=home.settings.durable)
    return version


def read_live_skill(home: Home, *, seed: Path = SEED) -> bytes:
    """The bytes workers read; seeded from the checked-in skill the first time."""
    path = live_skill_path(home)
    if not path.exists():
        with exclusive_lock(home.layout.named_lock("skill")):
            if not path.exists():
                data = seed.read_bytes()
                sections(data.decode("utf-8"), str(seed))
                _write(home, data)
    return path.read_bytes()


def live_skill_version(home: Home) -> str:
    """The skill_version a worker's trace manifest must carry right now."""
    return skill_version(read_live_skill(home))


def install_skill(home: Home, text: str) -> str:
    """Make `text` the live skill (the gate calls this for a kept proposal); returns its version."""
    sections(text, "candidate skill")
    with exclusive_lock(home.layout.named_lock("skill")):
        return _write(home, text.encode("utf-8"))
