"""Secret scanning of trace bundles: scan_bytes() and the SecretHit it returns."""

from verifier.secrets.scan import SecretHit, scan_bytes

__all__ = ["SecretHit", "scan_bytes"]
