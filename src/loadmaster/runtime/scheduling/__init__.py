"""Scheduling flow: the leader's scheduler service, the model it builds from the store, writing cycle
plans back, scale-up requests, preview and why.
"""
