"""The pressure rebalancer: per-node pressure EWMAs, the columns one cycle reads, and the cycle."""
