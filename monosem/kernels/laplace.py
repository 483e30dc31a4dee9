"""The metric Laplace kernel of Appendix A.2, eq. (7), evaluated in bounded-memory blocks.

    k_M(x, x') = exp(-||M^{1/2}(x - x')||_2 / h)

The norm is the Euclidean (L2) norm of the transformed difference. (scikit-learn's
``laplacian_kernel`` uses the L1 norm and is a different kernel.) Every routine works on the
transformed inputs ``z = x M^{1/2}`` (rows), so a metric costs one ``d x d`` product per point and
the kernel itself is the isotropic Laplace kernel in z.

Distances use ``||a||^2 + ||b||^2 - 2 a.b`` (one matrix product, the fast path on every device);
the transformed data are centred first, which keeps the cancellation error of that formula small
in float32.
"""

from __future__ import annotations

import functools
from typing import Iterator

import torch

__all__ = [
    "metric_sqrt",
    "transform",
    "laplace_kernel",
    "pairwise_distances",
    "block_rows",
    "kernel_blocks",
    "kernel_matvec",
    "KernelOperator",
    "DEFAULT_BLOCK_BYTES",
    "CUDA_BLOCK_BYTES",
    "default_block_bytes",
    "memory_budget",
]

#: Memory one kernel block may take (bytes). 4 MiB: a block and its temporaries stay in the
#: cache through the elementwise passes (distance, square root, exponential), and the allocator
#: reuses them instead of mapping fresh pages for every block (``benchmarks/kernels.py`` compares
#: block sizes). Results agree with any other block size to rounding.
DEFAULT_BLOCK_BYTES = 2**22
#: Memory one kernel block may take on a CUDA device (at most 1/32 of the device's memory). A GPU
#: has no cache to fit, and every block costs a few kernel launches (distance, square root,
#: exponential, product): 4 MiB blocks would be ~50 rows at n = 20 000, so tens of thousands of
#: launches per EigenPro epoch at n = 50 000; 256 MiB blocks are thousands of rows.
CUDA_BLOCK_BYTES = 2**28


def default_block_bytes(device: torch.device | str) -> int:
    """The kernel block size for ``device``: :data:`DEFAULT_BLOCK_BYTES` on the CPU (cache-sized),
    :data:`CUDA_BLOCK_BYTES` on CUDA, or 1/32 of the device's memory if that is less."""
    dev = torch.device(device)
    if dev.type != "cuda":
        return DEFAULT_BLOCK_BYTES
    return _cuda_block_bytes(dev.index if dev.index is not None else torch.cuda.current_device())


