// The GPU filter bank as the engine calls it (the bank's front end, src/engine/adaptive/
// bank_front.cpp, and the adaptive filter's stages, src/engine/adaptive/orientation.cpp,
// reconstruction.cpp, control.cpp and resident_stages.cpp): the bank's
// part of the CUDA backend interface. A build without CUDA links src/cuda/cuda_unavailable.cpp,
// where bank_cannot_implement says why and the runs refuse. The launch-level API for the bench and
// the tests is bank_gpu.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/bank_problem.h"
#include "core/control_voxel.h"
#include "ndconv/types.h"

namespace ndconv::cuda_bank {

/// Runs the bank problem on the GPU options.cuda_device; fills the report's timings.
void run_bank(const detail::BankProblem& problem, const Options& options, RunReport& report);

/// Why the GPU bank cannot run filters of this extent (empty when it can): the front end then
/// takes the CPU bank.
std::string bank_cannot_implement(const Index& filter_extent, int dims);

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
/// memory (the caller then computes them on the CPU). The largest magnitude is taken over the
/// voxels `region` holds; the tensor is divided by `scale` where it is >= 0, else (negative) by
/// that largest, and `used` receives the divisor.
bool run_control_tensor(const detail::ControlMapping& mapping,
                        std::vector<std::vector<float>>& tensor, const Options& options,
                        const detail::MagnitudeRegion& region, double scale, double& used);

/// The adaptive filter's problem for ResidentAdaptive: what its GPU stages need, the views on the
/// host.
struct ResidentProblem {
  detail::BankProblem quadrature;  ///< the quadrature bank over the whole input (no outputs)
  std::vector<double> duals;       ///< as run_structure_tensor's
  SeparableFilter relaxation;      ///< the relaxation's Gaussian (correlation); dims 0: none
  detail::BankProblem
      reconstruction;  ///< the lowpass and highpass filters, the sum into sum_output (null: the
                       ///< stages up to the control tensor only, for its scale)
  std::vector<double> coefficients;  ///< as run_bank_with_control's
};

/// The adaptive filter's GPU stages with the data on the device from the first upload to the last
/// download: the input uploaded once and padded on the device for both banks; the tensor's
/// components formed, relaxed (launch_same_separable_device), mapped to the control tensor and
/// turned into the reconstruction's weights in place in one device buffer; only the output comes
/// back. The stages run in order on one stream of options.cuda_device, each returning when its
/// work is done (so that the caller can time it). The problem's views and taps must outlive the
/// object.
class ResidentAdaptive {
 public:
  /// Plans the stages and checks their working set (the input, the tensor, and the largest stage's
  /// buffers) against the device's free memory less a margin and the device memory cap
  /// (Options::device_memory_cap or NDCONV_DEVICE_MEMORY_CAP); allocates nothing yet.
  ResidentAdaptive(const ResidentProblem& problem, const Options& options);
  ~ResidentAdaptive();
  ResidentAdaptive(const ResidentAdaptive&) = delete;
  ResidentAdaptive& operator=(const ResidentAdaptive&) = delete;

  /// Whether the working set fits; when it does not, run none of the stages.
  bool fits() const;
  /// One line on the working set and the memory available, for the report's notes.
  const std::string& memory_note() const;

  /// Uploads the input and forms the structure tensor (the quadrature bank in slabs along the last
  /// axis); fills the report's timings (seconds_compute: the bank and tensor kernels).
  void structure_tensor(RunReport& report);
  /// Relaxes each component with the problem's Gaussian (nothing without one).
  void relax();
  /// The control tensor in place, the largest magnitude taken over the voxels `region` holds, the
  /// tensor divided by `scale` where it is >= 0, else (negative) by that largest; returns the
  /// divisor.
  double control_tensor(const detail::ControlMapping& mapping,
                        const detail::MagnitudeRegion& region = {}, double scale = -1);
  /// The weights, the reconstruction's weighted sum, the blend with the input (weight `blend`),
  /// and the download into the problem's reconstruction.sum_output; fills the report's timings
  /// (seconds_compute: the bank kernels).
  void reconstruct(double blend, RunReport& report);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ndconv::cuda_bank
