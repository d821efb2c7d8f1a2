// The dense driver. Steps:
//  1. choose the kernel set (instruction set), the threads and the blocking (blocking_rule.h):
//     blocks of B outputs along the last axis, or, for contiguous outputs where the model says
//     it pays, a ring of k3 accumulator strips running down a column of outputs;
//  2. the input extended by the boundary (padding.h), so that output o reads padded rows o + j
//     for every tap j: no boundary test in the hot loop. Blocks (run_blocks) materialise it for
//     the volume, rounded up to whole blocks along the last axis, in slabs along that axis so
//     that the copy stays under Tuning::pad_limit_bytes (cpu/tuning.h); rings (run_rings) pad
//     only the rows each thread reads, into a window of its own, as its items reach them;
//  3. blocks: build the weight table of a block: the source (j3', j2, j1, jx), with
//     j3' < k3 + B - 1, is padded row (j3', j2, j1) shifted by jx and feeds output b of the block
//     with the tap (j3' - b, j2, j1, jx), zero where that tap does not exist; the block's
//     segments (kernel_set.h) tell the kernel which outputs each j3' feeds, so it skips those
//     zeros. Rings: the taps of one position (j2, j1, jx) as offsets into the window, and their
//     weights for each j3;
//  4. work items are (m1, m2, block) for blocks, (run of m1, m2, column) for rings, m1 fastest so
//     that neighbouring items share most of their input rows in cache; threads take chunks of
//     items (parallel_for.h).
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

// The problem in canonical axes (x, the two middle axes, the last axis; canonical_axes.h).
struct Geometry {
  Index n_in, in_stride, n_out, out_stride, offset;
  // The filter's taps are ordered by volume axes; the canonical order keeps that memory order
  // (x fastest, then the middle axes, then the last axis), with extent 1 for missing axes.
  Index k;
  int64_t row_length = 0;  // a padded row's floats (padded_row_length)
};

Geometry geometry_of(const detail::CorrelationProblem& p) {
  const int dims = p.input.dims;
  Geometry g;
  g.n_in = core::to_canonical(dims, p.input.extent, 1);
  g.in_stride = core::to_canonical(dims, p.input.stride, 0);
  g.n_out = core::to_canonical(dims, p.output.extent, 1);
  g.out_stride = core::to_canonical(dims, p.output.stride, 0);
  g.offset = core::to_canonical(dims, p.offset, 0);
  g.k = core::to_canonical(dims, p.filter_extent, 1);
  g.row_length = padded_row_length(g.n_out[0], g.k[0]);
  return g;
}

// The rings' work split (slab_rows.h), or the one Tuning forces.
RingSplit ring_split_for(const Geometry& g, int threads, const Tuning& tuning) {
  RingSplit split = ring_split(g.n_out, g.k, g.row_length, select_kernel_set().lanes, threads,
                               tuning.ring_window_bytes, tuning.ring_pad_cost, tuning.ring_tail);
  if (tuning.ring_run > 0)
    split.run = std::min(tuning.ring_run, g.n_out[1]);
  if (tuning.ring_column > 0)
    split.column = std::min(tuning.ring_column, g.n_out[3]);
  return split;
}

// How far ahead along the last axis the rings' padding requests its input rows.
constexpr int64_t kPadPrefetchPositions = 4;

// Per-thread buffers of the blocks, reused across the items a thread runs.
struct Scratch {
  std::vector<const float*> sources;  // every tap row of the current block
  std::vector<float> out;  // B rows for outputs with x stride != 1 or past the last axis' end
};

