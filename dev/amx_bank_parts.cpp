// Where the CPU's 8-bit filter bank (src/cpu/bank_int8.h) spends its time on a CPU with AMX: the
// 160^3 bank of 12 7^3 filters taken apart on `threads` threads, each part alone over the work of
// a whole run (every thread its own copy): the tiles alone (TDPBUSD with its A and B loads), the
// AVX-512 combination alone, both as the driver interleaves them, and the interleaving of the
// padded planes; then the whole run_bank_int8 call. A development probe, not a benchmark.
//   g++ -O2 -std=c++17 -I src dev/amx_bank_parts.cpp build/src/libndconv_core.a -lpthread
//       -o amx_bank_parts && ./amx_bank_parts [threads]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "cpu/bank_int8.h"
#include "cpu/isa_dispatch.h"
#include "cpu/tuning.h"

namespace {

using namespace ndconv;
using S = cpu::Int8BankShape;
using Clock = std::chrono::steady_clock;

constexpr int64_t kN = 160, kK = 7;
const int64_t kGroups = cpu::int8_x_groups(kN), kXTiles = kN / 16;
const int64_t kPlaneBytes = kN * kGroups * S::kGroup;

// One thread's share of a 160^3 run: kN * kN / threads output rows, each kXTiles tiles.
struct Part {
  std::vector<uint8_t> ring;
  cpu::CacheLineVector<uint8_t> tiles;  // rows 0-15 of the ring's planes as A tiles
  std::vector<int32_t> c;
  std::vector<float> out;
};

template <class Body>
double run_threads(int threads, Body body) {
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { body(t); });
  for (std::thread& th : pool)
    th.join();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const cpu::AmxSupport& amx = cpu::amx_int8_support();
  if (!amx.usable)
    std::printf("no AMX (%s): the AVX-512 parts only\n", amx.why_not.c_str());
  const int threads =
      argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> tap(-1, 1);
  std::vector<float> taps(12 * 343);
  for (float& t : taps)
    t = tap(rng);
  const cpu::Int8BankWeights w = cpu::int8_bank_weights({kK, kK, 1, kK}, 12, taps.data());
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t row_length = 176, padded_rows = kN + kK - 1;
  std::vector<float> plane(padded_rows * row_length, 0.0f);
  for (int64_t y = 0; y < padded_rows; ++y)
    for (int64_t x = 0; x < kN + kK - 1; ++x)
      plane[y * row_length + x] = static_cast<float>(byte(rng));
  std::vector<Part> parts(threads);
  for (Part& p : parts) {
    p.ring.resize(kK * kPlaneBytes);
    std::vector<uint8_t> bytes(padded_rows * kGroups);
    for (int j = 0; j < kK; ++j)
      cpu::interleave_plane_avx512(plane.data(), row_length, kN + kK - 1, kN, kK, kGroups,
                                   bytes.data(), p.ring.data() + j * kPlaneBytes);
    p.tiles.resize(16 * kK * kXTiles * 1024);
    for (int64_t y = 0; y < 16; ++y)
      for (int j = 0; j < kK; ++j)
        cpu::expand_a_tiles(p.ring.data() + j * kPlaneBytes + y * kGroups * S::kGroup, kXTiles,
                            p.tiles.data() + (y * kK + j) * kXTiles * 1024);
    p.c.resize(2 * 16 * S::kColumns);
    p.out.resize(12 * kN);
  }
  const int64_t rows = kN * kN / threads;  // each thread's output rows
  const double tiles = static_cast<double>(rows * kXTiles * threads);
  auto tile_at = [&](Part& p, int64_t row) {
    cpu::Int8Tile t;
    const int64_t y = row % kN;
    for (int j = 0; j < kK; ++j)  // the product's A tiles of row y % 16
      t.a[j] = p.tiles.data() + (y % 16 * kK + j) * kXTiles * 1024;
    t.b = w.pass_tiles(0);
    t.k3 = kK;
    return t;
  };
  const double tiles_ms = !amx.usable ? 0 : run_threads(threads, [&](int id) {
    Part& p = parts[id];
    cpu::amx_configure_tiles();
    for (int64_t r = 0; r < rows; ++r) {
      cpu::Int8Tile t = tile_at(p, r);
      for (int64_t xt = 0; xt < kXTiles; ++xt) {
        t.x_tile = xt;
        t.c = p.c.data() + xt % 2 * 16 * S::kColumns;
        cpu::amx_tile(t);
      }
    }
    cpu::amx_release_tiles();
  });
  const double combine_ms = run_threads(threads, [&](int id) {
    Part& p = parts[id];
    float* dst[12];
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t xt = 0; xt < kXTiles; ++xt) {
        for (int f = 0; f < 12; ++f)
          dst[f] = p.out.data() + f * kN + xt * 16;
        cpu::combine_tile_avx512(p.c.data() + xt % 2 * 16 * S::kColumns, 12, w.scales.data(), 16,
                                 dst);
      }
  });
  const double both_ms = !amx.usable ? 0 : run_threads(threads, [&](int id) {
    Part& p = parts[id];
    float* dst[12];
    cpu::amx_configure_tiles();
    for (int64_t r = 0; r < rows; ++r) {
      cpu::Int8Tile t = tile_at(p, r);
      for (int64_t xt = 0; xt <= kXTiles; ++xt) {
        if (xt < kXTiles) {
          t.x_tile = xt;
          t.c = p.c.data() + xt % 2 * 16 * S::kColumns;
          cpu::amx_tile(t);
        }
        if (xt > 0) {
          for (int f = 0; f < 12; ++f)
            dst[f] = p.out.data() + f * kN + (xt - 1) * 16;
          cpu::combine_tile_avx512(p.c.data() + (xt - 1) % 2 * 16 * S::kColumns, 12,
                                   w.scales.data(), 16, dst);
        }
      }
    }
    cpu::amx_release_tiles();
  });
  const double interleave_ms = run_threads(threads, [&](int id) {
    Part& p = parts[id];
    std::vector<uint8_t> bytes(padded_rows * kGroups);
    for (int64_t z = 0; z < (kN + kK - 1) * 16 / 10 / threads + 1; ++z)  // runs' halo included
      cpu::interleave_plane_avx512(plane.data(), row_length, kN + kK - 1, kN, kK, kGroups,
                                   bytes.data(), p.ring.data() + z % kK * kPlaneBytes);
  });
  const double dp = tiles * 21;  // TDPBUSD per run
  std::printf("%d threads, 160^3 x 12 filters: %.0f tiles of 16 outputs, %.0f TDPBUSD\n", threads,
              tiles, dp);
  std::printf("tiles alone       %7.2f ms  (%.1f ns per TDPBUSD per thread, %.1f int8 TOPS)\n",
              tiles_ms, tiles_ms * 1e6 / dp * threads, dp * 16 * 16 * 64 * 2 / tiles_ms * 1e-9);
  std::printf("combination alone %7.2f ms  (%.1f ns per tile per thread)\n", combine_ms,
              combine_ms * 1e6 / tiles * threads);
  std::printf("tiles + combination %5.2f ms\n", both_ms);
  std::printf("interleaving      %7.2f ms  (%d planes per thread)\n", interleave_ms,
              static_cast<int>((kN + kK - 1) * 16 / 10 / threads + 1));

  if (!amx.usable)
    return 1;
  // The whole call on a 160^3 volume of integers 0..255.
  std::vector<float> input(kN * kN * kN);
  for (float& v : input)
    v = static_cast<float>(byte(rng));
  std::vector<float> outputs(12 * input.size());
  detail::BankProblem p;
  p.input = make_view(static_cast<const float*>(input.data()), 3, {kN, kN, kN, 1});
  p.filter_extent = {kK, kK, kK, 1};
  p.count = 12;
  p.taps = taps.data();
  p.offset = {-3, -3, -3, 0};
  p.output_extent = {kN, kN, kN, 1};
  for (int f = 0; f < 12; ++f)
    p.outputs.push_back(make_view(outputs.data() + f * input.size(), 3, {kN, kN, kN, 1}));
  Options o;
  o.threads = threads;
  for (int rep = 0; rep < 4; ++rep) {
    RunReport report;
    std::string why_not;
    const auto t0 = Clock::now();
    const bool ran =
        cpu::run_bank_int8(p, o, report, cpu_backend::Tuning{}, cpu::Int8Engine::Amx, why_not);
    std::printf("run_bank_int8     %7.2f ms %s\n",
                std::chrono::duration<double, std::milli>(Clock::now() - t0).count(),
                ran ? "" : why_not.c_str());
  }
  return 0;
}
