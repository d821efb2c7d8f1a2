// The CUDA backend of a build without CUDA: probe() says so, and the run and launch functions
// refuse, so that CPU-only builds link and report the reason. The engine never calls a run here:
// its backend choice (engine/backend_choice.h) finds no usable GPU first.
#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/tensor_core_bank.h"
#include "cuda/cuda_backend.h"
#include "cuda/launch.h"
#include "cuda/median/median.h"
#include "cuda/recursive_gaussian/recursive_gaussian.h"
#include "cuda/tensor_dense/tensor_dense.h"
#include "ndconv/errors.h"

namespace ndconv {
namespace {
const char* const kNoCuda = "ndconv was built without CUDA support";
}  // namespace
}  // namespace ndconv

namespace ndconv::cuda_backend {

CudaStatus probe(bool) {
  CudaStatus s;
  s.compiled = false;
  s.usable = false;
  s.reason = kNoCuda;
  return s;
}

std::size_t free_memory_of(int) {
  throw InvalidArgument(kNoCuda);
}

void run_dense(const detail::CorrelationProblem&, const Options&, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

void run_separable(const detail::SeparableProblem&, const Options&, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

std::vector<KernelVariant> dense_variants(int, int) {
  return {};
}

std::vector<KernelVariant> tiled_variants(int) {
  return {};
}

std::vector<KernelVariant> separable_variants(int) {
  return {};
}

void run_dense(const detail::CorrelationProblem&, const Options&, RunReport&,
               const DenseKernelRequest&, const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

void run_separable(const detail::SeparableProblem&, const Options&, RunReport&, const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

std::vector<KernelVariant> dense_variants_global_taps(int) {
  return {};
}

LaunchPlan launch_dense_device(const detail::CorrelationProblem&, int, int, void*, const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

LaunchPlan launch_dense_device(const detail::CorrelationProblem&, const DenseKernelRequest&, int,
                               void*, const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

std::vector<DenseKernelVariant> dense_kernel_variants(int) {
  return {};
}

std::size_t separable_scratch_floats(const detail::SeparableProblem&) {
  return 0;
}

std::size_t separable_launch_scratch_floats(const detail::SeparableProblem&, int, const Tuning&) {
  return 0;
}

LaunchPlan launch_separable_device(const detail::SeparableProblem&, float*, int, void*, int,
                                   const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

}  // namespace ndconv::cuda_backend

namespace ndconv::cuda_bank {

void run_bank(const detail::BankProblem&, const Options&, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

std::string bank_cannot_implement(const Index&, int) {
  return kNoCuda;
}

void run_bank_with_control(const detail::BankProblem&, const std::vector<const float*>&,
                           const std::vector<double>&, const Options&, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

void run_structure_tensor(const detail::BankProblem&, const std::vector<double>&,
                          const std::vector<float*>&, const Options&, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

bool run_control_tensor(const detail::ControlMapping&, std::vector<std::vector<float>>&,
                        const Options&, const detail::MagnitudeRegion&, double, double&) {
  return false;
}

BankLaunch plan_bank(const detail::BankProblem&, int) {
  throw InvalidArgument(kNoCuda);
}

std::vector<float> bank_device_taps(const BankLaunch&, const float*) {
  throw InvalidArgument(kNoCuda);
}

void pad_bank_input(const detail::BankProblem&, const BankLaunch&, int, const core::ProgressSpan&,
                    core::PaddedVolume&) {
  throw InvalidArgument(kNoCuda);
}

BankKernel launch_bank_device(const BankLaunch&, int, const float*, const float*, float*,
                              const float*, float*, void*) {
  throw InvalidArgument(kNoCuda);
}

TensorCoreGeometry tensor_core_geometry(const BankLaunch&) {
  throw InvalidArgument(kNoCuda);
}

std::string tensor_core_unfit(const BankLaunch&, const float*, int,
                              const cuda_backend::TensorCoreBankPolicy&, bool) {
  return kNoCuda;
}

void launch_tensor_core_bank(const TensorCoreGeometry&, int, const uint8_t*, const int32_t*,
                             const float*, float*, void*) {
  throw InvalidArgument(kNoCuda);
}

bool tensor_core_takes_wgmma(const TensorCoreGeometry&, int,
                             const cuda_backend::TensorCoreBankPolicy&) {
  return false;
}

TensorCoreWeights tensor_core_kernel_weights(const TensorCoreGeometry&, const float*, int) {
  throw InvalidArgument(kNoCuda);
}

struct ResidentAdaptive::State {
  std::string note = kNoCuda;
};

ResidentAdaptive::ResidentAdaptive(const ResidentProblem&, const Options&)
    : state_(std::make_unique<State>()) {}
ResidentAdaptive::~ResidentAdaptive() = default;

bool ResidentAdaptive::fits() const {
  return false;
}

const std::string& ResidentAdaptive::memory_note() const {
  return state_->note;
}

void ResidentAdaptive::structure_tensor(RunReport&) {
  throw InvalidArgument(kNoCuda);
}

void ResidentAdaptive::relax() {
  throw InvalidArgument(kNoCuda);
}

double ResidentAdaptive::control_tensor(const detail::ControlMapping&,
                                        const detail::MagnitudeRegion&, double) {
  throw InvalidArgument(kNoCuda);
}

void ResidentAdaptive::reconstruct(double, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

}  // namespace ndconv::cuda_bank

namespace ndconv::cuda_median {

bool can_implement(int, const Index&, std::string& why) {
  why = kNoCuda;
  return false;
}

void run(const ConstVolumeView&, const VolumeView&, const Index&, Boundary, float, int,
         RunReport&) {
  throw InvalidArgument(kNoCuda);
}

void run_device(const ConstVolumeView&, const VolumeView&, const Index&, Boundary, float,
                const Options&, void*, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

void launch_device(const float*, float*, int, const Index&, const Index&, Boundary, float, void*,
                   const cuda_backend::Tuning&) {
  throw InvalidArgument(kNoCuda);
}

}  // namespace ndconv::cuda_median

namespace ndconv::cuda_recursive {

void run(const ConstVolumeView&, const VolumeView&, const std::array<double, kMaxDims>&,
         const std::array<recursive::Coefficients, kMaxDims>&, const std::array<int64_t, kMaxDims>&,
         Boundary, float, int, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

}  // namespace ndconv::cuda_recursive

namespace ndconv::cuda_tensor_dense {

std::string tensor_dense_unfit(int, const Index&, int, const cuda_backend::TensorCoreDensePolicy&) {
  return kNoCuda;
}

int tensor_dense_planes_per_block(const TensorDenseGeometry&, int,
                                  const cuda_backend::TensorCoreDensePolicy&) {
  throw InvalidArgument(kNoCuda);
}

void launch_tensor_dense(const TensorDenseGeometry&, const uint8_t*, const int32_t*, float, float*,
                         int, void*) {
  throw InvalidArgument(kNoCuda);
}

std::string tensor_dense_note(const TensorDenseGeometry&, int) {
  return kNoCuda;
}

bool run_tensor_dense(const detail::CorrelationProblem&, const StoredVolumeView&, const Options&,
                      const cuda_backend::TensorCoreDensePolicy&, RunReport&,
                      std::string& why_not) {
  why_not = kNoCuda;
  return false;
}

}  // namespace ndconv::cuda_tensor_dense
