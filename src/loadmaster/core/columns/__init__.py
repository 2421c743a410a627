"""The columnar snapshot: one frozen cluster as numpy arrays over integer node and task indices (node
columns, task columns, labels, taints, volume pools, GPU device layouts), carried from one cycle to the
next for what did not change."""
