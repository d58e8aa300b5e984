"""`rw demo`: the whole loop on the embedded defaults, end to end, on real repositories.

It creates a verifier home, makes the fixture project, registers an agent, writes an extract
leaf, then a scripted agent submits a bad patch (one misquoted figure) and a good one to the
same leaf. Both verdicts, the ledger and its verification are printed. Then the Planner wakes on
the new findings (link, skeptic and review leaves, posted as Commons tasks), the digest shows the
corpus, and the UI is written as a static site under the home (`site/index.html`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from verifier.agentkit.scripted import ScriptedAgent, load_script
from verifier.audits.audit import verify_ledger
from verifier.formats.base import iso
from verifier.formats.ids import source_id_for
from verifier.formats.leaf import LeafContract, LeafInputs
from verifier.pipeline.digest import digest
from verifier.pipeline.ledger import read_chain
from verifier.pipeline.submit import submit
from verifier.roles.planner import local_commons, wake
from verifier.state.layout import default_write_rules
from verifier.store.fetcher import OfflineFetcher
from verifier.store.home import Home
from verifier.ui.site import build_site, write_site
from verifier.wiring import open_home
from verifier.writes.project import add_leaf, init_project

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SLUG = "world-model-eval"
NOTE_URL = "https://notes.example.org/world-models/analyst-note-2026-03-12.txt"


def run_demo(root: Path, *, now: datetime, echo: Callable[[str], None]) -> int:
    if root.exists() and any(root.iterdir()):
        echo(f"Error: {root} is not empty; give --home an empty or new folder")
        return 2
    home = open_home(root)
    echo(f"verifier home: {root}")
    init_project(home, SLUG, now=now, template=FIXTURES / "demo-project")
    echo(f"1. created project {SLUG} from fixtures/demo-project")
    token = home.identities.add("demo-agent", "demo-operator", "agent", now)
    echo("2. registered agent demo-agent (operator demo-operator)")
    repo = home.project(SLUG)
    source_id = source_id_for(NOTE_URL)
    tip = repo.tip()
    assert tip is not None
    leaf = LeafContract(
        leaf_id="extract-analyst-note", kind="extract", title="Extract findings from the analyst note",
        inputs=LeafInputs(source_id=source_id), base_revision=tip, may_write=default_write_rules("extract"),
        check="extract", created_at=now, created_by="planner", expires_at=now.replace(year=now.year + 1),
    )
    add_leaf(home, SLUG, leaf, now=now, actor="planner")
    echo(f"3. wrote leaf {leaf.leaf_id} (extract from {source_id}, expires {iso(leaf.expires_at)})")
    agent = ScriptedAgent(home, "demo-agent", "demo-operator", token)
    verdicts = []
    for label, script in (("bad patch ", "extract-bad-excerpt.yaml"), ("good patch", "extract-good.yaml")):
        submission = agent.extract(SLUG, leaf.leaf_id, load_script(FIXTURES / "submissions" / script), now=now)
        verdict = submit(home, submission, now=now, fetcher=OfflineFetcher())
        verdicts.append(verdict)
        echo(f"4. {label}: {verdict.line()}")
    echo("5. ledger:")
    for _, row in read_chain(repo.view(repo.tip())):
        reason = f" [{row.reason_code}]" if row.reason_code else ""
        echo(f"   #{row.seq} {row.outcome:<8} {row.action:<6} {row.leaf_id or '-'} by {row.actor}{reason}")
    report = verify_ledger(repo, home.read_anchor(SLUG))
    echo(f"6. ledger --verify: {'ok' if report.ok else 'FAILED ' + '; '.join(report.problems)}")
    planned = _plan_and_show(home, now, echo)
    expected = ["rejected", "accepted"]
    ok = [v.outcome for v in verdicts] == expected and report.ok and planned > 0
    echo("demo finished: " + ("as expected" if ok else "UNEXPECTED OUTCOME"))
    return 0 if ok else 1


def _plan_and_show(home: Home, now: datetime, echo: Callable[[str], None]) -> int:
    """Steps 7-9: the Planner's wake on the new findings, the digest, the static UI; how many
    leaves the Planner made."""
    result = wake(home, SLUG, now, commons=local_commons(home), force=True)
    leaves = result.plan.postable() if result.plan is not None and result.landed is not None else []
    kinds = sorted({leaf.kind for leaf in leaves})
    echo(f"7. planner wake: {len(leaves)} leaves ({', '.join(kinds) or 'none'}); "
         f"{result.posted} open leaves posted as Commons tasks")
    corpus = digest(home, SLUG, now).get("corpus", {})
    echo(f"8. digest: {corpus.get('findings', 0)} findings from {corpus.get('sources', 0)} sources")
    site = home.layout.site
    written = write_site(build_site(home, SLUG, now), site)
    echo(f"9. UI: {written} pages at {site / 'index.html'} (or `rw serve` and open http://127.0.0.1:8765/)")
    return len(leaves)
