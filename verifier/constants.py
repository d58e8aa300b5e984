"""The verifier's frozen numbers: every size, cap, floor, TTL, timeout, retry window and budget
that is policy, each with the reason it has the value it has, auditable in one read.

Modules import these and keep no copy (`tests/suite/test_constants.py` greps `verifier/` for the
literals). A number that only shapes an algorithm (a scanner's window, a page size of the UI) stays
beside its code; a number someone could argue about belongs here. Changing one changes what the
verifier accepts, so it is a decision: say why in the commit, and in `docs/` where the number is
documented.

Named `constants`, not `policy`: "policy" is already a project's own, editable rules in PROJECT.md
(`source_policy`, `holds`, `verifier.checks.policy`), and these are the opposite, fixed in code.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final

# Units of size, so a cap reads as what it is (20 * MIB, not 20971520).
KIB: Final = 1024
MIB: Final = 1024 * KIB

# What an agent sends -------------------------------------------------------------------------------
# A trace bundle: the design's cap per bundle; past it the skill truncates tool results, never reasoning.
MAX_BUNDLE_BYTES: Final = 20 * MIB
# `rw submit` reads no patch file larger than a bundle may be: past that it can never be sent.
MAX_PATCH_FILE: Final = MAX_BUNDLE_BYTES
# A patch: far past any leaf's honest change (a few findings), small enough to apply in memory.
MAX_PATCH_BYTES: Final = 8 * MIB
# Files one patch may touch: a leaf writes a handful; more is a sign of something else.
MAX_PATCH_FILES: Final = 64
# Events in one trace: a day of tool calls, and a bound on the reader's work.
MAX_TRACE_EVENTS: Final = 200_000
# One tool result, as the recorder keeps it: longer output is cut so the bundle keeps its room.
MAX_TOOL_EVENT_CHARS: Final = 2 * MIB
# A JSON request body (a claim, a thread post): these bodies are a few hundred bytes.
MAX_JSON_BODY_BYTES: Final = 64 * KIB
# A person's UI session (docs/ui.md): a working day; past it they sign in again with their token.
UI_SESSION_TTL: Final = timedelta(hours=12)
# A message or question on a leaf's thread: a paragraph, not a document.
MAX_MESSAGE_CHARS: Final = 4000
# git over HTTP: negotiation lines ("want"/"have") are generous for any project at 16 MB...
MAX_UPLOAD_REQUEST: Final = 16 * MIB

# What the verifier reads from the world and the repository -----------------------------------------
# A fetched source: a long paper or web page fits; the fetcher stops reading past this.
MAX_SOURCE_BYTES: Final = 20 * MIB
# PDF parsing cost grows with size and page count, and a verifier any agent can call must not be
# made to chew on an arbitrarily large document: no larger than a fetch may be, no more pages.
MAX_PDF_BYTES: Final = MAX_SOURCE_BYTES
MAX_PDF_PAGES: Final = 500
# Seconds a fetch may take, and the redirects it may follow, before the source is `failed`.
FETCH_TIMEOUT_S: Final = 10.0
FETCH_MAX_REDIRECTS: Final = 5
# A Markdown document with front matter in the repository: no report is near a megabyte.
MAX_DOCUMENT_BYTES: Final = MIB
# A finding's excerpt: a quote, not a copy of the source (docs/format.md).
MAX_EXCERPT_CHARS: Final = 2000
# The default floor on an excerpt (after normalization): shorter quotes match by accident.
MIN_EXCERPT_CHARS: Final = 20

# What a leaf kind asks for (docs/format.md, the design's leaf kinds) ----------------------------------
# An extract leaf lands 3 to 15 findings (the design's extract kind): fewer is not worth a leaf.
MIN_FINDINGS: Final = 3
MAX_FINDINGS: Final = 15
# A scout leaf stages 1 to 5 sources with their bytes (the design's scout kind).
MIN_SOURCES: Final = 1
MAX_SOURCES: Final = 5
# FIELD-GUIDE.md stays short enough that every worker reads all of it (design §3.9).
MAX_GUIDE_LINES: Final = 150
# A warm leaf's source: it must finish in under a minute, so small sources only (design §9.1).
WARM_MAX_BYTES: Final = 20_000
# Warm extract leaves the Planner keeps open by default (settings `warm_pool`).
WARM_POOL: Final = 3
# A leaf the Planner makes lives a week; a warm one a day (it is for the next newcomer).
LEAF_TTL: Final = timedelta(days=7)
WARM_TTL: Final = timedelta(hours=24)

# Claims and the service's clocks -------------------------------------------------------------------
# A claim lasts half an hour unless asked otherwise: one leaf's work, with room.
CLAIM_TTL_S: Final = 1800
# No claim outlives a week: a forgotten claim must not hold a leaf for good.
CLAIM_TTL_MAX_S: Final = 7 * 86400
# Bearer tokens and invites (docs/api.md "Tokens and invites"): a token lives 90 days unless made
# otherwise (a quarter: long enough not to nag, short enough that a forgotten one dies), never
# more than a year; an invite a week, used once, for at most 20 agents.
TOKEN_TTL: Final = timedelta(days=90)
TOKEN_TTL_MAX: Final = timedelta(days=365)
INVITE_TTL: Final = timedelta(days=7)
INVITE_TTL_MAX: Final = timedelta(days=30)
INVITE_MAX_AGENTS: Final = 20
# The request head must arrive within this (a slow-loris client holds no worker longer).
HEADER_TIMEOUT_S: Final = 10.0
# The longest pause while a body streams in, and the time a whole body may take.
BODY_IDLE_TIMEOUT_S: Final = 15.0
BODY_TIMEOUT_S: Final = 120.0
# Outages shorter than this do not extend leaves' expiry: a restart is not an outage.
OUTAGE_MIN_S: Final = 60.0
# How often a worker notes it is alive, so an outage is measured to within this.
HEARTBEAT_S: Final = 5.0
# A project's write lease: a dead holder's projects are taken over after this (the failover time).
LEASE_S: Final = 8.0
# A project not written by this instance for this long is let go (its lease runs out).
LEASE_IDLE_S: Final = 30.0
# PostgreSQL connections one process of the service opens at most (backends.commons.pool_size):
# its threads share them, so a worker's 40 request threads do not hold 40 connections each
# (PostgreSQL's max_connections is finite; docs/deploy.md sizes it, with PgBouncer in front).
COMMONS_POOL_SIZE: Final = 8
# A thread waits this long for a free pooled connection before its request answers 503: longer
# than any one Commons transaction of ours, so only a stuck database or a far too small pool trips it.
COMMONS_POOL_WAIT_S: Final = 30.0
# Placement weighs each instance by the submissions to the projects it holds in this window
# (verifier.deploy.placement): long enough to span a burst, short enough to follow a swarm moving.
RECENT_LANDINGS_S: Final = 60.0
# A notifier pass that failed (the Commons away) is tried again after this (verifier.service.notifying);
# its rows wait in the ledger past the durable cursor meanwhile, so nothing is lost.
NOTIFY_RETRY_S: Final = 2.0
# A message read (an inbox, a thread) waits at most this long for the notifier passes of the verdicts
# its process answered before it (read your writes); past it, it answers with what is posted.
NOTIFY_READ_WAIT_S: Final = 10.0
# A push waits at most this long for the landing being judged under the writer's lock to be staged,
# so it travels in the same push instead of a round trip of its own (verifier.deploy.publishing):
# about one judging on a loaded machine; an idle project (nobody judged) pushes at once.
PUBLISH_LINGER_S: Final = 1.0
# An instance's start-up reads every project's digest at most this long before its workers fork, so
# each worker starts with the projects' leaf contracts parsed (verifier.deploy.instances.warm): the
# projects it writes and those it may take over after a failover, about 0.2 s each here.
WARM_START_S: Final = 20.0
# A forwarded write waits this long for the holder: a whole verdict on a loaded machine.
FORWARD_TIMEOUT_S: Final = 300.0
# A push's quarantined objects older than this are swept: far longer than any hook may take.
QUARANTINE_MAX_AGE_S: Final = 6 * 3600
# Loose objects past which a repository's objects are packed in the background (git's own gc.auto
# default: about 150 landings of a 10,000-finding project; verifier.store.upkeep).
UPKEEP_LOOSE_OBJECTS: Final = 6_700
# Packs past which a packing pass also merges them (geometrically): a lookup reads every pack's index.
UPKEEP_PACKS: Final = 16
# A packing pass that runs longer than this is stopped (it leaves the objects as they were).
UPKEEP_TIMEOUT_S: Final = 3600.0
# Rejected bundles kept per agent in the trace quarantine, newest first: enough to debug, bounded.
QUARANTINE_PER_AGENT: Final = 8
# SQLite waits this long for a lock before failing: longer than any one transaction of ours.
BUSY_TIMEOUT_MS: Final = 30_000
# A project's digest is reused this long: an onboarding burst computes it once, not per message.
DIGEST_TTL_S: Final = 10.0
# A git command against a project's host may take this long (a clone of a large project).
GIT_TIMEOUT_S: Final = 120

# Retry windows ----------------------------------------------------------------------------------
# Client reads (board, claim, leaf, source text, messages) give up after this; a submission keeps
# trying for longer (`--retry-for`), its verdict is worth waiting for.
READ_RETRY_S: Final = 30
SUBMIT_RETRY_S: Final = 600
# One request's answer may take this long: a whole verdict on a loaded service.
REQUEST_TIMEOUT_S: Final = 120.0
# Retry-After of a fault of the machine (503 `retry_later`): a full disk is not cleared in a second.
RETRY_AFTER_S: Final = 5
# Retry-After of a request whose answer is coming (the same key still running, a holder moving).
RETRY_SOON_S: Final = 1

# Models and workers -------------------------------------------------------------------------------
# A frontier-model call (the baseline seal, the Resolver) gets ten minutes, then counts as failed.
MODEL_TIMEOUT_S: Final = 600.0
# A validation worker runs one leaf; past ten minutes it is stuck.
WORKER_TIMEOUT_S: Final = 600.0
# The controlled arm's agent gets an hour for its plan.
ARM_TIMEOUT_S: Final = 3600.0
# Model calls per maintainer pass: the biggest failure groups first, and a bounded bill.
MAX_DIAGNOSES: Final = 5
# A provider API call (docs/models.md): retried this many times after a 429, a 5xx or a dropped
# connection, waiting MODEL_BACKOFF_S, then twice that, ... never more than MODEL_BACKOFF_MAX_S
# (a Retry-After the provider sends is honoured up to the same cap). A timeout is not retried:
# it has already spent the call's budget.
MODEL_RETRIES: Final = 3
MODEL_BACKOFF_S: Final = 1.0
MODEL_BACKOFF_MAX_S: Final = 30.0
# What the Planner's judgement request carries of the project's words (design §5.1): the latest
# report's body and PROJECT.md's free text, each cut to this many characters (the request says so),
# so a long report cannot blow the model's context or the bill.
PLAN_REPORT_MAX_CHARS: Final = 6000
PLAN_PROJECT_TEXT_MAX_CHARS: Final = 4000
# Output tokens a provider call may spend on one answer.
MODEL_MAX_TOKENS: Final = 4096
# The platform worker (docs/models.md): how often it asks again for the findings whose excerpts it
# could not find in the source text, and the most findings it asks for on one leaf.
WORKER_EXCERPT_RETRIES: Final = 2
WORKER_MAX_FINDINGS: Final = 12
# A link leaf: at most this many findings shown to the model (the leaf's own, else the project's
# first), at most this many links in an answer, and this many asks again for the links that failed.
WORKER_LINK_MAX_FINDINGS: Final = 40
WORKER_MAX_LINKS: Final = 12
WORKER_LINK_RETRIES: Final = 2

# Evaluation -------------------------------------------------------------------------------------
# The kill signal speaks only after this many resolved hypotheses: fewer is noise.
KILL_MIN_RESOLVED: Final = 20

# Locks -------------------------------------------------------------------------------------------
# How long a writer waits for a lock another live process holds before it answers busy: far
# longer than any honest hold (a landing takes well under a second; a 100-commit push, a Planner
# wake on 10,000 findings or start-up recovery's repack of a large project, seconds to tens of
# seconds), so only a hung or runaway holder is answered busy; and half the service client's
# 120 s read timeout, so the busy answer reaches an agent before its request gives up. A dead
# holder never counts: the kernel drops its lock at once. config.json `lock_wait_s` overrides it.
LOCK_WAIT_S: Final = 60.0
# A loopback server's serve_forever poll: shutdown() waits up to one poll (the stdlib's 0.5 s on
# every stop of the validation set's pinned-file server and of the tests' stand-ins).
SERVE_POLL_S: Final = 0.05
# Group commit (verifier.pipeline.group): at most this many attempts of one process land as one
# group. A group holds the project's lock for its members' judging and one publish (~20 ms a
# member), so 32 keep a hold near a second, far inside every other writer's LOCK_WAIT_S.
GROUP_MAX: Final = 32
# How long a new `rw serve` waits for the home's service lock: a killed server's workers notice
# within a second that their parent is gone and let it go.
SERVICE_LOCK_WAIT_S: Final = 15.0
# A submission's form: its boundaries and part headers, then its largest body (bundle and patch).
FORM_OVERHEAD: Final = 64 * 1024
MAX_FORM_BYTES: Final = MAX_BUNDLE_BYTES + MAX_PATCH_BYTES + FORM_OVERHEAD
# git over HTTP: a pushed pack is held to the API's largest body.
MAX_RECEIVE_REQUEST: Final = MAX_FORM_BYTES

# The MCP server (docs/mcp.md): every tool argument is hostile. A free-text argument (an excerpt, a
# statement, a rationale) is refused past this many characters; a read returns at most this many.
MCP_MAX_TEXT: Final = 20_000
MCP_MAX_READ: Final = 200_000
# A short argument: an id, a URL, a path below the working folder, a language or rights word.
MCP_MAX_SHORT: Final = 2_000

# The agent workers (docs/runners.md): the agent CLI's turn budget (claude --max-turns), how long
# one `rw` step around it may take (work, import, check, submit), and how much longer than the
# agent's own limit its claim and the runner's limit last, for those steps.
AGENT_MAX_TURNS: Final = 40
AGENT_RW_STEP_TIMEOUT_S: Final = 300.0
AGENT_STEPS_S: Final = 600.0

# The audit log of denials (verifier.store.audit) -------------------------------------------------
# One file of refused authentications and authority checks: a denial is a few hundred bytes, so
# this keeps thousands, and a caller hammering with bad tokens cannot fill the disk: past the cap
# the file rolls over once (the previous one is kept), so the log is at most twice this.
AUDIT_MAX_BYTES: Final = 1 * MIB
# What one field of a denial may carry (an action, a reason): enough to read, never a request body.
AUDIT_FIELD_CHARS: Final = 500

# Research lessons for the Field Guide (roles.lessons, issue 23): failed sources of one host for one
# kind of reason before the Planner asks for a guide leaf stating the lesson. Two is already a
# pattern about the world (a host that paywalls), not bad luck with one URL.
LESSON_REPEATS: Final = 2

# What a Maintainer's diagnosis request carries of the failing trace (issue 23): its last events,
# each cut to a length, so one huge trace never becomes one huge model call. Stored traces passed
# the secret scan at ingest (pipeline.trace), so the events hold no secrets.
DIAGNOSE_EVENTS_MAX: Final = 40
DIAGNOSE_EVENT_CHARS: Final = 400
