-- Several verifier instances (docs/deploy.md): one identity registry for all of them, so a token
-- made, or revoked, on one instance is known to every other at once. Only sha256(token) is kept.
CREATE TABLE identities (
  handle TEXT PRIMARY KEY, operator TEXT NOT NULL, type TEXT NOT NULL,
  token_sha256 TEXT NOT NULL, created_at TEXT NOT NULL, reissued_at TEXT,
  revoked_at TEXT, revoked_because TEXT);
CREATE INDEX identities_by_token ON identities (token_sha256);
