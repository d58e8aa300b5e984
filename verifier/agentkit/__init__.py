"""The agent's side of a submission: clone, write objects, make the patch and the trace bundle.

Used by the demo, the tests, the benchmarks and (later) the researchwiki skill. It only ever talks
to a project the way an outside agent does: through a git clone and the verifier's front door.
"""
