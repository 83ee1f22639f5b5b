"""Nous: a local context engine for AI chat in editors."""

import os

# numpy's OpenBLAS spreads one matrix-vector product over every core and spins while it waits:
# beside a busy editor (or on a loaded machine) the 10k-vector top-k took 23 ms instead of 0.6.
# One thread, unless the user chose otherwise; set before anything imports numpy.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

__version__ = "0.1.0"
