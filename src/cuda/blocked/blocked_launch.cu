// The blocked kernel's dispatch table and launcher (blocked_launch.h); this translation unit
// compiles the family's instantiations (blocked_kernel.cuh) and holds its copy of the constant
// taps (kernels/tap_memory.cuh).
//
// Compiled KO: 1, 2, 4, 8, 16. Each has a constant-memory and a global-memory tap flavour; the
// constant one serves any filter whose taps fit in 64 KiB (every separable filter, and dense
// filters up to 25^3 or 11^4), the global one the rest (up to 31^3 and 15^4).
#include "cuda/blocked/blocked_launch.h"

#include <string>
#include <vector>

#include "cuda/blocked/blocked_kernel.cuh"
#include "cuda/blocked/blocked_thread.h"
#include "cuda/check.h"
#include "cuda/launch_common.h"
#include "cuda/plan.h"
#include "cuda/uploaded_taps.h"
#include "kernels/schedule.h"
#include "kernels/tap_memory.cuh"

namespace ndconv::cuda_backend {
namespace {

using kernels::Geometry;

using BlockedLaunch = void (*)(dim3, dim3, cudaStream_t, const Geometry&, const float*, float*,
                               const float*);

template <int KO, bool kConstant>
void launch_blocked(dim3 grid, dim3 block, cudaStream_t stream, const Geometry& g, const float* in,
                    float* out, const float* taps) {
  kernels::blocked_kernel<KO, kConstant><<<grid, block, 0, stream>>>(g, in, out, taps);
}

struct BlockedEntry {
  int ko;
  const void* kernel[2];  ///< [0]: global taps, [1]: constant taps
  BlockedLaunch launch[2];
};

#define NDCONV_BLOCKED_ENTRY(KO)                                             \
  BlockedEntry {                                                             \
    KO,                                                                      \
        {reinterpret_cast<const void*>(&kernels::blocked_kernel<KO, false>), \
         reinterpret_cast<const void*>(&kernels::blocked_kernel<KO, true>)}, \
    {                                                                        \
      &launch_blocked<KO, false>, &launch_blocked<KO, true>                  \
    }                                                                        \
  }

const BlockedEntry kBlockedTable[] = {NDCONV_BLOCKED_ENTRY(1), NDCONV_BLOCKED_ENTRY(2),
                                      NDCONV_BLOCKED_ENTRY(4), NDCONV_BLOCKED_ENTRY(8),
                                      NDCONV_BLOCKED_ENTRY(16)};
#undef NDCONV_BLOCKED_ENTRY

const BlockedEntry* find_entry(int ko) {
  for (const BlockedEntry& e : kBlockedTable) {
    if (e.ko == ko)
      return &e;
  }
  return nullptr;
}

std::string compiled_ko_list() {
  std::string s;
  for (const BlockedEntry& e : kBlockedTable)
    s += (s.empty() ? "" : ", ") + std::to_string(e.ko);
  return s;
}

ConstantTapUploads g_constant_uploads;  // this translation unit's kernels::c_taps, per device

KernelVariant blocked_variant(int device, const BlockedEntry& e, bool constant) {
  return query_variant(device, e.kernel[constant], e.ko, kernels::kBlockedThreads);
}

KoCandidate as_candidate(const KernelVariant& v) {
  return {v.outputs_per_thread, v.registers_per_thread, v.local_bytes,
          v.block_threads,      v.blocks_per_sm,        v.occupancy};
}

}  // namespace

// Chooses KO for an axis of n outputs and k taps, forced (validated) or by the rule.
// `rows` is the number of tap rows (1 for a separable pass).
KoChoice choose_blocked_ko(int device, int forced, int64_t n, int64_t k, int64_t rows) {
  if (forced != 0) {
    if (find_entry(forced) == nullptr) {
      throw InvalidArgument("outputs per thread " + std::to_string(forced) +
                            " has no CUDA instantiation; compiled values are " +
                            compiled_ko_list() + " (or 0 for automatic)");
    }
    return {forced, "forced by the caller"};
  }
  std::vector<KoCandidate> candidates;
  for (const BlockedEntry& e : kBlockedTable) {
    const bool constant = taps_fit_constant(rows * k);
    candidates.push_back(as_candidate(blocked_variant(device, e, constant)));
  }
  KoChoice c = choose_outputs_per_thread(candidates, n, k);
  if (c.outputs_per_thread == 0)
    throw InvalidArgument("no CUDA kernel instantiation is usable on this device: " + c.reason);
  return c;
}

TapLease blocked_upload_constant_taps(int device, const std::vector<float>& taps,
                                      cudaStream_t stream) {
  return g_constant_uploads.upload(device, &kernels::c_taps, taps, stream);
}

void launch_blocked_pass(int device, int ko, bool constant, const Geometry& g, const float* in,
                         float* out, const float* global_taps, cudaStream_t stream,
                         LaunchPlan& plan) {
  const BlockedEntry& e = *find_entry(ko);
  const kernels::LaunchShape s = kernels::blocked_shape(g, e.ko);
  e.launch[constant](to_dim3(s.grid), to_dim3(s.block), stream, g, in, out, global_taps);
  NDCONV_CUDA_CHECK_LAUNCH("blocked_kernel");
  if (plan.launches == 0) {
    set_plan_shape(plan, s);
    set_plan_kernel(plan, device, e.kernel[constant], e.ko, s, "blocked", 1);
  }
  ++plan.launches;
}

// The blocked kernel at `outputs_per_thread` (0 = the KO rule).
LaunchPlan launch_blocked_dense(const detail::CorrelationProblem& p, int outputs_per_thread,
                                int device, cudaStream_t stream) {
  const int dims = p.input.dims;
  int64_t rows = 1;
  for (int a = 0; a + 1 < dims; ++a)
    rows *= p.filter_extent[a];
  const int64_t k_last = p.filter_extent[dims - 1];
  const std::vector<float> taps = dense_tap_rows(p);
  const Geometry g = dense_geometry(p);
  const KoChoice choice =
      choose_blocked_ko(device, outputs_per_thread, p.output.extent[dims - 1], k_last, rows);
  const int ko = choice.outputs_per_thread;

  const bool constant = taps_fit_constant(static_cast<int64_t>(taps.size()));
  const TapLease taps_lease = constant ? blocked_upload_constant_taps(device, taps, stream)
                                       : upload_global_taps(device, taps, stream);

  LaunchPlan plan;
  plan.outputs_per_thread = ko;
  plan.reason = choice.reason;
  plan.taps_in_constant = constant;
  launch_blocked_pass(device, ko, constant, g, p.input.data, p.output.data, taps_lease.get(),
                      stream, plan);
  return plan;
}

std::vector<DenseKernelVariant> blocked_kernel_variants(int device) {
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  std::vector<DenseKernelVariant> list;
  for (const BlockedEntry& e : kBlockedTable) {
    for (const bool constant : {true, false}) {
      DenseKernelVariant v;
      v.kernel = DenseKernel::Blocked;
      v.block_x = kernels::kBlockedThreads;  // folded into rows when x is narrower
      v.constant_taps = constant;
      v.resources = blocked_variant(device, e, constant);
      list.push_back(v);
    }
  }
  return list;
}

std::vector<KernelVariant> dense_variants(int device, int /*dims*/) {
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  std::vector<KernelVariant> v;
  for (const BlockedEntry& e : kBlockedTable)
    v.push_back(blocked_variant(device, e, true));
  return v;
}

std::vector<KernelVariant> separable_variants(int device) {
  return dense_variants(device, 0);  // the same blocked kernels, constant taps
}

std::vector<KernelVariant> dense_variants_global_taps(int device) {
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  std::vector<KernelVariant> v;
  for (const BlockedEntry& e : kBlockedTable)
    v.push_back(blocked_variant(device, e, false));
  return v;
}

}  // namespace ndconv::cuda_backend
