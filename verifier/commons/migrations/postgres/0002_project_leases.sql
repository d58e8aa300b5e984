-- Several verifier instances (docs/deploy.md): the one instance that may write a project holds its
-- lease. `fencing` grows on every change of holder; expiry is on the database's clock.
CREATE TABLE project_leases (
  project TEXT PRIMARY KEY, holder TEXT NOT NULL, address TEXT NOT NULL,
  fencing BIGINT NOT NULL, expires_at DOUBLE PRECISION NOT NULL);
