#include "perf/tensor_dense_rows.h"

#include <cstdio>
#include <ostream>
#include <random>
#include <string>

#include "cuda/launch.h"
#include "cuda/tensor_dense/tensor_dense.h"
#include "perf/bank_adaptive_row.h"
#include "perf/check.h"

namespace ndconv::perf {

namespace {

struct TensorDenseSpec {
  const char* name;
  int size;
};
const TensorDenseSpec kSpecs[] = {{"dense3d_7_tc", 7}, {"dense3d_11_tc", 11}};
constexpr double kTarget = 150;
constexpr const char* kVolume = "256x256x256";

}  // namespace

std::vector<Workload> tensor_dense_workloads() {
  std::vector<Workload> list;
  for (const TensorDenseSpec& s : kSpecs) {
    Workload w;
    w.name = s.name;
    w.kind = Workload::Kind::GpuTensorDense;
    w.volume = parse_shape(kVolume, "volume");
    w.filter = cube(3, s.size);
    w.target = kTarget;
    w.target_text = ">= 150% of FMA peak";
    w.description = std::string("3D ") + kVolume + " 8-bit (uniform 0..255), one dense " +
                    std::to_string(s.size) + "^3 filter on the tensor cores (mma.sync u8 x s8, 4 " +
                    "weight digits), against the FP32 dense kernel on the same data";
    list.push_back(w);
  }
  return list;
}

Json tensor_dense_row(const Workload& w, const BenchConfig& cfg, int device, const gpu::Ceilings& c,
                      gpu::Timer& timer, uint64_t seed, int& failures) {
  using namespace cuda_tensor_dense;
  const int size = static_cast<int>(w.filter.extent[0]);
  const std::string unfit =
      tensor_dense_unfit(3, w.filter.extent, device, cuda_backend::Tuning{}.dense_tensor_cores);
  if (!unfit.empty()) {
    ++failures;
    return {{"error", "the tensor cores cannot take the row: " + unfit}};
  }
  // The case's random taps; its input replaced by uniform bytes.
  DenseCase dc = make_dense_case(w.volume, w.filter, Boundary::Zero, seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> bytes(dc.input.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(byte(rng));
    dc.input[i] = bytes[i];
  }
  const int64_t voxels = w.volume.count();
  const int64_t outputs[3] = {w.volume.extent[0], w.volume.extent[1], w.volume.extent[2]};
  const TensorDenseGeometry g = tensor_dense_geometry(size, outputs);
  const int h = size / 2;
  const std::vector<uint8_t> padded =
      tensor_dense_padded(g, make_stored_view(bytes.data(), ScalarType::UInt8, 3, w.volume.extent),
                          Index{-h, -h, -h, 0}, Boundary::Zero, 0);
  const TensorDenseWeights weights = tensor_dense_weights(size, dc.taps.data());
  const int planes =
      tensor_dense_planes_per_block(g, device, cuda_backend::Tuning{}.dense_tensor_cores);
  // gpu::Buffer counts floats.
  gpu::Buffer d_bytes((padded.size() + 3) / 4), d_fragments(weights.fragments.size()),
      d_out(static_cast<std::size_t>(voxels)), d_in(static_cast<std::size_t>(voxels));
  std::vector<uint8_t> padded_words(d_bytes.size() * 4, 0);
  std::copy(padded.begin(), padded.end(), padded_words.begin());
  d_bytes.upload(reinterpret_cast<const float*>(padded_words.data()), d_bytes.size());
  d_fragments.upload(reinterpret_cast<const float*>(weights.fragments.data()),
                     weights.fragments.size());
  d_in.upload(dc.input.data(), d_in.size());
  const CheckPlan plan = cpu_check(dc, cfg.check_budget_fmas);
  auto validate = [&](const std::function<void(void*)>& work) {
    d_out.poison();
    work(timer.stream());
    timer.synchronize();
    std::vector<float> host(d_out.size());
    d_out.download(host.data(), host.size());
    return window_error(plan, w.volume, host.data());
  };
  const auto tensor_cores = [&](void* stream) {
    launch_tensor_dense(g, reinterpret_cast<const uint8_t*>(d_bytes.data()),
                        reinterpret_cast<const int32_t*>(d_fragments.data()), weights.scale,
                        d_out.data(), planes, stream);
  };
  const detail::CorrelationProblem p = dense_problem(dc, d_in.data(), d_out.data());
  cuda_backend::LaunchPlan fp32_plan;
  const auto fp32 = [&](void* stream) {
    fp32_plan = cuda_backend::launch_dense_device(p, 0, device, stream,
                                                  cuda_backend::direct_kernels_tuning());
  };
  const double fmas = dc.fmas();
  Json row = {{"filters", 1},
              {"filter", format_shape(w.filter)},
              {"taps", w.filter.count()},
              {"useful_fmas", fmas},
              {"checked_fraction", plan.covered_fraction}};
  const double err = validate(tensor_cores), fp32_err = validate(fp32);
  row["rel_l2_error"] = err;
  row["fp32_rel_l2_error"] = fp32_err;
  if (!(err <= cfg.tolerance) || !(fp32_err <= cfg.tolerance)) {
    ++failures;
    row["error"] = "validation failed";
    return row;
  }
  const Timing t = timer.time(tensor_cores, cfg.warmup, cfg.repetitions, cfg.flush_l2);
  const Timing tf = timer.time(fp32, cfg.warmup, cfg.repetitions, cfg.flush_l2);
  const int k = size == 7 ? TensorDenseShape<7>::kPlaneK : TensorDenseShape<11>::kPlaneK;
  // What the MMAs execute: per output, T tap planes of K, 4 digits (the extra planes of each
  // block's first and last T - 1 not counted).
  const double mma_ops = 2.0 * static_cast<double>(voxels) * size * k * 4;
  const double pct = pct_of_peak(fmas, t.median_ms, c);
  row.update({{"device_time", timing_json(t)},
              {"voxels_per_s", static_cast<double>(voxels) / (t.median_ms * 1e-3)},
              {"gflops", 2.0 * fmas / (t.median_ms * 1e-3) * 1e-9},
              {"pct_fma_peak", pct},
              {"compute_floor_ms", 2.0 * fmas / c.fma_flops * 1e3},
              {"int8_mma_tops", mma_ops / (t.median_ms * 1e-3) * 1e-12},
              {"fp32_kernel",
               {{"device_time", timing_json(tf)},
                {"pct_fma_peak", pct_of_peak(fmas, tf.median_ms, c)},
                {"describe", fp32_plan.describe()}}},
              {"speedup_vs_fp32", tf.median_ms / t.median_ms},
              {"target_met", pct >= w.target},
              {"plan", {{"describe", tensor_dense_note(g, planes)}}}});
  return row;
}

void print_tensor_dense_rows(std::ostream& out, const Json& rows) {
  bool header = false;
  char line[320];
  for (const Json& r : rows) {
    const std::string name = text(r, "workload");
    if (name.size() < 3 || name.compare(name.size() - 3, 3, "_tc") != 0 ||
        name.rfind("dense", 0) != 0)
      continue;
    if (!header) {
      out << "dense filters on the tensor cores:\n";
      header = true;
    }
    if (r.contains("error")) {
      out << "  " << name << ": " << text(r, "error") << "\n";
      continue;
    }
    std::snprintf(line, sizeof line,
                  "  %-14s tensor cores %.3f ms (%.1f%% FMA peak, %.0f int8 TOPS) vs FP32 kernel "
                  "%.3f ms (%.1f%%): %.2fx\n",
                  name.c_str(), number(r["device_time"], "median_ms"), number(r, "pct_fma_peak"),
                  number(r, "int8_mma_tops"), number(r["fp32_kernel"]["device_time"], "median_ms"),
                  number(r["fp32_kernel"], "pct_fma_peak"), number(r, "speedup_vs_fp32"));
    out << line;
  }
}

}  // namespace ndconv::perf
