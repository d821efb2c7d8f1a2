// The CPU filter bank on 8-bit inputs (src/cpu/bank_int8.h): the mapping's integer arithmetic in
// plain C++ (the same expanded A tiles, B tiles and tile instructions, emulated) equals the GPU
// tensor-core scheme's emulation (cuda/bank/tensor_core_layout.h) bit for bit on uniform and dark
// volumes of uneven extents; the AVX-512 helpers equal the plain ones; what the path refuses; the
// fallback to the FP32 bank where the CPU has no AMX (CI); and, where it has, the AMX kernel
// against the emulation bit for bit and against float64 as accurate as the FP32 kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/padding.h"
#include "cpu/bank_int8.h"
#include "cpu/cpu_backend.h"
#include "cpu/isa_dispatch.h"
#include "cpu/tuning.h"
#include "cuda/bank/tensor_core_layout.h"
#include "gpu/eight_bit_volumes.h"
#include "reference.h"
#include "strided_views.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using cpu::Int8BankShape;
using cpu::Int8Engine;

const Index kFilter{7, 7, 7, 1};  // volume axes

// A bank of `count` 7^3 filters over an 8-bit volume, its outputs contiguous ([filter][voxel]).
struct Int8Case {
  Index n;
  int count;
  std::vector<float> input, taps, out;
  detail::BankProblem problem;
  Int8Case(EightBitKind kind, const Index& extent, int filters, uint64_t seed)
      : n(extent),
        count(filters),
        input(eight_bit_volume(kind, extent, seed)),
        taps(spread_taps(filters, seed ^ 0x5eed)),
        out(static_cast<size_t>(voxels() * filters)) {
    problem = seven_cubed_bank(input, n, count, taps);
    for (int f = 0; f < count; ++f)
      problem.outputs.push_back(make_view(out.data() + f * voxels(), 3, n));
  }
  int64_t voxels() const { return n[0] * n[1] * n[2]; }
};

Options options_for(int threads) {
  Options o;
  o.backend = Backend::Cpu;
  o.operation = Operation::Correlation;
  o.boundary = Boundary::Zero;
  o.threads = threads;
  return o;
}

// The 8-bit path with `engine`; fails the test when it does not take the bank.
void run_int8(Int8Case& c, Int8Engine engine, int threads) {
  poison(c.out);
  RunReport report;
  std::string why_not;
  ASSERT_TRUE(cpu::run_bank_int8(c.problem, options_for(threads), report, cpu_backend::Tuning{},
                                 engine, why_not))
      << why_not;
}

// The GPU scheme's emulation of the same bank: the zero-padded volume as the tensor-core kernel's
// rows (the input at padded (x + 3, y + 3, z + 3)), its weights and emulate_tensor_core_bank.
std::vector<float> tensor_core_outputs(const Int8Case& c) {
  cuda_bank::TensorCoreGeometry g;
  g.outputs = {c.n[0], c.n[1], 1, c.n[2]};
  g.filter = {7, 7, 1, 7};
  g.count = c.count;
  g.padded_extent = {0, c.n[1] + 6, 1, c.n[2] + 6};
  g.row_bytes = cuda_bank::tensor_core_row_bytes(c.n[0]);
  std::vector<uint8_t> bytes(static_cast<size_t>(g.padded_bytes()), 0);
  for (int64_t z = 0; z < c.n[2]; ++z)
    for (int64_t y = 0; y < c.n[1]; ++y)
      for (int64_t x = 0; x < c.n[0]; ++x)
        bytes[static_cast<size_t>(((z + 3) * g.padded_extent[1] + y + 3) * g.row_bytes + x + 3)] =
            static_cast<uint8_t>(c.input[static_cast<size_t>((z * c.n[1] + y) * c.n[0] + x)]);
  std::vector<float> out(c.out.size());
  poison(out);
  cuda_bank::emulate_tensor_core_bank(g, bytes.data(),
                                      cuda_bank::tensor_core_weights(g, c.taps.data()), out.data());
  return out;
}

