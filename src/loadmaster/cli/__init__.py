"""The ``loadmaster`` command line: one module per command (``main.py`` registers them), ``views/`` renders
answers as tables and text, ``remote/`` talks to a server. No scheduling logic lives here.
"""
