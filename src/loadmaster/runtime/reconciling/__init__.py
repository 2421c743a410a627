"""Reconciling flow: the controller loop, the views the controllers read, and the writes their changes
become.
"""