TEST(CpuInt8Bank, TheMappingEqualsTheTensorCoreSchemeBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (NDCONV_TEST_SEED replays the run)");
  // Extents that are no multiple of the A tile (seven tiles and one), 12 filters (one pass) and 13
  // (two, the second of one filter), one and two threads.
  for (const Index& n : {Index{107, 7, 6, 1}, Index{13, 8, 5, 1}})
    for (EightBitKind kind : {EightBitKind::Uniform, EightBitKind::DarkSpeckle})
      for (int count : {12, 13}) {
        SCOPED_TRACE(std::to_string(n[0]) + " x " + std::to_string(n[1]) + " x " +
                     std::to_string(n[2]) + ", " + eight_bit_name(kind) + ", " +
                     std::to_string(count) + " filters");
        Int8Case c(kind, n, count, seed + count);
        const std::vector<float> expected = tensor_core_outputs(c);
        for (int threads : {1, 2}) {
          run_int8(c, Int8Engine::Emulated, threads);
          EXPECT_EQ(std::memcmp(c.out.data(), expected.data(), c.out.size() * sizeof(float)), 0);
        }
        const BankReference ref = bank_reference(c.input, n, kFilter, count, c.taps);
        EXPECT_LT(worst_voxel_error(ref, c.out.data()), 1e-6);
      }
}

// Every boundary, filters narrower than 8 x 8 x 8 along each axis, strided input and outputs: the
// emulated path (and the AMX one where the CPU has it) against float64 per voxel.
TEST(CpuInt8Bank, EveryBoundaryFilterShapeAndStridedViews) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (NDCONV_TEST_SEED replays the run)");
  const Index n{23, 10, 9, 1};
  const std::vector<float> values = eight_bit_volume(EightBitKind::Uniform, n, seed);
  StridedBuffer input(3, n, 2);
  input.fill(values);
  std::vector<Int8Engine> engines{Int8Engine::Emulated};
  if (cpu::amx_int8_support().usable)
    engines.push_back(Int8Engine::Amx);
  for (const Index& filter : {Index{7, 7, 7, 1}, Index{5, 3, 7, 1}, Index{1, 7, 3, 1}})
    for (Boundary boundary : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                              Boundary::Periodic, Boundary::Reflect}) {
      SCOPED_TRACE(std::to_string(filter[0]) + " x " + std::to_string(filter[1]) + " x " +
                   std::to_string(filter[2]) + ", " + to_string(boundary));
      const int count = 5;
      const int64_t taps_per = filter[0] * filter[1] * filter[2];
      std::vector<float> taps = random_values(taps_per * count, seed ^ 0xb0);
      detail::BankProblem p;
      p.input = as_const(input.view);
      p.filter_extent = filter;
      p.count = count;
      p.taps = taps.data();
      p.offset = {-(filter[0] / 2), -(filter[1] / 2), -(filter[2] / 2), 0};
      p.boundary = boundary;
      p.output_extent = n;
      std::vector<StridedBuffer> outputs;
      for (int f = 0; f < count; ++f)
        outputs.emplace_back(3, n, 3);
      for (StridedBuffer& o : outputs)
        p.outputs.push_back(o.view);
      for (Int8Engine engine : engines) {
        SCOPED_TRACE(engine == Int8Engine::Amx ? "AMX" : "emulated");
        RunReport report;
        std::string why_not;
        ASSERT_TRUE(
            cpu::run_bank_int8(p, options_for(2), report, cpu_backend::Tuning{}, engine, why_not))
            << why_not;
        for (int f = 0; f < count; ++f) {
          std::vector<float> magnitude(taps.begin() + f * taps_per,
                                       taps.begin() + (f + 1) * taps_per);
          for (float& w : magnitude)
            w = std::fabs(w);
          const std::vector<double> ref = reference_dense(
              as_const(input.view), DenseFilter{3, filter, taps.data() + f * taps_per},
              Operation::Correlation, boundary, OutputRegion::Same);
          const std::vector<double> scale =
              reference_dense(as_const(input.view), DenseFilter{3, filter, magnitude.data()},
                              Operation::Correlation, boundary, OutputRegion::Same);
          const std::vector<float> got = outputs[static_cast<size_t>(f)].values();
          double worst = 0;
          for (size_t v = 0; v < ref.size(); ++v)
            worst = std::max(worst, std::fabs(got[v] - ref[v]) / std::max(scale[v], 1e-30));
          EXPECT_LT(worst, 1e-6) << "filter " << f;
          EXPECT_EQ(outputs[static_cast<size_t>(f)].touched_gaps(), 0) << "filter " << f;
        }
        for (StridedBuffer& o : outputs)
          o.storage.assign(o.storage.size(), std::nanf(""));
      }
    }
}

