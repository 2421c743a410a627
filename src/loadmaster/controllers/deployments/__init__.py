"""A deployment's replicas: its services' slots, by index or by host, and rolling updates through
its revisions."""
