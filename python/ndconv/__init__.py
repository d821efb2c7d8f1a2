"""ndconv: fast filtering of 2D, 3D and 4D medical images on GPUs and CPUs.

- :mod:`ndconv.ndimage`: scipy.ndimage's filters (same names, arguments and results), on numpy
  arrays, CuPy arrays and PyTorch tensors.
- :func:`filter_bank`, :func:`adaptive_filter` (and :func:`adaptive_scales`): ndconv's own filters.
- :func:`read`, :func:`write`: ndconv's safe readers and writers (NIfTI, MetaImage, NRRD
  including 3D Slicer sequences, DICOM), with the image's geometry.
- :func:`plan`, :func:`cuda_status`: what the engine would do, and what GPU it sees.

See docs/python.md.
"""

from . import _ndconv, ndimage
from ._engine import adaptive_filter, adaptive_scales, cuda_status, filter_bank, plan
from .io import Volume, read, write

__version__ = _ndconv.version()

__all__ = ["ndimage", "filter_bank", "adaptive_filter", "adaptive_scales", "plan", "cuda_status", "read", "write",
           "Volume", "__version__"]
