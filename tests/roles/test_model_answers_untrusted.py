"""Model answers are untrusted text. Every answer field that lands passes the secret gate first
(a bearer token in it is revoked); an error about a sealed baseline call echoes no part of the
answer, field names included; a model command runs with a minimal environment (no RW_TOKEN, no
other variable unless the config names it). The model is a real script printing crafted JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from tests.support.hostile_model import aws_pair, github_token, hostile_backend, hostile_model
from tests.support.loop import SEED_SKILL, skill_following_worker, work
from tests.support.resolution import Scenario, build, resolve
from tests.support.world import NOTE_ID, NOW, SLUG, World
from verifier.cli.app import cli
from verifier.cli.main import COMMAND_MODULES
from verifier.errors import AuthError
from verifier.messages.triggers import RowFacts, revoked_messages
from verifier.model.adapter import ModelConfig, backend_from_config
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import Submission
from verifier.roles.liveskill import install_skill, live_skill_version, read_live_skill
from verifier.roles.maintainer import run_pass
from verifier.roles.opswiki import OpsWiki
from verifier.roles.proposer import run_proposer
from verifier.seal import read_private_key, resolver_dir, write_keypair
from verifier.seal.keys import PRIVATE_PEM
from verifier.seal.sealing import baseline_context, unseal
from verifier.state.layout import RESOLUTION_SCORES, SEAL_DIR, hypothesis_path, record_path
from verifier.store.home import Settings
from verifier.writes.baseline import read_seal

LOOP_PAGE = "patterns/extract/excerpt-not-found-after-write.md"


@pytest.fixture
def scenario(world: World) -> Scenario:
    return build(world)


def changed(world: World, before: str) -> set[str]:
    """The paths that differ between `before` and the tip."""
    old, new = world.repo.view(before), world.repo.view(world.tip())
    paths = set(old.walk("")) | set(new.walk(""))
    return {path for path in paths if old.blob_id(path) != new.blob_id(path)}


def rows(world: World) -> list[tuple[str | None, str]]:
    return [(row.reason_code, row.description) for _line, row in read_chain(world.repo.view(world.tip()))]


def resolve_answer(rationale: str, model: str = "frontier-1") -> dict[str, object]:
    return {"kind": "resolve", "verdict": "true", "confidence": 0.9, "rationale": rationale, "model": model}


@pytest.mark.parametrize("carrier", ["rationale", "model"])
def test_a_resolve_answer_carrying_secrets_is_refused_and_the_token_revoked(
        scenario: Scenario, tmp_path: Path, carrier: str) -> None:
    world = scenario.world
    victim = world.home.identities.add("agent-v", "op-v", "agent", NOW)
    key_id = "AK" + "IA" + "Q" * 16
    answer = (resolve_answer(f"Checked lnk_ ids. Also {aws_pair()} {github_token()} {victim}")
              if carrier == "rationale" else resolve_answer(f"see {victim}", model=key_id))
    before_rows, tip = rows(world), world.tip()
    hypothesis, scores = scenario.read(hypothesis_path("H1")), scenario.read(RESOLUTION_SCORES)
    runs = resolve(scenario, backend=hostile_backend(tmp_path / "model", answer))
    assert "H1 failed" in runs
    assert {path.split("/", 1)[0] for path in changed(world, tip)} == {"ledger"}  # only the refusal's row
    after = rows(world)
    new = after[len(before_rows):]
    assert new and all(code == "secret_in_answer" for code, _ in new)  # one refusal per due hypothesis
    landed = json.dumps(after) + (scenario.read(hypothesis_path("H1")) or b"").decode()
    assert victim not in landed and "AKIA" not in landed and "gh" + "p_" not in landed
    assert "revoked the bearer token of: agent-v" in new[0][1] and carrier in new[0][1]
    assert scenario.read(hypothesis_path("H1")) == hypothesis  # no verdict
    assert scenario.read(record_path("H1")) is None and scenario.read(RESOLUTION_SCORES) == scores
    assert scenario.read(f"{SEAL_DIR}/H1.sealed") is not None  # the baseline stays sealed
    with pytest.raises(AuthError):
        world.home.identities.authenticate(victim)
    row = list(read_chain(world.repo.view(world.tip())))[len(before_rows)][1]
    told = revoked_messages(RowFacts(SLUG, row))  # the notifier tells the token's owner
    assert [(m.to_agent, m.kind) for m in told] == [("agent-v", "secret")] and victim not in told[0].body


def test_an_honest_resolve_answer_lands_its_rationale(scenario: Scenario, tmp_path: Path) -> None:
    rationale = "The supporting links and the steward's report agree on who pays first."
    runs = resolve(scenario, backend=hostile_backend(tmp_path / "model", resolve_answer(rationale)))
    assert "H1 resolved" in runs
    record = json.loads(scenario.read(record_path("H1")) or b"{}")
    assert record["proposal"]["rationale"] == rationale


def test_a_failed_resolve_call_whose_stderr_carries_a_token_lands_no_part_of_it(
        scenario: Scenario, tmp_path: Path) -> None:
    world = scenario.world
    victim = world.home.identities.add("agent-v", "op-v", "agent", NOW)
    before, tip = len(rows(world)), world.tip()
    runs = resolve(scenario, backend=hostile_backend(tmp_path / "model", "{}", stderr=f"token {victim}\n",
                                                     exit_code=1))
    assert "H1 failed" in runs
    assert {path.split("/", 1)[0] for path in changed(world, tip)} == {"ledger"}
    new = rows(world)[before:]
    assert new and all(code == "model_error" for code, _ in new)
    assert victim not in json.dumps(new) and "its message was withheld" in new[0][1]
    with pytest.raises(AuthError):
        world.home.identities.authenticate(victim)


@pytest.fixture
def sealing(world: World, tmp_path: Path) -> Iterator[tuple[World, Path]]:
    """A home with the Resolver's keys, whose model is the hostile script configured in config.json."""
    write_keypair(resolver_dir(world.home.root))
    assert COMMAND_MODULES  # the commands register on import
    yield world, tmp_path / "model"


