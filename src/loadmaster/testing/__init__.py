"""Public test support: harnesses that start real dependencies (etcd) for tests and benchmarks."""
