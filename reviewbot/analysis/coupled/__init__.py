"""Coupled flags: the config switches a forced flag silently turns off (`switches`), whether a field is
forced to its neutral value where a guard holds (`forced`), what the flag's read sites skip (`skipped`),
what a guard leaves feasible (`feasible`), and who else reads a field (`readers`)."""
