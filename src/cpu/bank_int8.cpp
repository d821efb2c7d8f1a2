// The CPU filter bank on 8-bit inputs (bank_int8.h): the weights' B tiles, the plain versions of
// the tile row, the interleaving and the combination, and the driver over runs of planes and
// threads.
#include "cpu/bank_int8.h"

#include "cpu/bank_int8_tiles.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/canonical_axes.h"
#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cpu/cpu_info.h"
#include "cpu/isa_dispatch.h"
#include "cpu/kernel_set.h"
#include "core/padding.h"
#include "core/problem.h"
#include "cpu/tuning.h"

namespace ndconv::cpu {

namespace {

using S = Int8BankShape;

std::string format_error(double e) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", e);
  return text;
}

// A canonical view of an output volume: base pointer and strides in canonical axis order.
struct OutputRows {
  float* data = nullptr;
  Index stride{};
  float* row(int64_t m1, int64_t m3) const { return data + m1 * stride[1] + m3 * stride[3]; }
};

// The functions of one engine.
struct Int8Functions {
  void (*tile)(const Int8Tile&);
  bool (*to_bytes)(const float*, int64_t, int64_t, int64_t, int64_t, uint8_t*);
  void (*interleave)(const uint8_t*, int64_t, int, int64_t, int64_t, uint8_t*);
  void (*expand)(const uint8_t*, int64_t, uint8_t*);
  void (*combine)(const int32_t*, int, const float*, int, float* const*);
  void (*begin)();
  void (*end)();
};

void no_tiles() {}

#if NDCONV_CPU_X86_KERNELS
// A worker's tiles: the permission asked on its own thread, then the configuration loaded.
void begin_amx_worker() {
  request_amx_tile_permission();
  amx_configure_tiles();
}
#endif

Int8Functions functions(Int8Engine engine) {
#if NDCONV_CPU_X86_KERNELS
  if (engine == Int8Engine::Amx)
    return {&amx_tile,
            &bytes_from_rows_avx512,
            &interleave_rows_avx512,
            &expand_a_tiles_avx512,
            &combine_tile_avx512,
            &begin_amx_worker,
            &amx_release_tiles};
#endif
  (void)engine;
  return {&emulate_tile, &bytes_from_rows, &interleave_rows, &expand_a_tiles,
          &combine_tile, &no_tiles,        &no_tiles};
}

// The tiles stay configured for the worker's chunk and are released however it ends.
struct TileSession {
  const Int8Functions& f;
  explicit TileSession(const Int8Functions& functions) : f(functions) { f.begin(); }
  ~TileSession() { f.end(); }
  TileSession(const TileSession&) = delete;
  TileSession& operator=(const TileSession&) = delete;
};

}  // namespace

std::string int8_bank_cannot_implement(int dims, const Index& k) {
  if (dims != 3 || k[0] > S::kGroup || k[1] > S::kGroup || k[3] > S::kMaxK3)
    return "the 8-bit bank takes 3D filters of up to 8 x 8 x 8 taps (the filter is " +
           std::to_string(k[0]) + " x " + std::to_string(k[1]) + " x " + std::to_string(k[3]) +
           (dims == 3 ? "" : ", " + std::to_string(dims) + "D") + ")";
  return {};
}

