"""A hostile model for the tests of untrusted model answers: a real script on disk, run as the
configured command, that prints a crafted answer (and may write to stderr, exit non-zero, or
report its environment). Also sample secrets, built so no secret-shaped literal sits in the source."""

from __future__ import annotations

import json
import random
import string
import sys
from pathlib import Path

from verifier.model.adapter import CommandBackend

SCRIPT = r'''
import json, os, sys
spec = json.load(open(sys.argv[1]))
request = json.loads(sys.stdin.buffer.read() or b"{}")
first = (request.get("leaves") or [{}])[0].get("leaf_id", "")
if spec.get("env_to"):
    with open(spec["env_to"], "w") as out:
        json.dump(dict(os.environ), out)
sys.stderr.write(spec.get("stderr", ""))
answer = spec["answer"]
text = answer if isinstance(answer, str) else json.dumps(answer)
sys.stdout.write(text.replace("{first_leaf}", first))
sys.exit(spec.get("exit", 0))
'''


def hostile_model(folder: Path, answer: object, *, stderr: str = "", exit_code: int = 0,
                  env_to: Path | None = None) -> list[str]:
    """The argument list of a model command that prints `answer` (a JSON value, or a raw string
    printed as it is; `{first_leaf}` becomes the first planned leaf's id), writes `stderr`, exits
    with `exit_code` and, with `env_to`, dumps the environment it was given there."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "hostile_model.py"
    script.write_text(SCRIPT)
    spec = folder / f"answer-{len(list(folder.glob('answer-*.json')))}.json"
    spec.write_text(json.dumps({"answer": answer, "stderr": stderr, "exit": exit_code,
                                "env_to": str(env_to) if env_to else None}))
    return [sys.executable, str(script), str(spec)]


def hostile_backend(folder: Path, answer: object, *, stderr: str = "", exit_code: int = 0,
                    env_to: Path | None = None) -> CommandBackend:
    """The same script as a CommandBackend (the minimal environment applies)."""
    return CommandBackend(tuple(hostile_model(folder, answer, stderr=stderr, exit_code=exit_code, env_to=env_to)),
                          timeout_s=60)


def aws_pair(seed: int = 1) -> str:
    """An AWS access key id and secret key in the context a careless answer would hold them."""
    rng = random.Random(seed)
    key = "AK" + "IA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))
    secret = "".join(rng.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))
    return f"aws_access_key_id={key} aws_secret_access_key={secret}"


def github_token(seed: int = 2) -> str:
    rng = random.Random(seed)
    return "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
