"""How the control plane uses its store: where things are kept, many changes as few fenced
transactions, and trying again after the store went away or a compare failed."""