Int8BankWeights int8_bank_weights(const Index& k, int count, const float* taps) {
  const int64_t filter_taps = k[0] * k[1] * k[2] * k[3];
  Int8BankWeights w;
  w.passes = (count + S::kFilters - 1) / S::kFilters;
  w.k3 = static_cast<int>(k[3]);
  const size_t pass_bytes = static_cast<size_t>(w.k3) * S::kNTiles * S::kBTileBytes;
  w.tiles.assign(static_cast<size_t>(w.passes) * pass_bytes, 0);
  w.scales.assign(static_cast<size_t>(w.passes) * S::kFilters, 0.0f);
  for (int f = 0; f < count; ++f) {
    const float* filter = taps + f * filter_taps;
    const detail::SplitFilter split = detail::split_filter(filter, filter_taps, S::kDigits);
    w.worst_split_error =
        std::max(w.worst_split_error, detail::split_error(filter, filter_taps, split, S::kDigits));
    const int pass = f / S::kFilters, local = f % S::kFilters;
    w.scales[static_cast<size_t>(f)] = split.scale;
    int8_t* tiles = w.tiles.data() + static_cast<size_t>(pass) * pass_bytes;
    for (int d = 0; d < S::kDigits; ++d) {
      const int column = d * S::kFilters + local, ntile = column / 16, n = column % 16;
      for (int j3 = 0; j3 < w.k3; ++j3)
        for (int i = 0; i < k[1]; ++i)
          for (int dx = 0; dx < k[0]; ++dx) {
            const int kk = dx * S::kGroup + i;  // K index of tap (dx, i) in plane j3
            tiles[(j3 * S::kNTiles + ntile) * S::kBTileBytes + kk / 4 * S::kTileBytes + 4 * n +
                  kk % 4] =
                split.digits[static_cast<size_t>(d * filter_taps + (j3 * k[1] + i) * k[0] + dx)];
          }
    }
  }
  return w;
}

namespace {

// The tile registers in plain C++ for int8_tile_products: TILELOADD, TDPBUSD and TILESTORED of
// 16 rows of 64 bytes.
struct EmulatedTiles {
  uint8_t tmm[8][S::kTileRows * S::kTileBytes];
  void zero(int t) { std::fill(tmm[t], tmm[t] + sizeof tmm[t], uint8_t{0}); }
  void load(int t, const void* base, int64_t stride) {
    for (int r = 0; r < S::kTileRows; ++r)
      std::memcpy(tmm[t] + r * S::kTileBytes, static_cast<const uint8_t*>(base) + r * stride,
                  S::kTileBytes);
  }
  void store(int t, void* base, int64_t stride) {
    for (int r = 0; r < S::kTileRows; ++r)
      std::memcpy(static_cast<uint8_t*>(base) + r * stride, tmm[t] + r * S::kTileBytes,
                  S::kTileBytes);
  }
  // C[m][n] += sum over the 16 B rows and their 4 bytes of u8(A[m]) * s8(B[row][4 n ..]).
  void dpbusd(int c, int a, int b) {
    for (int m = 0; m < S::kTileRows; ++m)
      for (int n = 0; n < 16; ++n) {
        int32_t sum = 0;
        for (int k = 0; k < S::kTileBytes; ++k)
          sum += int32_t{tmm[a][m * S::kTileBytes + k]} *
                 int32_t{static_cast<int8_t>(tmm[b][k / 4 * S::kTileBytes + 4 * n + k % 4])};
        int32_t acc;
        std::memcpy(&acc, tmm[c] + m * S::kTileBytes + 4 * n, sizeof acc);
        acc += sum;
        std::memcpy(tmm[c] + m * S::kTileBytes + 4 * n, &acc, sizeof acc);
      }
  }
};

}  // namespace

void emulate_tile(const Int8Tile& t) {
  EmulatedTiles tiles;
  int8_tile_products(tiles, t);
}

bool bytes_from_rows(const float* rows, int64_t row_length, int64_t x_count, int64_t count,
                     int64_t x_groups, uint8_t* bytes) {
  for (int64_t y = 0; y < count; ++y) {
    const float* in = rows + y * row_length;
    uint8_t* row = bytes + y * x_groups;
    for (int64_t q = 0; q < x_groups; ++q) {
      const float v = q < row_length ? in[q] : 0.0f;
      // NaN fails every comparison.
      if (!(v >= 0.0f && v <= 255.0f) || v != std::floor(v))
        return false;
      row[q] = q < x_count ? static_cast<uint8_t>(v) : 0;
    }
  }
  return true;
}

void interleave_rows(const uint8_t* bytes, int64_t x_groups, int k1, int64_t y0, int64_t y1,
                     uint8_t* out) {
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t q = 0; q < x_groups; ++q)
      for (int i = 0; i < S::kGroup; ++i)
        out[(y * x_groups + q) * S::kGroup + i] = i < k1 ? bytes[(y + i) * x_groups + q] : 0;
}

