"""Secret scanning of everything that lands or is shown: scan_bytes() and the SecretHit it returns.

See docs/secrets.md for the views it reads (plain, JSON-escaped, base64, hex, Unicode, two layers),
the keyword-context and bearer-token detectors, and what remains out of reach.
"""

from verifier.secrets.scan import SecretHit, scan_bytes

__all__ = ["SecretHit", "scan_bytes"]
