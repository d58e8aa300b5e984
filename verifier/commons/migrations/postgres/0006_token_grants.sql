-- Tokens expire and are scoped (docs/api.md "Tokens and invites"): each identity's token carries
-- when it expires (NULL: made before tokens expired), its projects (a JSON array; empty: every
-- project), its kinds of action (a JSON array; NULL: the kind's default) and whether its holder is
-- an admin. Invites: one-time codes, only their sha256 kept.
ALTER TABLE identities ADD COLUMN expires_at TEXT;
ALTER TABLE identities ADD COLUMN projects TEXT NOT NULL DEFAULT '[]';
ALTER TABLE identities ADD COLUMN scopes TEXT;
ALTER TABLE identities ADD COLUMN admin BOOLEAN NOT NULL DEFAULT FALSE;
CREATE TABLE invites (
  id TEXT PRIMARY KEY, code_sha256 TEXT NOT NULL UNIQUE, project TEXT NOT NULL, operator TEXT NOT NULL,
  agents INTEGER NOT NULL, created_by TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL,
  used_at TEXT);
