"""Sums of products with the same bits on every processor.

numpy hands a floating-point ``@`` to BLAS, and OpenBLAS chooses its kernel from the processor
at start-up: its AVX-512, AVX2 and SSE kernels add the terms in different orders, so a
bootstrap written with ``@`` gives a different last digit on a different machine and the same
inputs no longer give the same ``readout.json`` byte for byte (what a team deployment, CI and a
laptop must agree on). Here each term is multiplied elementwise (exactly rounded everywhere)
and the terms are added by numpy's own reductions, whose order is fixed in numpy's C code
(pairwise along a row), not chosen by the processor. Integer products (exact) may keep ``@``.
"""

from __future__ import annotations

import numpy as np


def row_dots(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` for a 2-D matrix: one sum of products per row."""
    return np.multiply(matrix, vector).sum(axis=1)


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a @ b`` for two vectors."""
    return float(np.multiply(a, b).sum())


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for two small 2-D matrices (the temporary is rows × inner × columns)."""
    return (a[:, :, None] * b[None, :, :]).sum(axis=1)
