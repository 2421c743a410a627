"""What this machine is and offers as a node: capacity, shape flags, GPU devices, pressure,
addresses and the measured network."""
