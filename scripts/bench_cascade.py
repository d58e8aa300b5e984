"""Benchmark: what a revert's cascade costs (verifier.checks.dependants), on a real git tree of
1,000 and of 100,000 links (10 links per finding), reverting one finding: the cascade walks every
finding, link and review file, so its cost grows with the corpus; the byte pre-filter keeps the
parse to the files that name a withdrawn id. Last line: one JSON object.
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


def build(root: Path, links: int) -> GitTree:
    """A bare repository whose one commit holds links/10 findings and `links` links."""
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
    tree = repo[index.write_tree(repo)]
    assert isinstance(tree, pygit2.Tree)
    return GitTree(repo, tree)


def measure(links: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        view = build(Path(tmp) / "repo.git", links)
        finding = sorted(view.list_dir("findings"))[0]
        target = next(f"findings/{finding}/{name}" for name in view.list_dir(f"findings/{finding}"))
        start = time.perf_counter()
        result = cascade(view, {target: None})
        elapsed = time.perf_counter() - start
        return elapsed * 1000, len(result.withdrawn)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", type=int, default=100_000)
    args = parser.parse_args()
    small_ms, small_n = measure(1_000)
    large_ms, large_n = measure(args.large)
    print(f"cascade of one finding at 1,000 links: {small_ms:.0f} ms ({small_n} links withdrawn)")
    print(f"cascade of one finding at {args.large:,} links: {large_ms:.0f} ms ({large_n} links withdrawn)")
    print(json.dumps({"cascade_ms_1k": round(small_ms, 1), f"cascade_ms_{args.large // 1000}k": round(large_ms, 1),
                      "withdrawn_1k": small_n, f"withdrawn_{args.large // 1000}k": large_n}))


if __name__ == "__main__":
    main()
