"""Benchmark: what a revert's cascade costs (verifier.checks.dependants), on a real git tree of
1,000 and of 100,000 links (10 links per finding), reverting one finding. The cascade reads the
index of what rests on what kept with the scores (verifier.scoring.rests), so its cost should not
grow with the corpus: target 100k/1k ratio <= 3 (issue 26). The tree's index is built once in the
set-up by the same scan a project without one gets (`rebuild_ms`, reported, not in the ratio).
Each cascade is timed best of --repeat (wall clock; the machine is shared). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import pygit2

from verifier.checks.dependants import cascade
from verifier.formats.ids import finding_id_for, link_id_for
from verifier.scoring.rests import RestIndex
from verifier.state.layout import finding_path, link_path
from verifier.store.gitrepo import GitTree

SOURCE = "src_" + "5" * 16


def _finding(finding_id: str) -> bytes:
    return (f"finding_id: {finding_id}\nsource_id: {SOURCE}\nexcerpt: Seven of eleven teams pay.\n"
            "location:\n  start: 0\n  end: 25\nstatement: Teams pay.\nlimitation: Small sample.\n"
            "leaf_id: extract-1\n").encode()


def _link(link_id: str, finding_id: str) -> bytes:
    return (f"link_id: {link_id}\nfinding_id: {finding_id}\nhypothesis_id: H1\nhypothesis_revision: 1\n"
            "stance: supports\nrationale: Because.\nleaf_kind: link\nleaf_id: link-1\n").encode()


def build(root: Path, links: int) -> tuple[GitTree, float]:
    """A bare repository whose one commit holds links/10 findings, `links` links and the index of
    what rests on what; returns the tree and the ms its index took to build by a scan."""
    repo = pygit2.init_repository(str(root), bare=True)
    index = pygit2.Index()
    findings = [finding_id_for(SOURCE, f"excerpt {n}") for n in range(max(1, links // 10))]
    for finding_id in findings:
        index.add(pygit2.IndexEntry(finding_path(finding_id), repo.create_blob(_finding(finding_id)),
                                    pygit2.enums.FileMode.BLOB))
    for n in range(links):
        finding_id = findings[n % len(findings)]
        link_id = link_id_for(finding_id, "H1", n + 1)
        index.add(pygit2.IndexEntry(link_path(link_id), repo.create_blob(_link(link_id, finding_id)),
                                    pygit2.enums.FileMode.BLOB))
    corpus = repo[index.write_tree(repo)]
    assert isinstance(corpus, pygit2.Tree)
    view = GitTree(repo, corpus)
    rests = RestIndex(view.read)
    start = time.perf_counter()
    rests.rebuild(view)
    rebuild_ms = (time.perf_counter() - start) * 1000
    for path, data in rests.writes().items():
        if data is not None:
            index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    tree = repo[index.write_tree(repo)]
    assert isinstance(tree, pygit2.Tree)
    return GitTree(repo, tree), rebuild_ms


def measure(links: int, repeat: int) -> tuple[float, int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        view, rebuild_ms = build(Path(tmp) / "repo.git", links)
        finding = sorted(view.list_dir("findings"))[0]
        target = next(f"findings/{finding}/{name}" for name in view.list_dir(f"findings/{finding}"))
        best = float("inf")
        for _ in range(repeat):
            # As a revert does: a fresh index over the tip's tree (revert_landing's ScoreBook).
            start = time.perf_counter()
            result = cascade(view, {target: None}, RestIndex(view.read))
            best = min(best, time.perf_counter() - start)
        return best * 1000, len(result.withdrawn), rebuild_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    small_ms, small_n, small_build = measure(1_000, args.repeat)
    large_ms, large_n, large_build = measure(args.large, args.repeat)
    large = f"{args.large // 1000}k"
    print(f"cascade of one finding at 1,000 links: {small_ms:.1f} ms ({small_n} links withdrawn)")
    print(f"cascade of one finding at {args.large:,} links: {large_ms:.1f} ms ({large_n} links withdrawn)")
    print(f"building the index by a scan: {small_build:.0f} ms at 1,000 links, {large_build:.0f} ms at {args.large:,}")
    print(json.dumps({"cascade_ms_1k": round(small_ms, 2), f"cascade_ms_{large}": round(large_ms, 2),
                      "ratio": round(large_ms / small_ms, 2), "withdrawn_1k": small_n, f"withdrawn_{large}": large_n,
                      "rebuild_ms_1k": round(small_build, 1), f"rebuild_ms_{large}": round(large_build, 1)}))


if __name__ == "__main__":
    main()
