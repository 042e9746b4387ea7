"""Stage 2: tree-sitter front ends that turn source into facts (owners, fields, bindings, env reads,
derivations): `cpp` and `python` (one subpackage per language), `walk` (what both share), and around them
the repository index, the facts cache and the parse pool.
"""
