"""The plumbing under every flow: object cache, audit, tokens, clock, debounce, metrics, errors, the
pass loop; ``leadership/`` (who leads, fenced), ``storage/`` (store layout, batched writes, retries) and
``process/`` (logging, the garbage collector's settings).
"""
