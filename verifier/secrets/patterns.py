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
trigger occurrence, so the decision is always detect-secrets' own.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import detect_secrets.plugins as ds_plugins
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.jwt import JwtTokenDetector

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
    "BasicAuthDetector": (TriggerSpec(b"://"),),
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
        TriggerSpec(b":", rb"(?<=[0-9]{8}:)(?=[0-9A-Za-z_-]{35})", back=10, ahead=36),
    ),
    "TwilioKeyDetector": (
        TriggerSpec(b"AC", rb"(?=[a-z0-9]{32})", ahead=40),
        TriggerSpec(b"SK", rb"(?=[a-z0-9]{32})", ahead=40),
    ),
}

# detect-secrets plugins whose analyze_string adds a check after the regex; we call the same
# check on each match. Any other override is unknown to us, and the import fails loudly.
_VALIDATORS: dict[str, Callable[[str], bool]] = {
    "JwtTokenDetector": cast(Callable[[str], bool], JwtTokenDetector.is_formally_valid),
}


@dataclass(frozen=True)
class Detector:
    """One detect-secrets detector, recompiled for bytes."""

    kind: str  # the plugin's secret_type, e.g. "AWS Access Key"
    patterns: tuple[re.Pattern[bytes], ...]
    value_groups: tuple[int, ...]  # per pattern: group holding the secret value, 0 = whole match
    validate: Callable[[str], bool] | None


@dataclass(frozen=True)
class Trigger:
    """One trigger and the detectors to run in the window around each of its occurrences."""

    regex: re.Pattern[bytes]  # the head and tail, to tell which trigger of a pass matched
    back: int
    ahead: int
    search: bool
    json_context: bool
    detectors: tuple[Detector, ...]


@dataclass(frozen=True)
class TriggerPass:
    """One search over the data for every trigger whose head starts with the same byte.

    Why grouped: CPython's `re` skips to a literal first byte at about 2 GB/s, so each pass
    costs about the same whatever it looks for; an alternation with different first bytes is
    retried at every byte instead. After a hit, each trigger's own regex says which matched.
    """

    regex: re.Pattern[bytes]
    fold_case: bool
    triggers: tuple[Trigger, ...]
    # The triggers that can match given the byte after the first (heads of one byte match any).
    by_next: dict[int, tuple[Trigger, ...]]
    any_next: tuple[Trigger, ...]


def _regex_detector_classes() -> list[type[Any]]:
    """Every concrete RegexBasedDetector shipped in detect_secrets.plugins, by class name."""
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


def _to_bytes(pattern: re.Pattern[str]) -> re.Pattern[bytes]:
    # str patterns carry re.UNICODE implicitly; bytes patterns reject it. MULTILINE because
    # detect-secrets runs each pattern on one line at a time: ^ and $ mean line boundaries.
    flags = (pattern.flags & ~re.UNICODE) | re.MULTILINE
    return re.compile(pattern.pattern.encode("ascii"), flags)


def _build() -> tuple[tuple[Detector, ...], tuple[TriggerPass, ...]]:
    detectors: dict[str, Detector] = {}
    for cls in _regex_detector_classes():
        name = cls.__name__
        if name in SKIPPED:
            continue
        if name not in TRIGGER_SPECS:
            raise RuntimeError(f"detect-secrets ships {name}, which the trace scanner has no "
                               "trigger for: add it to TRIGGER_SPECS or SKIPPED")
        overrides = cls.analyze_string is not RegexBasedDetector.analyze_string
        if overrides and name not in _VALIDATORS:
            raise RuntimeError(f"detect-secrets' {name} post-filters its matches in a way the "
                               "trace scanner does not know; add its check to _VALIDATORS")
        stock = [cast(re.Pattern[str], p) for p in cls.denylist]
        detectors[name] = Detector(
            kind=str(cls.secret_type),
            patterns=tuple(_to_bytes(p) for p in stock),
            value_groups=tuple(value_group(p.pattern) for p in stock),
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
            regex=re.compile(re.escape(head[:1]) + rest),
            back=max(spec.back for spec, _ in members),
            ahead=max(spec.ahead for spec, _ in members),
            search=any(spec.search for spec, _ in members),
            json_context=any(spec.json_context for spec, _ in members),
            detectors=tuple(detector for _, detector in members),
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
            regex=re.compile(re.escape(bytes([first])) + b"(?:" + b"|".join(
                rest for _, rest, _ in group) + b")"),
            fold_case=fold_case,
            triggers=tuple(trigger for _, _, trigger in group),
            by_next={byte: found + any_next for byte, found in by_next.items()},
            any_next=any_next,
        ))
    return tuple(detectors[name] for name in sorted(detectors)), tuple(passes)


DETECTORS, TRIGGERS = _build()
KINDS: frozenset[str] = frozenset(detector.kind for detector in DETECTORS)
