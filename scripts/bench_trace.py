"""Benchmark the trace secret scanner against stock detect-secrets on a realistic trace bundle.

This script's one job is that measurement. It builds a realistic trace bundle (manifest.json,
events.jsonl, patch.diff) in a temp dir, plants secrets of every kind detect-secrets knows
(raw, hidden by JSON \\u escapes, base64, URL-safe base64, Unicode disguises, two layers of
encoding), and times verifier.secrets.scan_bytes and `detect-secrets scan` on the same bytes. It
also scans an honest 5 MB trace (the same generator, nothing planted: hashes, commit ids, UUIDs,
base64 thumbnails, credential-named variables) and counts every hit there as a false one.

The last line printed is one JSON object:
    {"mb_per_s", "stock_mb_per_s", "speedup", "planted", "found", "stock_found",
     "honest_hits", "recall_by_encoding": {"raw", "escaped", "base64", "base64url", "unicode",
     "two-layer"}}
(MB = 2**20 bytes, the unit of the 20 MB bundle cap). Both scanners are timed in CPU seconds
(ours: process time; stock: its process's user + system time), so other work on a shared
machine does not skew the ratio; each includes what it does per run (stock: its start-up).
Exit status is non-zero if our scanner misses a planted secret that stock found, or flags anything in the honest bundle.

Run: .venv/bin/python scripts/bench_trace.py [--mb 20] [--stock-mb N] [--seed 7]
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import random
import resource
import string
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verifier.secrets import SecretHit, scan_bytes  # noqa: E402 - needs the sys.path line above

MB = 1 << 20
MAX_CONTENT = 3500  # keep every line a realistic few KB (stock is quadratic on long lines)

# --------------------------------------------------------------------------------------------
# Honest content
# --------------------------------------------------------------------------------------------

WORDS = (
    "the", "a", "an", "of", "to", "in", "and", "or", "for", "with", "on", "at", "by", "from",
    "as", "is", "are", "was", "be", "been", "it", "this", "that", "these", "those", "we", "our",
    "I", "you", "they", "which", "when", "where", "then", "than", "so", "because", "however",
    "therefore", "still", "patch", "leaf", "source", "quote", "claim", "verdict", "hypothesis",
    "finding", "excerpt", "page", "section", "table", "figure", "check", "test", "run",
    "result", "error", "value", "function", "module", "file", "path", "line", "offset", "byte",
    "hash", "commit", "tree", "branch", "merge", "rebase", "diff", "hunk", "context", "window",
    "token", "key", "password", "secret", "config", "setting", "read", "write", "parse",
    "render", "normalize", "compare", "match", "extract", "derive", "verify", "reject",
    "accept", "pass", "fail", "retry", "timeout", "cache", "index", "ledger", "record", "score",
    "weight", "model", "world", "conditioning", "layer", "evaluation", "product", "market",
    "report", "analyst", "note", "guide", "buyer", "vendor", "benchmark", "dataset", "metric",
    "should", "could", "would", "must", "might", "need", "want", "try", "look", "see", "find",
    "think", "note", "seems", "likely", "clear", "first", "second", "next", "last", "again",
    "also", "only", "just", "even", "maybe", "probably", "definitely", "directly", "small",
    "large", "new", "old", "same", "different", "exact", "approximate", "stable", "frozen",
    "pinned", "deterministic"
)
TYPOGRAPHIC = ("\u2019", "\u2014", "\u201c", "\u201d", "\u2026", "\u00e9", "\u2192")
NAMES = ("alice", "bob", "carol", "dmitri", "eun-ji", "farah", "gustavo", "hiro")
DIRS = ("verifier", "tests", "scripts", "docs", "fixtures", "verifier/formats",
        "verifier/pipeline", "verifier/store", "verifier/text", "ops-wiki/patterns")
EXTS = (".py", ".md", ".json", ".yaml", ".txt", ".diff")


class Gen:
    """Deterministic generator of realistic trace text."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.counter = 0

    def hexd(self, n: int) -> str:
        self.counter += 1
        digest = hashlib.sha256(f"{self.rng.random()}-{self.counter}".encode()).hexdigest()
        while len(digest) < n:
            digest += hashlib.sha256(digest.encode()).hexdigest()
        return digest[:n]

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def words(self, n: int) -> str:
        return " ".join(self.rng.choices(WORDS, k=n))

    def prose(self, n_words: int) -> str:
        out: list[str] = []
        while n_words > 0:
            k = self.rng.randint(6, 22)
            sentence = self.words(min(k, n_words))
            if self.rng.random() < 0.15:
                sentence += " " + self.rng.choice(TYPOGRAPHIC) + " " + self.words(3)
            if self.rng.random() < 0.2:
                sentence += f" (see {self.path()} line {self.rng.randint(1, 900)})"
            if self.rng.random() < 0.1:
                sentence += f" at commit {self.hexd(7)}"
            out.append(sentence[0].upper() + sentence[1:] + ".")
            n_words -= k
        return " ".join(out)

    def path(self) -> str:
        name = "_".join(self.rng.choices(WORDS[40:120], k=self.rng.randint(1, 3)))
        return f"{self.rng.choice(DIRS)}/{name}{self.rng.choice(EXTS)}"

    def ts(self) -> str:
        self.counter += 1
        secs = 1_764_504_000 + self.counter
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(secs))

    # ---- tool results -------------------------------------------------------------------

    def git_log(self) -> str:
        entries = []
        for _ in range(self.rng.randint(3, 10)):
            who = self.rng.choice(NAMES)
            entries.append(f"commit {self.hexd(40)}\nAuthor: {who} <{who}@example.org>\n"
                           f"Date:   Mon Nov 30 12:{self.rng.randint(10, 59)}:00 2026 +0000\n\n"
                           f"    {self.words(self.rng.randint(4, 10))}\n")
        return "\n".join(entries)

    def git_oneline(self) -> str:
        return "\n".join(f"{self.hexd(7)} {self.words(self.rng.randint(3, 9))}"
                         for _ in range(self.rng.randint(5, 30)))

    def sha256sums(self) -> str:
        return "\n".join(f"{self.hexd(64)}  {self.path()}" for _ in range(self.rng.randint(3, 25)))

    def ls_la(self) -> str:
        rows = ["total 128"]
        for _ in range(self.rng.randint(5, 30)):
            kind = self.rng.choice(("-rw-r--r--", "drwxr-xr-x", "-rwxr-xr-x"))
            rows.append(f"{kind}  1 agent staff {self.rng.randint(64, 99999):>7} Nov 30 12:00 "
                        f"{self.path().rsplit('/', 1)[-1]}")
        return "\n".join(rows)

    def pytest_out(self) -> str:
        rows = ["\x1b[1m======== test session starts ========\x1b[0m", "platform linux -- "
                "Python 3.11.9, pytest-8.3.3", f"rootdir: /work/{self.hexd(8)}"]
        n = self.rng.randint(3, 25)
        for i in range(n):
            rows.append(f"tests/test_{self.rng.choice(WORDS[40:120])}.py::test_"
                        f"{self.rng.choice(WORDS[40:120])}_{i} \x1b[32mPASSED\x1b[0m "
                        f"[{100 * (i + 1) // n:3d}%]")
        rows.append(f"\x1b[32m======== {n} passed in {self.rng.random() * 3:.2f}s ========\x1b[0m")
        return "\n".join(rows)

    def json_out(self) -> str:
        obj = {
            "id": self.uuid(),
            "sha256": self.hexd(64),
            "commit": self.hexd(40),
            "created_at": self.ts(),
            "files": [{"path": self.path(), "sha256": self.hexd(64),
                       "size": self.rng.randint(10, 90000)} for _ in range(self.rng.randint(1, 8))],
            "request_id": self.uuid(),
            "ok": True,
            "note": self.words(12),
        }
        return json.dumps(obj, indent=2)

    def b64_of_text(self) -> str:
        text = self.prose(self.rng.randint(30, 160)).encode()
        blob = base64.encodebytes(text).decode()  # wrapped at 76 columns, like `base64`
        return f"$ base64 {self.path()}\n{blob}"

    def data_uri(self) -> str:
        raw = bytes(self.rng.getrandbits(8) for _ in range(self.rng.randint(200, 1500)))
        return f"screenshot saved: data:image/png;base64,{base64.b64encode(raw).decode()}"

    def source_code(self) -> str:
        fn = "_".join(self.rng.choices(WORDS[40:120], k=2))
        return (
            f"from __future__ import annotations\n\nimport hashlib\nimport os\n\n"
            f"API_KEY = os.environ[\"API_KEY\"]  # never logged\n"
            f"EXPECTED = \"{self.hexd(64)}\"\n\n\n"
            f"def {fn}(data: bytes, *, password: str | None = None) -> str:\n"
            f"    \"\"\"{self.prose(12)}\"\"\"\n"
            f"    token = os.environ.get(\"SERVICE_TOKEN\", \"\")\n"
            f"    key = {{\"id\": \"{self.uuid()}\", \"rev\": \"{self.hexd(40)}\"}}\n"
            f"    if not token:\n        raise ValueError(\"the token is missing; see docs\")\n"
            f"    return hashlib.sha256(data + token.encode()).hexdigest()\n"
        )

    def pip_out(self) -> str:
        rows = []
        for _ in range(self.rng.randint(2, 8)):
            pkg = self.rng.choice(("pydantic", "click", "pygit2", "rapidfuzz", "pypdf", "ruff"))
            ver = f"{self.rng.randint(1, 9)}.{self.rng.randint(0, 20)}.{self.rng.randint(0, 9)}"
            rows.append(f"Collecting {pkg}=={ver}\n  Downloading https://files.pythonhosted.org/"
                        f"packages/{self.hexd(2)}/{self.hexd(2)}/{self.hexd(60)}/"
                        f"{pkg}-{ver}-py3-none-any.whl ({self.rng.randint(10, 900)} kB)")
        rows.append(f"Connecting to 151.101.{self.rng.randint(0, 255)}.63:443 ... connected.")
        rows.append(f"Successfully installed {self.words(3)}")
        return "\n".join(rows)

    def docker_ps(self) -> str:
        rows = ["CONTAINER ID   IMAGE                         STATUS"]
        for _ in range(self.rng.randint(1, 6)):
            rows.append(f"{self.hexd(12)}   ghcr.io/acme/{self.rng.choice(WORDS[40:80])}@sha256:"
                        f"{self.hexd(64)}   Up {self.rng.randint(1, 59)} minutes")
        return "\n".join(rows)

    def tool_result(self) -> str:
        makers: tuple[Callable[[], str], ...] = (
            self.git_log, self.git_oneline, self.sha256sums, self.ls_la, self.pytest_out,
            self.json_out, self.b64_of_text, self.data_uri, self.source_code, self.pip_out,
            self.docker_ps,
        )
        return self.rng.choice(makers)()[:MAX_CONTENT]

    def tool_call(self) -> dict[str, object]:
        tool = self.rng.choice(("bash", "read_file", "apply_patch", "search"))
        if tool == "bash":
            args: dict[str, object] = {"command": self.rng.choice((
                f"git log -n 10 {self.hexd(40)}", f"sha256sum {self.path()} {self.path()}",
                f"ls -la {self.rng.choice(DIRS)}", "pytest -q", f"base64 {self.path()}",
                f"git show {self.hexd(7)} -- {self.path()}", "pip install -e .[dev]"))}
        elif tool == "read_file":
            args = {"path": self.path(), "offset": self.rng.randint(0, 400), "limit": 200}
        elif tool == "apply_patch":
            args = {"patch_sha256": self.hexd(64), "base": self.hexd(40)}
        else:
            args = {"query": self.words(5), "request_id": self.uuid()}
        return {"tool": tool, "id": f"call_{self.hexd(24)}", "args": args}

    def event_line(self) -> str:
        roll = self.rng.random()
        if roll < 0.30:
            event: dict[str, object] = {"type": "reasoning",
                                        "content": self.prose(self.rng.randint(40, 450))}
        elif roll < 0.50:
            call = self.tool_call()
            # Some runtimes log the call as a JSON string, others as an object.
            event = {"type": "tool_call",
                     "content": json.dumps(call) if self.rng.random() < 0.5 else call}
        elif roll < 0.98:
            event = {"type": "tool_result", "content": self.tool_result()}
        else:
            event = {"type": "final", "content": self.prose(self.rng.randint(40, 120))}
        line = json.dumps({"ts": self.ts(), **event})
        style = self.rng.random()
        if style < 0.03:  # a Go encoder escapes <, > and & as \u003c, \u003e, \u0026
            line = line.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        elif style < 0.06:  # a PHP encoder escapes every "/" as "\/"
            line = line.replace("/", "\\/")
        elif style < 0.2:  # some runtimes write UTF-8 rather than \u escapes
            line = json.dumps({"ts": self.ts(), **event}, ensure_ascii=False)
        return line

    def patch_file(self) -> list[str]:
        path = self.path().rsplit(".", 1)[0] + ".py"
        old = [f"    value_{i} = compute_{self.rng.choice(WORDS[40:120])}({i})"
               for i in range(self.rng.randint(3, 12))]
        new = [f"    value_{i} = verify_{self.rng.choice(WORDS[40:120])}({i}, "
               f"digest=\"{self.hexd(64)}\")" for i in range(self.rng.randint(3, 12))]
        start = self.rng.randint(1, 400)
        return [
            f"diff --git a/{path} b/{path}",
            f"index {self.hexd(7)}..{self.hexd(7)} 100644",
            f"--- a/{path}",
            f"+++ b/{path}",
            f"@@ -{start},{len(old) + 2} +{start},{len(new) + 2} @@ def {self.words(1)}():",
            f"     # {self.prose(8)}",
            *[f"-{line}" for line in old],
            *[f"+{line}" for line in new],
            "     return None",
        ]

    def manifest(self) -> str:
        return json.dumps({
            "leaf_id": f"leaf-{self.hexd(8)}", "agent": "agent-7", "operator": "ericxtang",
            "base_revision": self.hexd(40), "model": "some-model-2026-01",
            "skill_version": "0.4.1", "tokens": self.rng.randint(10_000, 900_000),
            "duration_s": round(self.rng.random() * 3600, 1), "level": "L2",
            "summary": self.prose(40),
        }, indent=2) + "\n"


