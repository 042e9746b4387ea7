"""What a change removes: guards, validations and derivations (`guards`, with `dropped`, `records`, `terms`),
command-line flags it stops accepting (`flags`) or still names after removing (`named_flags`), and
config-file keys it stops reading (`config_keys`)."""
