"""A cycle's working state over the snapshot: the Statement (an operation log with exact undo), its eviction
runs, the log of nodes it changed, and the decisions a committed statement makes."""
