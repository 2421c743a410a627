"""Controllers' changes -> store operations: fenced, CAS on what each change was computed from, and
audited in the same transaction."""
