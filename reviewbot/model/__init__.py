"""Records shared by every stage: the change, findings, the review, test and mutant results.

The lowest layer: it imports nothing else of reviewbot but `reviewbot.errors`.
"""
