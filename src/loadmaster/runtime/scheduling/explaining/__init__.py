"""What the API explains about scheduling, computed when asked: ``why`` a replica is where it is (or
nowhere), what keeps it on its node, and each queue's live fairness."""
