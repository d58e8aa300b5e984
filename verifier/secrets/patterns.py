"""The detectors the trace secret scanner runs: detect-secrets' own regular expressions, each
paired with a cheap trigger that CPython's `re` can find at memory-search speed.

This module's one job is to build DETECTORS and TRIGGERS once, at import. The detection patterns
are never written here: they are read from the installed detect-secrets plugin classes (their
`denylist`) and recompiled as bytes patterns. What is written here is, per detector, a trigger:
a short literal-led pattern that every match of that detector contains, plus how far before and
after the trigger the match can reach. Why: one alternation of all ~45 stock patterns scans
0.4 to 2 MB/s in CPython's `re` (it has no multi-literal search, and the patterns that start
with a lookbehind or a character class are tried at every byte), while a literal-led trigger
is found at about 2 GB/s. The stock pattern then decides, inside a small window around each
trigger occurrence, so the decision is always detect-secrets' own. The scanner finds the
triggers of every detector in one RE2 search (prefilter_source: the triggers made free of
lookarounds, which RE2 lacks, by widening them), since `re` would need one pass per first byte.

Start-up cost (issue 26): importing detect-secrets costs about 0.1 s of CPU (it loads `requests`
for its verify step), which `rw check` pays on a folder of a few kilobytes. So what this module
reads from the library (each detector's secret type, its pattern sources and flags, whether it
post-filters) is kept in a small cache file (`stock_detectors`), keyed by the installed plugin
files' names, sizes and modification times (and named by that key, so environments that each
have their own library keep their own file): a change of the library rebuilds it, and a cache that
does not parse as exactly that shape is ignored and rebuilt. The rules are still the library's:
the cache holds what it read, never a copy written here. Each detector's patterns are compiled
the first time a trigger hands it a window (`Detector.patterns`), so a scan pays for the
detectors its input calls on.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, cast

# Detector classes we deliberately do not run, and why. The non-regex plugins (KeywordDetector,
# Base64HighEntropyString, HexHighEntropyString) are not RegexBasedDetector subclasses, so they
# are never picked up: they are keyword/entropy heuristics that flag every quoted sha256, commit
# id and ordinary `password = ...` line of code in an honest trace.
SKIPPED: dict[str, str] = {
    "IPPublicDetector": "a public IPv4 address is not a credential, and honest tool output "
    "(pip, curl, dig, docker) prints them",
}

# The keyword-assignment detectors (Cloudant, IBM Cloud IAM, IBM COS HMAC, SoftLayer) all use
# RegexBasedDetector.build_assignment_regex: [prefix] KEYWORD [quote][]] OPERATOR [quote] VALUE.
# Every such match has one of these keywords, a run of operator characters and a value of at
# least 24 token characters (after lower-casing). Requiring the value keeps the trigger silent
# on prose such as "the key is" or "tests pass: 12". Quotes may be JSON-escaped (\").
_ASSIGNMENT_TAIL = rb"(?:\\?[\"'])?\]?[ =:>]+(?:\\?[\"'])?[a-z0-9_-]{24}"
# Longest optional part before the keyword: `["ibm_cos_hmac_secret_access_key` is 29 bytes.
_ASSIGNMENT_BACK = 32
# keyword + quote + bracket + operator + quote + 64-byte value + quote, with room for spaces.
_ASSIGNMENT_AHEAD = 256


@dataclass(frozen=True)
class TriggerSpec:
    """Where to look for one detector: a literal (plus a short check) its every match contains."""

    head: bytes  # literal bytes; triggers sharing a first byte are searched in one pass
    tail: bytes = b""  # regex checked right after the head (lookarounds may reach back)
    fold_case: bool = False  # search the lower-cased data (the stock pattern ignores case)
    back: int = 0  # the stock match starts at most this many bytes before the head
    ahead: int = 1024  # ...and ends within this many bytes after the head's start
    # Where the match starts is not known within `back` (a registry host, an account name):
    # search the window instead of trying each start.
    search: bool = False
    # The stock pattern reads the bytes around the secret (a quote, a word boundary, a line
    # start); inside a JSON string those may be escapes ("\n", "\""), so also try the window
    # with them unescaped.
    json_context: bool = False
    # A character class every match has right before the head (the head's lookbehind says so):
    # the prefilter looks for it too, and its candidates then start one byte before the head.
    lead: bytes = b""
    # An RE2 pattern for the prefilter in place of the widened head and tail, where the head is
    # common but the stock match's own shape is rare: it must match wherever a stock match
    # starts at the head (so with back=0 and no search), a superset of the stock pattern.
    prefilter: bytes = b""


def _assignment(*extra: TriggerSpec) -> tuple[TriggerSpec, ...]:
    keyword = tuple(
        TriggerSpec(head, tail + _ASSIGNMENT_TAIL, fold_case=True, back=_ASSIGNMENT_BACK + skip,
                    ahead=_ASSIGNMENT_AHEAD, json_context=True)
        # "token" is anchored on "ken": 't' is too common a first byte (see TriggerPass).
        for head, tail, skip in ((b"key", b"", 0), (b"pw", b"d?", 0), (b"pass", b"(?:word)?", 0),
                                 (b"ken", b"", 2))
    )
    return keyword + extra


# One entry per detect-secrets RegexBasedDetector we run. The import-time check below fails if
# the installed library has a detector that is neither here nor in SKIPPED. Each trigger must be
# implied by every match of the detector's patterns; tests/secrets/test_secret_scan.py checks that with
# strings generated from the stock patterns themselves.
TRIGGER_SPECS: dict[str, tuple[TriggerSpec, ...]] = {
    # The stock pattern begins with one delimiter byte (or a line start) before the token. No
    # json_context: read across unescaped "\n", AP + 9 alphanumerics would match the start of
    # about one line in 200,000 of the wrapped base64 that traces are full of.
    "ArtifactoryDetector": (
        TriggerSpec(b"AKC", back=1),
        TriggerSpec(b"AP", rb"[0-9A-F]", back=1),
    ),
    "AWSKeyDetector": (
        TriggerSpec(b"A", rb"(?:3T|BIA|CCA|KIA|SIA)", ahead=64),
        # aws ... key ... '<40 chars>', anchored on "ws" ('a' is a common first byte).
        TriggerSpec(b"ws", fold_case=True, back=1, ahead=160, json_context=True),
    ),
    "AzureStorageKeyDetector": (TriggerSpec(b"AccountKey=", ahead=128),),
    # "://" is in every URL; the prefilter wants the user:password@ after it too.
    "BasicAuthDetector": (TriggerSpec(b"://", prefilter=rb"://[^:/@\s]+:[^:/@\s]+@"),),
    "CloudantDetector": _assignment(
        # https://user:<pw>@account.cloudant.com: the host name ends the match.
        TriggerSpec(b"udant.com", fold_case=True, back=512, ahead=16, search=True),
    ),
    # [MNO] + 23..25 + "." + 6 + "." + 27: anchor on the first dot.
    "DiscordBotTokenDetector": (
        TriggerSpec(b".", rb"(?<=[A-Za-z0-9_-]{23}\.)(?=[A-Za-z0-9_-]{6}\.)", back=26, ahead=36),
    ),
    "GitHubTokenDetector": (TriggerSpec(b"gh", rb"[pousr]_", ahead=64),),
    "GitLabTokenDetector": (
        TriggerSpec(b"gl", rb"(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-", ahead=1100),
        TriggerSpec(b"GR1348941", ahead=64),
    ),
    "IbmCloudIamDetector": _assignment(),
    "IbmCosHmacDetector": _assignment(),
    # A JWT's header and payload are unbounded; 8 KB covers any token a trace would carry.
    "JwtTokenDetector": (TriggerSpec(b"yJ", back=1, ahead=8192),),  # eyJ; 'e' is common
    # 32 [0-9a-z] then "-us" and a digit: anchor on "-us<digit>".
    "MailchimpDetector": (
        TriggerSpec(b"-us", rb"[0-9](?<=[0-9a-z]{32}-us[0-9])", back=32, ahead=6),
    ),
    # //<registry>/:_authToken=<value>: the registry host sits before the anchor; the stock
    # pattern's trailing .* only runs on to the end of the line.
    "NpmDetector": (TriggerSpec(b"/:_authToken=", back=512, ahead=128, search=True),),
    # sk-...T3BlbkFJ...: "T3BlbkFJ" (base64 of "openai") is the rare part.
    "OpenAIDetector": (TriggerSpec(b"T3BlbkFJ", back=512, ahead=32, search=True),),
    "PrivateKeyDetector": (
        TriggerSpec(b"BEGIN ", ahead=48),
        TriggerSpec(b"PuTTY-User-Key-File-2", ahead=32),
    ),
    "PypiTokenDetector": (TriggerSpec(b"AgE", back=5),),  # pypi-AgE...
    "SendGridDetector": (TriggerSpec(b"SG.", ahead=80),),
    "SlackDetector": (
        TriggerSpec(b"xox", rb"[abposr]-", fold_case=True),
        TriggerSpec(b"ks.slack.com/services/", fold_case=True, back=8 + 3),
    ),
    "SoftlayerDetector": _assignment(
        # (?:http|https)://api.softlayer.com/soap/...: the stock dots match any byte, so anchor
        # on the word, whose "ftlayer" sits 14 bytes after "https://api.so".
        TriggerSpec(b"ftlayer", fold_case=True, back=14, ahead=96),
    ),
    "SquareOAuthDetector": (TriggerSpec(b"q0csp-", back=1, ahead=64),),
    "StripeDetector": (TriggerSpec(b"k_live_", back=1, ahead=40),),
    # 8..10 digits, ":" and 35 token bytes: anchor on the colon.
    "TelegramBotTokenDetector": (
        TriggerSpec(b":", rb"(?<=[0-9]{8}:)(?=[0-9A-Za-z_-]{35})", back=10, ahead=36, lead=rb"[0-9]"),
    ),
    "TwilioKeyDetector": (
        TriggerSpec(b"AC", rb"(?=[a-z0-9]{32})", ahead=40),
        TriggerSpec(b"SK", rb"(?=[a-z0-9]{32})", ahead=40),
    ),
}

# detect-secrets plugins whose analyze_string adds a check after the regex; we call the same
# check on each match. Any other override is unknown to us, and the import fails loudly.
def _jwt_formally_valid(token: str) -> bool:
    """detect-secrets' own JWT check, imported on the first candidate (see the module docstring)."""
    from detect_secrets.plugins.jwt import JwtTokenDetector  # noqa: PLC0415 - start-up cost

    return cast(Callable[[str], bool], JwtTokenDetector.is_formally_valid)(token)


