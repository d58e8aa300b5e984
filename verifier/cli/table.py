"""`rw`'s command table: each top-level command's module and the one-line help `rw --help` shows,
so `rw` imports a command's module only when the command runs (verifier.cli.app configures its
group from it). Plain data: `rw check` as typed reads it without loading click (cli.main).

To add a command module: write `verifier/cli/<topic>_cmds.py` using the `cli` group from
`verifier.cli.app`, and add its module name to `COMMAND_MODULES` below. That is enough for it to
work. For a fast start, also add each of its top-level commands to `COMMANDS` (name -> module and
the one-line help `rw --help` shows); tests/cli/test_cli_startup.py checks that `COMMANDS` matches the
commands the modules really define.
"""

from __future__ import annotations

PACKAGE = "verifier.cli."

COMMAND_MODULES = ("project_cmds", "submit_cmds", "graph_cmds", "service_cmds", "resolver_cmds", "agent_cmds",
                   "check_cmds", "writer_cmds", "loop_cmds", "planner_cmds", "runner_cmds", "ui_cmds",
                   "graph_meaning_cmds", "eval_cmds", "deploy_cmds", "mcp_cmds", "model_cmds", "worker_cmds",
                   "token_cmds")

COMMANDS: dict[str, tuple[str, str]] = {
    "agent": ("project_cmds", "Register agents and people (the local stand-in for Commons identity)."),
    "audit": ("graph_cmds", "The project's refused authentications and authority checks (the steward's and admins')."),
    "board": ("service_cmds", "The task board: SLUG's leaves in a state (reading needs no token)."),
    "check": ("check_cmds", "Run the leaf kind's checks on the working folder, as the verifier will."),
    "claim": ("service_cmds", "Claim LEAF_ID (or, with --warm, a warm extract leaf) until its claim expires."),
    "demo": ("submit_cmds", "Run the demo end to end: a project, an agent, an extract leaf, a bad and a good patch."),
    "digest": ("graph_cmds", "Print the project digest as JSON: newest reports, hypothesis moves, open gaps."),
    "eval": ("eval_cmds", "The swarm's numbers (design §12) with intervals; lift and the kill signal, plainly."),
    "eval-arm": ("eval_cmds", "The controlled arm: plans run by one agent and by the swarm, judged on use and credit."),
    "hold": ("graph_cmds", "What waits in the queue (PROJECT.md holds), and a person's decision on it."),
    "host": ("deploy_cmds", "Put SLUG's branch on an empty repository at URL; every landing is then pushed there."),
    "instances": ("deploy_cmds", "The live verifier instances of this deployment and the projects each writes."),
    "git": ("token_cmds", "git for people: a clone that pushes to refs/for/main with your token."),
    "invite": ("token_cmds", "Print a one-time code that lets OPERATOR join SLUG from their own machine."),
    "join": ("token_cmds", "Redeem an invite CODE at SERVER: register your agents, keep the tokens (0600)."),
    "import": ("planner_cmds", "Add loose hypotheses to SLUG from a list, a YAML or a CSV file."),
    "inbox": ("graph_meaning_cmds", "Your inbox, read from the Commons database on this machine (no service needed)."),
    "init": ("project_cmds", "Create project SLUG (a bare repository under RW_HOME/projects)."),
    "leaf": ("project_cmds", "Write and read leaf contracts."),
    "leaks": ("resolver_cmds", "Search every agent-visible payload for every baseline still sealed."),
    "ledger": ("project_cmds", "Show every attempt: outcome, leaf, agent, operator, and why."),
    "loop": ("loop_cmds", "The live skill and the gate, by hand."),
    "maintainer": ("loop_cmds", "The Wiki Maintainer: traces -> pattern pages in $RW_HOME/ops-wiki.git."),
    "mcp": ("mcp_cmds", "Serve the agent's loop as MCP tools on stdin/stdout (docs/mcp.md)."),
    "model": ("model_cmds", "The models behind each role (docs/models.md)."),
    "messages": ("service_cmds", "Your inbox: the first-minute message and the return triggers."),
    "new": ("agent_cmds", "Write an object file into the working folder: ids and offsets computed."),
    "outcome": ("service_cmds", "The state and verdict of one of your submissions."),
    "planner": ("planner_cmds", "The Planner: turns a project's state into a plan and leaves (docs/planner.md)."),
    "proposer": ("loop_cmds", "The Skill Proposer: one atomic skill proposal, gated on the validation set."),
    "release": ("service_cmds", "Release your claim on LEAF_ID."),
    "repair": ("writer_cmds", "Put SLUG's branch back on a commit the ledger vouches for, as a ledger row (a person)."),
    "replay": ("graph_cmds", "Rebuild ledger, scores and leaf results from git history alone."),
    "resolve": ("resolver_cmds", "Resolve every active hypothesis past its check date (meant to run daily)."),
    "resolver": ("resolver_cmds", "The Resolver's key pair."),
    "revert": ("graph_cmds", "Revert an accepted contribution, withdrawing its citations (token: a person's)."),
    "runner": ("runner_cmds", "Wake each project's Planner when its loop_cadence is due; optionally run workers."),
    "schema": ("project_cmds", "Print the JSON Schema of one format, to check work before submitting."),
    "scores": ("graph_cmds", "Show the v0 components per operator, side by side (never combined)."),
    "seal": ("resolver_cmds", "Seal a baseline for every active hypothesis that has no current one."),
    "serve": ("service_cmds", "Run the verifier as an HTTP service on RW_HOME (recovering from any crash first)."),
    "source": ("project_cmds", "Read sources."),
    "submit": ("submit_cmds", "Submit a patch with its trace bundle for a leaf, or a working folder."),
    "thread": ("service_cmds", "Read a leaf's thread (outcomes, questions), or post on it."),
    "token": ("token_cmds", "List, revoke and rotate bearer tokens (yours and your agents'; the admin any)."),
    "trace": ("agent_cmds", "Record the trace of the leaf you work on: secrets stripped, tool output capped."),
    "ui": ("ui_cmds", "The read-only UI: hypothesis cards, findings, the ledger, the hold queues (docs/ui.md)."),
    "verdict": ("resolver_cmds", "Verdicts waiting for a person (PROJECT.md holds verdicts), and overrides."),
    "skill": ("worker_cmds", "The live skill the service serves (GET /skill)."),
    "work": ("agent_cmds", "Claim a leaf, clone the project at its base, write its payload, start the trace."),
    "worker": ("worker_cmds", "One leaf by an agent CLI (--agent) or the platform's model worker (--model)."),
}
