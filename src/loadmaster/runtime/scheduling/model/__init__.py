"""The scheduler's model of the cluster, kept in step with the object cache one change at a time, and
the cycle's Cluster built from it: replicas and nodes as entries, services and Jobs as core jobs, the
jobs kept assembled between cycles, objects it must skip, and node capacity read from the store."""
