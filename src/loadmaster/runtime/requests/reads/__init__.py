"""What the API reads: every answer sees each write acknowledged before it (``object_reads.py``)."""
