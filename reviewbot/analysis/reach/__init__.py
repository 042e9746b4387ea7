"""Reach: which configurations make a guard true (`configs`, with its `records`), the model config builders
and what each writes (`builders`), and who reaches a changed row of an untested derivation, the population
missing-tests sizes itself by (`untested`)."""
