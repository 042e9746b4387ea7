"""Environment switches: which a change stops reading or renames (`switches`), what a read's parsing does
with the strings operators set (`parse`), and names that look like a misspelling of another (`typos`)."""