void expand_a_tiles(const uint8_t* interleaved, int64_t x_tiles, uint8_t* out) {
  for (int64_t xt = 0; xt < x_tiles; ++xt)
    for (int m = 0; m < S::kTileRows; ++m)
      std::memcpy(out + (xt * S::kTileRows + m) * S::kTileBytes,
                  interleaved + (xt * S::kTileRows + m) * S::kGroup, S::kTileBytes);
}

bool interleave_plane(const float* plane, int64_t row_length, int64_t x_count, int64_t n1, int k1,
                      int64_t x_groups, uint8_t* bytes, uint8_t* out) {
  if (!bytes_from_rows(plane, row_length, x_count, n1 + k1 - 1, x_groups, bytes))
    return false;
  interleave_rows(bytes, x_groups, k1, 0, n1, out);
  return true;
}

void combine_tile(const int32_t* c, int filters, const float* scales, int count,
                  float* const* out) {
  for (int m = 0; m < count; ++m)
    for (int f = 0; f < filters; ++f) {
      int32_t acc[S::kDigits];
      for (int d = 0; d < S::kDigits; ++d)
        acc[d] = c[m * S::kColumns + d * S::kFilters + f];
      out[f][m] = detail::combine_slices(acc, S::kDigits, scales[f]);
    }
}

