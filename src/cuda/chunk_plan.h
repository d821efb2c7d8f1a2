// The chunk planner of the CUDA backend's host path, free of CUDA so that CI tests it: how a volume
// is cut along its last axis into chunks that are uploaded, filtered and downloaded in a pipeline
// (upload of chunk i + 1, compute of chunk i and download of chunk i - 1 overlap on the GPU).
//
// A chunk is a slab as staging.h defines it: output rows [out_first, out_first + out_rows) along
// the last axis L, computed from the input rows out_first + offset_L + r, r < out_rows + halo, each
// resolved by the boundary condition, as an ordinary problem with offset 0 along L. The one-pass
// plan (a single chunk) is the whole problem as the caller gave it, and the kernel's own boundary
// handling serves every axis.
//
// Why chunks even when the volume fits: the copies and the kernel of one call can only overlap when
// the work is cut into pieces. A volume that fits the device budget is pipelined *resident*: the
// whole input is uploaded into one device buffer in pieces of consecutive rows, and each chunk is
// the original problem restricted to its output rows, computed once the pieces holding the rows it
// reads are uploaded, and downloaded while the next chunks compute. Nothing is uploaded twice and
// the kernel resolves the boundary itself, as in one pass. A volume that does not fit (or not under
// the memory cap) is cut into staged slabs as above. One planner decides, so that there is one
// path.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/problem.h"
#include "ndconv/errors.h"

namespace ndconv::cuda_backend {

/// What the planner needs to know about a problem (counts in floats and rows).
struct ChunkRequest {
  int64_t out_rows = 1;                ///< output extent along the last axis
  int64_t in_rows = 1;                 ///< input extent along the last axis
  int64_t in_row = 1;                  ///< floats per input row (product of the other extents)
  int64_t out_row = 1;                 ///< floats per output row
  int64_t halo = 0;                    ///< filter extent along the last axis minus one
  int64_t offset_last = 0;             ///< the problem's offset along the last axis
  int64_t scratch_factor = 0;          ///< input-sized scratch buffers a chunk needs (separable)
  int64_t reserved_floats = 0;         ///< device memory the launch needs besides the chunk buffers
  int64_t budget_floats = 0;           ///< device memory the call may use
  Boundary boundary = Boundary::Zero;  ///< the boundary along the last axis (resident chunks)
  /// Bytes per input value held on the device before conversion (0 when the input is float32 as
  /// given): the resident input's stored copy counts against the budget.
  int64_t stored_bytes = 0;
};

/// One chunk: output rows [out_first, out_first + out_rows) from input rows [in_first, in_first +
/// in_rows) of the boundary-extended input (in_first may be negative or past the end). In a
/// resident plan, [in_first, in_first + in_rows) lies inside the input: the rows the chunk reads,
/// whose own extent resolves the boundary exactly as the whole input does for the chunk's reads
/// (detail::input_rows_read), and `wait_piece` is the last piece it must wait for.
struct Chunk {
  int64_t out_first = 0;
  int64_t out_rows = 0;
  int64_t in_first = 0;
  int64_t in_rows = 0;
  int wait_piece = -1;
};

/// A piece of a resident input upload: input rows [first, first + rows).
using Piece = detail::RowRange;

struct ChunkPlan {
  bool one_pass = true;  ///< a single chunk: the problem as given (kernel boundary handling)
  int buffer_sets = 1;   ///< chunks in flight, each with its own device buffers and stream
  int64_t in_buffer_floats = 0;       ///< per set
  int64_t out_buffer_floats = 0;      ///< per set
  int64_t scratch_buffer_floats = 0;  ///< per set (scratch_factor input-sized buffers)
  bool memory_bound = false;          ///< chunk size limited by the device memory budget
  /// Resident: one set holding the whole input and output, the input uploaded in `pieces` (in
  /// order) and the chunks computed in place (Chunk::wait_piece).
  bool resident = false;
  /// Resident: the streams the chunks' kernels run on in turn, each with its own scratch.
  int compute_streams = 1;
  std::vector<Piece> pieces;
  std::vector<Chunk> chunks;

