// The ndconv engine: N-dimensional convolution and correlation of float32 volumes (2D, 3D, 4D)
// with dense or separable filters, on the GPU (CUDA) or on the CPU. See docs/design.md.
//
// The front end (src/engine/engine.cpp) validates the request, resolves convolution into a
// correlation with a flipped filter and the output region into an input offset, chooses the
// backend, and hands a CorrelationProblem to it (src/core/problem.h). Backends never see
// Operation or OutputRegion, nor Boundary::Constant: they run it as Boundary::Zero, and the front
// end adds the value's terms to the outputs near the faces (src/core/constant_border.h).
#pragma once

#include "ndconv/errors.h"
#include "ndconv/types.h"

namespace ndconv {

/// Where the output lies and how large it is, for a volume of `input_extent` and a filter of
/// `filter_extent` (per axis). Throws InvalidArgument when `Valid` leaves nothing.
OutputGeometry output_geometry(int dims, const Index& input_extent, const Index& filter_extent,
                               Operation operation, OutputRegion region);

/// Checks a dense filter against the engine's limits; throws InvalidArgument naming the limit.
void validate_dense_filter(const DenseFilter& filter);

/// Host memory, in bytes, that filter_dense takes on the CPU beyond its input and output (its
/// boundary-padded rows) for an input of `extent` and a filter of `filter_extent` with
/// `options` (operation, region, threads, expert.outputs_per_thread), contiguous views: for a
/// caller's memory estimate.
double cpu_dense_scratch_bytes(int dims, const Index& extent, const Index& filter_extent,
                               const Options& options);

/// Filters `input` with a dense filter into `output`, whose extents must equal
/// output_geometry(...).extent. `input` and `output` must not overlap.
RunReport filter_dense(const ConstVolumeView& input, const DenseFilter& filter,
                       const VolumeView& output, const Options& options = {});

/// Filters `input` with one 1D filter per axis (axes with no taps are skipped), in
/// SeparableFilter::pass_order; under Boundary::Constant each pass pads its own input with
/// Options::boundary_value, as scipy.ndimage does.
RunReport filter_separable(const ConstVolumeView& input, const SeparableFilter& filter,
                           const VolumeView& output, const Options& options = {});

/// Whether the CUDA backend can run on this machine, and its devices; never throws. A missing
/// driver or GPU is a normal state, reported in `reason`. With `free_memory` each device reports
/// its free memory, which starts CUDA on every device (about 0.1 s each); without it no device is
/// started and free_memory is 0.
CudaStatus cuda_status(bool free_memory = true);

/// ndconv's version, e.g. "0.1.0".
const char* version();

}  // namespace ndconv
