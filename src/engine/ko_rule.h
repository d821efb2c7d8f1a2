// The outputs-per-thread (KO) rule of the CUDA backend, as a pure function so that it is unit
// tested on recorded numbers without a GPU. The backend feeds it what the CUDA runtime reports for
// each compiled instantiation (registers, spills, occupancy); docs/design.md explains the model.
//
// Cost model, per useful output of a thread that computes KO outputs along the last axis with a
// filter of K taps along it (taps padded with KO-1 zeros on each side, so the hot loop is branch
// free): the thread walks K+KO-1 input rows; each row costs one input load and KO FMAs (each FMA
// with a warp-uniform tap read). So
//   cost(KO) = (K+KO-1) * (KO * kFmaCost + kLoadCost) / KO / tail(KO) / latency(occupancy)
// with tail(KO) = n / (ceil(n/KO)*KO) the share of computed outputs that exist along an axis of n
// voxels, and latency(occ) = min(1, occ / kOccupancyTarget) the penalty for too few resident warps.
// Spilling or unlaunchable instantiations are never chosen. Ties go to the smaller KO.
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

/// Relative costs of the model (issue slots: an FMA with its tap read vs an input load that may
/// miss L1), and the occupancy that hides memory latency well enough on Ampere/Hopper.
inline constexpr double kFmaCost = 1.0;
inline constexpr double kLoadCost = 4.0;
inline constexpr double kOccupancyTarget = 0.25;

/// The model's cost per useful output (lower is better); infinity for unusable candidates.
double ko_cost(const KoCandidate& c, int64_t last_axis_extent, int64_t last_axis_filter_extent);

/// Picks KO among `candidates` for an output of `last_axis_extent` voxels along the blocked axis
/// and a filter of `last_axis_filter_extent` taps along it.
KoChoice choose_outputs_per_thread(const std::vector<KoCandidate>& candidates,
                                   int64_t last_axis_extent, int64_t last_axis_filter_extent);

}  // namespace ndconv::cuda_backend
