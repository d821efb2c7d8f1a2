#include "perf/median_rows.h"

#include <algorithm>
#include <limits>
#include <string>

#include "ndconv/errors.h"
#include "ndconv/filters.h"
#include "cuda/median/median.h"

namespace ndconv::perf {

namespace {

constexpr Boundary kMedianBoundary = Boundary::Replicate;

Index radius_of(const Workload& w) {
  Index r{0, 0, 0, 0};
  for (int a = 0; a < w.volume.dims; ++a)
    r[a] = w.median_radius;
  return r;
}

int64_t window_voxels(int dims, const Index& radius) {
  int64_t n = 1;
  for (int a = 0; a < dims; ++a)
    n *= 2 * radius[a] + 1;
  return n;
}

void launch_median(const float* input, float* output, const Shape& volume, const Index& radius,
                   void* stream) {
  cuda_median::launch_device(input, output, volume.dims, volume.extent, radius, kMedianBoundary,
                             0.0f, stream);
}

// Copies the box [lo, lo + box) of `from` (extents `from_extent`) into `to` at `to_start`
// (extents `to_extent`), one x row at a time.
void copy_box(const float* from, const Index& from_extent, const Index& lo, const Shape& box,
              float* to, const Index& to_extent, const Index& to_start) {
  for (int64_t t = 0; t < box.extent[3]; ++t)
    for (int64_t z = 0; z < box.extent[2]; ++z)
      for (int64_t y = 0; y < box.extent[1]; ++y) {
        const int64_t src =
            lo[0] + from_extent[0] *
                        (lo[1] + y + from_extent[1] * (lo[2] + z + from_extent[2] * (lo[3] + t)));
        const int64_t dst =
            to_start[0] +
            to_extent[0] * (to_start[1] + y +
                            to_extent[1] * (to_start[2] + z + to_extent[2] * (to_start[3] + t)));
        std::copy(from + src, from + src + box.extent[0], to + dst);
      }
}

}  // namespace

void add_median_workloads(std::vector<Workload>& list) {
  auto median = [&](const char* name, const char* volume, int64_t radius) {
    Workload w;
    w.name = name;
    w.kind = Workload::Kind::GpuMedian;
    w.volume = parse_shape(volume, "volume");
    w.median_radius = radius;
    w.target = -1;
    w.target_text = "none (against CuPy's median_filter: scripts/peers.py)";
    const int64_t side = 2 * radius + 1;
    std::string window = std::to_string(side);
    for (int a = 1; a < w.volume.dims; ++a)
      window += "x" + std::to_string(side);
    w.description = std::to_string(w.volume.dims) + "D " + volume + ", median " + window +
                    " (radius " + std::to_string(radius) + "), replicate boundary";
    list.push_back(w);
  };
  median("median3d_r1", "256x256x256", 1);
  median("median3d_r3", "256x256x256", 3);
  median("median2d_r3", "4096x4096", 3);
}

CheckPlan median_check(const Shape& volume, const std::vector<float>& input, const Index& radius,
                       Boundary boundary, double budget) {
  if (boundary == Boundary::Periodic)
    throw InvalidArgument("median_check: a periodic boundary needs the whole volume");
  CheckPlan plan;
  plan.windows = choose_windows(volume, static_cast<double>(window_voxels(volume.dims, radius)),
                                budget, {true, true, true, true});
  Options cpu;
  cpu.backend = Backend::Cpu;
  cpu.boundary = boundary;
  double covered = 0;
  for (CheckWindow& w : plan.windows) {
    // The window's box widened by the radius, cut at the volume's ends.
    Shape halo = volume;
    Index lo{0, 0, 0, 0}, inner{0, 0, 0, 0};
    for (int a = 0; a < volume.dims; ++a) {
      lo[a] = std::max<int64_t>(0, w.start[a] - radius[a]);
      const int64_t hi = std::min(volume.extent[a], w.start[a] + w.box.extent[a] + radius[a]);
      halo.extent[a] = hi - lo[a];
      inner[a] = w.start[a] - lo[a];
    }
    std::vector<float> part(static_cast<std::size_t>(halo.count()));
    copy_box(input.data(), volume.extent, lo, halo, part.data(), halo.extent, Index{0, 0, 0, 0});
    std::vector<float> filtered(part.size(), std::numeric_limits<float>::quiet_NaN());
    median_filter(make_view(static_cast<const float*>(part.data()), volume.dims, halo.extent),
                  make_view(filtered.data(), volume.dims, halo.extent), radius, cpu);
    w.expected.assign(static_cast<std::size_t>(w.box.count()), 0.0f);
    copy_box(filtered.data(), halo.extent, inner, w.box, w.expected.data(), w.box.extent,
             Index{0, 0, 0, 0});
    covered += static_cast<double>(w.box.count());
  }
  plan.covered_fraction = std::min(1.0, covered / static_cast<double>(volume.count()));
  return plan;
}

Json median_gpu_row(const Workload& w, const BenchConfig& cfg, int device, gpu::Timer& timer,
                    const gpu::Ceilings& ceilings, uint64_t seed, int& failures) {
  const Index radius = radius_of(w);
  const int64_t window = window_voxels(w.volume.dims, radius);
  const RandomInput c = make_random_input(w.volume, kMedianBoundary, seed);
  const std::size_t n = static_cast<std::size_t>(w.volume.count());
  const double voxels = static_cast<double>(n);
  std::string filter = "median " + std::to_string(2 * w.median_radius + 1);
  for (int a = 1; a < w.volume.dims; ++a)
    filter += "x" + std::to_string(2 * w.median_radius + 1);
  Json row = {{"filter", filter}, {"window_voxels", window}, {"boundary", to_string(c.boundary)}};

  const CheckPlan check =
      median_check(w.volume, c.input, radius, c.boundary, cfg.check_budget_fmas);
  gpu::Buffer din(n), dout(n);
  din.upload(c.input.data(), n);
  const auto launch = [&](void* stream) {
    launch_median(din.data(), dout.data(), w.volume, radius, stream);
  };
  dout.poison();
  launch(timer.stream());
  timer.synchronize();
  std::vector<float> host(n);
  dout.download(host.data(), n);
  const double err = window_error(check, w.volume, host);
  row.update({{"rel_l2_error", err}, {"checked_fraction", check.covered_fraction}});
  if (!(err <= cfg.tolerance)) {
    ++failures;
    row["error"] = "validation failed";
    return row;
  }
  const Timing t = timer.time(launch, cfg.warmup, cfg.repetitions, cfg.flush_l2);
  const double s = t.median_ms * 1e-3;
  const double floor_s = 2.0 * voxels * sizeof(float) / ceilings.copy_bytes_per_s;
  row.update({{"device_time", timing_json(t)},
              {"voxels_per_s", voxels / s},
              {"memory_floor_ms", floor_s * 1e3},
              {"floor_ratio", s / floor_s},
              {"target_met", nullptr},
              {"plan",
               {{"kernel", "median_kernel"},
                {"ko", 8},
                {"describe",
                 "a block's input box staged in shared memory as keys; each thread "
                 "selects 8 outputs along the last axis by counting passes over their " +
                     std::to_string(window) + "-voxel windows"}}}});

  // The whole public call on host buffers: upload, selection, download.
  std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
  Options o = run_options(Backend::Cuda, Operation::Correlation, c.boundary);
  o.cuda_device = device;
  RunReport report;
  const Timing call = time_host(
      [&] {
        report = median_filter(make_view(c.input.data(), w.volume.dims, w.volume.extent),
                               make_view(out.data(), w.volume.dims, w.volume.extent), radius, o);
      },
      1, cfg.call_repetitions);
  const double call_err = window_error(check, w.volume, out);
  if (!(call_err <= cfg.tolerance))
    ++failures;
  row["call_time"] = call_timing_json(call, call_err, report);
  return row;
}

}  // namespace ndconv::perf
