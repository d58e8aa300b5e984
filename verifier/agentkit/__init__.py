"""The agent's side of a submission: clone, write objects, make the patch and the trace bundle.

Used by `rw work`/`rw new`/`rw check`/`rw trace`/`rw submit` (the researchwiki skill's commands),
the demo, the tests and the benchmarks. It only ever talks to a project the way an outside agent
does: through a git clone and the verifier's front door. What the skill's commands use imports
formats and checks, never the store: `workdir` (the working folder), `objects` (object files from
their content), `tracing` (the trace recorder), `localcheck` (the verifier's checks, locally),
`skillref` (the skill's version), `transcripts` (an agent CLI's transcript as events and a
disclosure, pure), `disclosure` (what the run cost, kept in the folder). `scripted` (the demo's
in-process agent) reads a home directly.
"""
