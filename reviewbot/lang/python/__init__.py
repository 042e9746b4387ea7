"""The Python front end: tree-sitter Python to FileFacts.

`parser.parse` is the entry point; `body` walks statements and expressions (derivations, reads, env reads,
argparse options), `owners` tracks which class or dataclass a field write belongs to, and `grammar` holds
the node-type helpers.
"""
