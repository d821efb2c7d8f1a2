// One volume over several GPUs (engine/gpu_slabs.h): the output cut into slabs along its last
// axis, each a problem that reads the whole input. Run here with the CPU backend in place of the
// GPUs: the slabs' outputs are bit for bit the whole run's, for every boundary, dense and
// separable, 2D to 4D, more slabs than rows included; a failing slab's error comes back. The GPU
// suite runs the same through Options::cuda_devices (tests/gpu).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/problem.h"
#include "cpu/cpu_backend.h"
#include "engine/gpu_slabs.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr Boundary kBoundaries[] = {Boundary::Zero,     Boundary::Replicate, Boundary::Mirror,
                                    Boundary::Periodic, Boundary::Reflect,   Boundary::Constant};

struct Shape {
  int dims;
  Index extent, filter;
};

constexpr Shape kShapes[] = {{2, {23, 17, 1, 1}, {5, 7, 1, 1}},
                             {3, {19, 11, 13, 1}, {3, 5, 7, 1}},
                             {4, {9, 8, 7, 6}, {3, 3, 3, 5}}};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(GpuSlabs, DenseSlabsEqualTheWholeRun) {
  const uint64_t seed = fresh_seed();
  for (const Shape& s : kShapes) {
    const int64_t n = detail::voxels_of(s.dims, s.extent);
    const std::vector<float> in = random_values(n, seed);
    const std::vector<float> taps = random_values(detail::voxels_of(s.dims, s.filter), seed + 1);
    for (Boundary b : kBoundaries) {
      detail::CorrelationProblem p;
      p.input = make_view<const float>(in.data(), s.dims, s.extent);
      p.filter_extent = s.filter;
      p.taps = taps.data();
      p.boundary = b == Boundary::Constant ? Boundary::Zero : b;  // backends run it as zero
      for (int a = 0; a < s.dims; ++a)
        p.offset[a] = -(s.filter[a] / 2);
      std::vector<float> whole(n, NAN), slabs(n, NAN);
      Options o;
      o.threads = 1;
      RunReport r;
      p.output = make_view(whole.data(), s.dims, s.extent);
      cpu_backend::run_dense(p, o, r);
      for (const std::vector<int>& devices :
           {std::vector<int>{0, 1}, std::vector<int>{0, 1, 2}, std::vector<int>(40, 0)}) {
        std::fill(slabs.begin(), slabs.end(), NAN);
        p.output = make_view(slabs.data(), s.dims, s.extent);
        RunReport rs;
        detail::run_in_gpu_slabs(p, devices, o, rs, cpu_backend::run_dense);
        EXPECT_TRUE(same_bits(whole, slabs))
            << s.dims << "D, " << to_string(b) << ", " << devices.size() << " slabs, seed " << seed;
        EXPECT_NE(rs.notes.back().find("slabs along the last axis"), std::string::npos);
      }
    }
  }
}

TEST(GpuSlabs, SeparableSlabsEqualTheWholeRun) {
  const uint64_t seed = fresh_seed();
  for (const Shape& s : kShapes) {
    const int64_t n = detail::voxels_of(s.dims, s.extent);
    const std::vector<float> in = random_values(n, seed);
    for (Boundary b : kBoundaries) {
      detail::SeparableProblem p;
      p.input = make_view<const float>(in.data(), s.dims, s.extent);
      p.boundary = b == Boundary::Constant ? Boundary::Zero : b;
      for (int a = 0; a < s.dims; ++a) {
        p.taps[a] = random_values(s.filter[a], seed + 2 + a);
        p.offset[a] = -(s.filter[a] / 2);
      }
      std::vector<float> whole(n, NAN), slabs(n, NAN);
      Options o;
      RunReport r;
      p.output = make_view(whole.data(), s.dims, s.extent);
      cpu_backend::run_separable(p, o, r);
      for (size_t count : {2u, 3u, 64u}) {
        std::fill(slabs.begin(), slabs.end(), NAN);
        p.output = make_view(slabs.data(), s.dims, s.extent);
        RunReport rs;
        detail::run_in_gpu_slabs(p, std::vector<int>(count, 0), o, rs, cpu_backend::run_separable);
        EXPECT_TRUE(same_bits(whole, slabs))
            << s.dims << "D, " << to_string(b) << ", " << count << " slabs, seed " << seed;
      }
    }
  }
}

TEST(GpuSlabs, ASlabsFailureComesBackAfterAllEnded) {
  std::vector<float> in(8 * 8 * 8, 1.0f), out(in.size());
  detail::CorrelationProblem p;
  p.input = make_view<const float>(in.data(), 3, {8, 8, 8, 1});
  p.output = make_view(out.data(), 3, {8, 8, 8, 1});
  const float tap = 1.0f;
  p.taps = &tap;
  RunReport r;
  std::atomic<int> ran{0};
  EXPECT_THROW(detail::run_in_gpu_slabs(
                   p, {0, 1, 2}, Options{}, r,
                   [&](const detail::CorrelationProblem&, const Options& o, RunReport&) {
                     ++ran;
                     if (o.cuda_device == 2)
                       throw std::runtime_error("slab on GPU 2 failed");
                   }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 3);  // every slab ran to its end before the failure came back
}

}  // namespace
}  // namespace ndconv::test
