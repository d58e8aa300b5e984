"""Patches: strict parsing of git-format unified diffs, path rules, and pure application."""
