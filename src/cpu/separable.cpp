// The separable driver: one 1D pass per filtered axis, x first.
//  - The x pass gathers each input row with the boundary condition into a per-thread padded line
//    (any stride, so it also serves as the staging copy of a strided input) and runs the row
//    kernel with B = 1, the taps being the line shifted by 0..k-1: strips of W vectors
//    accumulate in registers while the loop walks the taps. When x is not filtered the pass runs
//    with the single tap 1, which is the copy the other passes need anyway.
//  - A pass along another axis a reads rows of the previous result (x contiguous, rows padded
//    to kMaxLanes and zero-filled, so every load is in bounds) and computes B outputs along a
//    per block, each input row loaded once for all B of them; rows outside the volume along a
//    come from boundary_index (or a zero row), so no padded copy is made.
// Intermediate results keep the full input extent along the axes not yet filtered, so that the
// boundary condition of a later pass extends the partially filtered volume exactly as it would
// extend the input (the extension is separable per axis).
#include <algorithm>
#include <chrono>
#include <vector>

#include "cpu/blocking_rule.h"
#include "cpu/tuning.h"
#include "core/seconds_since.h"
#include "cpu/cpu_info.h"
#include "cpu/isa_dispatch.h"
#include "core/padding.h"
#include "core/parallel_for.h"
#include "cpu/cpu_backend.h"
#include "core/first_touch.h"
#include "ndconv/stored.h"

