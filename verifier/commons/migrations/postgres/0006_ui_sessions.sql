-- People's UI sessions (docs/ui.md): keyed by sha256 of the session id, the person's bearer token
-- sealed with a key only the session id (the browser's HttpOnly cookie) derives.
CREATE TABLE IF NOT EXISTS ui_sessions (
  id_sha256 TEXT PRIMARY KEY, handle TEXT NOT NULL, nonce TEXT NOT NULL, sealed TEXT NOT NULL,
  created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS ui_sessions_expiry ON ui_sessions (expires_at);
