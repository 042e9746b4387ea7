"""Truth tables of changed derivations (`truthtable`) and the values and defaults of their columns
(`columns`)."""
