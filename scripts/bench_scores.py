"""Benchmark: the use-score rescore after one accepted link, on corpora of 1,000 and 100,000 links,
and `rw replay` on a history of 10,000 commits beside `git log --name-only` on the same repository.

Rescore is what landing does for one link: open the score book on the tree, feed it the link,
and produce the changed score files. The corpora are real repositories whose scores/ hold every
entry and the index of what rests on what (scoring.rests) that every scoring landing keeps (without
it each round would build it from the tree, the one-time cost of a project from before it). The
replay history is built through the verifier's own landing (contribution commit plus ledger commit,
rescored each time). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from verifier.agentkit.objects import link_file
from verifier.audits.replay import replay
from verifier.formats.entries import SubmitEntry
from verifier.formats.yamlout import dump_yaml
from verifier.pipeline.landing import Contribution
from verifier.pipeline.scores import apply_writes
from verifier.pipeline.writer import ProjectWriter
from verifier.scoring.rests import RestIndex
from verifier.scoring.use import ObjectFacts, ScoreBook
from verifier.state.layout import finding_path
from verifier.store.gitrepo import VERIFIER, Person
from verifier.store.home import Home, Settings
from verifier.wiring import open_home
from verifier.writes.project import init_project

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OPERATORS = [f"op-{n}" for n in range(20)]


def fresh_home(root: Path, slug: str) -> Home:
    home = open_home(root)
    home.save_settings(Settings(durable=False, fetch="offline"))
    home = open_home(root)
    template = root / "template"
    (template / "hypotheses").mkdir(parents=True)
    (template / "PROJECT.md").write_text(f"---\nproject: {slug}\nhypotheses: [H1, H2]\n---\n")
    for h in ("H1", "H2"):
        (template / "hypotheses" / f"{h}.md").write_text(f"---\nhypothesis_id: {h}\nrevision: 1\nstatement: s\n---\n")
    init_project(home, slug, now=NOW, template=template)
    return home


def _hex(prefix: str, n: int) -> str:
    # Real ids are sha256-derived, so they spread evenly over the score shards; so do these.
    return prefix + hashlib.sha256(f"{prefix}{n}".encode()).hexdigest()[:16]


def finding_id(n: int) -> str:
    return _hex("fnd_", n)


def corpus_with_links(root: Path, links: int) -> tuple[Home, str]:
    """A project whose score files already account for `links` links over links/10 findings."""
    home = fresh_home(root, "scores")
    repo = home.project("scores")
    findings = max(10, links // 10)
    book = ScoreBook(lambda _path: None)
    for n in range(findings):
        book.add(ObjectFacts("finding", finding_id(n), OPERATORS[n % len(OPERATORS)]))
    for n in range(links):
        book.add(ObjectFacts("link", _hex("lnk_", n), OPERATORS[(n * 7) % len(OPERATORS)],
                             finding_id=finding_id(n % findings), hypothesis_id="H1" if n % 2 else "H2"))
    book.dirty = set(book.shards)
    book.summary_dirty = True
    files: dict[str, bytes | None] = dict(book.writes())
    # The findings the new links point at must exist as files, as the link check requires.
    for n in range(min(findings, 128)):
        files[finding_path(finding_id(n))] = dump_yaml({"finding_id": finding_id(n)})
    tip = repo.tip()
    tree = repo.build_tree(tip, files)
    # Every scoring landing keeps the index of what rests on what beside the scores (a project
    # from before it gets it built once, at its first): the corpus holds it, as a running one does.
    draft = repo.create_commit(tree=tree, parents=[tip] if tip else [], author=VERIFIER, committer=VERIFIER,
                               message="bench corpus\n", when=NOW)
    rests = RestIndex(repo.view(draft).read)
    rests.rebuild(repo.view(draft))
    tree = repo.build_tree(draft, rests.writes())
    commit = repo.create_commit(tree=tree, parents=[tip] if tip else [], author=VERIFIER, committer=VERIFIER,
                                message="bench corpus\n", when=NOW)
    repo.move_branch(commit, tip)
    return home, commit


def time_rescore(home: Home, tip: str, rounds: int) -> list[float]:
    """Each round links a different finding, so the shards it reads are cold (as for a new link
    in a running service); a few rounds on other findings warm up the process first."""
    view = home.project("scores").view(tip)
    gc.collect()  # the corpus build's garbage must not be collected inside a timed round
    times = []
    for n in [*range(60, 64), *range(rounds)]:
        path, data = link_file(finding_id=finding_id(n), hypothesis_id="H1", revision=1, stance="contradicts",
                               rationale="bench", leaf_kind="link", leaf_id="link-bench")
        start = time.perf_counter()
        book = ScoreBook(view.read)
        apply_writes(book, view, {path: data}, "op-bench")
        book.writes()
        times.append(time.perf_counter() - start)
    return times[4:]


def history(root: Path, commits: int) -> Home:
    """`commits` commits made by landing: half contributions (findings and links), half ledger rows."""
    home = fresh_home(root, "history")
    author = Person("bench-agent", "bench-agent@agents.researchwiki.invalid")
    with ProjectWriter.open(home, "history") as writer:
        for n in range(commits // 2):
            _land_one(writer, author, n)
    home.upkeep.wait_idle()  # the history packed (verifier.store.upkeep) before anything is timed
    return home


def _land_one(writer: ProjectWriter, author: Person, n: int) -> None:
    view = writer.view()
    if n % 5 == 4:
        path, data = link_file(finding_id=finding_id(n - 1), hypothesis_id="H1", revision=1,
                               stance="supports", rationale="bench", leaf_kind="human", leaf_id=None)
    else:
        path, data = finding_path(finding_id(n)), dump_yaml({"finding_id": finding_id(n), "n": n})
    operator = OPERATORS[n % len(OPERATORS)]
    book = ScoreBook(view.read)
    apply_writes(book, view, {path: data}, operator)
    writer.land(SubmitEntry(at=NOW, action="human", actor="bench-agent", actor_type="human", operator=operator,
                            description=f"bench {n}"), bookkeeping=book.writes(),
                contribution=Contribution(writes={path: data}, author=author, subject=f"bench {n}",
                                          trailers={"Operator": operator}))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rw-bench-scores-") as scratch:
        results = {}
        for label, size in (("1k", args.small), ("100k", args.large)):
            started = time.perf_counter()
            home, tip = corpus_with_links(Path(scratch) / label, size)
            print(f"corpus of {size} links built in {time.perf_counter() - started:.1f}s", file=sys.stderr)
            results[label] = statistics.median(time_rescore(home, tip, args.rounds)) * 1000
        started = time.perf_counter()
        home = history(Path(scratch) / "history", args.commits)
        repo = home.project("history")
        print(f"history of {args.commits} commits built in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        # Best of three for both sides, alternating, so a busy moment of a shared machine does not
        # decide the ratio.
        replay_runs, git_runs = [], []
        for _ in range(3):
            gc.collect()
            start = time.perf_counter()
            report = replay(repo)
            replay_runs.append(time.perf_counter() - start)
            if not report.ok:
                raise SystemExit(f"replay found differences: {report.differences[:3]}")
            start = time.perf_counter()
            subprocess.run(["git", "--git-dir", str(repo.path), "log", "--name-only", "main"], check=True,
                           stdout=subprocess.DEVNULL)
            git_runs.append(time.perf_counter() - start)
        replay_s, git_log_s = min(replay_runs), min(git_runs)
        print(f"replay runs {[round(r, 2) for r in replay_runs]} s; git log runs {[round(r, 2) for r in git_runs]} s",
              file=sys.stderr)
    result = {
        "rescore_1k_ms": round(results["1k"], 3),
        "rescore_100k_ms": round(results["100k"], 3),
        "rescore_ratio": round(results["100k"] / results["1k"], 3),
        "replay_s": round(replay_s, 3),
        "git_log_s": round(git_log_s, 3),
        "replay_ratio": round(replay_s / git_log_s, 3),
    }
    print(f"rescore after one link: {result['rescore_1k_ms']} ms at 1k links, {result['rescore_100k_ms']} ms at "
          f"100k links (ratio {result['rescore_ratio']}, target <= 2)")
    print(f"replay of {report.commits} commits: {result['replay_s']} s; git log --name-only: {result['git_log_s']} s "
          f"(ratio {result['replay_ratio']}, target <= 1.5)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
