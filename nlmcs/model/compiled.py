"""The compiled kernels (`nlmcs.model.kernels`), imported on first use.

numba loads only where the compiled backend runs, and the hot paths that call a kernel per
candidate or per datapoint do not pay an import statement each time (~0.75 us a call).
"""

from __future__ import annotations

_KERNELS = None


def kernels():
    """The `nlmcs.model.kernels` module."""
    global _KERNELS
    if _KERNELS is None:
        from nlmcs.model import kernels as module

        _KERNELS = module
    return _KERNELS
