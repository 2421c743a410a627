"""Rules of field values shared by the scenario reader and the manifest validator.

The two formats take the same constraint fields under the same names (``shared/spec/manifests.md``)
but report differently: a scenario stops at the first problem and raises, a manifest collects every
problem of a document. So each rule here is a pure check that returns what is wrong (or None), and
each validator says it at its own field path.
"""
