"""Stage 3: the rules. One module per rule, each with `id`, `severity`, `summary` and `run(ctx)`, and its
documentation as the module docstring; `registry.RULES` lists them in report order.
"""
