"""Stage 1: a git change turned into a ChangeSet (files, hunks, texts, what was skipped)."""
