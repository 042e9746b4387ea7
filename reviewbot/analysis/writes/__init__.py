"""Writes of config fields: who a write belongs to (`owners`), who sets a field and whether a write only
fills it in (`sources`), where it sits in its function (`scopes`), derivations through locals
(`local_flows`), derived values a later write makes dead (`overrides`), and writes that replace a value the
user gave explicitly (`explicit`, `explicit_cpp`)."""
