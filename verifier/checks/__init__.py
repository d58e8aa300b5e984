"""Acceptance checks the verifier runs on a submitted patch, one module per check."""
