"""The pressure rebalancer's loop (leader only): samples in, at most one voluntary move per cycle out."""
