"""Alembic migrations of the reviewbot database, applied by `Store.open` (see service.db.migrate).

Each revision is one numbered file in versions/ (`0001_rounds.py`, `0002_...`), written by hand with
explicit `op.*` calls; `down_revision` chains them. Add a table by adding the next numbered file,
never by changing an applied one.
"""