def honest_parts(gen: Gen, total: int) -> tuple[str, list[str], list[str]]:
    """(manifest, event lines, patch lines) totalling about `total` bytes."""
    manifest = gen.manifest()
    patch: list[str] = []
    patch_bytes = 0
    while patch_bytes < total // 10:
        hunk = gen.patch_file()
        patch.extend(hunk)
        patch_bytes += sum(len(line) + 1 for line in hunk)
    events: list[str] = []
    size = len(manifest) + patch_bytes
    while size < total:
        line = gen.event_line()
        events.append(line)
        size += len(line.encode()) + 1
    return manifest, events, patch


# --------------------------------------------------------------------------------------------
# Secrets to plant
# --------------------------------------------------------------------------------------------

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
TOKEN = ALNUM + "_-"


@dataclass(frozen=True)
class SecretCase:
    kind: str  # the detect-secrets secret_type expected
    context: str  # the text planted, e.g. "export AWS_ACCESS_KEY_ID=AKIA..."
    value: str  # the part of context the hit's offset points at


def secret_cases(rng: random.Random) -> list[SecretCase]:
    def pick(chars: str, n: int) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    def b64url(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    jwt = ".".join((
        b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()),
        b64url(json.dumps({"sub": pick(LOWER_ALNUM, 10), "iat": 1764504000}).encode()),
        b64url(bytes(rng.getrandbits(8) for _ in range(32))),
    ))
    key_body = "\\n".join(pick(ALNUM + "+/", 64) for _ in range(3))
    aws_id = "AKIA" + pick(UPPER_ALNUM, 16)
    aws_secret = pick(ALNUM + "/+", 40)
    ghp = "ghp_" + pick(ALNUM, 36)
    glpat = "glpat-" + pick(TOKEN, 20)
    xoxb = f"xoxb-{pick(string.digits, 12)}-{pick(string.digits, 13)}-{pick(LOWER_ALNUM, 24)}"
    hook = (f"https://hooks.slack.com/services/T{pick(UPPER_ALNUM, 8)}/B{pick(UPPER_ALNUM, 8)}/"
            f"{pick(ALNUM, 24)}")
    stripe = "sk_live_" + pick(ALNUM, 24)
    twilio = "AC" + pick(LOWER_ALNUM, 32)
    twilio_sk = "SK" + pick(LOWER_ALNUM, 32)
    sendgrid = f"SG.{pick(TOKEN, 22)}.{pick(TOKEN, 43)}"
    npm = "npm_" + pick(ALNUM, 36)
    pypi = "pypi-AgEIcHlwaS5vcmc" + pick(TOKEN, 80)
    azure = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(64))).decode()
    discord = f"M{pick(TOKEN, 23)}.{pick(TOKEN, 6)}.{pick(TOKEN, 27)}"
    mailchimp = pick("0123456789abcdef", 32) + "-us12"
    openai = f"sk-{pick(ALNUM, 20)}T3BlbkFJ{pick(ALNUM, 20)}"
    basic_pw = pick(ALNUM, 16)
    telegram = f"{pick('123456789', 9)}:{pick(TOKEN, 35)}"
    square = "sq0csp-" + pick(TOKEN, 43)
    artifactory = "AKC" + pick(ALNUM, 60)
    ibm_iam = pick(TOKEN, 44)
    cos = pick("0123456789abcdef", 48)
    softlayer = pick(LOWER_ALNUM, 64)
    cloudant = pick("0123456789abcdef", 64)
    runner = "GR1348941" + pick(TOKEN, 20)
    return [
        SecretCase("Private Key", f"$ cat ~/.ssh/id_rsa\\n-----BEGIN RSA PRIVATE KEY-----\\n"
                   f"{key_body}\\n-----END RSA PRIVATE KEY-----", "BEGIN RSA PRIVATE KEY"),
        SecretCase("AWS Access Key", f"export AWS_ACCESS_KEY_ID={aws_id}", aws_id),
        SecretCase("AWS Access Key", f"aws_secret_access_key = '{aws_secret}'", aws_secret),
        SecretCase("GitHub Token", f"GITHUB_TOKEN={ghp} gh auth status", ghp),
        SecretCase("GitLab Token", f"CI token: {glpat} (expires 2027)", glpat),
        SecretCase("GitLab Token", f"gitlab-runner register --registration-token {runner} ok",
                   runner),
        SecretCase("Slack Token", f"SLACK_BOT_TOKEN={xoxb}", xoxb),
        SecretCase("Slack Token", f"curl -X POST {hook} -d @msg.json", hook),
        SecretCase("Stripe Access Key", f"stripe.api_key = {stripe}", stripe),
        SecretCase("Twilio API Key", f"TWILIO_ACCOUNT_SID={twilio}", twilio),
        SecretCase("Twilio API Key", f"TWILIO_API_KEY={twilio_sk}", twilio_sk),
        SecretCase("SendGrid API Key", f"SENDGRID_API_KEY={sendgrid}", sendgrid),
        SecretCase("NPM tokens", f"//registry.npmjs.org/:_authToken={npm}", npm),
        SecretCase("PyPI Token", f"password = {pypi}", pypi),
        SecretCase("JSON Web Token", f"Authorization: Bearer {jwt}", jwt),
        SecretCase("Azure Storage Account access key",
                   f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={azure};"
                   "EndpointSuffix=core.windows.net", f"AccountKey={azure}"),
        SecretCase("Discord Bot Token", f"DISCORD_TOKEN={discord}", discord),
        SecretCase("Mailchimp Access Key", f"MAILCHIMP_API_KEY={mailchimp}", mailchimp),
        SecretCase("OpenAI Token", f"OPENAI_API_KEY={openai}", openai),
        SecretCase("Basic Auth Credentials",
                   f"DATABASE_URL=postgres://svc_app:{basic_pw}@db.internal:5432/app", basic_pw),
        SecretCase("Telegram Bot Token", f"TELEGRAM_TOKEN={telegram}", telegram),
        SecretCase("Square OAuth Secret", f"SQUARE_SECRET={square}", square),
        SecretCase("Artifactory Credentials", f"artifactory api key: {artifactory} ",
                   artifactory),
        SecretCase("IBM Cloud IAM Key", f"ibm_cloud_iam_api_key = '{ibm_iam}'", ibm_iam),
        SecretCase("IBM COS HMAC Credentials", f"cos_hmac_secret_access_key = '{cos}'", cos),
        SecretCase("SoftLayer Credentials", f"softlayer_api_key = '{softlayer}'", softlayer),
        SecretCase("Cloudant Credentials", f"cloudant_password = '{cloudant}'", cloudant),
    ]


