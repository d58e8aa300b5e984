"""An excerpt that differs from the source by a look-alike character is still refused (the exact
rule is not relaxed), and the refusal marks the first differing character and names the
look-alike: a curly vs a straight quote, a decimal comma vs point (issue 23 point 7). Through
`rw new finding` in a working folder, and through the verifier's own extract check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.cli import Ran, rw_here
from tests.support.workdir import working_folder
from tests.support.world import NOTE_ID, SLUG, World
from verifier.agentkit.objects import finding_file
from verifier.agentkit.tracing import TraceLog
from verifier.agentkit.workdir import make_patch, manifest_for
from verifier.pipeline.submit import Submission

# The note says "steers someone else's model" (a straight apostrophe) and "USD 0.004".
CASES = [
    ("steers someone else\u2019s model", "curly vs straight single quote", "else[\u2019]s"),
    ("price is per clip checked: USD 0,004 at list", "decimal or thousands separator", "0[,]004"),
]


def rw_new_finding(folder: Path, excerpt: str) -> Ran:
    """`rw new finding` in the working folder, run in this process (what it answers is under test,
    not the process)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("RW_")}
    return rw_here("new", "finding", "--excerpt", excerpt, "--statement", "s", "--limitation", "l",
                   env=env, exact_env=True, cwd=folder)


@pytest.mark.parametrize(("excerpt", "family", "marked"), CASES)
def test_a_look_alike_is_refused_with_the_character_marked_and_named(world: World, tmp_path: Path, excerpt: str,
                                                                      family: str, marked: str) -> None:
    world.leaf("extract-look")
    work = working_folder(world, "extract-look", tmp_path / "work")
    text = work.source_text(NOTE_ID)
    assert excerpt not in text  # the exact rule refuses it
    done = rw_new_finding(work.root, excerpt)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "first difference at character" in done.stderr and marked in done.stderr
    assert f"a look-alike: {family}" in done.stderr

    # The verifier's check says the same of a finding file written by hand.
    path, data = finding_file(source_id=NOTE_ID, source_text=text, excerpt=excerpt, statement="s", limitation="l",
                              leaf_id="extract-look", location=(0, len(excerpt)))
    work.write(path, data)
    patch = make_patch(work)
    bundle = TraceLog(work.trace_dir).bundle(manifest_for(work, "sk-test"), patch)
    verdict = world.submit(Submission(SLUG, "extract-look", patch, bundle, world.agent.token))
    found = [r for r in verdict.rejections if r.code == "excerpt_not_found"]
    assert found and marked in found[0].message and f"a look-alike: {family}" in found[0].message, verdict.line()