TEST(CpuInt8Bank, Avx512HelpersEqualThePlainOnes) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "the CPU has no AVX-512F";
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  // A plane of 7 + 10 - 1 rows of 51 floats (x_count 40, zeros after) for 10 output rows.
  const int64_t n1 = 10, row_length = 51, x_count = 40, x_groups = cpu::int8_x_groups(34);
  for (int k1 : {7, 8, 3}) {
    SCOPED_TRACE("k1 " + std::to_string(k1));
    std::vector<float> plane(static_cast<size_t>((n1 + k1 - 1) * row_length), 0.0f);
    for (int64_t y = 0; y < n1 + k1 - 1; ++y)
      for (int64_t q = 0; q < x_count; ++q)
        plane[static_cast<size_t>(y * row_length + q)] = static_cast<float>(byte(rng));
    std::vector<uint8_t> scratch(static_cast<size_t>((n1 + k1) * x_groups));
    std::vector<uint8_t> plain(static_cast<size_t>(n1 * x_groups * 8), 0xAB), fast(plain);
    ASSERT_TRUE(cpu::interleave_plane(plane.data(), row_length, x_count, n1, k1, x_groups,
                                      scratch.data(), plain.data()));
    ASSERT_TRUE(cpu::interleave_plane_avx512(plane.data(), row_length, x_count, n1, k1, x_groups,
                                             scratch.data(), fast.data()));
    EXPECT_EQ(plain, fast);
    // A range of rows alone (the driver interleaves a plane row by row).
    std::fill(fast.begin(), fast.end(), 0xAB);
    std::vector<uint8_t> part(fast);
    cpu::interleave_rows(scratch.data(), x_groups, k1, 3, 5, part.data());
    cpu::interleave_rows_avx512(scratch.data(), x_groups, k1, 3, 5, fast.data());
    EXPECT_EQ(part, fast);
    EXPECT_TRUE(std::equal(plain.begin() + 3 * x_groups * 8, plain.begin() + 5 * x_groups * 8,
                           fast.begin() + 3 * x_groups * 8));
    EXPECT_EQ(fast[0], 0xAB);
    // The A tiles of one interleaved row (5 tiles: 88 positions).
    const int64_t x_tiles = 5, row_positions = x_tiles * 16 + 8;
    std::vector<uint8_t> row(static_cast<size_t>(row_positions * 8));
    for (uint8_t& v : row)
      v = static_cast<uint8_t>(byte(rng));
    std::vector<uint8_t> plain_tiles(static_cast<size_t>(x_tiles * 1024), 0xAB),
        fast_tiles(plain_tiles);
    cpu::expand_a_tiles(row.data(), x_tiles, plain_tiles.data());
    cpu::CacheLineVector<uint8_t> aligned(fast_tiles.size());
    cpu::expand_a_tiles_avx512(row.data(), x_tiles, aligned.data());
    std::copy(aligned.begin(), aligned.end(), fast_tiles.begin());
    EXPECT_EQ(plain_tiles, fast_tiles);
    EXPECT_EQ(plain_tiles[1024 * 3 + 64 * 5 + 7], row[(3 * 16 + 5) * 8 + 7]);
    for (float bad : {0.5f, 256.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(),
                      std::numeric_limits<float>::infinity()})
      for (int64_t at : {int64_t{5}, (n1 + k1 - 2) * row_length + x_count - 1}) {
        std::vector<float> changed = plane;
        changed[static_cast<size_t>(at)] = bad;
        EXPECT_FALSE(cpu::interleave_plane(changed.data(), row_length, x_count, n1, k1, x_groups,
                                           scratch.data(), plain.data()));
        EXPECT_FALSE(cpu::interleave_plane_avx512(changed.data(), row_length, x_count, n1, k1,
                                                  x_groups, scratch.data(), fast.data()));
      }
  }
  // Accumulators as large as the digits make them, every filter count of a pass's lanes.
  std::uniform_int_distribution<int32_t> acc(-(1 << 23) + 1, (1 << 23) - 1);
  std::vector<int32_t> c(Int8BankShape::kTileRows * Int8BankShape::kColumns);
  for (int32_t& v : c)
    v = acc(rng);
  std::vector<float> scales(Int8BankShape::kFilters);
  for (float& s : scales)
    s = static_cast<float>(random_values(1, rng())[0]) * 1e-3f;
  for (int filters : {12, 5})
    for (int count : {16, 7}) {
      std::vector<float> plain(static_cast<size_t>(filters * 16), -1.0f), fast(plain);
      std::vector<float*> plain_rows, fast_rows;
      for (int f = 0; f < filters; ++f) {
        plain_rows.push_back(plain.data() + f * 16);
        fast_rows.push_back(fast.data() + f * 16);
      }
      cpu::combine_tile(c.data(), filters, scales.data(), count, plain_rows.data());
      cpu::combine_tile_avx512(c.data(), filters, scales.data(), count, fast_rows.data());
      EXPECT_EQ(std::memcmp(plain.data(), fast.data(), plain.size() * sizeof(float)), 0)
          << filters << " filters, " << count << " outputs";
    }
