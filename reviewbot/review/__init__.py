"""Review stages over a change: the pipeline (index, derivations, truth tables, tests, rules), a round's
budget, checklist, verdict and strengths, and rounds (earlier findings re-checked, dismissals applied).
"""
