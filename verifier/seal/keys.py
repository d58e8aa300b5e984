"""The Resolver's key files on disk: created with safe modes, refused when others can read them.

    $RW_HOME/resolver/private.pem   0600, owned by the Resolver; nothing else reads it
    $RW_HOME/resolver/public.pem    0644; the verifier reads it to seal baselines

This is the edge of the seal package: the sealing functions take PEM bytes, never paths.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from verifier.seal.sealing import SealError, generate_keypair, load_private_key, load_public_key

RESOLVER_DIR = "resolver"
PRIVATE_PEM = "private.pem"
PUBLIC_PEM = "public.pem"


class KeyFileError(SealError):
    """A key file is missing, already exists, or has permissions that expose it."""


def resolver_dir(home_root: Path) -> Path:
    return home_root / RESOLVER_DIR


def _write_new(path: Path, data: bytes, mode: int) -> None:
    # O_EXCL: never overwrite a key (that would orphan every baseline sealed for it); the mode is
    # set at creation, so the private key is never readable by others, not even for an instant.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError as exc:
        raise KeyFileError(f"{path} already exists; refusing to replace a Resolver key") from exc
    try:
        os.fchmod(fd, mode)  # the umask may have narrowed the mode; make it exactly `mode`
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_keypair(directory: Path) -> tuple[Path, Path]:
    """Generate a Resolver key pair into `directory`; returns (private path, public path)."""
    directory.mkdir(parents=True, exist_ok=True)
    private_pem, public_pem = generate_keypair()
    private_path, public_path = directory / PRIVATE_PEM, directory / PUBLIC_PEM
    if public_path.exists():
        raise KeyFileError(f"{public_path} already exists; refusing to replace a Resolver key")
    _write_new(private_path, private_pem, 0o600)
    _write_new(public_path, public_pem, 0o644)
    return private_path, public_path


def read_public_key(path: Path) -> bytes:
    """The PEM bytes of the Resolver's public key (all the verifier ever needs)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise KeyFileError(f"no Resolver public key at {path}; create one with the Resolver's key setup") from exc
    load_public_key(data)
    return data


def read_private_key(path: Path) -> bytes:
    """The PEM bytes of the Resolver's private key, refused if group or others may read it."""
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise KeyFileError(f"no Resolver private key at {path}") from exc
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(
            f"{path} has mode {stat.S_IMODE(info.st_mode):04o}; a private key must be 0600 "
            f"(run: chmod 600 {path})"
        )
    data = path.read_bytes()
    load_private_key(data)
    return data
