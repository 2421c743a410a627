"""Leader election: the protocol and its term bookkeeping, on etcd (a leased key, fenced by revision)
and for a single server over any store."""
