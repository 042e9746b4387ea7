"""Analysis over the facts of `reviewbot.lang`: changed derivations, reach, coupled flags (`coupled`), writes
and who owns them (`writes`), truth tables (`tables`), removals (`removals`), environment switches (`envs`),
defaults and drift.

Pure functions; typed records out. Rendering happens only in `reviewbot.report`.
"""
