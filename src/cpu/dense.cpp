// The dense driver. Steps:
//  1. choose the kernel set (instruction set), the threads and the blocking (blocking_rule.h):
//     blocks of B outputs along the last axis, or, for contiguous outputs where the model says
//     it pays, a ring of k3 accumulator strips running down a column of outputs;
//  2. materialise the input extended by the boundary (padding.h), so that output o reads padded
//     rows o + j for every tap j: no boundary test in the hot loop; along the last axis the
//     padded volume is rounded up to whole blocks or columns. Large volumes are processed in
//     slabs along the last axis so that the copy stays under Tuning::pad_limit_bytes
//     (cpu/tuning.h);
//  3. blocks: build the weight table of a block: the source (j3', j2, j1, jx), with
//     j3' < k3 + B - 1, is padded row (j3', j2, j1) shifted by jx and feeds output b of the block
//     with the tap (j3' - b, j2, j1, jx), zero where that tap does not exist; the block's
//     segments (kernel_set.h) tell the kernel which outputs each j3' feeds, so it skips those
//     zeros. Rings: the taps of one position (j2, j1, jx) as offsets from the position's first
//     row, and their weights for each j3;
//  4. work items are (m1, m2, block or column along the last axis), m1 fastest so that
//     neighbouring items share most of their input rows in cache; threads take chunks of items
//     (parallel_for.h).
#include <algorithm>
#include <cmath>
#include <chrono>
#include <string>
#include <vector>

#include "cpu/blocking_rule.h"
#include "core/canonical_axes.h"
#include "core/seconds_since.h"
#include "cpu/cpu_info.h"
#include "cpu/tuning.h"
#include "cpu/isa_dispatch.h"
#include "core/padding.h"
#include "cpu/slab_rows.h"
#include "core/parallel_for.h"
#include "cpu/cpu_backend.h"
#include "core/first_touch.h"
#include "ndconv/stored.h"

