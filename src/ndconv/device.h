// GPU entry points of the engine: filtering volumes that are already in device memory on the
// caller's CUDA stream (no copies, no synchronisation), and starting CUDA early.
//
// ITK-free and CUDA-free: the stream is passed as a void* (a cudaStream_t; nullptr is the legacy
// default stream), so callers need no CUDA headers to include this.
//
//   float *d_in, *d_out;  // contiguous 3D volumes of nx*ny*nz floats on device 0
//   cudaStream_t stream;  // the caller's
//   ndconv::SeparableFilter g = ndconv::gaussian_filter(3, {1.5, 1.5, 1.5, 0});
//   ndconv::Options o;  // the boundary, operation and region as for filter_separable
//   ndconv::filter_separable_device(ndconv::make_view<const float>(d_in, 3, {nx, ny, nz}), g,
//                                   ndconv::make_view(d_out, 3, {nx, ny, nz}), o, stream);
//   // ... more work on `stream`; the output is ready when the stream has reached this point.
#pragma once

#include <vector>

#include "ndconv/errors.h"
#include "ndconv/types.h"

namespace ndconv {

/// Filters `input` into `output`, both contiguous views of DEVICE memory on Options::cuda_device
/// (or managed memory), like filter_dense: the same validation, semantics and results. The work is
/// enqueued on `stream` and the call returns without waiting for it; the views must stay valid
/// until the stream has run it. The taps are copied during the call (the caller may free them on
/// return). Options::backend must be Auto or Cuda; memory cap and progress do not apply (nothing is
/// allocated but the separable scratch and, under Boundary::Constant with a value other than 0, the
/// value's terms, both stream-ordered; the terms are added by one more kernel on `stream`). The
/// report's timings are zero.
/// Throws InvalidArgument (bad request, host memory, strided views, no CUDA) or CudaError.
RunReport filter_dense_device(const ConstVolumeView& input, const DenseFilter& filter,
                              const VolumeView& output, const Options& options, void* stream);

/// The separable counterpart of filter_dense_device (scratch of up to two volumes is allocated
/// stream-ordered on `stream` from ndconv's own memory pool and freed the same way).
RunReport filter_separable_device(const ConstVolumeView& input, const SeparableFilter& filter,
                                  const VolumeView& output, const Options& options, void* stream);

/// The median_filter counterpart on device memory (ndconv/filters.h): the median of the
/// (2 radius[a] + 1) per axis voxels around each voxel of `input`, into `output`, both contiguous
/// views of DEVICE memory on Options::cuda_device (or managed memory) with the same extents; the
/// same validation, boundaries and results as median_filter on the GPU. Enqueued on `stream`
/// without waiting for it, as filter_dense_device; nothing is allocated. Options::backend must be
/// Auto or Cuda. Throws InvalidArgument (bad request, host memory, strided views, a window the
/// GPU kernel does not take, no CUDA) or CudaError.
RunReport median_filter_device(const ConstVolumeView& input, const VolumeView& output,
                               const Index& radius, const Options& options, void* stream);

/// Starts CUDA (driver, context on `device`, the device list) on a background thread and returns
/// at once, so that the start-up (about 0.3 s) overlaps the caller's own work, e.g. reading the
/// input. The first call starts it; later calls do nothing. Never throws; without a GPU or CUDA
/// it does nothing that fails. Backend::Auto counts the start-up as paid once this has finished.
/// Returning from main() while the start-up is under way waits for it at exit; a program that
/// ends early (an error before any GPU work) can end at once with std::_Exit once its output is
/// flushed, as the ndconv command does (cuda_warm_up_pending).
void warm_up_cuda_async(int device = 0) noexcept;

/// The same for several devices (a command's device list; empty: every device), started one after
/// the other on the background thread (the driver makes contexts one at a time). The first call of
/// either starts it; later calls do nothing.
void warm_up_cuda_async(const std::vector<int>& devices) noexcept;

/// Whether ndconv was built with its CUDA backend (asks nothing of CUDA: no start-up). Never
/// throws.
bool cuda_built() noexcept;

/// Whether a start-up begun by warm_up_cuda_async is still under way. Never throws.
bool cuda_warm_up_pending() noexcept;

/// Whether this process already has a CUDA context on `device` (the warm-up or a GPU call has
/// paid the start-up), so that pinned memory or a GPU call no longer waits for it. Never starts
/// CUDA; false without a GPU. Never throws.
bool cuda_started(int device = 0) noexcept;

}  // namespace ndconv
