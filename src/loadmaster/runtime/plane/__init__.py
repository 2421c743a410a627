"""The plumbing under every flow: object cache, leadership, store layout, batched writes, audit,
tokens, clock, debounce, metrics, errors, logging.
"""
