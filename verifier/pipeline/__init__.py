"""The submission row: one module a step, and `submit` as the only place that knows the order."""