#else
  GTEST_SKIP() << "not an x86-64 build";
#endif
}

TEST(CpuInt8Bank, RefusesWhatItCannotTake) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{19, 6, 5, 1};
  const Options o = options_for(1);
  RunReport report;
  std::string why_not;
  for (float bad : {0.5f, 256.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity()}) {
    Int8Case c(EightBitKind::Uniform, n, 12, seed);
    c.input[c.input.size() / 2] = bad;
    EXPECT_FALSE(cpu::run_bank_int8(c.problem, o, report, cpu_backend::Tuning{},
                                    Int8Engine::Emulated, why_not))
        << bad;
    EXPECT_NE(why_not.find("not 8-bit"), std::string::npos) << why_not;
  }
  Int8Case c(EightBitKind::Uniform, n, 12, seed);
  cpu_backend::Tuning off;
  off.bank_int8 = false;
  EXPECT_FALSE(cpu::run_bank_int8(c.problem, o, report, off, Int8Engine::Emulated, why_not));
  EXPECT_NE(why_not.find("off"), std::string::npos) << why_not;
  cpu_backend::Tuning small;
  small.pad_limit_bytes = 4096;  // below one thread's buffers for these planes
  EXPECT_FALSE(cpu::run_bank_int8(c.problem, o, report, small, Int8Engine::Emulated, why_not));
  EXPECT_NE(why_not.find("too large"), std::string::npos) << why_not;
  detail::BankProblem weighted = c.problem;
  weighted.outputs.clear();
  EXPECT_FALSE(cpu::run_bank_int8(weighted, o, report, cpu_backend::Tuning{}, Int8Engine::Emulated,
                                  why_not));
  EXPECT_EQ(why_not, "the weighted sum");
  EXPECT_FALSE(cpu::int8_bank_cannot_implement(3, {9, 7, 1, 7}).empty());
  EXPECT_FALSE(cpu::int8_bank_cannot_implement(3, {7, 9, 1, 7}).empty());
  EXPECT_FALSE(cpu::int8_bank_cannot_implement(3, {7, 7, 1, 9}).empty());
  EXPECT_FALSE(cpu::int8_bank_cannot_implement(2, {7, 7, 1, 1}).empty());
  EXPECT_FALSE(cpu::int8_bank_cannot_implement(4, {7, 7, 7, 7}).empty());
  EXPECT_TRUE(cpu::int8_bank_cannot_implement(3, {8, 8, 1, 8}).empty());
  EXPECT_TRUE(cpu::int8_bank_cannot_implement(3, {5, 3, 1, 7}).empty());
}

