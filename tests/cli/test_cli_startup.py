"""`rw` imports a command's module only when the command runs: the table in verifier/cli/table.py
names every command and its module truthfully, and the light commands start without the store,
the service or the pipeline (issue: start-up cost)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

from verifier.cli.app import cli
from verifier.cli.main import _PACKAGE, COMMAND_MODULES, COMMANDS

HEAVY = ("verifier.store", "verifier.pipeline.submit", "verifier.service.app", "granian", "pygit2")


def test_the_table_names_every_command_and_its_module() -> None:
    for module in COMMAND_MODULES:
        importlib.import_module(_PACKAGE + module)
    defined = {name: command.callback.__module__ for name, command in cli.commands.items()
               if command.callback is not None}
    unlisted = sorted(set(defined) - set(COMMANDS))
    assert not unlisted, f"add these commands to COMMANDS in verifier/cli/table.py (name: module, help): {unlisted}"
    assert not set(COMMANDS) - set(defined), "COMMANDS names a command no module defines"
    for name, module in defined.items():
        assert module == _PACKAGE + COMMANDS[name][0], name
    assert {module for module, _help in COMMANDS.values()} <= set(COMMAND_MODULES)


def modules_after(*argv: str, env: dict[str, str] | None = None) -> set[str]:
    code = ("import sys, json\nfrom verifier.cli.main import main\nsys.argv = ['rw', *json.loads(sys.argv[1])]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint('\\n' + json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(list(argv))], capture_output=True, text=True,
                          check=False, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "RW_SERVER": "http://127.0.0.1:9", **(env or {})})
    loaded: list[str] = json.loads(done.stdout.strip().rsplit("\n", 1)[-1])
    return set(loaded)


def test_help_lists_every_command_without_importing_them() -> None:
    loaded = modules_after("--help")
    assert not [name for name in loaded if name.startswith(_PACKAGE) and name.endswith("_cmds")]
    assert not [name for name in loaded if name.startswith(HEAVY)]


def test_board_and_check_start_without_the_store_or_the_service() -> None:
    for argv in (("board", "x", "--retry-for", "1s"), ("check",)):
        loaded = modules_after(*argv)
        assert not [name for name in loaded if name.startswith(HEAVY)], argv
        assert not {"bs4", "pypdf"} & loaded, argv


def test_check_loads_neither_detect_secrets_nor_http_once_the_scanner_cache_is_written(tmp_path: Path) -> None:
    # The first start reads detect-secrets and writes the cache; every later one reads the cache.
    cache = {"XDG_CACHE_HOME": str(tmp_path)}
    first = modules_after("check", env=cache)
    assert "detect_secrets" in first
    assert list((tmp_path / "researchwiki").glob("stock-detectors-*.json"))
    loaded = modules_after("check", env=cache)
    assert not [name for name in loaded if name.startswith(("detect_secrets", "requests", "urllib3", "http.client"))]
    assert not [name for name in loaded if name.startswith("verifier.checks.") and name.rsplit(".", 1)[1] in
                ("scout", "review", "links", "guide", "human")], "only the leaf kind's own check is loaded"


def test_board_with_a_server_and_a_token_loads_no_format_models() -> None:
    # The client config (pydantic) is read only when no server or token was given, and the agent's
    # loop (the formats) only by the commands that claim or work: `rw board` stays a light client.
    loaded = modules_after("board", "x", "--retry-for", "1s", env={"RW_TOKEN": "rwt_" + "x" * 43})
    assert not {"pydantic", "verifier.client.config", "verifier.agentkit.loop"} & loaded, sorted(
        {"pydantic", "verifier.client.config", "verifier.agentkit.loop"} & loaded)