@functools.lru_cache(maxsize=None)
def _cuda_block_bytes(index: int) -> int:
    total = torch.cuda.get_device_properties(index).total_memory
    return int(max(DEFAULT_BLOCK_BYTES, min(CUDA_BLOCK_BYTES, total // 32)))


def metric_sqrt(M: torch.Tensor) -> torch.Tensor:
    """The symmetric PSD square root M^{1/2} of a (checked) PSD metric, in float64.

    Eigenvalues that round to slightly negative values are clipped at zero.
    """
    lam, V = torch.linalg.eigh(M.to(torch.float64))
    return (V * lam.clamp_min(0.0).sqrt()) @ V.T


def transform(X: torch.Tensor, M_sqrt: torch.Tensor | None) -> torch.Tensor:
    """Rows z_i = M^{1/2} x_i (``X`` unchanged when ``M_sqrt`` is None, the identity metric)."""
    if M_sqrt is None:
        return X
    return X @ M_sqrt.to(device=X.device, dtype=X.dtype)


def pairwise_distances(Z1: torch.Tensor, Z2: torch.Tensor, sq1: torch.Tensor | None = None, sq2: torch.Tensor | None = None) -> torch.Tensor:
    """``(n1, n2)`` Euclidean distances between the rows of ``Z1`` and ``Z2``."""
    sq1 = (Z1 * Z1).sum(1) if sq1 is None else sq1
    sq2 = (Z2 * Z2).sum(1) if sq2 is None else sq2
    D = torch.addmm(sq2.unsqueeze(0), Z1, Z2.T, beta=1.0, alpha=-2.0)
    D.add_(sq1.unsqueeze(1))
    return D.clamp_min_(0.0).sqrt_()


def laplace_kernel(
    Z1: torch.Tensor, Z2: torch.Tensor, bandwidth: float, sq1: torch.Tensor | None = None, sq2: torch.Tensor | None = None
) -> torch.Tensor:
    """The ``(n1, n2)`` Laplace kernel matrix exp(-||z - z'||_2 / h) of transformed inputs (eq. 7)."""
    D = pairwise_distances(Z1, Z2, sq1, sq2)
    return D.mul_(-1.0 / bandwidth).exp_()


def block_rows(n_cols: int, dtype: torch.dtype, block_bytes: int = DEFAULT_BLOCK_BYTES) -> int:
    """How many rows of an ``n_cols``-wide kernel block fit in ``block_bytes``."""
    itemsize = torch.finfo(dtype).bits // 8
    return max(1, min(block_bytes // max(1, n_cols * itemsize), 1 << 20))


def kernel_blocks(
    Z1: torch.Tensor, Z2: torch.Tensor, bandwidth: float, block_bytes: int | None = None
) -> Iterator[tuple[slice, torch.Tensor]]:
    """Yield ``(rows, K[rows, :])`` for consecutive row blocks of the kernel matrix k(Z1, Z2)
    (blocks of ``block_bytes``; ``None``: :func:`default_block_bytes` of the inputs' device)."""
    sq2 = (Z2 * Z2).sum(1)
    block_bytes = default_block_bytes(Z1.device) if block_bytes is None else block_bytes
    step = block_rows(Z2.shape[0], Z1.dtype, block_bytes)
    for start in range(0, Z1.shape[0], step):
        rows = slice(start, min(start + step, Z1.shape[0]))
        yield rows, laplace_kernel(Z1[rows], Z2, bandwidth, sq2=sq2)


def kernel_matvec(
    Z1: torch.Tensor, Z2: torch.Tensor, bandwidth: float, V: torch.Tensor, block_bytes: int | None = None
) -> torch.Tensor:
    """k(Z1, Z2) @ V without ever holding more than one block of the kernel matrix."""
    out = torch.empty((Z1.shape[0],) + tuple(V.shape[1:]), device=Z1.device, dtype=V.dtype)
    for rows, Kb in kernel_blocks(Z1, Z2, bandwidth, block_bytes):
        out[rows] = Kb.to(V.dtype) @ V
    return out


class KernelOperator:
    """The training kernel matrix K = k(Z, Z) as a linear operator for the iterative solvers.

    If the whole matrix fits in ``cache_bytes`` it is computed once and kept (each product is then
    a plain matrix-vector product); otherwise every product streams through
    :func:`kernel_blocks`, so memory stays at one block even at n = 200 000.
    """

    def __init__(self, Z: torch.Tensor, bandwidth: float, *, cache_bytes: int, block_bytes: int | None = None) -> None:
        self.Z = Z
        self.bandwidth = float(bandwidth)
        self.block_bytes = int(default_block_bytes(Z.device) if block_bytes is None else block_bytes)
        self.sq = (Z * Z).sum(1)
        n = Z.shape[0]
        itemsize = torch.finfo(Z.dtype).bits // 8
        self.cached: torch.Tensor | None = None
        self._buffer: torch.Tensor | None = None  # the reused block of :meth:`row_block`
        if n * n * itemsize <= cache_bytes:
            self.cached = torch.empty(n, n, device=Z.device, dtype=Z.dtype)
            for rows, Kb in kernel_blocks(Z, Z, self.bandwidth, self.block_bytes):
                self.cached[rows] = Kb

    @property
    def n(self) -> int:
        return int(self.Z.shape[0])

    def matvec(self, v: torch.Tensor) -> torch.Tensor:
        """K @ v for a vector or an ``(n, k)`` matrix."""
        if self.cached is not None:
            return self.cached @ v
        return kernel_matvec(self.Z, self.Z, self.bandwidth, v, self.block_bytes)

    def rows(self, idx: torch.Tensor) -> torch.Tensor:
        """The rows K[idx, :] (equivalently, by symmetry, the columns K[:, idx] transposed)."""
        if self.cached is not None:
            return self.cached[idx]
        return laplace_kernel(self.Z[idx], self.Z, self.bandwidth, sq1=self.sq[idx], sq2=self.sq)

    def row_block(self, start: int, stop: int) -> torch.Tensor:
        """The contiguous rows K[start:stop, :]: a view of the cache when there is one, else a
        view of a buffer the operator reuses, **valid until the next call** (EigenPro's
        mini-batch blocks are hundreds of MB at n = 50 000: reusing one buffer saves mapping and
        zeroing fresh pages for every block, and filling it in cache-sized chunks of rows keeps
        each chunk's elementwise passes in the cache)."""
        if self.cached is not None:
            return self.cached[start:stop]
        m = stop - start
        if self._buffer is None or self._buffer.shape[0] < m:
            self._buffer = torch.empty(m, self.n, device=self.Z.device, dtype=self.Z.dtype)
        out = self._buffer[:m]
        for rows, Kb in kernel_blocks(self.Z[start:stop], self.Z, self.bandwidth, self.block_bytes):
            out[rows] = Kb
        return out

    def rows_matvec(self, idx: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """K[idx, :] @ v, streamed in blocks of rows when the matrix is not cached."""
        if self.cached is not None:
            return self.cached[idx] @ v
        out = torch.empty(idx.shape[0], device=v.device, dtype=v.dtype)
        step = block_rows(self.n, self.Z.dtype, self.block_bytes)
        for start in range(0, idx.shape[0], step):
            sel = idx[start : start + step]
            out[start : start + sel.shape[0]] = laplace_kernel(self.Z[sel], self.Z, self.bandwidth, sq1=self.sq[sel], sq2=self.sq) @ v
        return out


def memory_budget(device: torch.device) -> int:
    """Bytes an iterative solver may spend on caching the kernel matrix on ``device``.

    A quarter of the free GPU memory on CUDA; 2 GiB on the CPU, which a laptop shared by several
    jobs can spare (the whole float32 kernel up to n = 23 000; beyond, products are streamed).
    """
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free // 4)
    return 2**31
