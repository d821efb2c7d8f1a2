"""Reading and writing images with ndconv's own readers and writers: the same checks as the
command line (a header names only files in its own folder, damaged data is an error, an output
appears whole or not at all, an existing file is replaced only with ``overwrite=True``).

Arrays are in C order, slowest axis first (``(z, y, x)``, ``(t, z, y, x)``), as
``SimpleITK.GetArrayFromImage`` gives them; spacing, origin and direction are in the same order.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from . import _ndconv


@dataclass
class Volume:
    """An image: its voxels and where they lie in space (all per axis, slowest first)."""

    array: np.ndarray
    spacing: tuple = ()
    origin: tuple = ()
    direction: tuple = ()
    info: dict = field(default_factory=dict)


def _require_io():
    if not _ndconv.has_io:
        raise RuntimeError("this build of ndconv has no file I/O (it was built without ITK)")


def read(path) -> Volume:
    """Reads an image (NIfTI, MetaImage, NRRD, 3D Slicer .seq.nrrd, DICOM file or series folder,
    PNG/JPEG/TIFF/BMP) as stored: uint8 stays uint8; NIfTI's scaling makes float32.

    Raises OSError naming the file for anything unreadable, damaged or unsafe.
    """
    _require_io()
    array, info = _ndconv.read(os.fspath(path))
    return Volume(array=array, spacing=tuple(info["spacing"]), origin=tuple(info["origin"]),
                  direction=tuple(info["direction"]), info=info)


def write(path, volume, *, spacing=None, origin=None, direction=None, like=None, dtype=None,
          overwrite=False, compression=1):
    """Writes an image of 2 to 4 axes; the format comes from the file name.

    Parameters
    ----------
    path : str or os.PathLike
    volume : Volume or array_like
        A Volume (its geometry is written) or an array.
    spacing, origin, direction : optional
        The geometry, slowest axis first (default: `like`'s, the Volume's, or unit spacing at 0).
    like : Volume, optional
        Take the geometry from this volume (e.g. the one read).
    dtype : dtype, optional
        The stored type (default: the array's); values are rounded and clamped into integer
        types.
    overwrite : bool
        Replace an existing file (default: refuse with ValueError).
    compression : int
        Deflate level 0-9 of compressed formats.

    Returns
    -------
    dict
        What writing did: stored type, values clamped, NaN written as 0.
    """
    _require_io()
    source = volume if isinstance(volume, Volume) else like
    array = volume.array if isinstance(volume, Volume) else volume
    array = np.asarray(array)
    if array.dtype.kind not in "uif":
        raise TypeError(f"write takes integer or floating-point arrays, not {array.dtype}")
    n = array.ndim
    if not 2 <= n <= 4:
        raise ValueError(f"write writes images of 2 to 4 axes, not {n}")

    def pick(given, attribute, default):
        if given is not None:
            return given
        if source is not None and getattr(source, attribute):
            return getattr(source, attribute)
        return default

    spacing = [float(s) for s in pick(spacing, "spacing", [1.0] * n)]
    origin = [float(o) for o in pick(origin, "origin", [0.0] * n)]
    direction = [[float(v) for v in row] for row in pick(direction, "direction",
                                                         np.eye(n).tolist())]
    stored = np.dtype(dtype if dtype is not None else array.dtype).name
    return _ndconv.write(os.fspath(path), np.ascontiguousarray(array, dtype=np.float32), spacing,
                         origin, direction, stored, bool(overwrite), int(compression))
