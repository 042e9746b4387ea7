"""Defaults: which defaults a change flips (`changes`, with `initialisers`, `picked` and `records`), whether
a flipped default reaches numerics or persistent data (`consumers`), validations that reject a default
(`validation`) and documentation that still states an old default (`docs`)."""
