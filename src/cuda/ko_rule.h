// The outputs-per-thread (KO) rule of the CUDA backend, as a pure function so that it is unit
// tested on recorded numbers without a GPU. The backend feeds it what the CUDA runtime reports for
// each compiled instantiation (registers, spills, occupancy); docs/design.md explains the model.
//
// Cost model, in issue slots per useful output, of a thread that computes KO outputs along the
// last axis with a filter of K taps along it (cuda/blocked/blocked_thread.h): per tap row it reads
// K warp-uniform taps (each also costs a window move), loads K+KO-1 inputs and issues K*KO FMAs. So
//   cost(KO) = (K * (KO * kFmaCost + kTapCost) + (K+KO-1) * kLoadCost) / KO / tail(KO) / latency
// with tail(KO) = n / (ceil(n/KO)*KO) the share of computed outputs that exist along an axis of n
// voxels, and latency = min(1, occupancy / kOccupancyTarget) the penalty for too few resident
// warps to hide memory latency. Spilling or unlaunchable instantiations are never chosen. Ties go
// to the smaller KO.
//
// Cap: no KO above the smallest usable KO that is >= K. Beyond it the loads per output,
// (K+KO-1)/KO, are already below 2 and shrink little, while registers grow and occupancy falls,
// which the model underrates: uncapped, it picks KO 16 for short filters, where a smaller KO runs
// faster (docs/performance.md, design decisions), while for long filters the cap does not bind.
// With K = 1 the cap gives KO 1: each output reads one row, so there is nothing to reuse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ndconv::cuda_backend {

struct KoCandidate {
  int outputs_per_thread = 0;
  int registers_per_thread = 0;
  std::size_t local_bytes = 0;
  int block_threads = 0;
  int blocks_per_sm = 0;
  double occupancy = 0;
};

struct KoChoice {
  int outputs_per_thread = 0;  ///< 0 when no candidate is usable
  std::string reason;
};

/// Relative costs of the model: an FMA; a tap read from the constant cache plus the register move
/// of the sliding input window; an input load (L1 hit or not, with its address arithmetic); and
/// the occupancy that hides memory latency well enough on Ampere/Hopper.
inline constexpr double kFmaCost = 1.0;
inline constexpr double kTapCost = 2.0;
inline constexpr double kLoadCost = 4.0;
inline constexpr double kOccupancyTarget = 0.25;

/// The model's cost per useful output (lower is better); infinity for unusable candidates.
double ko_cost(const KoCandidate& c, int64_t last_axis_extent, int64_t last_axis_filter_extent);

/// Picks KO among `candidates` for an output of `last_axis_extent` voxels along the blocked axis
/// and a filter of `last_axis_filter_extent` taps along it.
KoChoice choose_outputs_per_thread(const std::vector<KoCandidate>& candidates,
                                   int64_t last_axis_extent, int64_t last_axis_filter_extent);

/// The tiled kernel's KO by register budget (cuda/tiled/): what one thread issues per useful
/// output, in the same slots as ko_cost, for a thread of TX outputs along x times KO along the last
/// axis, reading its planes from shared memory. Per input plane of its tile (KO + k3 - 1 planes
/// along the last axis, times k2 along axis 2) and tap row (k1), it reads its row segment once,
/// ceil((TX + k0 - 1) / 4) 128-bit loads, for every output whose taps meet that plane; per output
/// and tap row it reads the taps, ceil(k0 / 4) 128-bit loads, and issues TX * k0 FMAs; each plane
/// also costs its block barrier and bulk-copy wait (kTiledPlaneCost). So
///   cost(KO) = (TX KO k0 k1 k2 k3 kFmaCost + (KO k3 k1 k2 ceil(k0/4) + (KO + k3 - 1) k2 k1
///               ceil((TX + k0 - 1)/4)) kLoadCost + (KO + k3 - 1) k2 kTiledPlaneCost)
///              / (TX KO) / tail(KO) / latency
/// with tail and latency as in ko_cost (latency from the occupancy the launch's shared memory
/// allows). Instantiations that spill more than `allowed_local_bytes` or cannot be resident are
/// never chosen; ties go to the smaller KO. The model ranks the compiled KO; the measured gaps are
/// larger than its estimates (docs/study.md), because plane waits stall whole warps.
inline constexpr double kTiledPlaneCost = 32.0;

/// The tiled kernel's filter in canonical axes (x, axis 1, axis 2, the last axis) and TX.
struct TiledWork {
  int64_t k0 = 1, k1 = 1, k2 = 1, k3 = 1;
  int outputs_along_x = 8;
};

double tiled_ko_cost(const KoCandidate& c, const TiledWork& work, int64_t last_axis_extent,
                     std::size_t allowed_local_bytes = 0);

/// Picks KO among the tiled kernel's compiled instantiations of one shape (their resources as the
/// runtime reports them for this launch) by tiled_ko_cost.
KoChoice choose_tiled_outputs_per_thread(const std::vector<KoCandidate>& candidates,
                                         const TiledWork& work, int64_t last_axis_extent,
                                         std::size_t allowed_local_bytes = 0);

/// The tiled dense kernel's shape (cuda/tiled/tiled_thread.h): which compiled instantiations serve
/// a problem. Block rows (threads along axis 1): 32 when axis 1 has at least 16 outputs, else 1 (a
/// 1-row image would leave 31 of 32 threads idle). KO: 1 when the last axis has a single output (a
/// 2D image, whose y the kernel puts on axis 1), a forced KO (ExpertOptions::outputs_per_thread)
/// where the tiled kernel has it (`tiled_has_ko`), else 0: the register budget decides among the
/// compiled KO (choose_tiled_outputs_per_thread). `wide_x` (prefer_wide_x): 16 outputs along x per
/// thread, 2 x 64 threads per block, KO 1, when axis 1 has at least 16 outputs and KO is not
/// forced.
struct TiledChoice {
  int outputs_per_thread = 0;  ///< 0: by the register budget
  int block_rows = 0;
  int outputs_along_x = 8;  ///< TX
  std::string reason;
};

/// The tiled kernel's compiled KO along the last axis.
inline constexpr int kTiledKo[] = {1, 4};

bool tiled_has_ko(int ko);

TiledChoice choose_tiled_shape(int64_t axis1_extent, int64_t last_axis_extent, int forced_ko,
                               bool wide_x = false);

/// Whether the automatic plan takes the wide tiled shape (TX 16, 2 x 64 threads) first: for 2D
/// images with filters at least `min_taps` (Tuning::tiled_wide_x_min_taps) wide.
bool prefer_wide_x(int dims, int64_t filter_extent_x, int min_taps = 9);

}  // namespace ndconv::cuda_backend