  int64_t device_floats() const {
    return buffer_sets * (in_buffer_floats + out_buffer_floats) +
           buffer_sets * compute_streams * scratch_buffer_floats;
  }
};

/// Input floats per chunk the pipeline aims at: large enough that a chunk's fixed costs (a launch,
/// events, a few copies: tens of microseconds) stay small against its transfers (8 MiB cross PCIe
/// in about 0.16 ms at the 51.6 GB/s pinned rate measured on the H100 machine), small enough that
/// filling and draining the pipeline (one chunk's upload and one download not overlapped) is a
/// small part of a 64 MiB volume's transfers.
inline constexpr int64_t kTargetChunkFloats = int64_t{2} << 20;  // 8 MiB of float32
/// Volumes below two target chunks run in one pass: too small for the overlap to pay.
inline constexpr int64_t kMinPipelinedFloats = 2 * kTargetChunkFloats;
/// A chunk has at least this many output rows per halo row, so that re-uploading the halo costs at
/// most a quarter of the input upload.
inline constexpr int64_t kRowsPerHaloRow = 4;
/// Chunks in flight: upload, compute and download of three consecutive chunks at once.
inline constexpr int kMaxBufferSets = 3;
/// Resident chunks per call: one per kMinPieceFloats of input, at least 2 and at most 8. A call's
/// downloads run one after another behind its kernels, so it ends about one chunk's kernel and
/// download after its last upload; smaller chunks would shorten that, but each costs the host a
/// launch (15-40 microseconds for a dense filter) and a staged call a synchronisation per piece:
/// up to 16 dense chunks, or 2 MiB of output each (33 chunks), made the api_* calls slower
/// (H100 and H200, same runs). Pieces of at least 2 MiB keep each copy near the full PCIe rate.
inline constexpr int64_t kMaxResidentPieces = 8;
inline constexpr int64_t kMinPieceFloats = int64_t{512} << 10;  // 2 MiB of float32
/// Compute streams of a resident call: the kernels of consecutive chunks overlap where their pieces
/// are on the device, so that a chunk too small to fill the GPU does not hold back the next. With
/// the pieces aligned to the chunks (plan_resident), the dense4d_7 call (96^3 x 16, 7^4) took
/// 2.39-2.54 ms against 2.90-3.08 ms with one stream and even pieces (H100, same run).
inline constexpr int kComputeStreams = 3;
/// Output rows of a resident chunk are a multiple of this (except the last chunk): the tiled
/// kernel's default outputs per thread along the last axis (KO 4), so that every block of a chunk
/// is as full as in one pass.
inline constexpr int64_t kResidentRowMultiple = 4;

/// The resident plan of `r` in about `count` chunks, or an empty plan (no chunks) when fewer than
/// two chunks result. The first and the last chunk are a quarter of the others, so that the first
/// download starts after a short upload and compute, and the last ends soon after the last upload.
/// Each piece holds the rows its chunk reads beyond those of the chunks before it, so that every
/// chunk starts as soon as its own rows are on the device; where the first chunk reads most of the
/// input (a periodic wrap), the input goes up in min(count, kMaxResidentPieces) even pieces.
/// Chunks run on up to kComputeStreams streams where their scratch fits the budget the whole-input
/// scratch was checked against, so that the kernels of consecutive small chunks overlap.
inline ChunkPlan plan_resident(const ChunkRequest& r, int64_t count) {
  ChunkPlan plan;
  count = std::min({count, r.in_rows, r.out_rows});
  const int64_t by_count = (r.out_rows + count - 1) / count;
  const int64_t rows =
      (by_count + kResidentRowMultiple - 1) / kResidentRowMultiple * kResidentRowMultiple;
  if (count < 2 || rows >= r.out_rows)
    return plan;
  plan.one_pass = false;
  plan.resident = true;

  // Output rows per chunk: a short first and last chunk where the volume has room for them.
  const int64_t edge =
      (rows / 4 + kResidentRowMultiple - 1) / kResidentRowMultiple * kResidentRowMultiple;
  std::vector<int64_t> sizes;
  int64_t left = r.out_rows;
  auto take = [&](int64_t n) {
    n = std::min(n, left);
    sizes.push_back(n);
    left -= n;
  };
  if (edge < rows && r.out_rows >= 2 * edge + rows) {
    take(edge);
    while (left > rows + edge)
      take(rows);
    const int64_t before_last = (left - edge) / kResidentRowMultiple * kResidentRowMultiple;
    if (before_last > 0)
      take(before_last);
  } else {
    while (left > rows)
      take(rows);
  }
  if (left > 0)
    take(left);

  std::vector<Piece> reads;  // the input rows of each chunk
  int64_t scratch_rows = 0, o0 = 0;
  for (const int64_t n : sizes) {
    reads.push_back(detail::input_rows_read(o0, n, r.offset_last, r.halo, r.in_rows, r.boundary));
    scratch_rows = std::max(scratch_rows, reads.back().rows);
    o0 += n;
  }
  // Pieces: the new rows of each chunk in turn (rows before a chunk's first are already up).
  const int64_t head = reads[0].first + reads[0].rows;
  if (head <= r.in_rows / 2) {
    int64_t uploaded = 0;
    for (const Piece& in : reads) {
      const int64_t end = in.first + in.rows;
      if (end > uploaded) {
        plan.pieces.push_back({uploaded, end - uploaded});
        uploaded = end;
      }
    }
    if (uploaded < r.in_rows)  // rows no chunk reads (a valid region's far edge)
      plan.pieces.push_back({uploaded, r.in_rows - uploaded});
  }
  if (plan.pieces.size() < 2) {
    plan.pieces.clear();
    const int64_t split = std::min({count, kMaxResidentPieces, r.in_rows});
    for (int64_t p = 0; p < split; ++p) {
      const int64_t first = r.in_rows * p / split;
      plan.pieces.push_back({first, r.in_rows * (p + 1) / split - first});
    }
  }

  o0 = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const Piece& in = reads[k];
    int wait = 0;
    while (plan.pieces[static_cast<size_t>(wait)].first +
               plan.pieces[static_cast<size_t>(wait)].rows <
           in.first + in.rows)
      ++wait;
    plan.chunks.push_back({o0, sizes[k], in.first, in.rows, wait});
    o0 += sizes[k];
  }
  plan.in_buffer_floats = r.in_rows * r.in_row;
  plan.out_buffer_floats = r.out_rows * r.out_row;
  plan.scratch_buffer_floats = scratch_rows * r.in_row * r.scratch_factor;
  const int64_t streams = std::min<int64_t>(kComputeStreams, static_cast<int64_t>(sizes.size()));
  plan.compute_streams =
      streams * plan.scratch_buffer_floats <= plan.in_buffer_floats * r.scratch_factor
          ? static_cast<int>(streams)
          : 1;
  return plan;
}