_VALIDATORS: dict[str, Callable[[str], bool]] = {
    "JwtTokenDetector": _jwt_formally_valid,
}


@dataclass(frozen=True)
class Detector:
    """One detect-secrets detector, recompiled for bytes (on first use: see `patterns`)."""

    kind: str  # the plugin's secret_type, e.g. "AWS Access Key"
    sources: tuple[tuple[str, int], ...]  # the stock patterns: (source, flags)
    value_groups: tuple[int, ...]  # per pattern: group holding the secret value, 0 = whole match
    validate: Callable[[str], bool] | None

    @cached_property
    def patterns(self) -> tuple[re.Pattern[bytes], ...]:
        """The stock patterns as bytes patterns, compiled when a trigger first calls on them."""
        return tuple(_to_bytes(source, flags) for source, flags in self.sources)


@dataclass(frozen=True)
class Trigger:
    """One trigger and the detectors to run in the window around each of its occurrences."""

    source: bytes  # the head and tail, to tell which trigger of a pass matched (see `regex`)
    back: int
    ahead: int
    search: bool
    json_context: bool
    detectors: tuple[Detector, ...]
    lead: bytes  # TriggerSpec.lead
    prefilter: bytes  # TriggerSpec.prefilter

    @cached_property
    def regex(self) -> re.Pattern[bytes]:
        """`source` compiled when a candidate first calls on it: a scan of honest bytes meets few
        triggers, and compiling every one at import was most of the scanner's start-up."""
        return re.compile(self.source)