bool run_bank_int8(const detail::BankProblem& p, const Options& options, RunReport& report,
                   const cpu_backend::Tuning& tuning, Int8Engine engine, std::string& why_not) {
  const auto t0 = std::chrono::steady_clock::now();
  const int dims = p.input.dims;
  const Index k = core::to_canonical(dims, p.filter_extent, 1);
  why_not.clear();
  if (!tuning.bank_int8)
    why_not = "the 8-bit bank is off in the backend's tuning";
  else if (p.outputs.empty())
    why_not = "the weighted sum";
  else
    why_not = int8_bank_cannot_implement(dims, k);
  if (why_not.empty() && engine == Int8Engine::Amx && !amx_int8_support().usable)
    why_not = amx_int8_support().why_not;
  if (!why_not.empty())
    return false;
  const Int8BankWeights w = int8_bank_weights(k, p.count, p.taps);
  if (!(w.worst_split_error <= tuning.bank_int8_max_split_error)) {
    why_not = "the weights' " + std::to_string(S::kDigits) + " digits lose " +
              format_error(w.worst_split_error) +
              " of a filter's largest tap (the slice test allows " +
              format_error(tuning.bank_int8_max_split_error) + ")";
    return false;
  }
  const Int8Functions fn = functions(engine);
  const int threads = core::resolve_thread_count(options.threads);
  const Index n_in = core::to_canonical(dims, p.input.extent, 1);
  const Index in_stride = core::to_canonical(dims, p.input.stride, 0);
  const Index n_out = core::to_canonical(dims, p.output_extent, 1);
  const Index offset = core::to_canonical(dims, p.offset, 0);
  const int64_t x_groups = int8_x_groups(n_out[0]);
  const int64_t x_tiles = (n_out[0] + S::kTileRows - 1) / S::kTileRows;
  const int64_t x_count = n_out[0] + k[0] - 1;
  const int64_t row_length = round_up(std::max(x_count, x_groups), 16);
  const int64_t padded_rows = n_out[1] + k[1] - 1;
  const int64_t plane_in_bytes = padded_rows * x_groups;  // a padded plane as bytes
  // A plane's output row as A tiles: x_tiles tiles of 16 rows of 64 bytes (bank_int8.h).
  const int64_t tiles_row = x_tiles * S::kTileRows * S::kTileBytes;
  const int k3 = static_cast<int>(k[3]);
  const int k1 = static_cast<int>(k[1]);
  std::vector<OutputRows> outs;
  for (const VolumeView& o : p.outputs)
    outs.push_back({o.data, core::to_canonical(dims, o.stride, 0)});
  const bool contiguous_rows =
      std::all_of(outs.begin(), outs.end(), [](const OutputRows& o) { return o.stride[0] == 1; });

  // Runs of output planes, one per thread where there are planes enough and each run's planes as
  // bytes (its k3 - 1 halo planes included) within the tuning's slab; every worker's buffers
  // together within the padding limit the FP32 bank's slabs keep to.
  const int64_t max_run =
      std::max<int64_t>(1, tuning.bank_int8_slab_bytes / plane_in_bytes - (k3 - 1));
  const int64_t run_planes = std::min(max_run, (n_out[3] + threads - 1) / threads);
  const int64_t runs = (n_out[3] + run_planes - 1) / run_planes;
  const int64_t worker_bytes = row_length * int64_t{sizeof(float)} +
                               (run_planes + k3 - 1) * (plane_in_bytes + tiles_row) +
                               x_groups * S::kGroup;
  if (worker_bytes > tuning.pad_limit_bytes) {
    why_not = "the planes are too large for the 8-bit bank's per-thread buffers (" +
              std::to_string(worker_bytes >> 20) + " MiB a thread)";
    return false;
  }
  const int workers = static_cast<int>(
      std::min<int64_t>(threads, std::max<int64_t>(1, tuning.pad_limit_bytes / worker_bytes)));
  const int used_threads = static_cast<int>(std::min<int64_t>(workers, runs));
  std::atomic<bool> eight_bit{true};
  core::parallel_for(
      used_threads, runs,
      [&](int64_t begin, int64_t end, int) {
        const TileSession tiles(fn);
        std::unique_ptr<float[]> line(new float[static_cast<size_t>(row_length)]);
        std::unique_ptr<uint8_t[]> slab(
            new uint8_t[static_cast<size_t>((run_planes + k3 - 1) * plane_in_bytes)]);
        std::unique_ptr<uint8_t[]> interleaved(new uint8_t[static_cast<size_t>(x_groups * 8)]);
        // Row y of the run's planes as A tiles.
        CacheLineVector<uint8_t> rows(static_cast<size_t>((run_planes + k3 - 1) * tiles_row));
        // Two A tiles' accumulators: a tile's digits are combined while the next tile's products
        // run on the tile unit.
        constexpr int64_t kTileInts = S::kTileRows * S::kColumns;
        CacheLineVector<int32_t> c(static_cast<size_t>(2 * kTileInts));
        // One call's responses per filter where the outputs' rows are strided.
        std::vector<float> strided(contiguous_rows ? 0 : size_t{S::kFilters} * S::kTileRows);
        // Padded row q1 of padded plane q3 (as build_padded pads it, core/padding.h) as bytes.
        auto row_to_bytes = [&](int64_t q3, int64_t q1, uint8_t* bytes) {
          const int64_t i3 = detail::boundary_index(q3 + offset[3], n_in[3], p.boundary);
          const int64_t i1 = detail::boundary_index(q1 + offset[1], n_in[1], p.boundary);
          if (i1 < 0 || i3 < 0)
            std::fill(line.get(), line.get() + row_length, 0.0f);
          else
            core::gather_line(p.input.data + i1 * in_stride[1] + i3 * in_stride[3], in_stride[0],
                              n_in[0], offset[0], x_count, row_length, p.boundary, line.get());
          if (fn.to_bytes(line.get(), row_length, x_count, 1, x_groups, bytes))
            return true;
          eight_bit = false;
          return false;
        };
        // The digits of A tile xt of a pass's output row (y, z) into its filters' rows.
        auto combine = [&](const int32_t* acc, int64_t y, int64_t z, int64_t xt, int first,
                           int filters) {
          float* dst[S::kFilters];
          const int64_t x0 = xt * S::kTileRows;
          const int count = static_cast<int>(std::min<int64_t>(S::kTileRows, n_out[0] - x0));
          for (int f = 0; f < filters; ++f)
            dst[f] = contiguous_rows ? outs[first + f].row(y, z) + x0
                                     : strided.data() + f * S::kTileRows;
          fn.combine(acc, filters, w.scales.data() + first, count, dst);
          if (!contiguous_rows)
            for (int f = 0; f < filters; ++f) {
              const OutputRows& o = outs[first + f];
              float* out = o.row(y, z) + x0 * o.stride[0];
              for (int x = 0; x < count; ++x)
                out[x * o.stride[0]] = strided[static_cast<size_t>(f * S::kTileRows + x)];
            }
        };
        // A tile's accumulators wait in one of two slots until the next tile's products are
        // under way; then their digits are combined into the outputs.
        struct Pending {
          int64_t y, z, xt;
          int first, filters, slot;
        };
        Pending pending{};
        bool has_pending = false;
        int slot = 0;
        auto flush = [&] {
          if (has_pending)
            combine(c.data() + pending.slot * kTileInts, pending.y, pending.z, pending.xt,
                    pending.first, pending.filters);
          has_pending = false;
        };
        for (int64_t run = begin; run < end; ++run) {
          const int64_t z0 = run * run_planes, z1 = std::min(n_out[3], z0 + run_planes);
          // The run's padded planes as bytes.
          for (int64_t q3 = z0; q3 < z1 + k3 - 1; ++q3)
            for (int64_t q1 = 0; q1 < padded_rows; ++q1)
              if (!row_to_bytes(q3, q1, slab.get() + (q3 - z0) * plane_in_bytes + q1 * x_groups))
                return;
          for (int64_t y = 0; y < n_out[1]; ++y) {
            if (!eight_bit.load(std::memory_order_relaxed))
              return;
            // Row y of every plane of the run as A tiles, once.
            for (int64_t q3 = z0; q3 < z1 + k3 - 1; ++q3) {
              fn.interleave(slab.get() + (q3 - z0) * plane_in_bytes + y * x_groups, x_groups, k1, 0,
                            1, interleaved.get());
              fn.expand(interleaved.get(), x_tiles, rows.data() + (q3 - z0) * tiles_row);
            }
            // A column of A tiles (xt) at a time down the run's output planes: the k3 A tiles
            // of output (y, z) are k3 - 1 of those of (y, z - 1) and one more, still in L1.
            for (int pass = 0; pass < w.passes; ++pass) {
              Int8Tile tile;
              tile.b = w.pass_tiles(pass);
              tile.k3 = k3;
              const int first = pass * S::kFilters;
              const int filters = std::min(S::kFilters, p.count - first);
              for (int64_t xt = 0; xt < x_tiles; ++xt) {
                tile.x_tile = xt;
                for (int64_t z = z0; z < z1; ++z) {
                  for (int j3 = 0; j3 < k3; ++j3)
                    tile.a[j3] = rows.data() + (z - z0 + j3) * tiles_row;
                  tile.c = c.data() + slot * kTileInts;
                  fn.tile(tile);
                  flush();
                  pending = {y, z, xt, first, filters, slot};
                  has_pending = true;
                  slot ^= 1;
                }
              }
            }
            flush();
          }
        }
      },
      core::ProgressSpan{&options.progress, 0, 1});
  if (!eight_bit) {
    why_not = "the input is not 8-bit (a value that is not an integer in 0..255)";
    return false;
  }
  report.threads = used_threads;
  report.outputs_per_thread = 1;
  report.outputs_per_thread_reason = "the 8-bit bank: a run of output planes per thread";
  report.device_name = cpu_description();
  report.notes.push_back(
      std::string("CPU filter bank on ") +
      (engine == Int8Engine::Amx ? "AMX-INT8 tiles (TDPBUSD" : "the emulated AMX tiles (") +
      " u8 x s8, " + std::to_string(S::kDigits) + " weight digits per filter, " +
      std::to_string(w.passes) + " passes of up to " + std::to_string(S::kFilters) +
      " filters, runs of " + std::to_string(run_planes) + " planes): the input is 8-bit");
  report.slabs = 1;
  report.seconds_compute = detail::seconds_since(t0);
  return true;
}

}  // namespace ndconv::cpu
