"""ndconv.read and ndconv.write: the geometry round trip, the bundled samples, and the command
line's safety rules (no overwrite without asking, headers that name files elsewhere refused)."""

import os
from pathlib import Path

import numpy as np
import pytest

import ndconv
from ndconv import _ndconv

pytestmark = pytest.mark.skipif(not _ndconv.has_io, reason="built without ITK (no file I/O)")

SAMPLES = Path(__file__).resolve().parents[2] / "sample_volumes"


@pytest.mark.parametrize("suffix", [".nii.gz", ".nrrd", ".mha", ".nii"])
@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32"])
def test_round_trip_keeps_values_and_geometry(tmp_path, suffix, dtype):
    rng = np.random.default_rng(7)
    array = rng.integers(0, 200, size=(5, 6, 7)).astype(dtype)
    spacing, origin = (2.5, 1.25, 0.5), (10.0, -3.0, 7.5)
    direction = ((1, 0, 0), (0, 0, 1), (0, 1, 0))
    path = tmp_path / f"v{suffix}"
    ndconv.write(path, array, spacing=spacing, origin=origin, direction=direction)
    back = ndconv.read(path)
    assert back.array.dtype == np.dtype(dtype)
    assert np.array_equal(back.array, array)
    assert np.allclose(back.spacing, spacing)
    assert np.allclose(back.origin, origin)
    assert np.allclose(back.direction, direction)


def test_filter_and_write_like_the_input(tmp_path):
    sample = SAMPLES / "cardiacfield_example_vol.nii.gz"
    volume = ndconv.read(sample)
    assert volume.array.ndim == 3
    smoothed = ndconv.ndimage.gaussian_filter(volume.array, 1.5, spacing=volume.spacing,
                                              output=np.float32)
    out = tmp_path / "smoothed.nii.gz"
    ndconv.write(out, smoothed, like=volume)
    back = ndconv.read(out)
    assert np.allclose(back.spacing, volume.spacing)
    assert np.allclose(back.origin, volume.origin)
    assert np.array_equal(back.array, smoothed)


def test_existing_file_kept_without_overwrite(tmp_path):
    path = tmp_path / "v.nii.gz"
    ndconv.write(path, np.zeros((4, 5, 6), np.float32))
    before = path.read_bytes()
    with pytest.raises(ValueError, match="exists"):
        ndconv.write(path, np.ones((4, 5, 6), np.float32))
    assert path.read_bytes() == before
    ndconv.write(path, np.ones((4, 5, 6), np.float32), overwrite=True)
    assert ndconv.read(path).array.max() == 1
    assert sorted(os.listdir(tmp_path)) == ["v.nii.gz"]  # no temporary left behind


def test_header_naming_a_file_elsewhere_is_refused(tmp_path):
    secret = tmp_path / "secret.raw"
    secret.write_bytes(bytes(range(64)))
    folder = tmp_path / "images"
    folder.mkdir()
    (folder / "evil.mhd").write_text(
        "ObjectType = Image\nNDims = 3\nDimSize = 4 4 4\nElementType = MET_UCHAR\n"
        "ElementDataFile = ../secret.raw\n")
    with pytest.raises(OSError, match="evil.mhd"):
        ndconv.read(folder / "evil.mhd")


def test_damaged_and_missing_files(tmp_path):
    with pytest.raises(OSError):
        ndconv.read(tmp_path / "missing.nii.gz")
    cut = tmp_path / "cut.nii.gz"
    ndconv.write(cut, np.random.default_rng(8).random((20, 20, 20)).astype(np.float32))
    cut.write_bytes(cut.read_bytes()[:-200])
    with pytest.raises(OSError):
        ndconv.read(cut)


def test_write_refuses_what_the_format_cannot_hold(tmp_path):
    with pytest.raises((ValueError, TypeError)):
        ndconv.write(tmp_path / "v.png", np.zeros((3, 4, 5, 6), np.float32))
    with pytest.raises(ValueError, match="2 to 4"):
        ndconv.write(tmp_path / "v.nii.gz", np.zeros(5, np.float32))
    assert not any(tmp_path.iterdir())