@dataclass(frozen=True)
class TriggerPass:
    """Every trigger whose head starts with the same byte, as one regex.

    The scanner does not search with it: one RE2 search (prefilter_source) lists the positions
    where some trigger may match, and there the pass of that byte is tried with `regex.match`,
    as a finditer of it would hit. After a hit, each trigger's own regex says which matched.
    """

    source: bytes  # the alternation of the pass's heads and tails (compiled on use: `regex`)
    first: int  # the byte every trigger of the pass starts with (lower case when fold_case)
    fold_case: bool
    triggers: tuple[Trigger, ...]
    # The triggers that can match given the byte after the first (heads of one byte match any).
    by_next: dict[int, tuple[Trigger, ...]]
    any_next: tuple[Trigger, ...]

    @cached_property
    def regex(self) -> re.Pattern[bytes]:
        """`source` compiled the first time the prefilter stops at this pass's first byte."""
        return re.compile(self.source)


def _consuming(tail: bytes) -> bytes:
    """A lookaround-free pattern matching (at least) wherever head + tail matches: RE2's form.

    Lookbehinds and negative lookaheads are dropped, lookaheads consume, and counted repeats
    above 8 are cut to 8. Each step only widens the language, so a prefilter built from it
    never skips a position the trigger matches at; the trigger's own regex still decides.
    """
    out = bytearray()
    at = 0
    while at < len(tail):
        if tail.startswith((b"(?<=", b"(?<!", b"(?!"), at):
            depth = 0
            while True:  # skip to the matching parenthesis (tails escape literal ones)
                byte = tail[at]
                if byte == 0x5C:
                    at += 2
                    continue
                depth += {0x28: 1, 0x29: -1}.get(byte, 0)
                at += 1
                if depth == 0:
                    break
            continue
        if tail.startswith(b"(?=", at):
            out += b"(?:"
            at += 3
            continue
        out.append(tail[at])
        at += 1
    return re.sub(rb"\{(\d+)\}", lambda m: b"{%d}" % min(8, int(m.group(1))), bytes(out))


