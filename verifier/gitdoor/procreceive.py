"""The proc-receive hook: git hands it the update of refs/for/main, and it reports that update done
without moving any ref (receive.procReceiveRefs = refs/for, see githooks(5)).

By the time git runs it, the pre-receive hook has already landed the push through the writer (or
refused it, and then git never gets here). Without this hook git would create refs/for/main
itself after the pre-receive hook, and a second push landing at the same moment would find that
ref in its way and report "failed to update ref" for commits that had landed. Only the standard
library is imported: this runs on every push and must start fast.
"""

from __future__ import annotations

import sys
from typing import BinaryIO


def read_packet(stream: BinaryIO) -> bytes | None:
    """One pkt-line's payload; None for a flush packet."""
    head = stream.read(4)
    if len(head) != 4:
        raise EOFError("receive-pack closed the protocol early")
    size = int(head, 16)
    if size == 0:
        return None
    if size < 4:
        raise ValueError(f"bad pkt-line length {head!r}")
    payload = stream.read(size - 4)
    if len(payload) != size - 4:
        raise EOFError("receive-pack closed the protocol inside a pkt-line")
    return payload


def packet(payload: bytes) -> bytes:
    return f"{len(payload) + 4:04x}".encode() + payload


def converse(inp: BinaryIO, out: BinaryIO) -> int:
    """Speak proc-receive version 1: take the commands and report each one done."""
    version = read_packet(inp)
    if version is None or not version.startswith(b"version=1"):
        print(f"REFUSED: unexpected proc-receive greeting {version!r}", file=sys.stderr)
        return 1
    while read_packet(inp) is not None:  # the rest of the greeting
        pass
    out.write(packet(b"version=1\n") + b"0000")
    out.flush()
    refs = []
    while (line := read_packet(inp)) is not None:
        refs.append(line.rstrip(b"\n").split(b" ")[2])
    out.write(b"".join(packet(b"ok " + ref + b"\n") for ref in refs) + b"0000")
    out.flush()
    return 0


def main() -> int:
    return converse(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main())
