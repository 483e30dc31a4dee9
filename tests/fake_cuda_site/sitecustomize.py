"""Turns the CUDA stand-in (``tests/fake_cuda.py``) on at interpreter start-up when
``MONOSEM_FAKE_CUDA=1``: put this folder on ``PYTHONPATH`` for a subprocess (a notebook's kernel,
``monosem run`` and the workers it spawns) that must see it. Test-only; the package never reads
the variable."""

import os
import sys

if os.environ.get("MONOSEM_FAKE_CUDA") == "1":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import fake_cuda

    fake_cuda.enable()
