"""loadmaster: a cluster workload scheduler and control plane."""
