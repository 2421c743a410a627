"""Request flow: what the API's handlers do to the store (object and status writes, reads, stats),
validated and audited.
"""