# --------------------------------------------------------------------------------------------
# Planting
# --------------------------------------------------------------------------------------------


# How each planted encoding is reported (the keys of recall_by_encoding).
ENCODING_LABELS = {"plain": "raw", "json-escape": "escaped", "base64": "base64", "base64url": "base64url",
                   "unicode": "unicode", "two-layer": "two-layer"}


@dataclass(frozen=True)
class Plant:
    kind: str
    file: str
    encoding: str  # a key of ENCODING_LABELS
    line: int  # 1-based line number in the file
    start: int  # byte span of the planted (encoded) value in the file
    end: int


def _json_str(text: str) -> str:
    """text as a JSON string literal body; our contexts use "\\n" literally for newlines."""
    return json.dumps(text)[1:-1].replace("\\\\n", "\\n")


def _u_escape(text: str, rng: random.Random) -> str:
    """Escape the first character and about a third of the rest as \\u00XX."""
    return "".join(f"\\u{ord(ch):04x}" if i == 0 or rng.random() < 0.33 else _json_str(ch)
                   for i, ch in enumerate(text))


@dataclass(frozen=True)
class PlantedLine:
    text: str  # the whole line (for patch.diff: one or more lines)
    kind: str
    encoding: str
    encoded: str  # the value as it appears in the line, so its span can be found


