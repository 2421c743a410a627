"""The scheduling core's data: resource quantities, the frozen cluster model, its columnar snapshot
(numpy arrays over integer node and task indices), and the Statement with its decisions.
"""
