"""The reviewbot database: rounds store, tables and numbered migrations, for the CLI and the service alike."""
