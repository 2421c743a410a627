"""Reconciling flow: the controller loop, the views the controllers read, the deadlines and trackers that
say when it must wake; ``writes/`` turns the controllers' changes into fenced store operations.
"""
