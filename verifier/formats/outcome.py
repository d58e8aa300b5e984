"""A verdict's outcome: the one spelling the ledger row and the leaf result share.

Its own module so that reading a leaf contract (`rw check`, `rw work`) does not load the ledger's
models (issue 26); verifier.formats.ledger re-exports it under the same name."""

from __future__ import annotations

from typing import Literal

Outcome = Literal["accepted", "held", "rejected", "crash"]
