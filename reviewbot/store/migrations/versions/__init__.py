"""Numbered migration files (Alembic revisions); see reviewbot.store.migrations."""
