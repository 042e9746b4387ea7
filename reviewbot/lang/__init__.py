"""Stage 2: tree-sitter front ends (C++, Python) that turn source into derivation facts."""