def plant_lines(gen: Gen, cases: list[SecretCase]) -> tuple[list[PlantedLine], list[PlantedLine]]:
    """Planted event lines and patch lines: each case plain, \\u-escaped and base64."""
    rng = gen.rng
    events: list[PlantedLine] = []
    patch: list[PlantedLine] = []
    for i, case in enumerate(cases):
        before, _, after = case.context.partition(case.value)
        # plain: in a tool result or tool call; every 4th case goes into patch.diff instead.
        if i % 4 == 3:
            text = case.context.replace("\\n", "\n")
            patch.append(PlantedLine(text, case.kind, "plain", case.value))
        else:
            body = f"{gen.words(8)}\\n{_json_str(before)}{_json_str(case.value)}{_json_str(after)}"
            line = f'{{"ts": "{gen.ts()}", "type": "tool_result", "content": "{body}"}}'
            events.append(PlantedLine(line, case.kind, "plain", _json_str(case.value)))
        # json-escape: the value's characters partly written as \u00XX.
        hidden = _u_escape(case.value, rng)
        body = f"{gen.words(6)}\\n{_json_str(before)}{hidden}{_json_str(after)}"
        line = f'{{"ts": "{gen.ts()}", "type": "tool_result", "content": "{body}"}}'
        events.append(PlantedLine(line, case.kind, "json-escape", hidden))
        # base64: `base64 .env` output, sometimes wrapped at 76 columns like coreutils does.
        payload = (case.context.replace("\\n", "\n") + "\n").encode()
        blob = base64.b64encode(payload).decode()
        if rng.random() < 0.5:
            blob = "\\n".join(blob[j:j + 76] for j in range(0, len(blob), 76))
        line = (f'{{"ts": "{gen.ts()}", "type": "tool_result", '
                f'"content": "$ base64 deploy/.env\\n{blob}\\n"}}')
        events.append(PlantedLine(line, case.kind, "base64", blob))
        # base64url: the same with the URL-safe alphabet, unpadded (JWT-style tooling).
        blob = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        line = f'{{"ts": "{gen.ts()}", "type": "tool_result", "content": "env={blob}"}}'
        events.append(PlantedLine(line, case.kind, "base64url", blob))
        # unicode: the value disguised with invisible or compatibility characters.
        disguised = _disguise(case.value, rng)
        body = f"{gen.words(6)}\\n{_json_str(before)}{disguised}{_json_str(after)}"
        line = json.dumps({"ts": gen.ts(), "type": "tool_result", "content": ""}, ensure_ascii=False)
        line = line[:-2] + body + '"}'
        events.append(PlantedLine(line, case.kind, "unicode", disguised))
        # two-layer: one of the nested encodings, in turn.
        blob = _two_layers(payload, i)
        line = f'{{"ts": "{gen.ts()}", "type": "tool_result", "content": "$ cat blob\\n{blob}\\n"}}'
        events.append(PlantedLine(line, case.kind, "two-layer", blob))
    return events, patch