def configure(world: World, argv: list[str], pass_env: list[str] | None = None) -> None:
    model: dict[str, object] = {"backend": "command", "command": argv, "timeout_s": 60}
    if pass_env:
        model["pass_env"] = pass_env
    world.home.save_settings(Settings.model_validate({**world.home.settings.model_dump(), "model": model}))


@pytest.mark.parametrize("answer", [
    '{"kind": "baseline", "verdict": "true", "confidence": 0.5, "leans_true_high": 1}',
    '{"kind": "baseline", "verdict": "true", "confidence": 0.5, "leans_true_high": 1, "leans_true_high": 2}',
    '{"kind": "baseline", "verdict": "true", "confidence": "leans_true_high"}',
    '{"leans_true_high": true}',
])
def test_a_baseline_error_never_echoes_the_answer_not_even_a_field_name(
        sealing: tuple[World, Path], answer: str) -> None:
    world, folder = sealing
    configure(world, hostile_model(folder, answer))
    before = rows(world)
    result = CliRunner().invoke(cli, ["seal", SLUG], env={"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30"})
    assert result.exit_code == 1, result.output
    assert "does not match the baseline answer schema" in result.output and "withheld" in result.output
    new = rows(world)[len(before):]
    assert new and all(code == "model_error" for code, _ in new)
    assert "leans_true" not in result.output and "leans_true" not in json.dumps(new)
    assert world.repo.view(world.tip()).list_dir(SEAL_DIR) == []  # nothing sealed


def test_a_failed_baseline_call_names_neither_its_exit_status_nor_its_duration(sealing: tuple[World, Path]) -> None:
    """A command could spell its verdict in how it fails as well as in what it prints."""
    world, folder = sealing
    configure(world, hostile_model(folder, "", stderr="verdict true\n", exit_code=17))
    before = rows(world)
    result = CliRunner().invoke(cli, ["seal", SLUG], env={"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30"})
    assert result.exit_code == 1 and "failed; details withheld" in result.output
    new = json.dumps(rows(world)[len(before):])
    for said in (result.output, new):
        assert "status" not in said and "17" not in said.replace(str(folder), "")
        assert " s;" not in said and "verdict true" not in said


@pytest.mark.parametrize(("name", "sealed_as"), [("AK" + "IA" + "Z" * 16, "withheld"), ("frontier-1", "frontier-1")])
def test_a_baseline_model_name_failing_the_secret_gate_is_sealed_as_withheld(
        sealing: tuple[World, Path], name: str, sealed_as: str) -> None:
    world, folder = sealing
    configure(world, hostile_model(folder, {"kind": "baseline", "verdict": "true", "confidence": 0.5, "model": name}))
    result = CliRunner().invoke(cli, ["seal", SLUG], env={"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30"})
    assert result.exit_code == 0, result.output
    state = read_seal(world.repo.view(world.tip()), "H1")
    assert state is not None
    key = read_private_key(resolver_dir(world.home.root) / PRIVATE_PEM)
    assert unseal(key, state.sealed, context=baseline_context(SLUG, "H1")).model == sealed_as
    assert name not in json.dumps(rows(world)) and name not in result.output


def test_a_baseline_answer_that_is_not_json_names_nothing_of_it(sealing: tuple[World, Path]) -> None:
    world, folder = sealing
    configure(world, hostile_model(folder, "Sure: it leans true."))
    result = CliRunner().invoke(cli, ["seal", SLUG], env={"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30"})
    assert result.exit_code == 1 and "the answer is not JSON" in result.output
    assert "leans" not in result.output and "leans" not in json.dumps(rows(world))


