// The GPU filter bank's launch-level API (bank.cu, control.cu): the plan of a bank's launches,
// its padded input and taps on the device, the kernels' launches, for the backend's own runs
// (bank_backend.h), the bench (src/perf/bank_rows_gpu.cu) and the GPU tests on data already on the
// device. Declared for builds with CUDA only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/padding.h"
#include "core/bank_problem.h"
#include "core/control_voxel.h"
#include "cuda/bank/bank_backend.h"

namespace ndconv::cuda_bank {

/// The rule for KO (outputs per thread along the last axis): `requested` (1 or 2) or automatic (0).
int bank_outputs_per_thread(int requested, int64_t outputs_along_axis);

/// A bank problem's launches: passes of BankShape::kFilters filters with one KO, over the input
/// padded by the boundary (canonical axes: padded_extent[1..3] rows of row_length floats).
struct BankLaunch {
  int count = 0;   ///< filters
  int passes = 0;  ///< of BankShape::kFilters filters, the last maybe fewer
  int outputs_per_thread = 1;
  std::string outputs_per_thread_reason;
  Index outputs{1, 1, 1, 1};  ///< canonical output extents
  Index filter{1, 1, 1, 1};   ///< canonical filter extents
  int width = 0;              ///< taps along x
  int64_t filter_taps = 0;
  int64_t pass_taps = 0;            ///< floats of one pass's laid-out taps
  int64_t voxels = 0;               ///< outputs per filter
  Index padded_extent{0, 1, 1, 1};  ///< [0] unused: rows are row_length long
  int64_t row_length = 0;
  bool rows_on_axis1 = false;  ///< a 2D image: its rows run on the kernel's axis 1

  int64_t padded_count() const {
    return row_length * padded_extent[1] * padded_extent[2] * padded_extent[3];
  }
};

/// Plans `problem`'s launches; `requested_outputs_per_thread` 0 = the rule's KO. Throws
/// InvalidArgument where bank_cannot_implement says why.
BankLaunch plan_bank(const detail::BankProblem& problem, int requested_outputs_per_thread);

/// `taps` (the filters contiguous, correlation order) in the layout launch_bank_device reads.
std::vector<float> bank_device_taps(const BankLaunch& launch, const float* taps);

/// The padded input `launch` reads, built on the host from `problem`'s input and boundary.
void pad_bank_input(const detail::BankProblem& problem, const BankLaunch& launch, int threads,
                    const core::ProgressSpan& progress, core::PaddedVolume& padded);

/// pad_bank_input on the device: `problem.input` in device memory (any strides), `padded`
/// (launch.padded_count() floats) on it; enqueued on `stream` (a cudaStream_t; null = the
/// default stream). The same values as pad_bank_input, bit for bit, for every boundary.
void pad_bank_input_device(const detail::BankProblem& problem, const BankLaunch& launch,
                           float* padded, void* stream);

/// Copies a host volume (gathered first when it is not contiguous) into the contiguous device
/// volume `device` on `stream`, returning when the copy is done.
void upload_volume(const ConstVolumeView& view, float* device, void* stream);

/// Copies the contiguous device volume `device` into the host volume `view` (scattered when it
/// is not contiguous) on `stream`, returning when the copy is done.
void download_volume(const float* device, const VolumeView& view, void* stream);

/// The kernel that ran a bank's passes: bank_kernel (planes staged per tile) or bank_ring_kernel
/// (bank_kernel.cuh).
enum class BankKernel { Planes, Ring };

/// Fills what a GPU bank run reports of `launch`: the backend, KO and its reason, and a note on
/// the passes and the kernel ending in `detail`.
void report_bank_launch(const BankLaunch& launch, BankKernel kernel, const std::string& detail,
                        RunReport& report);

/// The structure tensor's bank in slabs along the last axis, each slab's padded input and
/// responses on the device at once.
struct TensorSlabs {
  std::vector<detail::BankProblem> problems;  ///< each slab's, over the whole input
  std::vector<BankLaunch> launches;           ///< each slab's
  int64_t planes = 0;                         ///< output planes of every slab but the last
  int64_t plane = 0;                          ///< voxels of one output plane
  int64_t padded_max = 1;                     ///< floats of the largest slab's padded input

  /// Floats of device memory a slab takes: the padded input, the responses and
  /// `extra_floats_per_voxel` per output voxel.
  int64_t device_floats(int extra_floats_per_voxel) const;
};

/// Slabs of `problem` (the quadrature bank over the whole output) as large as `budget_bytes`
/// holds for a slab's padded input, responses and `extra_floats_per_voxel` floats per output
/// voxel; at least one plane, so a slab may exceed a budget that is too small (device_floats says
/// by how much).
TensorSlabs plan_tensor_slabs(const detail::BankProblem& problem, double budget_bytes,
                              int extra_floats_per_voxel, int requested_outputs_per_thread);

/// Enqueues the structure tensor of one slab on `stream` from the bank's responses (launch.count
/// volumes of launch.voxels floats in `responses`, on the device): per voxel T = sum_q |q_q| M_q
/// with the duals of run_structure_tensor, component c at tensor[c * component_stride + v].
void launch_structure_tensor(const BankLaunch& launch, const float* responses,
                             const std::vector<double>& duals, int components, float* tensor,
                             int64_t component_stride, void* stream);

/// Enqueues one slab of the structure tensor on `stream`: the bank's responses from the FP32 bank
/// kernels (launch_bank_device), then launch_structure_tensor.
void launch_tensor_slab(const BankLaunch& launch, int device, const float* padded,
                        const float* taps, float* responses, const std::vector<double>& duals,
                        int components, float* tensor, int64_t component_stride, void* stream);

/// Enqueues the reconstruction's weights on `stream`: weights[v] = 1 (the lowpass), then
/// weights[(k + 1) * voxels + v] = sum_c coefficients[k * components + c] * control[c * voxels +
/// v] for each highpass filter k. `control` may be `weights` or `weights + voxels` (each voxel's
/// components are read before its weights are written): the weights in place over the tensor.
void launch_control_weights(const float* control, int components,
                            const std::vector<double>& coefficients, int64_t voxels, float* weights,
                            void* stream);

/// Enqueues the control tensor on `stream` (control_voxel.h's two passes; the largest magnitude
/// reduced on the device over the voxels `region` holds, into `largest`): `tensor`'s components
/// (component c at tensor[c * voxels]) in place, divided by `scale` where it is >= 0, else
/// (negative) by that largest; `magnitude` holds `voxels` floats of scratch, `largest` one unsigned
/// long long (the bits of a non-negative double), all on the device.
void launch_control_tensor(const detail::ControlMapping& mapping, float* tensor, int64_t voxels,
                           int components, float* magnitude, unsigned long long* largest,
                           void* stream, const detail::MagnitudeRegion& region = {},
                           double scale = -1);

/// Enqueues `launch`'s passes on `stream` (a cudaStream_t; null = the default stream) of
/// `device` (the current one), all pointers on it: `padded` (launch.padded_count() floats),
/// `taps` (bank_device_taps) and either `outputs` (launch.count contiguous canonical volumes of
/// launch.voxels floats) or, with `weights` (launch.count such volumes), the weighted sum into
/// `sum` (one volume). Checks each launch; returns the kernel that ran.
BankKernel launch_bank_device(const BankLaunch& launch, int device, const float* padded,
                              const float* taps, float* outputs, const float* weights, float* sum,
                              void* stream);

}  // namespace ndconv::cuda_bank
