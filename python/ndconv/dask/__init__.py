"""ndconv on Dask: volumes larger than memory and cohorts larger than a machine.

- Arrays: every filter of :mod:`ndconv.ndimage` (same names and arguments), and
  :func:`filter_bank` and :func:`adaptive_filter`, on a dask array of numpy or CuPy chunks. Each
  block is filtered with the halo its filter reads (:func:`halo`), so the lazy result equals the
  whole array's, bit for bit, and a zarr-backed volume larger than memory streams through.
- Cohorts: :func:`filter_files` filters a list of image files on any dask.distributed client,
  each file one task running ndconv's command line, with the command line's safety rules; the
  console script ``ndconv-dask`` is its command line.

Needs the ``dask`` extra (``pip install .[dask]``). See docs/scale-out.md.
"""

try:
    import dask.array  # noqa: F401
except ImportError as error:  # pragma: no cover - the extra's absence
    raise ImportError("ndconv.dask needs dask, distributed and zarr: pip install 'ndconv[dask]' "
                      "(or '.[dask]' from the repository)") from error

from .cohort import CohortError, CohortResult, filter_files, find_cli
from .filters import *  # noqa: F401,F403  (the filters of ndconv.ndimage, one each)
from .filters import __all__ as _filters
from .filters import halo

__all__ = list(_filters) + ["halo", "filter_files", "find_cli", "CohortError", "CohortResult"]
