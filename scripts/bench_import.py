"""Benchmark: `rw trace import --from claude-stream-json` on a 20 MB transcript, against the secret
scan of the same bytes that any import must do anyway (issue 24).

The transcript is written to match Claude Code's stream-json (system/init, assistant turns with
thinking, text and tool_use blocks, user tool_result lines carrying long tool output, one result
line), with a few secrets planted in tool output. `import_s` is the import as the command does it,
in this process: parse the lines (agentkit.transcripts), strip and cap each event and append them
to a working folder's trace (agentkit.tracing), and keep the disclosure. `scan_only_s` is
`verifier.secrets.scan_bytes` over the transcript's bytes. Target: ratio = import_s / scan_only_s
<= 1.5. Best of `--repeat` runs each (the machine is shared; figures are noisy under load).
Last line: one JSON object with import_s, scan_only_s, ratio, events, mb.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support, from a fresh checkout

from tests.support.transcripts import bare_folder
from verifier.agentkit.disclosure import disclose
from verifier.agentkit.tracing import TraceLog
from verifier.agentkit.transcripts import parse_transcript
from verifier.secrets import scan_bytes

MODEL = "claude-sonnet-4-5-20250929"
SECRET = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
WORDS = ("grid", "storage", "capacity", "grew", "by", "percent", "in", "the", "year", "report", "says",
         "operators", "cited", "batteries", "lithium", "iron", "phosphate", "costs", "fell", "while",
         "installations", "rose", "across", "markets")


def _prose(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        line = " ".join(rng.choice(WORDS) for _ in range(14)) + "."
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def transcript(target_bytes: int, seed: int = 7) -> bytes:
    """A stream-json transcript of about `target_bytes`."""
    rng = random.Random(seed)
    sid = "5f0c2b7e-8d41-4c4e-9a57-3b1f6c2d9e10"
    lines: list[Mapping[str, object]] = [
        {"type": "system", "subtype": "init", "session_id": sid, "model": MODEL, "cwd": "/work/leaf",
         "tools": ["Bash", "Read", "Edit", "Write", "Grep"], "permissionMode": "acceptEdits"}]
    size, turn = 0, 0
    while size < target_bytes:
        turn += 1
        usage = {"input_tokens": 3, "cache_creation_input_tokens": 900, "cache_read_input_tokens": 20000,
                 "output_tokens": 150}
        content = [{"type": "thinking", "thinking": _prose(rng, 600)},
                   {"type": "text", "text": _prose(rng, 200)},
                   {"type": "tool_use", "id": f"toolu_{turn}", "name": "Bash",
                    "input": {"command": f"grep -n storage .rw/sources/src-{turn}.txt"}}]
        output = _prose(rng, rng.choice((2_000, 8_000, 40_000)))
        if turn % 50 == 0:
            output += f"\nGH_TOKEN={SECRET}\n"
        for line in ({"type": "assistant", "message": {"id": f"msg_{turn}", "model": MODEL, "role": "assistant",
                                                       "content": content, "usage": usage}, "session_id": sid},
                     {"type": "user", "message": {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": f"toolu_{turn}", "content": output}]},
                      "session_id": sid}):
            lines.append(line)
            size += len(json.dumps(line))
    lines.append({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 912345,
                  "num_turns": turn, "result": "Done.", "session_id": sid, "total_cost_usd": 4.21,
                  "usage": {"input_tokens": 3 * turn, "cache_creation_input_tokens": 900 * turn,
                            "cache_read_input_tokens": 20000 * turn, "output_tokens": 150 * turn}})
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def import_once(data: bytes) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="rw-bench-import-") as scratch:
        work = bare_folder(Path(scratch))
        started = time.perf_counter()
        parsed = parse_transcript("claude-stream-json", data.decode("utf-8").splitlines(keepends=True))
        recorded = TraceLog(work.trace_dir, work.state.level, root=work.root).add_many(
            "2026-12-01T12:00:00Z", ((e.type, e.content) for e in parsed.events))
        disclose(work, parsed.disclosure)
        seconds = time.perf_counter() - started
        events = sum(1 for r in recorded if r.event is not None)
        stored = (work.trace_dir / "events.jsonl").read_bytes()
        assert SECRET.encode() not in stored, "a planted secret reached the trace"
    return seconds, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="Transcript size in MiB.")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = transcript(int(args.mb * 1024 * 1024))
    scan_bytes(b"warm the detectors up", name="warm")
    scans, imports = [], []
    events = 0
    for _ in range(args.repeat):
        started = time.perf_counter()
        scan_bytes(data, name="transcript.jsonl")
        scans.append(time.perf_counter() - started)
        seconds, events = import_once(data)
        imports.append(seconds)
        print(f"scan {scans[-1]:.2f}s  import {imports[-1]:.2f}s", file=sys.stderr)
    scan_s, import_s = min(scans), min(imports)
    print(json.dumps({"import_s": round(import_s, 3), "scan_only_s": round(scan_s, 3),
                      "ratio": round(import_s / scan_s, 3), "events": events, "mb": round(len(data) / 2**20, 2)}))


if __name__ == "__main__":
    main()