// Blocks of B outputs along the last axis from a boundary-padded copy of the input, slab by
// slab; items (m1, m2, block of the slab), m1 fastest.
void run_blocks(const detail::CorrelationProblem& p, const Geometry& g, const KernelSet& kernels,
                const BlockingChoice& blocking, int threads, const Options& options,
                const Tuning& tuning, RunReport& report) {
  const Index &n_out = g.n_out, &out_stride = g.out_stride, &k = g.k;
  const int factor = blocking.factor;
  const bool direct_store = out_stride[0] == 1 || n_out[0] == 1;
  // Slabs along the last axis bound the padded copy (slab_rows.h, Tuning::pad_limit_bytes).
  const SlabPlan plan = plan_slabs(n_out, k, g.row_length, factor, tuning.pad_limit_bytes);
  const int used_threads =
      static_cast<int>(std::min<int64_t>(threads, n_out[1] * n_out[2] * plan.slab_blocks));
  const double taps = static_cast<double>(k[0] * k[1] * k[2] * k[3]);
  const double pad_share = 1.0 / (1.0 + taps);  // progress: padding costs ~1 op per voxel
  const RowBlockFn kernel = kernels.block[blocking.index];
  const std::vector<float> weights =
      tap_row_weights(p.taps, k[0] * k[1] * k[2] * k[3], 1, k, factor);
  const int64_t tap_count = (k[3] + factor - 1) * k[2] * k[1] * k[0];
  const std::vector<TapSegment> segments = block_segments(k[3], factor, k[2] * k[1] * k[0]);
  const int64_t out_row = round_up(n_out[0], kMaxLanes);
  std::vector<Scratch> scratch(used_threads);
  core::PaddedVolume padded;
  const Index padded_extent = for_each_padded_slab(
      plan, p.input.data, g.n_in, g.in_stride, g.offset, n_out, k, factor, g.row_length, p.boundary,
      threads, used_threads, pad_share, &options.progress, padded,
      [&](int64_t begin, int64_t end, int worker, int64_t first_block) {
        Scratch& s = scratch[worker];
        s.sources.resize(tap_count);
        s.out.resize(factor * out_row);
        float* dst[8];
        // The sources of item (m1, m2, block) are those of (m1 - d, m2, block) shifted by d
        // padded rows: gathered once per run of items along m1 and reused through source_offset.
        int64_t gathered = begin;
        for (int64_t item = begin; item < end; ++item) {
          const int64_t m1 = item % n_out[1], m2 = (item / n_out[1]) % n_out[2],
                        block = item / (n_out[1] * n_out[2]);
          const int64_t first = (first_block + block) * factor;  // output index along the last axis
          if (item == begin || m1 == 0) {
            gather_tap_rows(padded, k, factor, m1, m2, block, s.sources.data());
            gathered = item;
          }
          float* const out_base = p.output.data + m1 * out_stride[1] + m2 * out_stride[2];
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
  report.threads = used_threads;
  report.notes.push_back(std::string("CPU kernels: ") + kernels.isa + " (" +
                         std::to_string(kernels.lanes) + " floats per vector, strips of " +
                         std::to_string(kernels.strip_vectors[blocking.index]) + " vectors)");
  report.slabs = static_cast<int>(plan.slabs);
  report.notes.push_back(
      "boundary-padded input copy: " +
      std::to_string(padded_extent[1] * padded_extent[2] * padded_extent[3] * g.row_length * 4 /
                     (1024 * 1024)) +
      " MiB" +
      (plan.slabs > 1 ? " per slab, " + std::to_string(plan.slabs) + " slabs along the last axis"
                      : ""));
}

// Rings of K = k3 accumulator strips down columns of outputs along the last axis. No padded copy
// of the volume: an item is a run of consecutive m1 of one (m2, column), and its thread pads the
// rows it reads into its own window as it goes: all k1 row-columns (i1 = m1 + j1, every j2 and
// every position of the column) at the run's start, then the one new row-column per m1, in the
// slot of the one no longer needed (slot i1 mod k1). The window is small enough to stay in the
// core's cache (Tuning::ring_window_bytes), and the padding runs on the thread that reads it,
// between its kernels.
void run_rings(const detail::CorrelationProblem& p, const Geometry& g, const KernelSet& kernels,
               int threads, const Options& options, const Tuning& tuning, RunReport& report) {
  const Index &n_out = g.n_out, &out_stride = g.out_stride, &k = g.k;
  const int64_t plane_taps = k[2] * k[1] * k[0];
  const int64_t plane = k[2] * k[1] * g.row_length;  // a window's floats per position
  const RingSplit split = ring_split_for(g, threads, tuning);
  const int64_t column = split.column, run = split.run;
  const int64_t columns = (n_out[3] + column - 1) / column;
  const int64_t runs = (n_out[1] + run - 1) / run;
  const int64_t items = runs * n_out[2] * columns;
  const int used_threads = static_cast<int>(std::min<int64_t>(threads, items));
  std::vector<float> weights(plane_taps * k[3]);
  for (int64_t t = 0; t < plane_taps; ++t)
    for (int64_t j3 = 0; j3 < k[3]; ++j3)
      weights[t * k[3] + j3] = p.taps[j3 * plane_taps + t];
  const RingColumnFn ring = kernels.ring[k[3]];
  const int64_t x_count = n_out[0] + k[0] - 1;
  struct Window {
    std::vector<float> rows;
    std::vector<int64_t> tap_offsets, row_offsets;
  };
  std::vector<Window> windows(used_threads);
  // The input rows a window pads lie a plane apart along the last axis, past the hardware
  // prefetchers' reach: each is requested a few positions before it is padded.
  const bool contiguous_x = g.in_stride[0] == 1;
  const auto prefetch_row = [&](int64_t q1, int64_t q2, int64_t q3) {
    const int64_t i1 = detail::boundary_index(q1 + g.offset[1], g.n_in[1], p.boundary);
    const int64_t i2 = detail::boundary_index(q2 + g.offset[2], g.n_in[2], p.boundary);
    const int64_t i3 = detail::boundary_index(q3 + g.offset[3], g.n_in[3], p.boundary);
    if (!contiguous_x || i1 < 0 || i2 < 0 || i3 < 0)
      return;
    const float* row =
        p.input.data + i1 * g.in_stride[1] + i2 * g.in_stride[2] + i3 * g.in_stride[3];
    for (int64_t x = 0; x < g.n_in[0]; x += 64 / int64_t{sizeof(float)})
      __builtin_prefetch(row + x);
  };
  core::parallel_for(
      used_threads, items,
      [&](int64_t begin, int64_t end, int worker) {
        Window& w = windows[worker];
        w.rows.resize((column + k[3] - 1) * plane);
        w.tap_offsets.resize(plane_taps);
        w.row_offsets.resize(k[2] * k[1]);
        for (int64_t item = begin; item < end; ++item) {
          const int64_t r = item % runs, m2 = (item / runs) % n_out[2],
                        c = item / (runs * n_out[2]);
          const int64_t first = c * column, outputs = std::min(column, n_out[3] - first);
          const int64_t positions = outputs + k[3] - 1;
          for (int64_t m1 = r * run; m1 < std::min(n_out[1], (r + 1) * run); ++m1) {
            for (int64_t i1 = m1 == r * run ? m1 : m1 + k[1] - 1; i1 < m1 + k[1]; ++i1)
              for (int64_t q = 0; q < positions; ++q)
                for (int64_t j2 = 0; j2 < k[2]; ++j2) {
                  prefetch_row(i1, m2 + j2, first + q + kPadPrefetchPositions);
                  core::pad_row(p.input.data, g.n_in, g.in_stride, g.offset, i1, m2 + j2, first + q,
                                x_count, g.row_length, p.boundary,
                                w.rows.data() + q * plane + (j2 * k[1] + i1 % k[1]) * g.row_length);
                }
            int64_t t = 0;
            for (int64_t j2 = 0; j2 < k[2]; ++j2)
              for (int64_t j1 = 0; j1 < k[1]; ++j1) {
                const int64_t row = (j2 * k[1] + (m1 + j1) % k[1]) * g.row_length;
                w.row_offsets[j2 * k[1] + j1] = row;
                for (int64_t jx = 0; jx < k[0]; ++jx)
                  w.tap_offsets[t++] = row + jx;
              }
            RingColumn a;
            a.planes = w.rows.data();
            a.plane_stride = plane;
            a.tap_offsets = w.tap_offsets.data();
            a.taps = plane_taps;
            a.row_offsets = w.row_offsets.data();
            a.rows = k[2] * k[1];
            a.weights = weights.data();
            a.nx = n_out[0];
            a.outputs = outputs;
            a.dst = p.output.data + m1 * out_stride[1] + m2 * out_stride[2] + first * out_stride[3];
            a.dst_stride = out_stride[3];
            ring(a);
          }
        }
      },
      core::ProgressSpan{&options.progress, 0, 1});
  report.threads = used_threads;
  report.notes.push_back(std::string("CPU kernels: ") + kernels.isa + " (" +
                         std::to_string(kernels.lanes) + " floats per vector, strips of " +
                         std::to_string(kernels.ring_strip_vectors[k[3]]) + " vectors, a ring of " +
                         std::to_string(k[3]) + " along the last axis, columns of " +
                         std::to_string(column) + ", runs of " + std::to_string(run) + ")");
  report.slabs = 1;
  report.notes.push_back(
      "boundary-padded rows per thread: " + std::to_string((column + k[3] - 1) * plane * 4 / 1024) +
      " KiB, padded by the thread that reads them");
}

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

double dense_scratch_bytes(int dims, const Index& output_extent, const Index& filter_extent,
                           const Options& options) {
  const Tuning tuning;
  const int threads = threads_for_work(
      options.threads,
      static_cast<double>(detail::voxels_of(dims, output_extent)) *
          static_cast<double>(DenseFilter{dims, filter_extent, nullptr}.tap_count()),
      tuning);
  Geometry g;
  g.n_out = core::to_canonical(dims, output_extent, 1);
  g.k = core::to_canonical(dims, filter_extent, 1);
  g.row_length = padded_row_length(g.n_out[0], g.k[0]);
  const Index &n_out = g.n_out, &k = g.k;
  const BlockingChoice blocking = choose_blocking(options.expert.outputs_per_thread,
                                                  {k[3], n_out[3], n_out[0], k[2] * k[1] * k[0],
                                                   true, ring_split_for(g, threads, tuning).column},
                                                  select_kernel_set());
  const double row_bytes = static_cast<double>(g.row_length) * sizeof(float);
  if (blocking.ring) {
    const int64_t column = ring_split_for(g, threads, tuning).column;
    return static_cast<double>(threads) * static_cast<double>((column + k[3] - 1) * k[2] * k[1]) *
           row_bytes;
  }
  const SlabPlan plan = plan_slabs(n_out, k, g.row_length, blocking.factor, tuning.pad_limit_bytes);
  return static_cast<double>((n_out[1] + k[1] - 1) * (n_out[2] + k[2] - 1) *
                             (plan.slab_blocks * blocking.factor + k[3] - 1)) *
         row_bytes;
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
  const Geometry g = geometry_of(p);
  const bool direct_store = g.out_stride[0] == 1 || g.n_out[0] == 1;
  const BlockingChoice blocking =
      choose_blocking(options.expert.outputs_per_thread,
                      {g.k[3], g.n_out[3], g.n_out[0], g.k[2] * g.k[1] * g.k[0], direct_store,
                       ring_split_for(g, threads, tuning).column},
                      kernels);
  if (blocking.ring)
    run_rings(p, g, kernels, threads, options, tuning, report);
  else
    run_blocks(p, g, kernels, blocking, threads, options, tuning, report);
  report.outputs_per_thread = blocking.factor;
  report.outputs_per_thread_reason = blocking.reason;
  report.device_name = cpu_description();
  report.seconds_compute = detail::seconds_since(t0);
}

}  // namespace ndconv::cpu_backend
