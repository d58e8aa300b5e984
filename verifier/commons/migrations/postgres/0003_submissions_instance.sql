-- Several verifier instances (docs/deploy.md): each journal row names the instance that runs it, so
-- start-up recovery settles its own rows (and a dead instance's), never a live one's. NULL: a row
-- written before instances had names (settled by whoever recovers first, as before).
ALTER TABLE submissions ADD COLUMN instance TEXT;
CREATE INDEX submissions_instance ON submissions (instance, state);
