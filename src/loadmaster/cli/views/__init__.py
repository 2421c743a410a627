"""Renderers: turn API answers into tables and text a person reads; no I/O beyond printing."""
