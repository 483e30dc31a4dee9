"""Shared pytest configuration: CPU-friendly defaults for a 2-core machine."""

import os

os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("MONOSEM_PROFILE", "smoke")

import torch  # noqa: E402

torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
