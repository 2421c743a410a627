"""The Store protocol (``interface.py``: get, range, transactions with compare-and-swap, watch, fencing)
and its three backends: memory (the reference), SQLite (the embedded default) and etcd (HA).
"""
