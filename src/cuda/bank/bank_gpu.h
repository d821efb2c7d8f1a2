// The GPU filter bank (bank.cu), called by the bank's front end (src/engine/adaptive/
// bank_front.cpp) when the CUDA backend is chosen, by the adaptive filter's stages
// (src/engine/adaptive/pipeline.cpp) and by the bench (src/perf/bank_rows.cpp) on data already
// on the device. Declared for builds with CUDA only.
#pragma once

#include <string>
#include <vector>

#include "cpu/padding.h"
#include "engine/adaptive/bank_problem.h"
#include "engine/adaptive/control_voxel.h"

namespace ndconv::cuda_bank {

/// Runs the bank problem on the GPU options.cuda_device; fills the report's timings.
void run_bank(const detail::BankProblem& problem, const Options& options, RunReport& report);

/// The rule for KO (outputs per thread along the last axis): `requested` (1 or 2) or automatic (0).
int bank_outputs_per_thread(int requested, int64_t outputs_along_axis);

/// Why the GPU bank cannot run filters of this extent (empty when it can): the front end then
/// takes the CPU bank.
std::string bank_cannot_implement(const Index& filter_extent, int dims);

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
                    const cpu::ProgressSpan& progress, cpu::PaddedVolume& padded);

/// Enqueues `launch`'s passes on `stream` (a cudaStream_t; null = the default stream) of
/// `device` (the current one), all pointers on it: `padded` (launch.padded_count() floats),
/// `taps` (bank_device_taps) and either `outputs` (launch.count contiguous canonical volumes of
/// launch.voxels floats) or, with `weights` (launch.count such volumes), the weighted sum into
/// `sum` (one volume). Checks each launch.
void launch_bank_device(const BankLaunch& launch, int device, const float* padded,
                        const float* taps, float* outputs, const float* weights, float* sum,
                        void* stream);

/// The adaptive filter's reconstruction on the GPU: the weighted sum of `problem` (filters: the
/// lowpass, then the highpass filters; no weights, the sum into problem.sum_output) with the
/// weights computed on the device from the control tensor: 1 for the lowpass, sum_c
/// coefficients[k * C + c] * control[c] for highpass k (C = control.size(); each component a
/// contiguous volume of the output's extents).
void run_bank_with_control(const detail::BankProblem& problem,
                           const std::vector<const float*>& control,
                           const std::vector<double>& coefficients, const Options& options,
                           RunReport& report);

/// The local structure tensor on the GPU (the adaptive filter's structure_tensor with the CUDA
/// backend): `problem` holds the quadrature bank, the real and imaginary part of quadrature filter
/// q as filters 2q and 2q + 1, over the whole output (no outputs, no weights). Per voxel
/// T = sum_q |q_q| M_q, component c of it (upper triangle, row by row) from duals[q * components +
/// c]; written to tensor[c], contiguous volumes of the output's extents. The responses stay on
/// the device: slabs along the last axis sized to the device's free memory; only the components
/// come back. Fills the report's timings.
void run_structure_tensor(const detail::BankProblem& problem, const std::vector<double>& duals,
                          const std::vector<float*>& tensor, const Options& options,
                          RunReport& report);

/// The control tensor on the GPU options.cuda_device (control_voxel.h's two passes, the largest
/// magnitude reduced on the device): `tensor`'s components (contiguous volumes of equal size) in
/// place. Returns false, having done nothing, when they do not fit in half of the device's free
/// memory (the caller then computes them on the CPU).
bool run_control_tensor(const detail::ControlMapping& mapping,
                        std::vector<std::vector<float>>& tensor, const Options& options);

}  // namespace ndconv::cuda_bank
