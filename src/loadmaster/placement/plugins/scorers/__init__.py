"""Scorers: integers 0..100 per feasible node (or an order, when lexicographic), weighted by the profile;
``replica_counts.py`` and ``rendezvous.py`` are the counting and hashing the service scorers share."""
