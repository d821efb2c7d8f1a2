// The engine's host-path services that run without a GPU, in CI: the pinned host allocator's
// fallback to ordinary memory, the caches' public controls, and the cost model behind
// Backend::Auto (src/engine/backend_cost.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/backend_cost.h"
#include "core/first_touch.h"
#include "ndconv/adaptive.h"
#include "ndconv/device.h"
#include "ndconv/engine.h"
#include "ndconv/memory.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

TEST(PinnedMemory, AllocatesUsableMemoryWithOrWithoutAGpu) {
  const bool gpu = cuda_status().usable;
  bool pinned = !gpu;
  void* p = pinned_allocate(1000, &pinned);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(pinned, gpu);
  EXPECT_EQ(is_pinned(p, 1000), gpu);
  EXPECT_EQ(is_pinned(static_cast<char*>(p) + 10, 990), gpu);
  EXPECT_FALSE(is_pinned(p, 1001));  // beyond the block
  std::memset(p, 0xab, 1000);
  pinned_free(p);
  EXPECT_EQ(pinned_allocate(0), nullptr);
  pinned_free(nullptr);
  std::vector<float> ordinary(10);
  EXPECT_FALSE(is_pinned(ordinary.data(), ordinary.size() * sizeof(float)));
}

TEST(PinnedMemory, BufferOwnsMovesAndFilters) {
  PinnedBuffer<float> a(4096);
  ASSERT_EQ(a.size(), 4096u);
  EXPECT_EQ(a.pinned(), cuda_status().usable);
  const std::vector<float> values = random_values(4096, fresh_seed());
  std::copy(values.begin(), values.end(), a.begin());
  PinnedBuffer<float> b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(b[17], values[17]);
  PinnedBuffer<float> c;
  c = std::move(b);
  EXPECT_EQ(c.size(), 4096u);
  // The engine takes pinned buffers like any others.
  PinnedBuffer<float> out(4096);
  const float tap = 2.0f;
  const DenseFilter f{2, {1, 1, 1, 1}, &tap};
  filter_dense(make_view<const float>(c.data(), 2, {64, 64}), f,
               make_view(out.data(), 2, {64, 64}));
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out[i], 2.0f * values[i]) << i;
  release_cached_memory();
  const CachedMemory kept = cached_memory();
  EXPECT_EQ(kept.device_bytes, 0u);
  EXPECT_EQ(kept.pinned_staging_bytes, 0u);
}

TEST(PinnedMemory, OrdinaryWhenAskedWithoutStartingCuda) {
  const bool started = cuda_started();
  bool pinned = true;
  void* p = pinned_allocate(1000, &pinned, HostMemory::Ordinary);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_FALSE(pinned);
  EXPECT_FALSE(is_pinned(p, 1000));
  std::memset(p, 0xab, 1000);
  pinned_free(p);
  PinnedBuffer<float> b(100, HostMemory::Ordinary);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_FALSE(b.pinned());
  EXPECT_EQ(cuda_started(), started);  // ordinary memory does not start CUDA
}

TEST(FirstTouch, LargeBuffersHoldTheirValuesOnAnyThreadCount) {
  for (int threads : {1, 2, 0}) {
    SCOPED_TRACE(threads);
    std::vector<float> v{7.0f};
    const size_t n = (size_t{12} << 20) / sizeof(float) + 3;  // past the touching threshold
    detail::assign_touched(v, n, 1.5f, threads);
    ASSERT_EQ(v.size(), n);
    EXPECT_EQ(std::count(v.begin(), v.end(), 1.5f), static_cast<std::ptrdiff_t>(n));
    detail::assign_touched(v, 5, -2.0f, threads);  // shrinking keeps the memory
    EXPECT_EQ(v, std::vector<float>(5, -2.0f));
    std::vector<char> bytes;
    detail::assign_touched(bytes, size_t{9} << 20, char{0}, threads);
    EXPECT_EQ(std::count(bytes.begin(), bytes.end(), char{0}),
              static_cast<std::ptrdiff_t>(bytes.size()));
  }
  detail::touch_pages(nullptr, size_t{1} << 30, 2);  // nothing to touch
}