def prefilter_source(passes: tuple[TriggerPass, ...]) -> bytes:
    """One alternation, for RE2, that matches wherever any trigger of any pass matches."""
    parts = []
    for trigger_pass in passes:
        for trigger in trigger_pass.triggers:
            part = trigger.prefilter or trigger.lead + _consuming(trigger.source)
            parts.append(b"(?i:" + part + b")" if trigger_pass.fold_case else part)
    return b"|".join(parts)


def _regex_detector_classes() -> list[type[Any]]:
    """Every concrete RegexBasedDetector shipped in detect_secrets.plugins, by class name."""
    import detect_secrets.plugins as ds_plugins  # noqa: PLC0415 - start-up cost (module docstring)
    from detect_secrets.plugins.base import RegexBasedDetector  # noqa: PLC0415

    found: dict[str, type[Any]] = {}
    for info in pkgutil.iter_modules(ds_plugins.__path__):
        module = importlib.import_module(f"{ds_plugins.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, RegexBasedDetector)
                and cls is not RegexBasedDetector
                and cls.__module__ == module.__name__
                and not inspect.isabstract(cls)
            ):
                found[cls.__name__] = cls
    return [found[name] for name in sorted(found)]


def _skip_class(pattern: str, i: int) -> int:
    """Index just past the character class that starts at pattern[i] == "["."""
    i += 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":  # a leading "]" is a literal
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def value_group(pattern: str) -> int:
    """Which group of a stock pattern holds the secret value: 1, or 0 for the whole match.

    detect-secrets reports the first capturing group as "the secret". That is the value for
    patterns that match context first (`://user:(pw)@`, `key = "(value)"`), but for some token
    patterns the group is only a leading prefix (`(ghp|gho)_...`) or an optional part inside the
    token (`glcbt-([0-9a-f]{2}_)?...`); there the token itself, the whole match, is the secret.
    """
    i, depth, start = 0, 0, -1
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _skip_class(pattern, i)
            continue
        if char == "(":
            named = pattern.startswith("(?P<", i)
            if start < 0 and (named or not pattern.startswith("(?", i)):
                start, depth = i, 0
            depth += 1
        elif char == ")":
            depth -= 1
            if start >= 0 and depth == 0:
                optional = pattern[i + 1 : i + 2] in ("?", "*") or pattern.startswith("{0", i + 1)
                return 0 if start == 0 or optional else 1
        i += 1
    return 0


