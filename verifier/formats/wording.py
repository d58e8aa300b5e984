"""How the ledger's sentences count things: "1 source", "2 sources", never "1 sources"."""

from __future__ import annotations


def count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else (plural or noun + 's')}"
