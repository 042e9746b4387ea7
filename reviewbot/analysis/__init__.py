"""Analysis over the facts of `reviewbot.lang`: changed derivations, reach, coupled flags, truth tables.

Pure functions; typed records out. Rendering happens only in `reviewbot.report`.
"""