TEST(WarmUp, FinishesAndCountsAsStartedOnlyWithAGpu) {
  warm_up_cuda_async();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (cuda_warm_up_pending() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(cuda_warm_up_pending());
  EXPECT_EQ(cuda_started(), cuda_status().usable);
}

TEST(DeviceEntryPoints, RefuseHostMemoryAndTheCpu) {
  warm_up_cuda_async();  // harmless without a GPU, and again
  warm_up_cuda_async();
  std::vector<float> in = random_values(64, fresh_seed()), out(64);
  const float tap = 1.0f;
  const DenseFilter f{2, {1, 1, 1, 1}, &tap};
  Options o;
  EXPECT_THROW(filter_dense_device(make_view<const float>(in.data(), 2, {8, 8}), f,
                                   make_view(out.data(), 2, {8, 8}), o, nullptr),
               InvalidArgument);
  o.backend = Backend::Cpu;
  EXPECT_THROW(filter_dense_device(make_view<const float>(in.data(), 2, {8, 8}), f,
                                   make_view(out.data(), 2, {8, 8}), o, nullptr),
               InvalidArgument);
}

detail::CostInput dense_work(int64_t voxels, double taps) {
  detail::CostInput in;
  in.input_voxels = voxels;
  in.output_voxels = voxels;
  in.taps_per_output = taps;
  in.cpu_threads = 16;
  return in;
}

TEST(CostModel, SmallVolumesStayOnTheCpu) {
  // An 8^3 volume with a 3^3 filter: microseconds on the CPU, the start-up alone on the GPU.
  detail::CostInput in = dense_work(8 * 8 * 8, 27);
  detail::CostEstimate e = detail::estimate_costs(in);
  EXPECT_FALSE(e.prefer_gpu) << e.reason;
  EXPECT_NEAR(e.gpu_startup_seconds, detail::kCostConstants.cuda_startup_seconds, 1e-12);
  EXPECT_NE(e.reason.find("CPU estimated faster"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("start-up"), std::string::npos) << e.reason;
  // Even with CUDA started, the fixed cost of a GPU call loses.
  in.cuda_started = true;
  e = detail::estimate_costs(in);
  EXPECT_FALSE(e.prefer_gpu) << e.reason;
  EXPECT_EQ(e.gpu_startup_seconds, 0.0);
  EXPECT_NE(e.reason.find("CUDA already started"), std::string::npos) << e.reason;
}

TEST(CostModel, AStartUpUnderWayCountsOnlyItsRest) {
  // 256^3 with 31^3 taps: the full start-up decides for the CPU; with most of it already run (a
  // warm-up begun while the input was read), the GPU wins; a start-up run longer than the model's
  // constant costs nothing more.
  detail::CostInput in = dense_work(int64_t{256} * 256 * 256, 31 * 31 * 31);
  EXPECT_FALSE(detail::estimate_costs(in).prefer_gpu);
  in.startup_elapsed_seconds = detail::kCostConstants.cuda_startup_seconds - 0.0005;
  detail::CostEstimate e = detail::estimate_costs(in);
  EXPECT_NEAR(e.gpu_startup_seconds, 0.0005, 1e-12);
  EXPECT_TRUE(e.prefer_gpu) << e.reason;
  EXPECT_NE(e.reason.find("under way"), std::string::npos) << e.reason;
  in.startup_elapsed_seconds = 10;
  EXPECT_EQ(detail::estimate_costs(in).gpu_startup_seconds, 0.0);
}

TEST(CostModel, LargeDenseWorkGoesToTheGpu) {
  // 384^3 with 31^3 taps: about a second on 16 CPU threads, a tenth of that on the GPU, which
  // wins even with the start-up still to pay.
  detail::CostInput in = dense_work(int64_t{384} * 384 * 384, 31 * 31 * 31);
  detail::CostEstimate e = detail::estimate_costs(in);
  EXPECT_TRUE(e.prefer_gpu) << e.reason;
  EXPECT_GT(e.cpu_seconds, 0.5);
  in.cuda_started = true;
  e = detail::estimate_costs(in);
  EXPECT_TRUE(e.prefer_gpu) << e.reason;
  EXPECT_LT(e.gpu_seconds, e.cpu_seconds / 4);
}

TEST(CostModel, StartUpAndCopiesDecideTheMiddle) {
  // 256^3 with 11^3 taps: about 15 ms on 16 CPU threads; with CUDA started the GPU call takes
  // less (its copies bound it), without it the start-up decides for the CPU.
  detail::CostInput in = dense_work(int64_t{256} * 256 * 256, 11 * 11 * 11);
  in.cuda_started = true;
  const detail::CostEstimate started = detail::estimate_costs(in);
  EXPECT_TRUE(started.prefer_gpu) << started.reason;
  in.cuda_started = false;
  EXPECT_FALSE(detail::estimate_costs(in).prefer_gpu);
  // Pinned memory makes the copies cheaper, never dearer.
  in.cuda_started = true;
  in.input_pinned = in.output_pinned = true;
  const detail::CostEstimate pinned = detail::estimate_costs(in);
  EXPECT_LT(pinned.gpu_upload_seconds, started.gpu_upload_seconds);
  EXPECT_LT(pinned.gpu_download_seconds, started.gpu_download_seconds);
  EXPECT_LE(pinned.gpu_seconds, started.gpu_seconds);
}

TEST(CostModel, TheEstimatesFollowTheConstants) {
  detail::CostConstants k;
  k.cpu_taps_per_second_per_thread = 1e9;
  k.cpu_fixed_seconds = 0;
  k.cpu_dense_pass_seconds_per_voxel = 0;
  detail::CostInput in = dense_work(1000000, 10);
  in.cpu_threads = 4;
  const detail::CostEstimate e = detail::estimate_costs(in, k);
  EXPECT_NEAR(e.cpu_seconds, 1e7 / 4e9, 1e-12);
  EXPECT_NEAR(e.gpu_upload_seconds, 4e6 / k.pageable_upload_bytes_per_second, 1e-12);
  EXPECT_NEAR(e.gpu_download_seconds, 4e6 / k.pageable_download_bytes_per_second, 1e-12);
  // Separable work runs at the separable rate, with a pass's traffic per filtered axis.
  in.separable = true;
  in.passes = 3;
  const detail::CostEstimate s = detail::estimate_costs(in, k);
  EXPECT_GE(s.gpu_kernel_seconds, 1e6 * 8.0 * 3 / k.gpu_bytes_per_second);
}

TEST(CostModel, TheCpuEstimateFollowsEachFiltersWork) {
  detail::CostConstants k;
  k.cpu_fixed_seconds = 0;
  detail::CpuWork w;
  w.output_voxels = 1000000;
  w.threads = 2;
  // Dense: a dense call's pass over the volume plus its taps at the row kernels' rate, shared by
  // the threads.
  w.taps_per_output = 343;
  EXPECT_NEAR(
      detail::estimate_cpu_seconds(w, k),
      (1e6 * k.cpu_dense_pass_seconds_per_voxel + 343e6 / k.cpu_taps_per_second_per_thread) / 2,
      1e-12);
  // A dense filter with taps along a 4th axis runs at its own, lower rate (blocks, not rings).
  w.taps_per_output = 2401;
  w.dense_4d = true;
  EXPECT_NEAR(detail::estimate_cpu_seconds(w, k),
              (1e6 * k.cpu_dense_pass_seconds_per_voxel +
               2401e6 / k.cpu_dense_4d_taps_per_second_per_thread) /
                  2,
              1e-12);
  EXPECT_LT(k.cpu_dense_4d_taps_per_second_per_thread, k.cpu_taps_per_second_per_thread);
  w.dense_4d = false;
  // Separable: a pass per filtered axis, the 1D taps at the separable rate.
  w.kind = detail::CpuWork::Kind::Separable;
  w.taps_per_output = 51;
  w.passes = 3;
  EXPECT_NEAR(
      detail::estimate_cpu_seconds(w, k),
      (3e6 * k.cpu_pass_seconds_per_voxel + 51e6 / k.cpu_separable_taps_per_second_per_thread) / 2,
      1e-12);
  // Passes that run slab by slab in the cache (no taps along the last axis) cost less.
  w.slab_passes = true;
  EXPECT_NEAR(detail::estimate_cpu_seconds(w, k),
              (3e6 * k.cpu_slab_pass_seconds_per_voxel +
               51e6 / k.cpu_separable_taps_per_second_per_thread) /
                  2,
              1e-12);
  w.slab_passes = false;
  // The median: per window voxel; radius 3 costs about (7/3)^3 of radius 1 beyond the pass.
  w.kind = detail::CpuWork::Kind::Median;
  w.passes = 1;
  w.taps_per_output = 27;
  const double r1 = detail::estimate_cpu_seconds(w, k);
  w.taps_per_output = 343;
  const double r3 = detail::estimate_cpu_seconds(w, k);
  const double pass = 1e6 * k.cpu_pass_seconds_per_voxel / 2;
  EXPECT_NEAR((r3 - pass) / (r1 - pass), 343.0 / 27, 1e-9);
  // More threads, less time.
  w.threads = 4;
  EXPECT_NEAR(detail::estimate_cpu_seconds(w, k), r3 / 2, 1e-12);
}

TEST(CostModel, TheAdaptiveEstimateGrowsWithItsWork) {
  AdaptiveParameters p = adaptive_preset(AdaptivePreset::Echo);
  const double one = adaptive_estimated_cpu_seconds(3, {128, 128, 128, 1}, p, 2);
  EXPECT_GT(one, 0);
  // Twice the voxels or half the threads: twice the time, but for each call's fixed cost.
  EXPECT_NEAR(adaptive_estimated_cpu_seconds(3, {128, 128, 256, 1}, p, 2), 2 * one, 0.02 * one);
  EXPECT_NEAR(adaptive_estimated_cpu_seconds(3, {128, 128, 128, 1}, p, 4), one / 2, 0.02 * one);
  // Frame by frame, a 4D series costs its frames' 3D runs; true 4D costs more (larger filters).
  p.time_as_axis = false;
  const double frames = adaptive_estimated_cpu_seconds(4, {128, 128, 128, 4}, p, 2);
  EXPECT_NEAR(frames, 4 * one, 0.02 * frames);
  p.time_as_axis = true;
  EXPECT_GT(adaptive_estimated_cpu_seconds(4, {128, 128, 128, 4}, p, 2), 3 * frames);
  // A larger reconstruction filter costs more.
  p = adaptive_preset(AdaptivePreset::Echo);
  p.reconstruction.size = 11;
  EXPECT_GT(adaptive_estimated_cpu_seconds(3, {128, 128, 128, 1}, p, 2), one);
}

TEST(CostModel, AutoPicksTheCpuForSmallVolumesThroughTheEngine) {
  std::vector<float> in = random_values(8 * 8 * 8, fresh_seed()), out(8 * 8 * 8);
  std::vector<float> taps = random_values(27, fresh_seed());
  const DenseFilter f{3, {3, 3, 3, 1}, taps.data()};
  const RunReport r = filter_dense(make_view<const float>(in.data(), 3, {8, 8, 8}), f,
                                   make_view(out.data(), 3, {8, 8, 8}));
  EXPECT_EQ(r.backend, Backend::Cpu);
  EXPECT_NE(r.backend_reason.find("auto: CPU estimated faster"), std::string::npos)
      << r.backend_reason;
}

}  // namespace
}  // namespace ndconv::test
