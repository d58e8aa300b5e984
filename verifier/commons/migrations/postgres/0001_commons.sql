-- The Commons on PostgreSQL: every table the SQLite file holds (verifier/commons/local.py,
-- verifier/messages/notifier.py, verifier/service/journal.py, verifier/service/outage.py), in
-- PostgreSQL's types. Applied once by verifier/commons/pgdb.py, recorded in rw_migrations.
CREATE TABLE claims (
  project TEXT NOT NULL, leaf_id TEXT NOT NULL, agent TEXT NOT NULL,
  claimed_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (project, leaf_id));
CREATE TABLE messages (
  id BIGSERIAL PRIMARY KEY, key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
  project TEXT, leaf_id TEXT, to_agent TEXT, sender TEXT NOT NULL, body TEXT NOT NULL,
  data TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL);
CREATE INDEX messages_inbox ON messages (to_agent, id);
CREATE INDEX messages_thread ON messages (project, leaf_id, id);
CREATE TABLE outages (
  id BIGSERIAL PRIMARY KEY, started_at DOUBLE PRECISION NOT NULL, ended_at DOUBLE PRECISION NOT NULL);
CREATE TABLE notify_cursor (project TEXT PRIMARY KEY, next_seq BIGINT NOT NULL, tip TEXT NOT NULL);
-- INTEGER, not BIGINT: SUM(integer) is a bigint (an int in Python), SUM(bigint) a numeric.
CREATE TABLE notify_stats (
  project TEXT NOT NULL, agent TEXT NOT NULL, kind TEXT NOT NULL,
  accepted INTEGER NOT NULL, attempts INTEGER NOT NULL, PRIMARY KEY (project, agent, kind));
CREATE TABLE notify_authors (
  project TEXT NOT NULL, object_id TEXT NOT NULL, agent TEXT NOT NULL, PRIMARY KEY (project, object_id));
CREATE TABLE notify_links (
  project TEXT NOT NULL, link_id TEXT NOT NULL, hypothesis_id TEXT NOT NULL, finding_id TEXT NOT NULL,
  PRIMARY KEY (project, link_id));
CREATE INDEX notify_links_hypothesis ON notify_links (project, hypothesis_id);
CREATE TABLE notify_firsts (project TEXT NOT NULL, what TEXT NOT NULL, PRIMARY KEY (project, what));
CREATE TABLE notify_agents (agent TEXT PRIMARY KEY, operator TEXT NOT NULL);
CREATE TABLE submissions (
  id TEXT PRIMARY KEY, agent TEXT NOT NULL, project TEXT NOT NULL, leaf_id TEXT NOT NULL,
  idempotency_key TEXT, digest TEXT NOT NULL, trace_id TEXT NOT NULL, base_revision TEXT,
  ledger_from BIGINT NOT NULL, state TEXT NOT NULL, pid BIGINT NOT NULL, started_at DOUBLE PRECISION NOT NULL,
  finished_at DOUBLE PRECISION, verdict TEXT, recovered INTEGER NOT NULL DEFAULT 0,
  UNIQUE (agent, idempotency_key));
CREATE INDEX submissions_running ON submissions (state);
CREATE TABLE service_heartbeat (
  id INTEGER PRIMARY KEY CHECK (id = 1), alive_at DOUBLE PRECISION NOT NULL, stopped INTEGER NOT NULL);