_INVISIBLE = ("\u200b", "\u00ad", "\u200d", "\u2060", "\ufeff")


def _disguise(value: str, rng: random.Random) -> str:
    """value with an invisible character inside, or some letters and digits full-width."""
    if rng.random() < 0.5:
        at = rng.randint(1, len(value) - 1)
        return value[:at] + rng.choice(_INVISIBLE) + value[at:]
    return "".join(chr(ord(ch) + 0xFEE0) if ch.isalnum() and rng.random() < 0.3 else ch for ch in value)


def _two_layers(payload: bytes, turn: int) -> str:
    """payload under two encodings: base64 of base64, of escaped JSON, of gzip; hex; \\u of \\u."""
    kind = turn % 4
    if kind == 0:
        return base64.b64encode(base64.b64encode(payload)).decode()
    if kind == 1:
        escaped = json.dumps({"env": payload.decode()})
        return base64.b64encode(escaped.encode()).decode()
    if kind == 2:
        return base64.b64encode(gzip.compress(payload, mtime=0)).decode()
    return payload.hex()


def build_bundle(gen: Gen, total: int, cases: list[SecretCase] | None,
                 ) -> tuple[dict[str, bytes], list[Plant]]:
    manifest, honest_events, patch = honest_parts(gen, total)
    events: list[str | PlantedLine] = list(honest_events)
    plants: list[Plant] = []
    if cases:
        planted_events, planted_patch = plant_lines(gen, cases)
        # Spread planted event lines over the file, keeping their own order.
        slots = sorted(gen.rng.sample(range(len(events)), len(planted_events)))
        for shift, (slot, planted_line) in enumerate(zip(slots, planted_events, strict=True)):
            events.insert(slot + shift, planted_line)
        # Planted patch lines form one new-file diff, like a committed .env.
        body = [planted.text for planted in planted_patch]
        new_file = ["diff --git a/deploy/.env b/deploy/.env", "new file mode 100644",
                    "index 0000000..1a2b3c4", "--- /dev/null", "+++ b/deploy/.env",
                    f"@@ -0,0 +1,{sum(t.count(chr(10)) + 1 for t in body)} @@"]
        for text in body:
            new_file.extend("+" + part for part in text.split("\n"))
        at = len(patch) // 2
        while at < len(patch) and not patch[at].startswith("diff --git"):
            at += 1
        patch[at:at] = new_file
    files: dict[str, bytes] = {}
    files["manifest.json"] = manifest.encode()
    # Assemble events.jsonl, recording where each planted value landed.
    chunks: list[bytes] = []
    offset = 0
    for number, item in enumerate(events, 1):
        if isinstance(item, PlantedLine):
            raw = item.text.encode()
            at = raw.index(item.encoded.encode())
            plants.append(Plant(item.kind, "events.jsonl", item.encoding, number, offset + at,
                                offset + at + len(item.encoded)))
        else:
            raw = item.encode()
        chunks.append(raw + b"\n")
        offset += len(raw) + 1
    files["events.jsonl"] = b"".join(chunks)
    patch_bytes = ("\n".join(patch) + "\n").encode()
    files["patch.diff"] = patch_bytes
    if cases:
        for planted in planted_patch:
            at = patch_bytes.index(planted.encoded.encode())
            line = patch_bytes.count(b"\n", 0, at) + 1
            plants.append(Plant(planted.kind, "patch.diff", "plain", line, at,
                                at + len(planted.encoded)))
    return files, plants