def _to_bytes(source: str, flags: int) -> re.Pattern[bytes]:
    # str patterns carry re.UNICODE implicitly; bytes patterns reject it. MULTILINE because
    # detect-secrets runs each pattern on one line at a time: ^ and $ mean line boundaries.
    return re.compile(source.encode("ascii"), (flags & ~re.UNICODE) | re.MULTILINE)


@dataclass(frozen=True)
class StockDetector:
    """What this scanner reads from one detect-secrets RegexBasedDetector class."""

    name: str  # the class name, e.g. "AWSKeyDetector"
    kind: str  # its secret_type
    patterns: tuple[tuple[str, int], ...]  # its denylist: (pattern source, flags)
    overrides: bool  # whether its analyze_string adds a check after the regex


def read_library() -> tuple[StockDetector, ...]:
    """Every RegexBasedDetector of the installed detect-secrets, read from its classes."""
    from detect_secrets.plugins.base import RegexBasedDetector  # noqa: PLC0415 - start-up cost

    return tuple(
        StockDetector(name=cls.__name__, kind=str(cls.secret_type),
                      patterns=tuple((p.pattern, p.flags) for p in cast(list[re.Pattern[str]], cls.denylist)),
                      overrides=cls.analyze_string is not RegexBasedDetector.analyze_string)
        for cls in _regex_detector_classes()
    )


CACHE_FORMAT = 1


def library_key() -> str | None:
    """A fingerprint of the installed detect-secrets plugins (file names, sizes, modification
    times), found without importing the library; None when it cannot be located."""
    spec = importlib.util.find_spec("detect_secrets")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    digest = hashlib.sha256(f"format {CACHE_FORMAT}\n".encode())
    try:
        for folder in (root, root / "plugins"):
            for entry in sorted(os.scandir(folder), key=lambda item: item.name):
                if entry.name.endswith(".py") and entry.is_file():
                    stat = entry.stat()
                    digest.update(f"{folder.name}/{entry.name} {stat.st_size} {stat.st_mtime_ns}\n".encode())
    except OSError:
        return None
    return digest.hexdigest()