namespace ndconv::cpu_backend {

using namespace ndconv::cpu;

namespace {

// Per-thread buffers, reused across the items a thread runs.
struct Scratch {
  std::vector<const float*> sources;  // every tap row of the current block
  std::vector<float> out;  // B rows for outputs with x stride != 1 or past the last axis' end
};

}  // namespace

void run_dense(const detail::CorrelationProblem& p, const Options& options, RunReport& report) {
  run_dense(p, options, report, Tuning{});
}

void run_dense_stored(const detail::CorrelationProblem& p, const StoredVolumeView& input,
                      const Options& options, RunReport& report) {
  std::vector<float> converted;
  ndconv::detail::assign_touched(converted, static_cast<size_t>(input.voxel_count()), 0.0f,
                                 options.threads);
  const VolumeView converted_view =
      make_view(converted.data(), input.dims, input.extent, input.spacing);
  convert_to_float(input, converted_view, options.threads);
  detail::CorrelationProblem q = p;
  q.input = as_const(converted_view);
  run_dense(q, options, report);
  report.notes.push_back(std::string("input converted from ") + to_string(input.type) +
                         " to float32 on the CPU");
}

int threads_for_work(int requested, double multiply_adds, const Tuning& tuning) {
  const int threads = core::resolve_thread_count(requested);
  const double useful = std::floor(multiply_adds / tuning.min_multiply_adds_per_thread);
  return static_cast<int>(std::max(1.0, std::min(static_cast<double>(threads), useful)));
}

void run_dense(const detail::CorrelationProblem& p, const Options& options, RunReport& report,
               const Tuning& tuning) {
  const auto t0 = std::chrono::steady_clock::now();
  const int dims = p.input.dims;
  const KernelSet& kernels = select_kernel_set();
  const int threads = threads_for_work(
      options.threads,
      static_cast<double>(p.output.voxel_count()) *
          static_cast<double>(DenseFilter{dims, p.filter_extent, nullptr}.tap_count()),
      tuning);

  const Index n_in = core::to_canonical(dims, p.input.extent, 1);
  const Index in_stride = core::to_canonical(dims, p.input.stride, 0);
  const Index n_out = core::to_canonical(dims, p.output.extent, 1);
  const Index out_stride = core::to_canonical(dims, p.output.stride, 0);
  const Index offset = core::to_canonical(dims, p.offset, 0);
  // The filter's taps are ordered by volume axes; the canonical order keeps that memory order
  // (x fastest, then the middle axes, then the last axis), with extent 1 for missing axes.
  const Index k = core::to_canonical(dims, p.filter_extent, 1);

  const bool direct_store = out_stride[0] == 1 || n_out[0] == 1;
  const BlockingChoice blocking =
      choose_blocking(options.expert.outputs_per_thread, k[3], n_out[3], kernels, direct_store);
  const int factor = blocking.factor;

  // Slabs along the last axis bound the padded copy (slab_rows.h, Tuning::pad_limit_bytes); a
  // work item covers `item_length` outputs along that axis: a block, or a ring's column.
  const int64_t row_length = padded_row_length(n_out[0], k[0]);
  const int64_t item_length =
      blocking.ring ? ring_column_length(n_out, k, row_length, threads, tuning.pad_limit_bytes)
                    : factor;
  const SlabPlan plan = plan_slabs(n_out, k, row_length, item_length, tuning.pad_limit_bytes);
  const int used_threads =
      static_cast<int>(std::min<int64_t>(threads, n_out[1] * n_out[2] * plan.slab_blocks));
  const double taps = static_cast<double>(k[0] * k[1] * k[2] * k[3]);
  const double pad_share = 1.0 / (1.0 + taps);  // progress: padding costs ~1 op per voxel
  core::PaddedVolume padded;
  auto padded_slabs = [&](const auto& items) {
    return for_each_padded_slab(plan, p.input.data, n_in, in_stride, offset, n_out, k, item_length,
                                row_length, p.boundary, threads, used_threads, pad_share,
                                &options.progress, padded, items);
  };
  // Work item (m1, m2, block or column of the slab), m1 fastest, and its output at position 0
  // along the last axis.
  struct Item {
    int64_t m1, m2, block;
    float* out;
  };
  auto item_at = [&](int64_t item) {
    Item i{item % n_out[1], (item / n_out[1]) % n_out[2], item / (n_out[1] * n_out[2]), nullptr};
    i.out = p.output.data + i.m1 * out_stride[1] + i.m2 * out_stride[2];
    return i;
  };
  Index padded_extent;
  if (blocking.ring) {
    // A column per item: (m1, m2, column of the slab), the padded positions one plane apart.
    const int64_t plane_taps = k[2] * k[1] * k[0];
    const Index e{row_length, n_out[1] + k[1] - 1, n_out[2] + k[2] - 1, 1};
    std::vector<int64_t> tap_offsets, row_offsets;
    for (int64_t j2 = 0; j2 < k[2]; ++j2)
      for (int64_t j1 = 0; j1 < k[1]; ++j1)
        row_offsets.push_back((j2 * e[1] + j1) * e[0]);
    std::vector<float> weights(plane_taps * k[3]);
    for (int64_t j2 = 0; j2 < k[2]; ++j2)
      for (int64_t j1 = 0; j1 < k[1]; ++j1)
        for (int64_t jx = 0; jx < k[0]; ++jx)
          tap_offsets.push_back((j2 * e[1] + j1) * e[0] + jx);
    for (int64_t t = 0; t < plane_taps; ++t)
      for (int64_t j3 = 0; j3 < k[3]; ++j3)
        weights[t * k[3] + j3] = p.taps[j3 * plane_taps + t];
    const RingColumnFn ring = kernels.ring[factor];
    padded_extent = padded_slabs([&](int64_t begin, int64_t end, int, int64_t first_column) {
      for (int64_t item = begin; item < end; ++item) {
        const Item i = item_at(item);
        const int64_t first = (first_column + i.block) * item_length;
        RingColumn a;
        a.planes = padded.row(i.m1, i.m2, i.block * item_length);
        a.plane_stride = e[0] * e[1] * e[2];
        a.tap_offsets = tap_offsets.data();
        a.taps = plane_taps;
        a.row_offsets = row_offsets.data();
        a.rows = static_cast<int64_t>(row_offsets.size());
        a.weights = weights.data();
        a.nx = n_out[0];
        a.outputs = std::min(item_length, n_out[3] - first);
        a.dst = i.out + first * out_stride[3];
        a.dst_stride = out_stride[3];
        ring(a);
      }
    });
  } else {
    const RowBlockFn kernel = kernels.block[blocking.index];
    const std::vector<float> weights =
        tap_row_weights(p.taps, k[0] * k[1] * k[2] * k[3], 1, k, factor);
    const int64_t tap_count = (k[3] + factor - 1) * k[2] * k[1] * k[0];
    const std::vector<TapSegment> segments = block_segments(k[3], factor, k[2] * k[1] * k[0]);
    const int64_t out_row = round_up(n_out[0], kMaxLanes);
    std::vector<Scratch> scratch(used_threads);
    padded_extent = padded_slabs([&](int64_t begin, int64_t end, int worker, int64_t first_block) {
      Scratch& s = scratch[worker];
      s.sources.resize(tap_count);
      s.out.resize(factor * out_row);
      float* dst[8];
      // The sources of item (m1, m2, block) are those of (m1 - d, m2, block) shifted by d padded
      // rows: gathered once per run of items along m1 and reused through source_offset.
      int64_t gathered = begin;
      for (int64_t item = begin; item < end; ++item) {
        const Item i = item_at(item);
        float* const out_base = i.out;
        const int64_t first = (first_block + i.block) * factor;  // output index along the last axis
        if (item == begin || i.m1 == 0) {
          gather_tap_rows(padded, k, factor, i.m1, i.m2, i.block, s.sources.data());
          gathered = item;
        }
        for (int b = 0; b < factor; ++b) {
          const bool inside = first + b < n_out[3];
          dst[b] = inside && direct_store ? out_base + (first + b) * out_stride[3]
                                          : s.out.data() + b * out_row;
        }
        RowBlock block_args;
        block_args.sources = s.sources.data();
        block_args.source_offset = (item - gathered) * padded.extent[0];
        block_args.segments = segments.data();
        block_args.segment_count = static_cast<int>(segments.size());
        block_args.weights = weights.data();
        block_args.nx = n_out[0];
        block_args.dst = dst;
        kernel(block_args);
        if (!direct_store) {
          for (int b = 0; b < factor && first + b < n_out[3]; ++b) {
            float* out = out_base + (first + b) * out_stride[3];
            for (int64_t x = 0; x < n_out[0]; ++x)
              out[x * out_stride[0]] = dst[b][x];
          }
        }
      }
    });
  }

  report.threads = used_threads;
  report.outputs_per_thread = factor;
  report.outputs_per_thread_reason = blocking.reason;
  report.device_name = cpu_description();
  report.notes.push_back(std::string("CPU kernels: ") + kernels.isa + " (" +
                         std::to_string(kernels.lanes) + " floats per vector, strips of " +
                         std::to_string(blocking.ring ? kernels.ring_strip_vectors[factor]
                                                      : kernels.strip_vectors[blocking.index]) +
                         " vectors" +
                         (blocking.ring ? ", a ring of " + std::to_string(factor) +
                                              " along the last axis, columns of " +
                                              std::to_string(item_length)
                                        : std::string()) +
                         ")");
  report.slabs = static_cast<int>(plan.slabs);
  report.notes.push_back(
      "boundary-padded input copy: " +
      std::to_string(padded_extent[1] * padded_extent[2] * padded_extent[3] * row_length * 4 /
                     (1024 * 1024)) +
      " MiB" +
      (plan.slabs > 1 ? " per slab, " + std::to_string(plan.slabs) + " slabs along the last axis"
                      : ""));
  report.seconds_compute = detail::seconds_since(t0);
}

}  // namespace ndconv::cpu_backend