# --------------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------------


def run_ours(files: dict[str, bytes], repeat: int) -> tuple[float, list[SecretHit]]:
    """Best-of-`repeat` seconds to scan every file, and the hits."""
    best = float("inf")
    hits: list[SecretHit] = []
    for _ in range(repeat):
        start = time.process_time()
        hits = [hit for name, data in files.items() for hit in scan_bytes(data, name=name)]
        best = min(best, time.process_time() - start)
    return best, hits


def run_stock(directory: Path, names: list[str]) -> tuple[float, dict[str, set[int]]]:
    """Seconds for `detect-secrets scan` over the files, and the flagged line numbers per file.

    --no-verify: stock would otherwise send every Slack/Stripe/Telegram... candidate to the
    vendor's API (the planted fakes included); detection itself is unchanged by it.
    """
    tool = Path(sys.executable).parent / "detect-secrets"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([str(tool), "scan", "--no-verify", *names], cwd=directory,
                          capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    elapsed = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    results = json.loads(proc.stdout)["results"]
    lines = {name: {item["line_number"] for item in found} for name, found in results.items()}
    return elapsed, lines


def recall_by_encoding(plants: list[Plant], found: list[Plant]) -> dict[str, float]:
    """Share of planted secrets found, per encoding (printed as found/planted too)."""
    recall: dict[str, float] = {}
    for encoding, label in ENCODING_LABELS.items():
        subset = [p for p in plants if p.encoding == encoding]
        got = [p for p in found if p.encoding == encoding]
        recall[label] = round(len(got) / len(subset), 3) if subset else 0.0
        print(f"       {label:12s} {len(got)}/{len(subset)}")
    return recall


def prefix(data: bytes, size: int) -> bytes:
    if len(data) <= size:
        return data
    cut = data.rfind(b"\n", 0, size)
    return data[: cut + 1] if cut >= 0 else data[:size]


def main() -> int:  # noqa: C901 - one linear report of every figure the benchmark prints
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=20.0, help="bundle size in MB (default 20)")
    parser.add_argument("--stock-mb", type=float, default=0.0,
                        help="time stock on only this many MB and extrapolate (0 = whole bundle)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs of our scanner")
    args = parser.parse_args()
    total = int(args.mb * MB)

    gen = Gen(args.seed)
    cases = secret_cases(random.Random(args.seed + 1))
    print(f"building a {args.mb:g} MB bundle with {len(cases)} secret kinds x {len(ENCODING_LABELS)} encodings ...")
    files, plants = build_bundle(gen, total, cases)
    honest, _ = build_bundle(Gen(args.seed + 2), total, None)
    size = sum(len(data) for data in files.values())
    honest_size = sum(len(data) for data in honest.values())

    # --- ours ---------------------------------------------------------------------------
    seconds, hits = run_ours(files, args.repeat)
    mb_per_s = size / MB / seconds
    found_plants = [
        plant for plant in plants
        if any(h.file == plant.file and h.kind == plant.kind and plant.start <= h.offset < plant.end
               for h in hits)
    ]
    stray = [h for h in hits if not any(
        h.file == p.file and p.start <= h.offset < p.end for p in plants)]
    honest_seconds, honest_hits = run_ours(honest, 1)
    five, _ = build_bundle(Gen(args.seed + 3), 5 * MB, None)
    _, five_hits = run_ours(five, 1)
    print(f"honest 5 MB trace: {len(five_hits)} hits" + ("" if not five_hits else f": {five_hits[:5]}"))
    print(f"ours:  {size / MB:.1f} MB in {seconds:.3f} s = {mb_per_s:.1f} MB/s; "
          f"found {len(found_plants)}/{len(plants)} planted; {len(stray)} other hits")
    recall = recall_by_encoding(plants, found_plants)
    for plant in plants:
        if plant not in found_plants:
            print(f"       MISSED {plant.kind} ({plant.encoding}) {plant.file}:{plant.line}")
    for hit in stray:
        print(f"       STRAY  {hit}")
    print(f"honest bundle: {honest_size / MB:.1f} MB in {honest_seconds:.3f} s, "
          f"{len(honest_hits)} hits" + ("" if not honest_hits else f": {honest_hits[:5]}"))

    # --- stock --------------------------------------------------------------------------
    with tempfile.TemporaryDirectory(prefix="bench-trace-") as tmp:
        work = Path(tmp)
        names = list(files)
        for name, data in files.items():
            (work / name).write_bytes(data)
        plain = [p for p in plants if p.encoding == "plain"]
        if args.stock_mb > 0:
            # Time stock on a prefix of each file (same mix), extrapolate; find stock's verdict
            # on the planted lines by scanning just those lines, one per line, in order.
            share = args.stock_mb * MB / size
            timed = work / "prefix"
            timed.mkdir()
            timed_bytes = 0
            for name, data in files.items():
                cut = prefix(data, max(1, int(len(data) * share)))
                (timed / name).write_bytes(cut)
                timed_bytes += len(cut)
            stock_seconds, _ = run_stock(timed, names)
            stock_mb_per_s = timed_bytes / MB / stock_seconds
            lines_dir = work / "planted"
            lines_dir.mkdir()
            picked: dict[str, list[Plant]] = {}
            for plant in plain:
                picked.setdefault(plant.file, []).append(plant)
            remap: dict[tuple[str, int], Plant] = {}
            for name, group in picked.items():
                source = files[name].split(b"\n")
                (lines_dir / name).write_bytes(b"\n".join(source[p.line - 1] for p in group) + b"\n")
                for index, plant in enumerate(group, 1):
                    remap[(name, index)] = plant
            _, flagged = run_stock(lines_dir, list(picked))
            stock_hit_plants = {remap[(name, n)] for name, ns in flagged.items() for n in ns
                                if (name, n) in remap}
            note = (f"stock timed on a {timed_bytes / MB:.1f} MB prefix and extrapolated; "
                    "its verdict on planted secrets comes from scanning the planted lines alone")
        else:
            stock_seconds, flagged = run_stock(work, names)
            stock_mb_per_s = size / MB / stock_seconds
            stock_hit_plants = {p for p in plain if p.line in flagged.get(p.file, set())}
            note = "stock timed on the whole bundle"
            honest_lines = sum(len(v) for v in flagged.values()) - len(
                {(p.file, p.line) for p in plants if p.line in flagged.get(p.file, set())})
            note += f"; it also flagged {honest_lines} lines holding no planted secret"
            hidden = [p for p in plants if p.encoding != "plain"]
            seen = [p for p in hidden if p.line in flagged.get(p.file, set())]
            note += (f", and {len(seen)}/{len(hidden)} lines of hidden (\\u, base64) secrets, "
                     "by entropy or keyword, not as the secret's kind")
    print(f"stock: {stock_mb_per_s:.3f} MB/s ({note}); found {len(stock_hit_plants)}/{len(plain)} "
          "plain planted secrets")
    missed_by_us = [p for p in stock_hit_plants if p not in found_plants]
    for plant in missed_by_us:
        print(f"       stock found but we missed: {plant.kind} {plant.file}:{plant.line}")
    for plant in plain:
        if plant not in stock_hit_plants:
            print(f"       stock missed: {plant.kind} {plant.file}:{plant.line}")
    speedup = mb_per_s / stock_mb_per_s
    print(f"speedup: {speedup:.0f}x")
    ok = not missed_by_us and not honest_hits and not five_hits
    print(json.dumps({
        "mb_per_s": round(mb_per_s, 2),
        "stock_mb_per_s": round(stock_mb_per_s, 4),
        "speedup": round(speedup, 1),
        "planted": len(plants),
        "found": len(found_plants),
        "stock_found": len(stock_hit_plants),
        "honest_hits": len(five_hits),
        "recall_by_encoding": recall,
    }))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
