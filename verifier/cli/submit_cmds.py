"""`rw submit` (a patch plus its trace, through the pipeline) and `rw demo`."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import NoReturn

import click

from verifier.agentkit.transcripts import Disclosure
from verifier.cli.agent_cmds import disclosure_options, given_disclosure, submit_work
from verifier.cli.app import (
    RwError,
    cli,
    fail,
    fetcher_for,
    home_from_env,
    now_from_env,
)
from verifier.cli.remote import server_unless_home
from verifier.cli.service_cmds import remote_edit, remote_submit
from verifier.cli.verdicts import show_verdict
from verifier.constants import MAX_PATCH_FILE, SUBMIT_RETRY_S
from verifier.errors import AuthError, FormatError, NotFound, Rejected, Rejection


def _submit_working_folder(slug: str | None, leaf_id: str | None, patch_file: Path | None, trace_path: Path | None,
                           as_json: bool, retry_for: str, summary: str | None, server: str | None,
                           disclosed: Disclosure) -> NoReturn:
    """Plain `rw submit` inside a working folder (rw work); anything else without SLUG or --patch is a usage error."""
    if patch_file is not None or slug is not None or leaf_id is not None or trace_path is not None:
        raise RwError("give SLUG and --patch, or nothing at all inside a working folder (rw work)")
    submit_work(as_json, retry_for, summary, server, disclosed)


def _submit_remote(server: str, slug: str, leaf_id: str | None, patch_file: Path, trace_path: Path | None,
                   base: str | None, as_json: bool, retry_for: str) -> NoReturn:
    if not patch_file.is_file():
        raise RwError(f"no patch file at {patch_file}", NotFound.exit_code)
    if patch_file.stat().st_size > MAX_PATCH_FILE:
        raise RwError(f"{patch_file} is larger than {MAX_PATCH_FILE} bytes")
    if leaf_id is None:  # a person's edit
        remote_edit(server, slug, patch_file, trace_path, base, as_json, retry_for)
    if trace_path is None or base is not None:
        raise RwError("a leaf's patch goes with its --trace, and is judged at the leaf's base (no --base)")
    remote_submit(server, slug, leaf_id, patch_file, trace_path, as_json, retry_for)


@cli.command("submit")
@click.argument("slug", required=False)
@click.option("--leaf", "leaf_id", help="The leaf this patch is for. Without it: a person's edit (human token).")
@click.option("--patch", "patch_file", type=click.Path(dir_okay=False, path_type=Path),
              help="The patch. Without it (and without SLUG): submit the working folder you are in (rw work).")
@click.option("--trace", "trace_path", type=click.Path(path_type=Path),
              help="The trace bundle: a folder with manifest.json, events.jsonl, patch.diff, or a tar. "
                   "Required for leaves; optional for a person's edit.")
@click.option("--base", help="A person's edit: the revision the patch was made against (default: the tip).")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON (for agents).")
@click.option("--server", metavar="URL",
              help="Submit to a verifier service (rw serve) instead of in-process; retries while it is down. "
                   "A person's edit (SLUG and --patch, no --leaf): else RW_SERVER, else (with no RW_HOME) the "
                   "server `rw join` stored; over a service, --base is a commit id.")
@click.option("--retry-for", default=f"{SUBMIT_RETRY_S // 60}m", show_default=True,
              help="With --server: how long to keep retrying.")
@click.option("--summary", help="A working folder's submit: the final summary, if the trace has none yet.")
@disclosure_options
def submit_cmd(slug: str | None, leaf_id: str | None, patch_file: Path | None, trace_path: Path | None,
               base: str | None, as_json: bool, server: str | None, retry_for: str, summary: str | None,
               model: str | None, tokens: int | None, tokens_in: int | None, tokens_out: int | None,
               tokens_cached: int | None, usd: float | None, duration: str | None) -> None:
    """Submit a patch with its trace bundle for a leaf, or a person's edit; the token comes from RW_TOKEN.

    Inside a working folder made by `rw work`, plain `rw submit` sends the folder's patch and trace,
    with what the run disclosed (`rw trace import`, `rw trace meta`, and the --model, --tokens*,
    --usd and --duration flags here, which win); a bundle given with --trace carries its own manifest.
    """
    disclosed = given_disclosure(model, tokens, tokens_in, tokens_out, tokens_cached, usd, duration)
    if patch_file is None or slug is None:
        _submit_working_folder(slug, leaf_id, patch_file, trace_path, as_json, retry_for, summary, server, disclosed)
    if disclosed != Disclosure():
        raise RwError("--model, --tokens*, --usd and --duration disclose a working folder's run; a bundle given "
                      "with --trace discloses in its manifest.json")
    if leaf_id is None:  # a person's edit runs where a person's commands do (verifier.cli.remote)
        server = server_unless_home(server or os.environ.get("RW_SERVER") or None)
    if server is not None:
        _submit_remote(server, slug, leaf_id, patch_file, trace_path, base, as_json, retry_for)
    # The pipeline is imported here, not at the top: a working folder's or a --server submit (an
    # agent's) never runs it, and it is most of this module's start-up time.
    from verifier.pipeline.submit import Submission, submit  # noqa: PLC0415
    from verifier.writes.followups import seal_after_landing  # noqa: PLC0415

    home = home_from_env()
    token = os.environ.get("RW_TOKEN", "")
    try:
        if not patch_file.is_file():
            raise NotFound(f"no patch file at {patch_file}")
        if patch_file.stat().st_size > MAX_PATCH_FILE:
            raise RwError(f"{patch_file} is larger than {MAX_PATCH_FILE} bytes")
        patch = patch_file.read_bytes()
        bundle, problem = _read_bundle(trace_path)
        verdict = submit(home, Submission(slug, leaf_id, patch, bundle, token, base=base, bundle_problem=problem),
                         now=now_from_env(), fetcher=fetcher_for(home))
    except (AuthError, NotFound, FormatError) as exc:
        fail(exc)
    if leaf_id is None and verdict.outcome == "accepted":
        # A person's edit may have made a hypothesis active: its baseline is sealed now, after the
        # edit landed and outside the lock.
        sealed, note = seal_after_landing(home, slug, now=now_from_env())
        if sealed:
            click.echo(f"sealed baseline for {', '.join(sealed)}", err=True)
        if note:
            click.echo(f"note: {note}", err=True)
    raise SystemExit(show_verdict(verdict.to_json(), as_json))


def _read_bundle(trace_path: Path | None) -> tuple[dict[str, bytes], Rejection | None]:
    """The bundle's files; an unreadable bundle is a rejection the pipeline records, with its own reason."""
    from verifier.store.traces import load_bundle  # noqa: PLC0415 - see submit_cmd

    if trace_path is None:
        return {}, None
    try:
        return load_bundle(trace_path), None
    except Rejected as exc:
        return {}, exc.headline


@cli.command("demo")
@click.option("--home", "home_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where to build the demo home (default: a fresh temporary folder).")
def demo_cmd(home_dir: Path | None) -> None:
    """Run the demo end to end: a project, an agent, an extract leaf, a bad and a good patch."""
    from verifier.demo import run_demo  # noqa: PLC0415 - see submit_cmd

    target = home_dir or Path(tempfile.mkdtemp(prefix="rw-demo-"))
    code = run_demo(target, now=now_from_env(), echo=click.echo)
    raise SystemExit(code)
