"""The walk both front ends share: `walker` turns guarded writes into derivations and predicate uses,
`gated` follows what a guard skips, and `owners` emits owner and receiver facts (language-neutral)."""
