"""The secret gate (submit step 3): nothing that lands, and nothing shown, carries a secret.

The trace scan (pipeline.trace) reads the bundle as it arrived. What the patch writes is read
here, as the bytes that would land: the raw patch (a person's edit may come without a trace),
and every blob the patch carries in a form the raw scan cannot read (a `GIT binary patch`
literal is zlib behind base85, so its decoded contents are scanned). A hit refuses with code
`secret_in_patch`, naming the file and the offset, before anything is stored. What the
verifier's own roles write (a person's `rw leaf add`, the Planner's plans and leaves) passes the
same scan (`refuse_secret_files`).

A bearer token of this verifier found anywhere (trace, patch, message) is revoked at once:
`revoke_found_tokens` hashes each token-shaped run and revokes the registered ones. The
rejection names the handles whose token was revoked (`REVOKED_MARK`), so the Commons notifier
tells each owner (commons.triggers.revoked_messages).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

from verifier.errors import FormatError, Rejected, Rejection
from verifier.patch.parse import ParsedPatch
from verifier.secrets import SecretHit, scan_bytes
from verifier.secrets.tokens import KIND as TOKEN_KIND
from verifier.secrets.views import token_candidates

# The rejection text that names whose token was revoked; the notifier reads the handles after it.
REVOKED_MARK = "revoked the bearer token of: "


class Revoker(Protocol):
    def revoke_leaked(self, tokens: list[str], now: datetime, where: str) -> list[str]: ...


def patch_blobs(raw: bytes, patch: ParsedPatch) -> dict[str, bytes]:
    """Every byte string the patch would land, by name: the raw diff and each decoded binary blob."""
    blobs = {"patch.diff": raw}
    for change in patch.changes:
        if change.binary is not None:
            blobs[change.path] = change.binary
    return blobs


def scan_blobs(blobs: dict[str, bytes]) -> list[SecretHit]:
    return [hit for name, data in blobs.items() for hit in scan_bytes(data, name=name)]


def describe(hits: list[SecretHit]) -> str:
    shown = "; ".join(f"{hit.kind} in {hit.file} at byte {hit.offset} ({hit.encoding})" for hit in hits[:5])
    more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
    return f"secret scan found {len(hits)} secret(s): {shown}{more}"


def revoke_found_tokens(identities: Revoker, blobs: Iterable[bytes], now: datetime, where: str) -> list[str]:
    """Revoke every registered bearer token that appears (in any view) in blobs; return whose."""
    found = sorted({token for data in blobs for token in token_candidates(data)})
    return identities.revoke_leaked(found, now, where) if found else []


def revocation_note(handles: list[str]) -> str:
    return f"; {REVOKED_MARK}{', '.join(handles)}" if handles else ""


def gate_patch(identities: Revoker, raw: bytes, patch: ParsedPatch, now: datetime) -> None:
    """Refuse (secret_in_patch) a patch that would land a secret; revoke any token of ours in it."""
    blobs = patch_blobs(raw, patch)
    hits = scan_blobs(blobs)
    if not hits:
        return
    revoked = []
    if any(hit.kind.startswith(TOKEN_KIND) for hit in hits):
        revoked = revoke_found_tokens(identities, blobs.values(), now, "a submitted patch")
    first = hits[0].file
    raise Rejected(Rejection("secret_in_patch", f"{describe(hits)}; nothing was kept. Strip secrets from the "
                             f"files you submit{revocation_note(revoked)}", first))


def refuse_secret_files(files: dict[str, bytes]) -> None:
    """For what the verifier's own roles write (leaf contracts, plans): a secret in them is refused
    as a format error naming the file, before anything is written."""
    hits = scan_blobs(files)
    if hits:
        raise FormatError(f"{describe(hits)}; nothing was written", hits[0].file)


def revoke_on_trace_secret(identities: Revoker, exc: Rejected, files: dict[str, bytes], now: datetime) -> Rejected:
    """After a trace refused for a secret: revoke tokens of ours in it, and say so in the refusal."""
    first = exc.headline
    if first.code != "secret_in_trace" or TOKEN_KIND not in first.message:
        return exc
    revoked = revoke_found_tokens(identities, files.values(), now, "a submitted trace")
    if not revoked:
        return exc
    return Rejected(Rejection(first.code, first.message + revocation_note(revoked), first.where))