/// Output rows per chunk so that `sets` sets of (rows + halo) input rows, `rows` output rows and
/// the scratch fit in `budget_floats`; 0 when not even one row fits.
inline int64_t rows_fitting(const ChunkRequest& r, int64_t budget_floats, int sets) {
  const int64_t per_set = (budget_floats - r.reserved_floats) / sets;
  const int64_t in_cost = r.in_row * (1 + r.scratch_factor);
  const int64_t fixed = r.halo * in_cost;
  if (per_set <= fixed)
    return 0;
  return (per_set - fixed) / (in_cost + r.out_row);
}

/// The pipeline's plan for `r`. Throws InvalidArgument when not even one output row fits the
/// budget. Every output row lies in exactly one chunk, in order.
inline ChunkPlan plan_chunks(const ChunkRequest& r) {
  ChunkPlan plan;
  const int64_t whole_in = r.in_rows * r.in_row;
  const int64_t whole =
      whole_in * (1 + r.scratch_factor) + r.out_rows * r.out_row + r.reserved_floats;
  const bool fits = whole <= r.budget_floats;
  const int64_t stored_floats = (whole_in * r.stored_bytes + 3) / 4;
  if (whole_in >= kMinPipelinedFloats && whole + stored_floats <= r.budget_floats) {
    ChunkPlan resident =
        plan_resident(r, std::clamp<int64_t>(whole_in / kMinPieceFloats, 2, kMaxResidentPieces));
    if (!resident.chunks.empty())
      return resident;
  }

  // Rows per chunk for the overlap: about kTargetChunkFloats of input, at least kRowsPerHaloRow
  // rows per halo row, at least two chunks, all of about the same size.
  int64_t rows = r.out_rows;
  if (whole_in >= kMinPipelinedFloats && r.out_rows >= 2) {
    const int64_t by_target =
        std::max<int64_t>(1, kTargetChunkFloats / std::max<int64_t>(1, r.in_row));
    const int64_t by_halo = std::max<int64_t>(1, r.halo * kRowsPerHaloRow);
    rows = std::max(by_target, by_halo);
    const int64_t count = r.out_rows / rows;  // chunks of at least `rows` rows
    // Fewer than two chunks of that size: no pipeline; else chunks of equal size.
    rows = count < 2 ? r.out_rows : (r.out_rows + count - 1) / count;
  }
  if (fits && rows >= r.out_rows) {
    plan.buffer_sets = 1;
    plan.in_buffer_floats = whole_in;
    plan.out_buffer_floats = r.out_rows * r.out_row;
    plan.scratch_buffer_floats = whole_in * r.scratch_factor;
    plan.chunks.push_back({0, r.out_rows, 0, r.in_rows});
    return plan;
  }
  // Chunks: as many sets in flight as the budget holds (three for the overlap, at least two where
  // the memory cap allows, else one), then as many rows per chunk as fit.
  int sets = kMaxBufferSets;
  int64_t fitting = 0;
  for (; sets >= 1; --sets) {
    fitting = rows_fitting(r, r.budget_floats, sets);
    if (fitting >= std::min(rows, int64_t{1} + (sets > 1 ? r.halo : 0)))
      break;
  }
  if (sets < 1) {
    sets = 1;
    fitting = rows_fitting(r, r.budget_floats, 1);
  }
  if (fitting < 1) {
    throw InvalidArgument("the device memory budget (" +
                          std::to_string(std::max<int64_t>(0, r.budget_floats) * 4) +
                          " bytes) is too small for one slab row: it needs " +
                          std::to_string(((r.halo + 1) * r.in_row * (1 + r.scratch_factor) +
                                          r.out_row + r.reserved_floats) *
                                         4) +
                          " bytes");
  }
  if (fitting < rows) {
    rows = fitting;
    plan.memory_bound = true;
  }
  plan.one_pass = false;
  const int64_t count = (r.out_rows + rows - 1) / rows;
  plan.buffer_sets = static_cast<int>(std::min<int64_t>(sets, count));
  plan.in_buffer_floats = (rows + r.halo) * r.in_row;
  plan.out_buffer_floats = rows * r.out_row;
  plan.scratch_buffer_floats = plan.in_buffer_floats * r.scratch_factor;
  for (int64_t o0 = 0; o0 < r.out_rows; o0 += rows) {
    const int64_t n = std::min(rows, r.out_rows - o0);
    plan.chunks.push_back({o0, n, o0 + r.offset_last, n + r.halo});
  }
  return plan;
}

/// A run of consecutive staged rows [first, first + rows) of a chunk that come from consecutive
/// input rows [source, source + rows), or (source < 0) are zeros.
struct RowRun {
  int64_t first = 0;
  int64_t rows = 0;
  int64_t source = -1;
};

/// The staged rows of `chunk` as runs: consecutive rows whose sources (boundary_index) are
/// consecutive input rows, or all zeros, form one run, so that an interior chunk is one copy.
/// `map(i)` is the boundary mapping of input row i (-1 for a zero row).
template <typename Map>
std::vector<RowRun> row_runs(const Chunk& chunk, Map map) {
  std::vector<RowRun> runs;
  for (int64_t r = 0; r < chunk.in_rows; ++r) {
    const int64_t src = map(chunk.in_first + r);
    if (!runs.empty()) {
      RowRun& last = runs.back();
      const bool continues =
          src < 0 ? last.source < 0 : (last.source >= 0 && last.source + last.rows == src);
      if (continues) {
        ++last.rows;
        continue;
      }
    }
    runs.push_back({r, 1, src});
  }
  return runs;
}

}  // namespace ndconv::cuda_backend
