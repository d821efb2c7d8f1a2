// Arrays from Python (anything nanobind takes: numpy, DLPack from CuPy and PyTorch) as the
// engine's views. Python's axis order is slowest first (C order); the engine's is x (fastest)
// first, so axes and strides are reversed here and only here.
#pragma once

#include <nanobind/ndarray.h>

#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::python {

namespace nb = nanobind;

/// Any input array: host or device, any dtype, read-only allowed.
using InArray = nb::ndarray<nb::ro>;
/// An output array the engine writes: float32, writable.
using OutArray = nb::ndarray<float>;

/// Where an array lives.
struct Placement {
  bool on_gpu = false;  ///< CUDA device memory (DLPack kDLCUDA or kDLCUDAManaged)
  int device = 0;       ///< the CUDA device index (0 for host arrays)
};
Placement placement_of(const nb::ndarray<nb::ro>& a);
Placement placement_of(const OutArray& a);

/// The engine's scalar type of `a`'s dtype; throws TypeError (nb::type_error) naming the dtype
/// for types the engine does not read (complex, bool, 64-bit integers, float16).
ScalarType scalar_type_of(const InArray& a);

/// `a` as a stored view in engine order (dims 1..4; a 1D array becomes a 2D view of one row).
StoredVolumeView stored_view_of(const InArray& a);

/// `a` (float32) as a const float view in engine order.
ConstVolumeView float_view_of(const InArray& a);

/// `out` as a float view in engine order; its shape must equal `like`'s (ValueError otherwise).
VolumeView output_view_of(const OutArray& out, const BasicVolumeView<const unsigned char>& like);

/// The engine's dimension for an array of `ndim` axes: 2 for 1D (one row), else `ndim`; throws
/// ValueError for 0-d arrays and more than 4 axes.
int engine_dims(std::size_t ndim);

}  // namespace ndconv::python
