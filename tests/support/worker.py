"""A validation worker command for tests: reads a WorkerTask as JSON on stdin, does the leaf with
the skill-following scripted worker (tests/support/loop.py), prints {patch_base64, trace_base64}."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

# The repository root in place of this script's own folder, whose helper modules would shadow the
# standard library's (tests.support is imported as a package from the root).
sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.loop import skill_following_worker
from verifier.roles.validation import WorkerTask


def main() -> None:
    task = WorkerTask(**json.loads(sys.stdin.buffer.read()))
    result = skill_following_worker(task)
    print(json.dumps({"patch_base64": base64.b64encode(result.patch).decode(),
                      "trace_base64": {name: base64.b64encode(data).decode() for name, data in result.trace.items()}}))


if __name__ == "__main__":
    main()
