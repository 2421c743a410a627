"""Request flow: what the API's handlers do to the store. ``reads/`` answers (objects, lists, watches,
audit, stats, readiness, who a token is); ``writes/`` changes, validated and audited (apply, delete,
agents' status reports, node removal, rollback, scale-up requests).
"""
