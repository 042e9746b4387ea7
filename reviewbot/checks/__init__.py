"""Stage 3: checks. One module per rule; `registry.CHECKS` lists them explicitly."""
