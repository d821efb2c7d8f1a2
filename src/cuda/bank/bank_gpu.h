// The GPU filter bank (bank.cu), called by the bank's front end (src/engine/adaptive/
// bank_front.cpp) when the CUDA backend is chosen, by the adaptive filter's stages
// (src/engine/adaptive/pipeline.cpp) and by the bench (src/perf/bank_rows.cpp) on data already
// on the device. Declared for builds with CUDA only.
#pragma once

#include <cstdint>
#include <memory>
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

/// Enqueues one slab of the structure tensor on `stream`: the bank's responses (launch.count
/// volumes of launch.voxels floats in `responses`), then per voxel T = sum_q |q_q| M_q with the
/// duals of run_structure_tensor, component c at tensor[c * component_stride + v].
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
/// reduced on the device): `tensor`'s components (component c at tensor[c * voxels]) in place;
/// `magnitude` holds `voxels` floats of scratch, `largest` one unsigned long long, all on the
/// device.
void launch_control_tensor(const detail::ControlMapping& mapping, float* tensor, int64_t voxels,
                           int components, float* magnitude, unsigned long long* largest,
                           void* stream);

/// Enqueues `launch`'s passes on `stream` (a cudaStream_t; null = the default stream) of
/// `device` (the current one), all pointers on it: `padded` (launch.padded_count() floats),
/// `taps` (bank_device_taps) and either `outputs` (launch.count contiguous canonical volumes of
/// launch.voxels floats) or, with `weights` (launch.count such volumes), the weighted sum into
/// `sum` (one volume). Checks each launch; returns the kernel that ran.
BankKernel launch_bank_device(const BankLaunch& launch, int device, const float* padded,
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

/// The adaptive filter's problem for ResidentAdaptive: what its GPU stages need, the views on the
/// host.
struct ResidentProblem {
  detail::BankProblem quadrature;  ///< the quadrature bank over the whole input (no outputs)
  std::vector<double> duals;       ///< as run_structure_tensor's
  SeparableFilter relaxation;      ///< the relaxation's Gaussian (correlation); dims 0: none
  detail::BankProblem
      reconstruction;                ///< the lowpass and highpass filters, the sum into sum_output
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
  /// The control tensor in place.
  void control_tensor(const detail::ControlMapping& mapping);
  /// The weights, the reconstruction's weighted sum, the blend with the input (weight `blend`),
  /// and the download into the problem's reconstruction.sum_output; fills the report's timings
  /// (seconds_compute: the bank kernels).
  void reconstruct(double blend, RunReport& report);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ndconv::cuda_bank
