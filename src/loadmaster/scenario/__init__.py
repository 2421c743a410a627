"""The scenario file format (``shared/spec/scenario-format.md``): parse and validate a file into the core
model, run one cycle (``simulate.py``) and write the JSON output the spec defines.
"""
