"""An agent's local commands stay light (issue 26): `rw check` on a real working folder runs the
verifier's own checks and secret scan, yet loads neither the service, the pipeline's writer, the
store, the read model, any HTTP stack, click nor the formats only other commands read; `rw new` and
`rw trace` load no HTTP either. What is asserted is what a command imports, never how long it
takes."""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path

import pydantic.plugin._schema_validator as schema_validator
import pytest

from tests.support.light import checked_folder, misquote, run_rw
from tests.support.world import World
from verifier.agentkit.workdir import Work, find_work

# The service, the writer and the store; the read model (state.project parses every format);
# the HTTP stacks (the client's and detect-secrets' requests); what only a scout or a near miss needs.
NEVER_IN_CHECK = ("verifier.service", "verifier.store", "verifier.pipeline.submit", "verifier.pipeline.writer",
                  "verifier.pipeline.landing", "verifier.commons", "verifier.gitdoor", "verifier.writes",
                  "verifier.state.project", "verifier.client", "http.client", "ssl", "urllib.request",
                  "requests", "urllib3", "detect_secrets", "granian", "pygit2", "importlib.metadata",
                  "rapidfuzz", "verifier.checks.scout", "verifier.checks.review", "verifier.checks.links",
                  "click")  # `rw check` as typed runs without click (verifier.cli.main)
# The formats only other commands read: the ledger's rows, a scout's fetch records, and the skill
# file's, which a folder `rw work` made does not need (its state names its skill).
OTHER_COMMANDS_FORMATS = ("verifier.formats.ledger", "verifier.formats.fetch", "verifier.formats.skill",
                          "verifier.agentkit.skillref")
HTTP = ("verifier.client", "http.client", "ssl", "urllib.request", "requests", "urllib3")

pytestmark = pytest.mark.slow  # each test starts `rw` in fresh interpreters


@pytest.fixture
def folder(world: World, tmp_path: Path) -> Path:
    """A working folder for an extract leaf holding three correct findings, and the scanner's
    cache of detect-secrets already written (as after the agent's first `rw` command)."""
    return checked_folder(world, tmp_path)


def test_check_runs_the_verifiers_checks_without_the_service_the_store_or_http(folder: Path) -> None:
    ran = run_rw(["check"], folder, {"XDG_CACHE_HOME": str(folder.parent / "cache")})
    assert ran.code == 0 and ran.out.startswith("OK 3 findings"), ran.out
    # It did run the verifier's rules: the extract check, the trace ingest and its secret scan.
    assert ran.loaded("verifier.checks.extract", "verifier.pipeline.trace", "verifier.secrets.scan") == [
        "verifier.checks.extract", "verifier.pipeline.trace", "verifier.secrets.scan"]
    assert not ran.loaded(*NEVER_IN_CHECK), ran.loaded(*NEVER_IN_CHECK)


def test_check_of_a_folder_naming_its_skill_loads_no_format_only_other_commands_read(folder: Path) -> None:
    work = find_work(folder)
    Work(work.root, replace(work.state, skill_version="sk-0123456789ab")).save()
    for argv in (["check"], ["check", "--json"]):
        ran = run_rw(argv, folder, {"XDG_CACHE_HOME": str(folder.parent / "cache")})
        assert ran.code == 0, ran.out
        assert ran.loaded("verifier.checks.extract") == ["verifier.checks.extract"]
        assert not ran.loaded(*OTHER_COMMANDS_FORMATS), ran.loaded(*OTHER_COMMANDS_FORMATS)


def test_check_still_finds_a_misquote_with_the_fuzzy_search_loaded_on_demand(folder: Path) -> None:
    misquote(sorted((folder / "findings").rglob("*.yaml"))[0])
    ran = run_rw(["check"], folder, {"XDG_CACHE_HOME": str(folder.parent / "cache")})
    assert ran.code == 1 and "excerpt_not_found" in ran.out and "% similar" in ran.out, ran.out
    assert ran.loaded("rapidfuzz") and not ran.loaded(*HTTP)


def test_new_and_trace_write_the_folder_without_loading_http(folder: Path) -> None:
    ran = run_rw(["trace", "add", "reasoning", "Three sentences that carry counts."], folder)
    assert ran.code == 0, ran.out
    assert not ran.loaded(*HTTP), ran.loaded(*HTTP)
    ran = run_rw(["new", "finding", "--excerpt", "not in the note at all, surely", "--statement", "S.",
                  "--limitation", "L."], folder)
    assert ran.code != 0 and "not" in ran.out  # refused: the excerpt is not in the source
    assert not ran.loaded(*HTTP), ran.loaded(*HTTP)


def test_check_builds_its_models_without_compiling_the_tokenizer(folder: Path) -> None:
    # A builtin default_factory (`list`) has pydantic ask inspect for its signature, read from text
    # with the tokenizer's regular expressions: compiled at every start (formats.base.no_items).
    ran = run_rw(["check"], folder, {"XDG_CACHE_HOME": str(folder.parent / "cache")})
    assert ran.code == 0 and not ran.tokenizer_compiled, ran.out


def test_the_collector_is_back_on_once_the_command_runs_with_start_up_frozen(folder: Path) -> None:
    ran = run_rw(["check"], folder, {"XDG_CACHE_HOME": str(folder.parent / "cache")})
    assert ran.gc_enabled and ran.frozen > 0


def test_the_plugin_loader_stand_in_answers_as_pydantics_own_with_plugins_disabled(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pydantic calls one function of its loader; with every plugin disabled it answers none.
    imports = [line.strip() for line in inspect.getsource(schema_validator).splitlines() if "_loader" in line]
    assert imports == ["from ._loader import get_plugins"], imports
    from pydantic.plugin import _loader  # noqa: PLC0415 - the real one, in this process

    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "__all__")
    assert tuple(_loader.get_plugins()) == ()
    # Any other setting loads pydantic's own loader (and so honours the plugins it names).
    ran = run_rw(["check"], folder, {"XDG_CACHE_HOME": str(folder.parent / "cache"),
                                     "PYDANTIC_DISABLE_PLUGINS": "some-plugin"})
    assert ran.code == 0 and ran.loaded("importlib.metadata"), ran.out
