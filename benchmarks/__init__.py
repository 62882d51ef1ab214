"""Benchmarks for attn (speed and memory goals, reported, never asserted): run them all with ``bin/bench`` (see benchmarks/README.md).

Nothing here is imported by ``attn`` or by the tests' timing-free checks; this
package must not import NumPy at import time, because ``python -m benchmarks``
may first clear BLAS variables from the environment and re-execute itself.
"""
