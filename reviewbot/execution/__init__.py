"""Executing the repository's tests: sandbox, runner, JUnit, mutants of the changed branches.

`execute.execute` runs the tests and returns their results (records of `reviewbot.model.tests`); the
rules that judge those results (`untested-branch`, `ineffective-test`) run from the registry like all others.
"""