TEST(CpuInt8Bank, TheBankSaysWhichPathRanAndWhy) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{21, 9, 8, 1};
  Int8Case c(EightBitKind::EchoLike, n, 12, seed);
  poison(c.out);
  RunReport report;
  cpu_backend::run_bank(c.problem, options_for(2), report);
  const cpu::AmxSupport& amx = cpu::amx_int8_support();
  const std::string said =
      amx.usable ? "CPU filter bank on AMX-INT8 tiles" : "not on AMX-INT8: " + amx.why_not;
  EXPECT_TRUE(std::any_of(report.notes.begin(), report.notes.end(), [&](const std::string& note) {
    return note.find(said) != std::string::npos;
  })) << said;
  const BankReference ref = bank_reference(c.input, n, kFilter, 12, c.taps);
  EXPECT_LT(worst_voxel_error(ref, c.out.data()), 1e-5);
}

TEST(CpuInt8Bank, AmxKernelEqualsTheEmulationAndIsAsAccurateAsFp32) {
  const cpu::AmxSupport& amx = cpu::amx_int8_support();
  if (!amx.usable)
    GTEST_SKIP() << amx.why_not;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Index& n : {Index{107, 23, 17, 1}, Index{13, 8, 5, 1}})
    for (EightBitKind kind : kEightBitKinds)
      for (int count : {12, 13}) {
        SCOPED_TRACE(std::to_string(n[0]) + " x " + std::to_string(n[1]) + " x " +
                     std::to_string(n[2]) + ", " + eight_bit_name(kind) + ", " +
                     std::to_string(count) + " filters");
        Int8Case c(kind, n, count, seed + count);
        if (count == 12) {
          c.taps = quadrature_bank_taps();
          c.problem.taps = c.taps.data();
        }
        run_int8(c, Int8Engine::Emulated, 2);
        const std::vector<float> emulated = c.out;
        // One thread (one run of every plane) and all of them (runs of a few planes).
        run_int8(c, Int8Engine::Amx, 1);
        EXPECT_EQ(std::memcmp(c.out.data(), emulated.data(), c.out.size() * sizeof(float)), 0);
        run_int8(c, Int8Engine::Amx, 0);
        EXPECT_EQ(std::memcmp(c.out.data(), emulated.data(), c.out.size() * sizeof(float)), 0);
        const std::vector<float> amx_out = c.out;
        cpu_backend::Tuning fp32_only;
        fp32_only.bank_int8 = false;
        RunReport report;
        poison(c.out);
        cpu_backend::run_bank(c.problem, options_for(0), report, fp32_only);
        const BankReference ref = bank_reference(c.input, n, kFilter, count, c.taps);
        const double int8 = worst_voxel_error(ref, amx_out.data());
        const double fp32 = worst_voxel_error(ref, c.out.data());
        std::cout << "[ accuracy ] " << eight_bit_name(kind)
                  << ": max |error| / sum |w||x|: FP32 kernel " << fp32 << ", AMX-INT8 " << int8
                  << "\n";
        EXPECT_LE(int8, fp32);
      }
}

}  // namespace
}  // namespace ndconv::test