namespace ndconv::cpu_backend {

using namespace ndconv::cpu;

namespace {

// Floats of one slab's intermediate (16 MiB): a 160^3 echo frame, a few frames of a 2D series.
constexpr int64_t kSlabFloats = int64_t{4} << 20;

// A volume the passes read or write: volume-order extents and strides.
struct Grid {
  float* data = nullptr;
  Index extent{1, 1, 1, 1};
  Index stride{0, 0, 0, 0};
  float* row(const Index& i) const {
    return data + i[1] * stride[1] + i[2] * stride[2] + i[3] * stride[3];
  }
};

// Contiguous rows padded to kMaxLanes, so that the kernels may read whole vectors.
Grid intermediate(int dims, const Index& extent, std::vector<float>& storage, int threads) {
  Grid g;
  g.extent = extent;
  int64_t s = 1;
  for (int a = 0; a < kMaxDims; ++a) {
    g.stride[a] = s;
    s *= a == 0 ? round_up(extent[0], kMaxLanes) : (a < dims ? extent[a] : 1);
  }
  if (static_cast<int64_t>(storage.size()) < s)
    // zero tails: whatever the kernels read past a row is finite
    ndconv::detail::assign_touched(storage, static_cast<size_t>(s), 0.0f, threads);
  g.data = storage.data();
  return g;
}

struct PassContext {
  int dims = 0;
  int threads = 1;
  const KernelSet* kernels = nullptr;
  Boundary boundary = Boundary::Zero;
  const Options* options = nullptr;
};

// Output row of item `row` (x excluded) in a grid with extents `extent` (axes 1..3).
Index row_index(int64_t row, const Index& extent) {
  Index i{0, 0, 0, 0};
  for (int a = 1; a < kMaxDims; ++a) {
    i[a] = row % extent[a];
    row /= extent[a];
  }
  return i;
}

void scatter(const float* from, int64_t n, float* to, int64_t stride) {
  for (int64_t x = 0; x < n; ++x)
    to[x * stride] = from[x];
}

void pass_x(const PassContext& c, const Grid& src, const Grid& dst, const std::vector<float>& taps,
            int64_t offset, const core::ProgressSpan& progress) {
  const int64_t k = static_cast<int64_t>(taps.size());
  const int64_t nx = dst.extent[0];
  const int64_t line_length = padded_row_length(nx, k);
  const int64_t out_length = round_up(nx, kMaxLanes);
  const int64_t rows = dst.extent[1] * dst.extent[2] * dst.extent[3];
  const bool direct_store = dst.stride[0] == 1 || nx == 1;
  const RowBlockFn kernel = c.kernels->block[0];
  const std::vector<TapSegment> segments = block_segments(1, 1, k);
  const int threads = static_cast<int>(std::min<int64_t>(c.threads, rows));
  std::vector<std::vector<float>> lines(threads), outs(threads);
  std::vector<std::vector<const float*>> source_lists(threads);
  core::parallel_for(
      threads, rows,
      [&](int64_t begin, int64_t end, int worker) {
        std::vector<float>& line = lines[worker];
        std::vector<float>& out = outs[worker];
        std::vector<const float*>& sources = source_lists[worker];
        sources.resize(k);
        line.resize(line_length);
        out.resize(out_length);
        for (int64_t r = begin; r < end; ++r) {
          const Index i = row_index(r, dst.extent);
          core::gather_line(src.row(i), src.stride[0], src.extent[0], offset, nx + k - 1,
                            line_length, c.boundary, line.data());
          for (int64_t j = 0; j < k; ++j)
            sources[j] = line.data() + j;
          float* target = direct_store ? dst.row(i) : out.data();
          RowBlock block;
          block.sources = sources.data();
          block.segments = segments.data();
          block.segment_count = static_cast<int>(segments.size());
          block.weights = taps.data();
          block.nx = nx;
          block.dst = &target;
          kernel(block);
          if (!direct_store)
            scatter(out.data(), nx, dst.row(i), dst.stride[0]);
        }
      },
      progress);
}

void pass_axis(const PassContext& c, int axis, const Grid& src, const Grid& dst,
               const std::vector<float>& taps, int64_t offset, const BlockingChoice& blocking,
               const core::ProgressSpan& progress) {
  const int64_t k = static_cast<int64_t>(taps.size());
  const int factor = blocking.factor;
  const int64_t nx = dst.extent[0];
  const int64_t n_out = dst.extent[axis];
  const int64_t n_in = src.extent[axis];
  const int64_t blocks = (n_out + factor - 1) / factor;
  // Weight table of a block: row j' feeds output b with tap j' - b.
  const int64_t row_count = k + factor - 1;
  std::vector<float> weights(row_count * factor, 0.0f);
  for (int64_t r = 0; r < row_count; ++r)
    for (int b = 0; b < factor; ++b)
      if (r - b >= 0 && r - b < k)
        weights[r * factor + b] = taps[r - b];
  const std::vector<float> zero_row(round_up(nx, kMaxLanes), 0.0f);
  const int64_t out_length = round_up(nx, kMaxLanes);
  const bool direct_store = dst.stride[0] == 1 || nx == 1;
  // Items: the other axes' coordinates (outer) x blocks along `axis` (inner).
  Index others = dst.extent;
  others[0] = 1;
  others[axis] = 1;
  const int64_t lines = others[1] * others[2] * others[3];
  const int64_t items = lines * blocks;
  const RowBlockFn kernel = c.kernels->block[blocking.index];
  const std::vector<TapSegment> segments = block_segments(k, factor, 1);
  const int threads = static_cast<int>(std::min<int64_t>(c.threads, items));
  struct Scratch {
    std::vector<const float*> rows;
    std::vector<float> out;
  };
  std::vector<Scratch> scratch(threads);
  core::parallel_for(
      threads, items,
      [&](int64_t begin, int64_t end, int worker) {
        Scratch& s = scratch[worker];
        s.rows.resize(row_count);
        s.out.resize(factor * out_length);
        float* dst_rows[8];
        for (int64_t item = begin; item < end; ++item) {
          const int64_t block = item % blocks;
          Index i = row_index(item / blocks, others);
          const int64_t first = block * factor;
          for (int64_t r = 0; r < row_count; ++r) {
            const int64_t j = detail::boundary_index(first + r + offset, n_in, c.boundary);
            if (j < 0) {
              s.rows[r] = zero_row.data();
            } else {
              i[axis] = j;
              s.rows[r] = src.row(i);
            }
          }
          for (int b = 0; b < factor; ++b) {
            i[axis] = first + b;
            dst_rows[b] =
                direct_store && first + b < n_out ? dst.row(i) : s.out.data() + b * out_length;
          }
          RowBlock args;
          args.sources = s.rows.data();
          args.segments = segments.data();
          args.segment_count = static_cast<int>(segments.size());
          args.weights = weights.data();
          args.nx = nx;
          args.dst = dst_rows;
          kernel(args);
          if (!direct_store) {
            for (int b = 0; b < factor && first + b < n_out; ++b) {
              i[axis] = first + b;
              scatter(dst_rows[b], nx, dst.row(i), dst.stride[0]);
            }
          }
        }
      },
      progress);
}

// The passes over `p`, whose input is `stored` converted to float when given (p.input then gives
// only the geometry): slab by slab, so that only one slab of it is ever converted at a time.
void run_passes(const detail::SeparableProblem& p, const StoredVolumeView* stored,
                const Options& options, RunReport& report, SeparableScratch& scratch) {
  const auto t0 = std::chrono::steady_clock::now();
  PassContext c;
  c.dims = p.input.dims;
  c.kernels = &select_kernel_set();
  double multiply_adds = 0;
  for (int a = 0; a < p.input.dims; ++a)
    multiply_adds += static_cast<double>(p.taps[a].size());
  c.threads = threads_for_work(options.threads,
                               multiply_adds * static_cast<double>(p.output.voxel_count()));
  c.boundary = p.boundary;
  c.options = &options;

  // Passes: x (the identity when x is not filtered), then every other filtered axis.
  std::vector<int> axes{0};
  for (int a = 1; a < c.dims; ++a)
    if (!p.taps[a].empty())
      axes.push_back(a);
  const std::vector<float> identity{1.0f};
  auto taps_of = [&](int a) -> const std::vector<float>& {
    return p.taps[a].empty() ? identity : p.taps[a];
  };
  double total_work = 0;
  for (int a : axes)
    total_work += static_cast<double>(taps_of(a).size() + 1);

  // A last axis without taps (the frames of a 4D series, the slices of a stack) is cut into slabs
  // of whole frames that run every pass in turn: the intermediates then hold one slab, allocated
  // and first touched once and mostly in the cache, instead of the whole volume each.
  const int last = c.dims - 1;
  const int64_t frames = p.input.extent[last];
  int64_t slab = frames;
  const bool in_slabs = last > 0 && p.taps[last].empty() && p.output.extent[last] == frames;
  if (in_slabs) {
    int64_t frame_floats = round_up(std::max(p.input.extent[0], p.output.extent[0]), kMaxLanes);
    for (int a = 1; a < last; ++a)
      frame_floats *= std::max(p.input.extent[a], p.output.extent[a]);
    slab = std::clamp<int64_t>(kSlabFloats / frame_floats, 1, frames);
  }

  // Reused intermediates keep whatever earlier slabs left past their rows' ends: values the kernels
  // wrote there from zero tails, so finite too.
  std::vector<float>* buffers = scratch.buffers;
  std::vector<float> converted;
  std::string reasons;
  int reported_factor = 1;
  for (int64_t first = 0; first < frames; first += slab) {
    const int64_t count = std::min(slab, frames - first);
    Grid output;
    output.data = p.output.data + first * p.output.stride[last];
    output.extent = p.output.extent;
    if (in_slabs)
      output.extent[last] = count;
    output.stride = p.output.stride;
    Grid current;
    // read only: sources are never written
    current.data = const_cast<float*>(p.input.data) + first * p.input.stride[last];
    current.extent = p.input.extent;
    if (in_slabs)
      current.extent[last] = count;
    current.stride = p.input.stride;
    if (stored != nullptr) {
      StoredVolumeView slab_values = *stored;
      slab_values.data +=
          first * stored->stride[last] * static_cast<int64_t>(scalar_size(stored->type));
      slab_values.extent = current.extent;
      int64_t values = 1;
      for (int a = 0; a < c.dims; ++a)
        values *= current.extent[a];
      if (static_cast<int64_t>(converted.size()) < values)
        ndconv::detail::assign_touched(converted, static_cast<size_t>(values), 0.0f, c.threads);
      const VolumeView slab_floats = make_view(converted.data(), c.dims, current.extent);
      convert_to_float(slab_values, slab_floats, c.threads);
      current.data = slab_floats.data;
      current.stride = slab_floats.stride;
    }
    const double slab_share = static_cast<double>(count) / static_cast<double>(frames);
    double done = static_cast<double>(first) / static_cast<double>(frames);
    for (size_t pass = 0; pass < axes.size(); ++pass) {
      const int a = axes[pass];
      const std::vector<float>& taps = taps_of(a);
      Index extent = current.extent;
      extent[a] = output.extent[a];
      const Grid next = pass + 1 == axes.size()
                            ? output
                            : intermediate(c.dims, extent, buffers[pass % 2], c.threads);
      const double share = slab_share * static_cast<double>(taps.size() + 1) / total_work;
      const core::ProgressSpan progress{&options.progress, done, share};
      if (a == 0) {
        pass_x(c, current, next, taps, p.offset[0], progress);
      } else {
        const BlockingChoice blocking =
            choose_blocking(options.expert.outputs_per_thread,
                            {static_cast<int64_t>(taps.size()), extent[a], extent[0]}, *c.kernels);
        pass_axis(c, a, current, next, taps, p.offset[a], blocking, progress);
        reported_factor = blocking.factor;
        if (first == 0)
          reasons += std::string(reasons.empty() ? "" : "; ") + "axis " + std::to_string(a) +
                     ": B=" + std::to_string(blocking.factor) + " " + blocking.reason;
      }
      done += share;
      current = next;
    }
  }
  if (axes.size() == 1) {
    // Only the x pass ran; still check the request so that a bad value never passes silently.
    choose_blocking(options.expert.outputs_per_thread, {}, *c.kernels);
    reasons = "only the x pass ran (B does not apply along x)";
  }

  report.threads = c.threads;
  report.slabs = static_cast<int>((frames + slab - 1) / slab);
  report.outputs_per_thread = reported_factor;
  report.outputs_per_thread_reason = reasons;
  report.device_name = cpu_description();
  report.notes.push_back(std::string("CPU kernels: ") + c.kernels->isa + " (" +
                         std::to_string(c.kernels->lanes) + " floats per vector), " +
                         std::to_string(axes.size()) + " 1D passes");
  report.seconds_compute = detail::seconds_since(t0);
}

}  // namespace

void run_separable(const detail::SeparableProblem& p, const Options& options, RunReport& report) {
  SeparableScratch scratch;
  run_passes(p, nullptr, options, report, scratch);
}

void run_separable_in(SeparableScratch& scratch, const detail::SeparableProblem& p,
                      const Options& options, RunReport& report) {
  run_passes(p, nullptr, options, report, scratch);
}

void run_separable_stored(const detail::SeparableProblem& p, const StoredVolumeView& input,
                          const Options& options, RunReport& report) {
  SeparableScratch scratch;
  run_passes(p, &input, options, report, scratch);
  report.notes.push_back(std::string("input converted from ") + to_string(input.type) +
                         " to float32 on the CPU, slab by slab");
}

}  // namespace ndconv::cpu_backend
