"""The C++ front end: tree-sitter C++ to FileFacts.

`parser.parse` is the entry point; `body` walks statements and expressions (derivations, reads, env reads,
pybind bindings), `owners` tracks which struct or class a member write belongs to, `grammar` holds the
node-type helpers, and `macros` blanks known macros (CUDA qualifiers, export and check macros, a
repository's own from `.reviewbot.toml`) byte for byte before parsing, so one macro does not hide a file.
"""
