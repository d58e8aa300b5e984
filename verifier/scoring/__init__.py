"""Scores: pure functions over plain data."""
