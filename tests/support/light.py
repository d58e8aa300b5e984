"""What an agent's local command loads: run `rw ...` in a fresh interpreter, in a folder, and read
back the modules it imported and the collector's state when it ended (tests/cli/test_light_commands.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support.workdir import working_folder
from tests.support.world import NOTE_ID, World
from verifier.agentkit.objects import finding_file
from verifier.agentkit.workdir import Work

# Printed after the command, on stdout's last line, whatever the command's own exit.
_RUN = """
import gc, json, sys
from verifier.cli.main import CHECK_WITHOUT_CLICK, main
if sys.argv[2] == "click":
    CHECK_WITHOUT_CLICK.clear()  # every argument list through click, `rw check` as typed too
sys.argv = ["rw", *json.loads(sys.argv[1])]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
# Whether the tokenizer's regular expressions were compiled (inspect does, to read a builtin's
# signature from its text: pydantic asks one of every default_factory).
tokenize = sys.modules.get("tokenize")
tokenizer = tokenize is not None and tokenize._compile.cache_info().currsize > 0
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules), "gc": gc.isenabled(),
                          "frozen": gc.get_freeze_count(), "tokenizer": tokenizer}))
"""


@dataclass(frozen=True)
class Ran:
    code: int
    out: str  # stdout, then stderr
    stderr: str
    modules: frozenset[str]
    gc_enabled: bool
    frozen: int
    tokenizer_compiled: bool

    def loaded(self, *prefixes: str) -> list[str]:
        """The imported modules that are, or are inside, any of `prefixes`."""
        return sorted(name for name in self.modules
                      if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes))


def run_rw(argv: list[str], cwd: Path, env: dict[str, str] | None = None, *, through_click: bool = False) -> Ran:
    """`rw ARGV...` run in `cwd` in its own interpreter, with PATH for git and nothing of RW_HOME;
    with `through_click`, click parses it even where `rw` would not (verifier.cli.main)."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"),
            "RW_SERVER": "http://127.0.0.1:9"}
    way = "click" if through_click else "rw"
    done = subprocess.run([sys.executable, "-c", _RUN, json.dumps(argv), way], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=120, env={**base, **(env or {})})
    head, _, last = done.stdout.rstrip("\n").rpartition("\n")
    try:
        report = json.loads(last)
    except ValueError as exc:
        raise AssertionError(f"rw {argv} printed no report: {done.stdout}{done.stderr}") from exc
    return Ran(report["code"], head + done.stderr, done.stderr, frozenset(report["modules"]), report["gc"],
               report["frozen"], report["tokenizer"])


def add_findings(work: Work, count: int = 3) -> None:
    """`count` correct findings of the fixture note in the folder, as `rw new finding` writes them."""
    text = work.source_text(NOTE_ID)
    sentences = [part.strip() + "." for part in text.split(". ") if len(part.split()) >= 6][:count]
    for number, sentence in enumerate(sentences):
        path, data = finding_file(source_id=NOTE_ID, source_text=text, excerpt=sentence, statement=f"Claim {number}.",
                                  limitation="One note.", leaf_id=work.state.leaf_id)
        work.write(path, data)


def misquote(finding: Path, words: str = "Zq Zq") -> None:
    """Words the source does not have put in front of a finding file's excerpt (quoted or not)."""
    lines = finding.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("excerpt: "))
    value = lines[at][len("excerpt: "):]
    quote = value[0] if value[0] in "'\"" else ""
    lines[at] = f"excerpt: {quote}{words} {value[len(quote):]}"
    finding.write_text("\n".join(lines))


def checked_folder(world: World, root: Path) -> Path:
    """A working folder under `root` for an extract leaf holding three correct findings, checked
    once (so the scanner's cache of detect-secrets, in root/cache, is written as after an agent's
    first `rw` command)."""
    world.leaf("extract-light")
    work = working_folder(world, "extract-light", root / "work")
    add_findings(work)
    assert run_rw(["check"], work.root, {"XDG_CACHE_HOME": str(root / "cache")}).code == 0
    return work.root
