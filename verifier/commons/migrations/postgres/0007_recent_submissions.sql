-- Placement (verifier.deploy.placement) weighs each instance by the journal's recent rows of the
-- projects it holds: a range read on started_at, not a scan of every submission ever journaled.
CREATE INDEX submissions_recent ON submissions (started_at, project);
