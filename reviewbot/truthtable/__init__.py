"""Stage 4: truth tables of changed derivations and executed tests (head run, mutants, sandbox).

Entry points: `table.build_truth_tables` / `table.tables_for_context` (pure) and `execute.execute`
(runs the repository's tests). Submodules are imported directly to keep the check modules, which read
`results`, free of import cycles.
"""
