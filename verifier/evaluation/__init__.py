"""Swarm evaluation (design §1, §12): the metrics, their intervals, and the report. See docs/eval.md."""
