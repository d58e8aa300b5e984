"""The platform roles that judge (design §5.1, §10 "Planner and Resolver runners").

The verifier checks deterministically and never calls a model for judgment beyond the baseline
seal; the roles here do, and they hold what the verifier must not (the Resolver's private key).
They write only through the verifier's landing (`verifier.pipeline.landing.land`).
"""