def default_cache_file(key: str | None = None) -> Path:
    """Where the cache lives: $XDG_CACHE_HOME (or ~/.cache)/researchwiki/stock-detectors-KEY.json,
    one file per installed library: two virtual environments on one machine (each its own
    detect-secrets) would otherwise rewrite one file in turn and each start would miss it."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "researchwiki" / f"stock-detectors-{(key or 'unknown')[:16]}.json"


def _parse_cache(data: bytes, key: str) -> tuple[StockDetector, ...] | None:
    """The detectors a cache file holds, if it is exactly the shape written for `key`; else None."""
    try:
        parsed = json.loads(data)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or parsed.get("key") != key or not isinstance(parsed.get("detectors"), list):
        return None
    found: list[StockDetector] = []
    for item in parsed["detectors"]:
        if not isinstance(item, dict) or set(item) != {"name", "kind", "patterns", "overrides"}:
            return None
        name, kind, patterns, overrides = item["name"], item["kind"], item["patterns"], item["overrides"]
        if not (isinstance(name, str) and isinstance(kind, str) and isinstance(overrides, bool)
                and isinstance(patterns, list)
                and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and type(p[1]) is int
                        for p in patterns)):
            return None
        found.append(StockDetector(name, kind, tuple((p[0], p[1]) for p in patterns), overrides))
    return tuple(found)


def stock_detectors(cache: Path | None = None) -> tuple[StockDetector, ...]:
    """The installed library's detectors: from the cache file when it was written for the
    library as installed now, else read from the library (and the cache rewritten, best effort:
    a read-only home only costs the next start the same read)."""
    key = library_key()
    path = default_cache_file(key) if cache is None else cache
    if key is not None:
        try:
            cached = _parse_cache(path.read_bytes(), key)
        except OSError:
            cached = None
        if cached is not None:
            return cached
    found = read_library()
    if key is not None:
        body = {"key": key, "detectors": [{"name": d.name, "kind": d.kind, "patterns": [list(p) for p in d.patterns],
                                           "overrides": d.overrides} for d in found]}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Written aside and renamed: a reader never sees half a file.
            temp = path.with_name(f".{path.name}.{os.getpid()}")
            temp.write_text(json.dumps(body, sort_keys=True), encoding="utf-8")
            temp.replace(path)
        except OSError:
            pass
    return found


def _build(stock: tuple[StockDetector, ...]) -> tuple[tuple[Detector, ...], tuple[TriggerPass, ...]]:
    detectors: dict[str, Detector] = {}
    for found in stock:
        name = found.name
        if name in SKIPPED:
            continue
        if name not in TRIGGER_SPECS:
            raise RuntimeError(f"detect-secrets ships {name}, which the trace scanner has no "
                               "trigger for: add it to TRIGGER_SPECS or SKIPPED")
        if found.overrides and name not in _VALIDATORS:
            raise RuntimeError(f"detect-secrets' {name} post-filters its matches in a way the "
                               "trace scanner does not know; add its check to _VALIDATORS")
        detectors[name] = Detector(
            kind=found.kind,
            sources=found.patterns,
            value_groups=tuple(value_group(source) for source, _ in found.patterns),
            validate=_VALIDATORS.get(name),
        )
    stale = set(TRIGGER_SPECS) - set(detectors)
    if stale:
        raise RuntimeError(f"trigger specs for detectors detect-secrets no longer ships: {stale}")

    # Detectors that share a trigger (the keyword-assignment family) share one search for it.
    shared: dict[tuple[bytes, bytes, bool], list[tuple[TriggerSpec, Detector]]] = {}
    for name, specs in TRIGGER_SPECS.items():
        for spec in specs:
            shared.setdefault((spec.head, spec.tail, spec.fold_case), []).append(
                (spec, detectors[name]))
    groups: dict[tuple[bool, int], list[tuple[bytes, bytes, Trigger]]] = {}
    for (head, tail, fold_case), members in shared.items():
        # The tail is a lookahead so a hit consumes only the head: finditer then cannot step
        # over another trigger that starts inside this one's tail.
        rest = re.escape(head[1:]) + (b"(?=" + tail + b")" if tail else b"")
        trigger = Trigger(
            source=re.escape(head[:1]) + rest,
            back=max(spec.back for spec, _ in members),
            ahead=max(spec.ahead for spec, _ in members),
            search=any(spec.search for spec, _ in members),
            json_context=any(spec.json_context for spec, _ in members),
            detectors=tuple(detector for _, detector in members),
            lead=members[0][0].lead,
            prefilter=members[0][0].prefilter,
        )
        groups.setdefault((fold_case, head[0]), []).append((head, rest, trigger))
    passes = []
    for (fold_case, first), group in groups.items():
        any_next = tuple(trigger for head, _, trigger in group if len(head) == 1)
        by_next: dict[int, tuple[Trigger, ...]] = {}
        for head, _, trigger in group:
            if len(head) > 1:
                by_next[head[1]] = (*by_next.get(head[1], ()), trigger)
        passes.append(TriggerPass(
            source=re.escape(bytes([first])) + b"(?:" + b"|".join(rest for _, rest, _ in group) + b")",
            first=first,
            fold_case=fold_case,
            triggers=tuple(trigger for _, _, trigger in group),
            by_next={byte: found + any_next for byte, found in by_next.items()},
            any_next=any_next,
        ))
    return tuple(detectors[name] for name in sorted(detectors)), tuple(passes)


DETECTORS, TRIGGERS = _build(stock_detectors())
KINDS: frozenset[str] = frozenset(detector.kind for detector in DETECTORS)
