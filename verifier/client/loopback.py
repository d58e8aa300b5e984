"""Whether a host name is this machine (clear-text HTTP is allowed only there). Pure and light:
the client imports it without the service's settings."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
