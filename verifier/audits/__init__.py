"""The audits: the history check (`rw ledger --verify`), replay from history (`rw replay`) and the
leak test over every agent-visible payload (`rw leaks`). They stand above what they audit."""
