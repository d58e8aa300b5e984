"""A stand-in for the `claude` and `codex` CLIs, put on PATH under those names (`install`), for the
agent worker's tests: it checks how it was started, then replays a recorded transcript to stdout
and does to the folder what the transcript's tool calls say (it runs each `rw` command the
transcript runs, and puts that command's real output in the tool result).

The test steers it through the environment the worker passes on:
    RW_STANDIN_LOG   a JSON file it writes what it saw to (argv, cwd, which variables, the skill)
    RW_STANDIN_MODE  replay (default) | exit1 | hang | silent | leak (prints RW_TOKEN in a tool result)
The transcripts are tests/support/transcripts/<cli>-extract.jsonl, in each CLI's documented format,
with placeholders: {{CWD}}, {{Q_EXCERPT_n}} (a sentence of the leaf's source, shell-quoted),
{{READ:path}} (a file of the folder) and {{RESULT:id}} (the output of tool call `id`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts"
ROOT = Path(__file__).resolve().parents[2]


def install(bin_dir: Path) -> Path:
    """Write `claude` and `codex` executables into `bin_dir` (to put first on PATH)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in ("claude", "codex"):
        script = bin_dir / name
        script.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                          "from tests.support.agent_cli import main\nmain()\n", encoding="utf-8")
        script.chmod(0o755)
    return bin_dir


def _sentences(folder: Path, count: int) -> list[str]:
    text = next((folder / ".rw" / "sources").glob("*.txt")).read_text(encoding="utf-8")
    picked = [part.strip() + "." for part in text.split(". ") if len(part.split()) >= 6 and "'" not in part]
    return picked[:count]


def _fill(line: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        line = line.replace("{{" + key + "}}", json.dumps(value)[1:-1])
    return line


def _run(command: str) -> str:
    done = subprocess.run(shlex.split(command), capture_output=True, text=True, check=False)
    return (done.stdout + done.stderr).strip()


def _commands(event: dict[str, object]) -> list[tuple[str, str]]:
    """The (id, command) of each `rw` command this transcript line starts."""
    found: list[tuple[str, str]] = []
    message = event.get("message")
    if event.get("type") == "assistant" and isinstance(message, dict):
        for block in message.get("content", []):
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Bash":
                found.append((str(block["id"]), str(block["input"]["command"])))
    item = event.get("item")
    if event.get("type") == "item.started" and isinstance(item, dict) and item.get("type") == "command_execution":
        found.append((str(item["id"]), str(item["command"])))
    return [(tool_id, command) for tool_id, command in found if command.startswith("rw ")]


def _record(cli: str) -> None:
    folder = Path.cwd()
    skill = folder / (".claude/skills/researchwiki/SKILL.md" if cli == "claude" else "AGENTS.md")
    seen = {"cli": cli, "argv": sys.argv[1:], "cwd": str(folder),
            "env": {name: os.environ.get(name) for name in ("RW_TOKEN", "RW_SERVER", "RW_PROJECT", "RW_LEAF",
                                                             "RW_HOME", "RW_WORKER_TOKEN")},
            "skill": skill.read_text(encoding="utf-8") if skill.is_file() else None}
    log = os.environ.get("RW_STANDIN_LOG")
    if log:
        Path(log).write_text(json.dumps(seen), encoding="utf-8")


def main() -> None:
    cli = Path(sys.argv[0]).name
    _record(cli)
    mode = os.environ.get("RW_STANDIN_MODE", "replay")
    if mode == "exit1":
        print("Error: Invalid API key · Please run /login", file=sys.stderr)
        sys.exit(1)
    if mode == "hang":
        print(json.dumps({"type": "system", "subtype": "init", "model": "claude-sonnet-4-5-20250929"}), flush=True)
        time.sleep(3600)
    if mode == "silent":
        sys.exit(0)
    folder = Path.cwd()
    values = {"CWD": str(folder)}
    for number, sentence in enumerate(_sentences(folder, 3)):
        values[f"Q_EXCERPT_{number}"] = shlex.quote(sentence)
    payload = (folder / ".rw" / "payload.json").read_text(encoding="utf-8")
    values["READ:.rw/payload.json"] = payload[:2000] + (f" {os.environ['RW_TOKEN']}" if mode == "leak" else "")
    for raw in (TRANSCRIPTS / f"{cli}-extract.jsonl").read_text(encoding="utf-8").splitlines():
        line = _fill(raw, values)
        for tool_id, command in _commands(json.loads(line)):
            values[f"RESULT:{tool_id}"] = _run(command)
        print(_fill(line, values), flush=True)
