"""`rw eval`: the swarm's numbers (design §1, §12) from the repositories and ledgers, as text,
JSON or a self-contained HTML report with plots (docs/eval.md)."""

from __future__ import annotations

from pathlib import Path

import click

from verifier.cli.app import RwError, cli, emit, fail, home_from_env, now_from_env, parse_moment
from verifier.cli.remote import project_url, remote_get, remote_option
from verifier.constants import ARM_TIMEOUT_S
from verifier.errors import FormatError, LedgerIntegrityError, NotFound


@cli.command("eval")
@click.argument("slug", required=False)
@click.option("--all", "all_projects", is_flag=True, help="Every project of the home, and the platform totals.")
@click.option("--json", "as_json", is_flag=True)
@click.option("--since", help="Only attempts (and resolutions) at or after this date or time.")
@click.option("--weeks", type=click.IntRange(1, 520), default=12, show_default=True,
              help="Weeks the 12-month signal looks back.")
@click.option("--validation", "validation_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Validation results file (default: $RW_HOME/eval/validation.json when present).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a self-contained HTML report with plots to this file.")
@remote_option
def eval_cmd(slug: str | None, all_projects: bool, as_json: bool, since: str | None, weeks: int,
             validation_path: Path | None, html_path: Path | None, server: str | None) -> None:
    """Acceptance, cost, time to accept, use and resolution accuracy per kind and model; per project
    conflict and catch rates; skill versions live against validation; lift and the kill signal;
    the 12-month signal. Every rate with its n and a 95% interval."""
    # numpy and the evaluation load only when this command runs, not at every `rw` start-up.
    from verifier.evaluation.report import EvalOptions, render_text  # noqa: PLC0415
    from verifier.evaluation.sources import evaluate_home, validation_from_home  # noqa: PLC0415

    if bool(slug) == all_projects:
        raise RwError("name one project (rw eval SLUG) or pass --all")
    if server is not None:
        if slug is None or since is not None or validation_path is not None or html_path is not None:
            raise RwError("--server evaluates one project with the service's defaults: give SLUG and no --all, "
                          "--since, --validation or --html")
        document = remote_get(server, project_url(slug, "eval"))["eval"]
        emit(document, as_json, render_text(document))
        return
    home = home_from_env()
    try:
        slugs = home.projects() if all_projects else [slug or ""]
        since_at = None if since is None else parse_moment(since, "--since")
        options = EvalOptions(now=now_from_env(), since=since_at, weeks=weeks,
                              recruited=tuple(home.settings.recruited_by_steward),
                              validation=tuple(validation_from_home(home, validation_path)))
        document = evaluate_home(home, slugs, options)
    except (NotFound, FormatError, LedgerIntegrityError) as exc:
        fail(exc)
    if html_path is not None:
        from verifier.evaluation.html_report import write_html  # noqa: PLC0415  (matplotlib: only for --html)

        write_html(document, html_path)
    emit(document, as_json, render_text(document))


@cli.command("eval-arm")
@click.argument("slug")
@click.option("--plan", "plan_ids", multiple=True, required=True,
              help="A held-out plan (plans/<id>.md whose hypotheses are decided); repeatable.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(1, 24 * 3600), default=ARM_TIMEOUT_S, show_default=True,
              help="Seconds one arm's worker command may run on one plan.")
@click.option("--json", "as_json", is_flag=True)
def eval_arm_cmd(slug: str, plan_ids: tuple[str, ...], timeout_s: float, as_json: bool) -> None:
    """The controlled arm: each plan run by one agent end to end and by the swarm (the commands in
    settings `eval_arm`), in scratch copies, judged on use score and resolution credit only."""
    from verifier.evaluation.arm_run import run_arms  # noqa: PLC0415  (numpy: only when this command runs)

    home = home_from_env()
    try:
        report = run_arms(home, slug, plan_ids, home.settings.eval_arm, now=now_from_env(), timeout_s=timeout_s)
    except (NotFound, FormatError, LedgerIntegrityError) as exc:
        fail(exc)
    lines = [f"controlled arm: {report['n']} plans run both ways ({report['plans']} attempted)"]
    for measure in ("use_score", "resolution_credit"):
        block = report[measure]
        difference = block["difference"]
        interval = difference["interval"]
        lines.append(f"{measure}: single {block['single']['value']}, swarm {block['swarm']['value']}, "
                     f"swarm - single {difference['value']} n={difference['n']}"
                     + (f" 95% [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""))
    lines += [f"unfinished: {line}" for line in report["unfinished"]]
    emit(report, as_json, "\n".join(lines))
