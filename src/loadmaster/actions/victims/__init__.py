"""Victim search for the evicting actions (consolidate, reclaim, preempt): units, fit pre-checks, the
index and the search.
"""
