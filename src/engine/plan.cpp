// The public plan (ndconv/plan.h): the request checked as the filter call checks it, the backend
// from the same describers and choice as the call (backend_work.h), and what that backend will run.
#include "ndconv/plan.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/enum_names.h"
#include "core/parallel_for.h"
#include "core/problem.h"
#include "cpu/cpu_backend.h"
#include "cuda/tensor_dense/tensor_dense_layout.h"
#include "cuda/tuning.h"
#include "engine/backend_choice.h"
#include "engine/backend_work.h"
#include "engine/filter_checks.h"
#include "ndconv/engine.h"
#include "ndconv/filters.h"

namespace ndconv {

const char* device_grammar() {
  return "auto, cpu, cuda, cuda:N, cuda:N,M,... or cuda:all";
}

DeviceWish parse_device(const std::string& text) {
  DeviceWish wish;
  if (text == "auto")
    return wish;
  if (text == "cpu") {
    wish.backend = Backend::Cpu;
    return wish;
  }
  wish.backend = Backend::Cuda;
  if (text == "cuda")
    return wish;
  const auto refuse = [&text] {
    return InvalidArgument("the device is '" + text + "'; it must be " + device_grammar());
  };
  if (text.rfind("cuda:", 0) != 0)
    throw refuse();
  const std::string list = text.substr(5);
  if (list == "all") {
    wish.all_cuda_devices = true;
    return wish;
  }
  std::vector<int> devices;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string digits =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (digits.empty() || digits.size() > 4 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      throw refuse();
    const int device = std::stoi(digits);
    if (std::find(devices.begin(), devices.end(), device) != devices.end())
      throw InvalidArgument("the device list '" + text + "' names GPU " + digits + " twice");
    devices.push_back(device);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  wish.cuda_device = devices.front();
  if (devices.size() > 1)
    wish.cuda_devices = devices;
  return wish;
}

std::vector<int> cuda_devices_of(const DeviceWish& wish) {
  if (wish.backend != Backend::Cuda)
    return {};
  const CudaStatus status = detail::cached_probe();  // starts CUDA on no device
  std::vector<int> seen;
  for (const DeviceInfo& d : status.devices)
    seen.push_back(d.index);
  if (wish.all_cuda_devices) {
    if (!status.usable || seen.empty())
      throw InvalidArgument("cuda:all: no usable GPU (" + status.reason + ")");
    return seen;
  }
  std::vector<int> wanted =
      wish.cuda_devices.empty() ? std::vector<int>{wish.cuda_device} : wish.cuda_devices;
  for (int device : wanted) {
    if (std::find(seen.begin(), seen.end(), device) == seen.end()) {
      throw InvalidArgument(
          "GPU " + std::to_string(device) + " is not there (" + std::to_string(seen.size()) +
          " usable: " +
          (status.usable ? "devices 0.." + std::to_string(seen.size() - 1) : status.reason) + ")");
    }
  }
  return wanted;
}

const char* to_string(FilterKind kind) {
  static constexpr EnumName<FilterKind> kNames[] = {
      {FilterKind::Dense, "dense"},
      {FilterKind::Separable, "separable"},
      {FilterKind::Bank, "filter bank"},
      {FilterKind::Median, "median"},
      {FilterKind::RecursiveGaussian, "recursive Gaussian"}};
  static_assert(lists_every(kNames, kFilterKindCount), "a FilterKind without its name");
  return name_of(kind, kNames, "?");
}

namespace {

using detail::voxels_of;

detail::BackendWork linear_work(const FilterRequest& r, const OutputGeometry& g) {
  detail::LinearWork w;
  w.input_voxels = voxels_of(r.dims, r.extent);
  w.output_voxels = voxels_of(r.dims, g.extent);
  w.input_bytes_per_voxel = r.input_bytes_per_voxel;
  w.input_pinned = r.input_pinned;
  w.output_pinned = r.output_pinned;
  if (r.kind == FilterKind::Separable) {
    w.separable = true;
    w.taps_per_output = 0;
    w.passes = 0;
    for (int a = 0; a < r.dims; ++a) {
      if (r.filter_extent[a] > 1) {
        w.taps_per_output += static_cast<double>(r.filter_extent[a]);
        ++w.passes;
      }
    }
    w.passes = std::max(1, w.passes);
    w.taps_per_output = std::max(1.0, w.taps_per_output);
    w.slab_passes = r.filter_extent[r.dims - 1] <= 1;
  } else {
    w.taps_per_output = static_cast<double>(voxels_of(r.dims, r.filter_extent));
    w.dense_4d = r.kind == FilterKind::Dense && r.dims == 4 && r.filter_extent[3] > 1;
  }
  return detail::linear_backend_work(w, r.options);
}

// The request as the CPU estimate sees it.
detail::CpuWork cpu_work(const FilterRequest& r, const OutputGeometry& g) {
  using Kind = detail::CpuWork::Kind;
  detail::CpuWork w;
  w.output_voxels = voxels_of(r.dims, g.extent);
  w.threads = core::resolve_thread_count(r.options.threads);
  const double taps = static_cast<double>(voxels_of(r.dims, r.filter_extent));
  switch (r.kind) {
    case FilterKind::Dense:
      w.kind = Kind::Dense;
      w.taps_per_output = taps;
      w.dense_4d = r.dims == 4 && r.filter_extent[3] > 1;
      break;
    case FilterKind::Bank:
      w.kind = Kind::Bank;
      w.taps_per_output = taps * r.filters;
      break;
    case FilterKind::Median:
      w.kind = Kind::Median;
      w.taps_per_output = taps;
      break;
    case FilterKind::Separable:
    case FilterKind::RecursiveGaussian:
      w.kind = r.kind == FilterKind::Separable ? Kind::Separable : Kind::Recursive;
      w.slab_passes = r.kind == FilterKind::Separable && r.filter_extent[r.dims - 1] <= 1;
      w.taps_per_output = 0;
      w.passes = 0;
      for (int a = 0; a < r.dims; ++a) {
        if (r.kind == FilterKind::RecursiveGaussian || r.filter_extent[a] > 1) {
          w.taps_per_output +=
              r.kind == FilterKind::Separable ? static_cast<double>(r.filter_extent[a]) : 1.0;
          ++w.passes;
        }
      }
      break;
  }
  return w;
}

// What the chosen backend runs, for the plan's method, family and outputs per thread.
void describe_kernels(const FilterRequest& r, const OutputGeometry& g, Plan& p) {
  const int last = r.dims - 1;
  const bool gpu = p.backend == Backend::Cuda;
  switch (r.kind) {
    case FilterKind::Dense:
    case FilterKind::Separable: {
      p.method = r.kind == FilterKind::Dense ? "direct correlation" : "separable passes";
      if (gpu && r.kind == FilterKind::Dense && r.input_bytes_per_voxel == 1 &&
          r.options.expert.tensor_cores && r.options.expert.outputs_per_thread == 0 &&
          cuda_tensor_dense::tensor_dense_cannot_implement(r.dims, r.filter_extent).empty()) {
        // run_dense_stored's choice for 8-bit input (cuda/tensor_dense/tensor_dense.h), before the
        // FFT and the FP32 kernels; the device, the stored type's sign and scale and the memory
        // are checked at the call.
        p.method = "direct correlation on the tensor cores";
        p.kernel_family =
            "GPU tensor cores (mma.sync u8 x s8, 4 weight digits; compute capability 8.0 or later) "
            "for uint8 input without scale or offset, else the FP32 tiled or blocked kernels; the "
            "run's notes say which";
        p.outputs_per_thread_reason = "none: the tensor-core kernel";
        return;
      }
      if (gpu && r.kind == FilterKind::Dense) {
        // The launch's own choice (cuda/fft/fft_policy.h) on the whole volume, as for a first call
        // (no plans or spectrum kept) before the device's free memory is known; the launch also
        // checks that memory and the taps, and counts what its device keeps.
        const cuda_backend::DenseMethodChoice m = cuda_backend::choose_dense_method(
            r.dims, g.extent, r.filter_extent, cuda_backend::Tuning{}.fft);
        if (m.fft && r.options.expert.outputs_per_thread == 0) {
          p.method = "FFT convolution (" + m.reason + ")";
          p.kernel_family = "GPU cuFFT D2Z/Z2D in float64, the boundary-resolved box padded";
          p.outputs_per_thread_reason = "none: a transform";
          return;
        }
        p.method = "direct correlation (" + m.reason + ")";
      }
      if (gpu) {
        p.kernel_family = r.kind == FilterKind::Dense
                              ? "GPU tiled kernel where it can implement the problem, else blocked"
                              : "GPU column and row passes";
        p.outputs_per_thread_reason = "chosen at launch from the device's kernel facts";
      } else {
        const cpu_backend::RowsPlan rows =
            cpu_backend::plan_rows(r.options.expert.outputs_per_thread, r.filter_extent[last],
                                   g.extent[last], g.extent[0], voxels_of(last, r.filter_extent));
        p.kernel_family = "CPU row kernels (" + rows.isa + ")";
        p.outputs_per_thread = rows.factor;
        p.outputs_per_thread_reason =
            r.kind == FilterKind::Dense ? rows.reason : "per pass, by the blocking rule";
        if (r.kind == FilterKind::Separable)
          p.outputs_per_thread = 0;
      }
      return;
    }
    case FilterKind::Bank:
      p.method = "filter bank (every filter from one read of the input)";
      p.kernel_family =
          gpu ? "GPU bank kernel: on the tensor cores (u8 x s8: wgmma on compute capability 9.0 "
                "with the binary's sm_90a code, mma.sync on 8.0 or later) for 8-bit input and 3D "
                "(4D) filters of up to 8 x 7 x 7 (x 7) taps, else FP32 (planes per tile, or a ring "
                "along the last axis); the run's notes say which"
              : "CPU bank kernels";
      p.outputs_per_thread_reason = "chosen at launch";
      return;
    case FilterKind::Median:
      p.method = "selection";
      p.kernel_family = gpu ? "GPU median kernel" : "CPU median";
      return;
    case FilterKind::RecursiveGaussian:
      p.method = "recursive (IIR) Gaussian";
      p.kernel_family = gpu ? "GPU recursive lines" : "CPU recursive lines";
      return;
  }
}

}  // namespace

Plan plan(const FilterRequest& r) {
  if (r.dims < 2 || r.dims > kMaxDims)
    throw InvalidArgument("the volume has dimension " + std::to_string(r.dims) +
                          "; ndconv filters 2D, 3D and 4D volumes");
  Plan p;
  RunReport chosen;
  detail::CostEstimate estimate;
  detail::BackendWork work;
  Index filter_extent = r.filter_extent;
  switch (r.kind) {
    case FilterKind::Dense:
      detail::validate_dense_shape(r.dims, r.filter_extent);
      break;
    case FilterKind::Bank:
      detail::validate_dense_shape(r.dims, r.filter_extent);
      if (r.filters < 1)
        throw InvalidArgument("the filter bank has no filters");
      work = detail::bank_backend_work(r.filter_extent, r.dims);
      break;
    case FilterKind::Separable:
      for (int a = 0; a < r.dims; ++a)
        if (r.filter_extent[a] < 1 || r.filter_extent[a] > kMaxSeparableExtent)
          throw InvalidArgument("a 1D filter of " + std::to_string(r.filter_extent[a]) +
                                " taps; the limit is " + std::to_string(kMaxSeparableExtent));
      break;
    case FilterKind::Median: {
      Index radius{0, 0, 0, 0};
      for (int a = 0; a < r.dims; ++a) {
        radius[a] = r.filter_extent[a] / 2;
        if (r.filter_extent[a] % 2 == 0 || radius[a] > kMaxMedianRadius)
          throw InvalidArgument("the median's window must be odd and at most " +
                                std::to_string(2 * kMaxMedianRadius + 1) + " voxels per axis");
      }
      work = detail::median_backend_work(r.dims, radius, voxels_of(r.dims, r.extent));
      filter_extent = {1, 1, 1, 1};
      break;
    }
    case FilterKind::RecursiveGaussian:
      work = detail::recursive_backend_work(voxels_of(r.dims, r.extent));
      filter_extent = {1, 1, 1, 1};
      break;
  }
  const OutputGeometry g = output_geometry(r.dims, r.extent, filter_extent, r.options.operation,
                                           r.kind == FilterKind::Dense || r.kind == FilterKind::Bank
                                               ? r.options.region
                                               : OutputRegion::Same);
  if (r.kind == FilterKind::Dense || r.kind == FilterKind::Separable)
    work = linear_work(r, g);
  if (work.cost && r.startup_hidden)
    work.cost->cuda_started = true;
  work.probe = r.probe_devices;
  p.backend = detail::choose_backend(r.options, work, chosen, &estimate);
  p.backend_reason = chosen.backend_reason;
  p.device_bytes = p.backend == Backend::Cuda ? work.device_bytes : 0;
  p.estimated_cpu_seconds = detail::estimate_cpu_seconds(cpu_work(r, g));
  p.estimated_gpu_seconds = estimate.gpu_seconds;
  describe_kernels(r, g, p);
  return p;
}

std::string Plan::text() const {
  std::string t = std::string(to_string(backend)) + ": " + backend_reason + "; " + method;
  if (!kernel_family.empty())
    t += ", " + kernel_family;
  if (outputs_per_thread > 0)
    t += ", " + std::to_string(outputs_per_thread) + " outputs per " +
         (backend == Backend::Cuda ? "thread" : "iteration");
  if (!outputs_per_thread_reason.empty())
    t += " (" + outputs_per_thread_reason + ")";
  if (device_bytes > 0) {
    char mib[48];
    std::snprintf(mib, sizeof mib, "; %.0f MiB of device memory", device_bytes / (1 << 20));
    t += mib;
  }
  return t;
}

}  // namespace ndconv
