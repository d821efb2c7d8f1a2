// The CPU filter bank driver: dense.cpp's scheme (boundary-padded input in slabs along the last
// axis, work items (m1, m2, block along the last axis), a flat list of tap rows per item) with
// F filters. For each item every pass of FP filters runs over the same tap rows while they are
// in cache; the kernels write whole strips into per-thread rows of a multiple of
// kBankRowMultiple floats, which are then copied to the outputs (or, for the weighted sum, the
// per-voxel weights are copied in and one sum row per output is accumulated over the passes).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "cpu/bank_int8.h"
#include "cpu/bank_kernel_set.h"
#include "cpu/bank_rule.h"
#include "core/canonical_axes.h"
#include "core/seconds_since.h"
#include "cpu/cpu_info.h"
#include "cpu/finite_scan.h"
#include "cpu/isa_dispatch.h"
#include "core/padding.h"
#include "cpu/slab_rows.h"
#include "cpu/tuning.h"
#include "core/parallel_for.h"
#include "cpu/cpu_backend.h"

namespace ndconv::cpu {

const BankKernelSet& bank_kernels_generic();
#if NDCONV_CPU_X86_KERNELS
const BankKernelSet& bank_kernels_avx2();
const BankKernelSet& bank_kernels_avx512();
#endif

const BankKernelSet& bank_kernel_set(const char* isa) {
  const std::string name = isa;
#if NDCONV_CPU_X86_KERNELS
  if (name == "avx512")
    return bank_kernels_avx512();
  if (name == "avx2")
    return bank_kernels_avx2();
#endif
  return bank_kernels_generic();
}

}  // namespace ndconv::cpu