def test_a_model_command_gets_a_minimal_environment_and_the_names_the_config_passes(
        sealing: tuple[World, Path]) -> None:
    world, folder = sealing
    dumped = folder / "env.json"
    person = world.home.identities.add("ericxtang", "ericxtang", "human", NOW)  # the steward seals
    configure(world, hostile_model(folder, {"kind": "baseline", "verdict": "true", "confidence": 0.5},
                                   env_to=dumped), pass_env=["RW_MODEL_KEY"])
    env = {"RW_HOME": str(world.home.root), "RW_NOW": "2026-11-30", "RW_TOKEN": person,
           "AWS_SECRET_ACCESS_KEY": "not-for-models", "RW_MODEL_KEY": "the-model's-own"}
    result = CliRunner().invoke(cli, ["seal", SLUG], env=env)
    assert result.exit_code == 0, result.output  # the control: it sealed
    seen = json.loads(dumped.read_text())
    assert "RW_TOKEN" not in seen and "AWS_SECRET_ACCESS_KEY" not in seen and "RW_HOME" not in seen
    assert seen["RW_MODEL_KEY"] == "the-model's-own" and "PATH" in seen
    assert person not in json.dumps(seen)


@pytest.mark.parametrize("names", [["RW_TOKEN"], ["not a name"], ["A=B"]])
def test_a_config_cannot_pass_rw_token_or_a_malformed_name(tmp_path: Path, names: list[str]) -> None:
    with pytest.raises(ValidationError, match="pass_env"):
        ModelConfig.model_validate({"backend": "command", "command": ["m"], "pass_env": names})
    ok = ModelConfig.model_validate({"backend": "command", "command": ["m"], "pass_env": ["ANTHROPIC_API_KEY"]})
    assert backend_from_config(ok, base=tmp_path).name == "command"


def rejected_extract(world: World) -> None:
    """One extract leaf the seed skill makes the worker fail (`excerpt_not_found`): a failure group."""
    contract = world.leaf("extract-tidy-a", source_id=NOTE_ID)
    result = work(world.home, project=SLUG, leaf_id="extract-tidy-a", kind="extract", base=contract.base_revision,
                  inputs={"source_id": NOTE_ID}, hints=[], skill=read_live_skill(world.home).decode(),
                  agent=world.agent.handle, operator=world.agent.operator, now=NOW)
    verdict = world.submit(Submission(SLUG, "extract-tidy-a", result.patch, result.trace, world.agent.token))
    assert verdict.outcome == "rejected"


@pytest.mark.parametrize("honest", [False, True])
def test_a_diagnosis_carrying_a_token_is_dropped_from_the_page_and_the_token_revoked(
        world: World, tmp_path: Path, honest: bool) -> None:
    victim = world.home.identities.add("agent-v", "op-v", "agent", NOW)
    install_skill(world.home, SEED_SKILL)
    rejected_extract(world)
    cause = "The agent retyped its quotes." if honest else f"The agent retyped its quotes; try {victim}."
    answer = {"kind": "diagnose", "root_cause": cause, "advice": "Copy excerpts from the source text.", "model": "m-2"}
    report = run_pass(world.home, now=NOW, backend=hostile_backend(tmp_path / "model", answer))
    page = OpsWiki(world.home).read(LOOP_PAGE) or ""
    assert "excerpt_not_found" in page  # the deterministic page is written either way
    if honest:
        assert cause in page and report.model == "m-2" and not report.notes
        assert world.home.identities.authenticate(victim).handle == "agent-v"
        return
    assert victim not in page and "retyped" not in page and report.model is None
    assert any(f"the diagnosis for {LOOP_PAGE} was dropped" in note and "root_cause" in note for note in report.notes)
    assert any("revoked the bearer token of: agent-v" in note for note in report.notes)
    with pytest.raises(AuthError):
        world.home.identities.authenticate(victim)


def test_a_skill_proposal_carrying_secrets_is_refused_and_the_live_skill_is_untouched(
        world: World, tmp_path: Path) -> None:
    victim = world.home.identities.add("agent-v", "op-v", "agent", NOW)
    install_skill(world.home, SEED_SKILL)
    rejected_extract(world)
    run_pass(world.home, now=NOW)
    before = live_skill_version(world.home)
    body = f"## Extract\n\nQuote verbatim. Credentials: {aws_pair()}\n"
    answer = {"kind": "propose", "section": "extract", "body": body, "rationale": f"use {victim}", "model": "m-1"}
    decision = run_proposer(world.home, backend=hostile_backend(tmp_path / "model", answer),
                            worker=skill_following_worker, now=NOW)
    assert decision.outcome == "refused" and decision.reason.startswith("secret_in_answer: ")
    assert "body" in decision.reason and "rationale" in decision.reason
    assert live_skill_version(world.home) == before
    impact = OpsWiki(world.home).read("skill-impact.md") or ""
    assert "AKIA" not in impact and victim not in impact and "Quote verbatim" not in impact
    with pytest.raises(AuthError):
        world.home.identities.authenticate(victim)
