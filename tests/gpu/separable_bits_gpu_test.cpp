// Every GPU plan of a separable filter gives the same bits (skipped without a usable GPU): the
// streaming kernel, the slab kernel, the column passes and the tiled x pass with the blocked
// kernel's passes, each forced through the policy (Tuning, a forced KO) on the same device
// buffers, for Gaussians of several sigmas on fresh random 2D, 3D and 4D volumes, every boundary,
// NaN-poisoned outputs. A block that ndconv.dask filters on its own takes whichever plan its
// extents get, so its outputs equal the whole volume's only because these agree (slab_thread.h,
// "Arithmetic"). Each plan is also checked against the float64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cases.h"
#include "ndconv/gaussian.h"
#include "reference.h"
#include "require_gpu.h"
#include "test_data.h"

// The plans are forced through the CUDA backend's own API: a build without CUDA has none.
#ifdef NDCONV_HAVE_CUDA
#include "cuda/launch.h"
#include "cuda/tuning.h"
#include "device_copies.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;

struct ForcedPlan {
  const char* name;
  const char* kernel;  ///< a word LaunchPlan::kernel must hold
  int outputs_per_thread;
  cuda_backend::Tuning tuning;
};

std::vector<ForcedPlan> forced_plans() {
  cuda_backend::Tuning slab;
  slab.separable_stream = false;
  slab.slab_max_column_x_use = 1.0;  // wherever the slab kernel can implement the filter
  cuda_backend::Tuning columns;
  columns.separable_stream = false;
  columns.separable_slab = false;
  return {{"stream", "stream", 0, cuda_backend::Tuning{}},
          {"slab", "slab", 0, slab},
          {"columns", "column", 0, columns},
          {"tiled+blocked KO 4", "blocked", 4, cuda_backend::Tuning{}},
          {"tiled+blocked KO 16", "blocked", 16, cuda_backend::Tuning{}}};
}

TEST(CudaSeparableBits, EveryPlanGivesTheSameBits) {
  NDCONV_REQUIRE_GPU();
  const std::vector<ShapeCase> shapes = {
      ShapeCase{2, {300, 77, 1, 1}, {}}, ShapeCase{3, {150, 37, 40, 1}, {}},
      ShapeCase{3, {272, 45, 33, 1}, {}}, ShapeCase{4, {70, 21, 12, 9}, {}}};
  int checked_slab = 0;
  for (const ShapeCase& s : shapes) {
    for (double sigma : {0.8, 2.0, 3.1}) {
      for (Boundary b : kAllBoundaries) {
        const uint64_t seed = fresh_seed();
        const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
        const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
        std::array<double, kMaxDims> sigmas{};
        for (int a = 0; a < s.dims; ++a)
          sigmas[a] = sigma * (1.0 + 0.1 * a);  // per-axis tap counts differ (but 2.0 on x-y-z)
        if (sigma == 2.0)
          sigmas = {2.0, 2.0, 2.0, 2.0};  // 17 taps on every axis: the slab kernel's count
        const SeparableFilter f = gaussian_filter(s.dims, sigmas);
        const std::vector<double> ref =
            reference_separable_passes(in_view, f, Operation::Correlation, b);
        const cuda_backend::DeviceBuffer d_in = to_device(in);
        std::vector<float> first;
        std::string first_name;
        for (const ForcedPlan& fp : forced_plans()) {
          std::vector<float> poisoned(in.size());
          poison(poisoned);
          cuda_backend::DeviceBuffer d_out = to_device(poisoned);
          const detail::SeparableProblem p = cuda_backend::same_region_separable(
              make_view(static_cast<const float*>(d_in.get()), s.dims, s.volume),
              make_view(d_out.get(), s.dims, s.volume), f, b);
          const size_t scratch_floats =
              cuda_backend::separable_launch_scratch_floats(p, fp.outputs_per_thread, fp.tuning);
          cuda_backend::DeviceBuffer scratch(std::max<size_t>(scratch_floats, 1));
          const cuda_backend::LaunchPlan plan = cuda_backend::launch_separable_device(
              p, scratch.get(), 0, nullptr, fp.outputs_per_thread, fp.tuning);
          const std::vector<float> out = to_host(d_out, in.size());
          const bool slab_possible = s.dims == 3 && sigma == 2.0;
          // The streaming kernel also needs a dense input's x extent a multiple of 4 (16-byte
          // rows for the copy engine).
          const bool stream_possible = slab_possible && s.volume[0] % 4 == 0;
          if ((std::string(fp.name) == "slab" && !slab_possible) ||
              (std::string(fp.name) == "stream" && !stream_possible))
            continue;  // the column passes again: nothing new
          EXPECT_NE(plan.kernel.find(fp.kernel), std::string::npos)
              << fp.name << ": " << plan.kernel;
          checked_slab += plan.kernel.find("slab") != std::string::npos;
          const std::string what = std::string(fp.name) + " " + to_string(b) + " sigma " +
                                   std::to_string(sigma) + " " + plan.kernel +
                                   " seed=" + std::to_string(seed);
          EXPECT_EQ(nan_mask_mismatches(out, ref, 1e-5), 0) << s << " " << what;
          EXPECT_LT(relative_l2_error(out, ref), kTolerance) << s << " " << what;
          if (first.empty()) {
            first = out;
            first_name = fp.name;
          } else {
            EXPECT_EQ(std::memcmp(first.data(), out.data(), out.size() * sizeof(float)), 0)
                << s << " " << what << " against " << first_name;
          }
        }
      }
    }
  }
  EXPECT_GT(checked_slab, 0);
}

}  // namespace
}  // namespace ndconv::test
#endif  // NDCONV_HAVE_CUDA
