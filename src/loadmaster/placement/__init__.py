"""Placement of one task: filters (boolean masks over nodes, each with a rejection category), scorers
(integer vectors combined by a profile), select (argmax), and the diagnosis of every task left Pending.
"""
