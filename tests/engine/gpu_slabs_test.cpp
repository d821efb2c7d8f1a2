// One volume over several GPUs (engine/gpu_slabs.h): the output cut into slabs along its last
// axis, each a problem whose input is the rows it reads. Run here with the CPU backend in place of
// the GPUs: the slabs' outputs are bit for bit the whole run's, for every boundary, dense and
// separable, 2D to 4D, more slabs than rows included; a slab's input is its rows and halo only,
// where the boundary allows; a failing slab's error comes back. The GPU suite runs the same through
// Options::cuda_devices (tests/gpu).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>
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

// The CPU backend's run of a slab, as the engine runs a GPU's.
template <typename Problem>
void cpu_slab(const Problem& slab, detail::RowRange, const Options& o, RunReport& r) {
  if constexpr (std::is_same_v<Problem, detail::CorrelationProblem>)
    cpu_backend::run_dense(slab, o, r);
  else
    cpu_backend::run_separable(slab, o, r);
}

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
        detail::run_in_gpu_slabs(p, devices, o, rs, cpu_slab<detail::CorrelationProblem>);
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
        detail::run_in_gpu_slabs(p, std::vector<int>(count, 0), o, rs,
                                 cpu_slab<detail::SeparableProblem>);
        EXPECT_TRUE(same_bits(whole, slabs))
            << s.dims << "D, " << to_string(b) << ", " << count << " slabs, seed " << seed;
      }
    }
  }
}

// Each slab reads its own rows and the filter's halo, clipped at the volume's edges, where the
// boundary resolves in them (zero, replicate, mirror near the edges); a periodic wrap needs the
// whole input.
TEST(GpuSlabs, ASlabsInputIsTheRowsItReads) {
  std::vector<float> in(8 * 8 * 40, 1.0f), out(in.size());
  const std::vector<float> taps(5 * 5 * 5, 1.0f);
  detail::CorrelationProblem p;
  p.input = make_view<const float>(in.data(), 3, {8, 8, 40, 1});
  p.output = make_view(out.data(), 3, {8, 8, 40, 1});
  p.filter_extent = {5, 5, 5, 1};
  p.taps = taps.data();
  p.offset = {-2, -2, -2, 0};
  for (Boundary b : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror, Boundary::Periodic}) {
    p.boundary = b;
    std::vector<detail::RowRange> seen(4);
    RunReport r;
    detail::run_in_gpu_slabs(p, {0, 1, 2, 3}, Options{}, r,
                             [&](const detail::CorrelationProblem& slab, detail::RowRange rows,
                                 const Options& o, RunReport&) {
                               seen[static_cast<size_t>(o.cuda_device)] = rows;
                               EXPECT_EQ(slab.input.extent[2], rows.rows);
                               EXPECT_EQ(slab.input.data, in.data() + rows.first * 64);
                             });
    for (int g = 0; g < 4; ++g) {
      const detail::RowRange expected =
          b == Boundary::Periodic && (g == 0 || g == 3)
              ? detail::RowRange{0, 40}
              : detail::RowRange{std::max(0, 10 * g - 2),
                                 std::min(40, 10 * g + 12) - std::max(0, 10 * g - 2)};
      EXPECT_EQ(seen[static_cast<size_t>(g)].first, expected.first)
          << to_string(b) << ", slab " << g;
      EXPECT_EQ(seen[static_cast<size_t>(g)].rows, expected.rows) << to_string(b) << ", slab " << g;
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
  EXPECT_THROW(detail::run_in_gpu_slabs(p, {0, 1, 2}, Options{}, r,
                                        [&](const detail::CorrelationProblem&, detail::RowRange,
                                            const Options& o, RunReport&) {
                                          ++ran;
                                          if (o.cuda_device == 2)
                                            throw std::runtime_error("slab on GPU 2 failed");
                                        }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 3);  // every slab ran to its end before the failure came back
}

}  // namespace
}  // namespace ndconv::test