namespace ndconv::cpu_backend {

using namespace ndconv::cpu;

namespace {

// A canonical view of a volume: base pointer and strides in canonical axis order.
template <typename T>
struct CanonicalView {
  T* data = nullptr;
  Index stride{};
  T* row(int64_t m1, int64_t m2, int64_t m3) const {
    return data + m1 * stride[1] + m2 * stride[2] + m3 * stride[3];
  }
};

template <typename T>
CanonicalView<T> canonical(const BasicVolumeView<T>& v) {
  return {v.data, core::to_canonical(v.dims, v.stride, 0)};
}

struct Scratch {
  std::vector<const float*> sources;
  std::vector<float> rows;       // FP_max * B filter rows (plain) or weight rows (weighted sum)
  std::vector<float> sums;       // B sum rows
  std::vector<float*> row_ptrs;  // into rows
  std::vector<float*> sum_ptrs;  // into sums
};

}  // namespace

void run_bank(const detail::BankProblem& p, const Options& options, RunReport& report) {
  run_bank(p, options, report, Tuning{});
}

void run_bank(const detail::BankProblem& p, const Options& options, RunReport& report,
              const Tuning& tuning) {
  std::string int8_not;  // why the 8-bit bank on the AMX tiles did not take the bank
  if (run_bank_int8(p, options, report, tuning, Int8Engine::Amx, int8_not))
    return;
  const auto t0 = std::chrono::steady_clock::now();
  const int dims = p.input.dims;
  const KernelSet& row_kernels = select_kernel_set();
  const BankKernelSet& kernels = bank_kernel_set(row_kernels.isa);
  const int threads = core::resolve_thread_count(options.threads);
  const bool weighted = p.outputs.empty();

  const Index n_in = core::to_canonical(dims, p.input.extent, 1);
  const Index in_stride = core::to_canonical(dims, p.input.stride, 0);
  const Index n_out = core::to_canonical(dims, p.output_extent, 1);
  const Index offset = core::to_canonical(dims, p.offset, 0);
  const Index k = core::to_canonical(dims, p.filter_extent, 1);
  const int64_t filter_taps = k[0] * k[1] * k[2] * k[3];

  const BankShape shape = choose_bank_shape(p.count, options.expert.outputs_per_thread, k[3],
                                            n_out[3], kernels, has_non_finite(p.input, threads));
  const int factor = shape.factor;
  int max_fp = 0;
  std::vector<std::vector<float>> weights;
  for (const BankPass& pass : shape.passes) {
    weights.push_back(tap_row_weights(p.taps + pass.first_filter * filter_taps, filter_taps,
                                      pass.filters, k, factor));
    max_fp = std::max(max_fp, pass.filters);
  }

  const int64_t nx = round_up(n_out[0], kBankRowMultiple);  // kernels' row length
  const int64_t row_length = round_up(nx + k[0] - 1, kMaxLanes);
  const SlabPlan plan = plan_slabs(n_out, k, row_length, factor, tuning.pad_limit_bytes);
  const int64_t tap_count = (k[3] + factor - 1) * k[2] * k[1] * k[0];

  std::vector<CanonicalView<float>> outs;
  for (const VolumeView& o : p.outputs)
    outs.push_back(canonical(o));
  std::vector<CanonicalView<const float>> wvs;
  for (const ConstVolumeView& w : p.weights)
    wvs.push_back(canonical(w));
  const CanonicalView<float> sum_out = weighted ? canonical(p.sum_output) : CanonicalView<float>{};

  const int used_threads =
      static_cast<int>(std::min<int64_t>(threads, n_out[1] * n_out[2] * plan.slab_blocks));
  std::vector<Scratch> scratch(used_threads);
  const double pad_share = 1.0 / (1.0 + static_cast<double>(filter_taps * p.count));
  core::PaddedVolume padded;
  auto slab_items = [&](int64_t begin, int64_t end, int worker, int64_t first_block) {
    Scratch& s = scratch[worker];
    s.sources.resize(tap_count);
    s.rows.assign(static_cast<size_t>(max_fp * factor * nx), 0.0f);
    s.sums.assign(static_cast<size_t>(factor * nx), 0.0f);
    s.row_ptrs.resize(max_fp * factor);
    s.sum_ptrs.resize(factor);
    for (int r = 0; r < max_fp * factor; ++r)
      s.row_ptrs[r] = s.rows.data() + r * nx;
    for (int b = 0; b < factor; ++b)
      s.sum_ptrs[b] = s.sums.data() + b * nx;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t m1 = item % n_out[1], m2 = (item / n_out[1]) % n_out[2],
                    block = item / (n_out[1] * n_out[2]);
      const int64_t first = (first_block + block) * factor;  // output index along the last axis
      const int inside = static_cast<int>(std::min<int64_t>(factor, n_out[3] - first));
      gather_tap_rows(padded, k, factor, m1, m2, block, s.sources.data());
      for (size_t pi = 0; pi < shape.passes.size(); ++pi) {
        const BankPass& pass = shape.passes[pi];
        BankBlock args;
        args.sources = s.sources.data();
        args.tap_count = tap_count;
        args.weights = weights[pi].data();
        args.nx = nx;
        args.dst = s.row_ptrs.data();
        if (weighted) {
          // Per-voxel weights of this pass's filters; rows past the volume's end stay zero.
          for (int f = 0; f < pass.filters; ++f)
            for (int b = 0; b < inside; ++b) {
              const CanonicalView<const float>& wv = wvs[pass.first_filter + f];
              const float* src = wv.row(m1, m2, first + b);
              float* dst = s.row_ptrs[f * factor + b];
              for (int64_t x = 0; x < n_out[0]; ++x)
                dst[x] = src[x * wv.stride[0]];
            }
          args.sum_weights = s.row_ptrs.data();
          args.sum_dst = s.sum_ptrs.data();
          args.accumulate = pi > 0;
        }
        kernels.block[pass.filters_index][shape.factor_index][shape.strip_index](args);
        if (!weighted) {
          for (int f = 0; f < pass.filters; ++f)
            for (int b = 0; b < inside; ++b) {
              const CanonicalView<float>& o = outs[pass.first_filter + f];
              float* dst = o.row(m1, m2, first + b);
              const float* src = s.row_ptrs[f * factor + b];
              if (o.stride[0] == 1) {
                std::memcpy(dst, src, n_out[0] * sizeof(float));
              } else {
                for (int64_t x = 0; x < n_out[0]; ++x)
                  dst[x * o.stride[0]] = src[x];
              }
            }
        }
      }
      if (weighted) {
        for (int b = 0; b < inside; ++b) {
          float* dst = sum_out.row(m1, m2, first + b);
          for (int64_t x = 0; x < n_out[0]; ++x)
            dst[x * sum_out.stride[0]] = s.sum_ptrs[b][x];
        }
      }
    }
  };
  for_each_padded_slab(plan, p.input.data, n_in, in_stride, offset, n_out, k, factor, row_length,
                       p.boundary, threads, used_threads, pad_share, &options.progress, padded,
                       slab_items);

  report.threads = used_threads;
  report.outputs_per_thread = factor;
  report.outputs_per_thread_reason = shape.reason;
  report.device_name = cpu_description();
  report.notes.push_back(std::string("CPU filter bank kernels: ") + kernels.isa + " (" +
                         std::to_string(kernels.lanes) + " floats per vector, strips of " +
                         std::to_string(shape.strip_vectors) + " vectors, " +
                         std::to_string(shape.passes.size()) + " passes over " +
                         std::to_string(p.count) + " filters; not on AMX-INT8: " + int8_not + ")");
  report.slabs = static_cast<int>(plan.slabs);
  report.seconds_compute = detail::seconds_since(t0);
}

}  // namespace ndconv::cpu_backend
