"""Open the Commons database config.json names: the SQLite file in the home (the default) or
PostgreSQL (`backends.commons.kind: postgres`, the connection string from the environment)."""

from __future__ import annotations

from verifier.commons.db import CommonsDB, Database
from verifier.store.backends import commons_dsn
from verifier.store.home import Home


def commons_database(home: Home) -> CommonsDB:
    backend = home.settings.backends.commons
    if backend.kind == "postgres":
        from verifier.commons.pgdb import shared_database  # noqa: PLC0415 - psycopg only when used

        return shared_database(commons_dsn(backend), pool_size=backend.pool_size)
    return Database(home.layout.commons)
