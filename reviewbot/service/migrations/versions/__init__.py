"""Numbered migration files (Alembic revisions); see reviewbot.service.migrations."""
