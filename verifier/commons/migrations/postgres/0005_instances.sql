-- Several verifier instances (docs/deploy.md): each live instance beats here (its workers, every
-- third of a lease), so a project nobody holds is placed on the least-loaded live instance.
CREATE TABLE instances (
  name TEXT PRIMARY KEY, address TEXT NOT NULL, beat_at DOUBLE PRECISION NOT NULL);
