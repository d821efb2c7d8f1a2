// The KO rule (see ko_rule.h and docs/design.md): a cost model over the instantiations the CUDA
// runtime reports, spilling ones excluded.
#include "cuda/ko_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ndconv::cuda_backend {

namespace {

// The candidate of least `cost` (finite only), ties (within rounding) to the smaller KO; null when
// none is finite. `skip(c)` leaves a candidate out.
template <typename Cost, typename Skip>
const KoCandidate* least_cost(const std::vector<KoCandidate>& candidates, Cost cost, Skip skip,
                              double& best) {
  best = std::numeric_limits<double>::infinity();
  const KoCandidate* winner = nullptr;
  for (const KoCandidate& c : candidates) {
    if (skip(c))
      continue;
    const double value = cost(c);
    const bool better =
        value < best * (1 - 1e-9) ||
        (winner && value <= best * (1 + 1e-9) && c.outputs_per_thread < winner->outputs_per_thread);
    if (std::isfinite(value) && (winner == nullptr || better)) {
      best = value;
      winner = &c;
    }
  }
  return winner;
}

}  // namespace

double ko_cost(const KoCandidate& c, int64_t last_axis_extent, int64_t last_axis_filter_extent) {
  if (c.outputs_per_thread < 1 || c.local_bytes > 0 || c.blocks_per_sm < 1 || c.occupancy <= 0)
    return std::numeric_limits<double>::infinity();
  const double ko = c.outputs_per_thread;
  const double n = static_cast<double>(std::max<int64_t>(1, last_axis_extent));
  const double k = static_cast<double>(std::max<int64_t>(1, last_axis_filter_extent));
  const double per_output = (k * (ko * kFmaCost + kTapCost) + (k + ko - 1) * kLoadCost) / ko;
  const double tail = n / (std::ceil(n / ko) * ko);
  const double latency = std::min(1.0, c.occupancy / kOccupancyTarget);
  return per_output / tail / latency;
}

KoChoice choose_outputs_per_thread(const std::vector<KoCandidate>& candidates,
                                   int64_t last_axis_extent, int64_t last_axis_filter_extent) {
  KoChoice choice;
  // The cap: the smallest usable KO that is at least K (none when every usable KO is below K).
  int cap = 0;
  for (const KoCandidate& c : candidates) {
    const bool usable = std::isfinite(ko_cost(c, last_axis_extent, last_axis_filter_extent));
    if (usable && c.outputs_per_thread >= last_axis_filter_extent &&
        (cap == 0 || c.outputs_per_thread < cap))
      cap = c.outputs_per_thread;
  }
  double best = 0;
  const KoCandidate* winner = least_cost(
      candidates,
      [&](const KoCandidate& c) { return ko_cost(c, last_axis_extent, last_axis_filter_extent); },
      [&](const KoCandidate& c) { return cap > 0 && c.outputs_per_thread > cap; }, best);
  if (winner == nullptr) {
    choice.reason = "no instantiation is usable (all spill or cannot be launched)";
    return choice;
  }
  char text[256];
  std::snprintf(text, sizeof text,
                "KO rule: lowest modelled cost %.2f per output (n=%lld, k=%lld, KO cap %d; %d "
                "registers, 0 spill bytes, occupancy %.2f)",
                best, static_cast<long long>(last_axis_extent),
                static_cast<long long>(last_axis_filter_extent), cap, winner->registers_per_thread,
                winner->occupancy);
  choice.outputs_per_thread = winner->outputs_per_thread;
  choice.reason = text;
  return choice;
}

bool tiled_has_ko(int ko) {
  for (int k : kTiledKo) {
    if (k == ko)
      return true;
  }
  return false;
}

TiledChoice choose_tiled_shape(int64_t axis1_extent, int64_t last_axis_extent, int forced_ko,
                               bool wide_x) {
  TiledChoice c;
  const bool unit_last = last_axis_extent <= 1;
  if (wide_x && forced_ko == 0 && axis1_extent >= 16) {
    c.outputs_along_x = 16;
    c.block_rows = 64;
    c.outputs_per_thread = 1;
    c.reason = "tiled kernel, TX 16 (2 x 64 threads), KO 1";
  } else {
    c.block_rows = axis1_extent >= 16 ? 32 : 1;
    if (forced_ko != 0) {
      c.outputs_per_thread = forced_ko;
      c.reason = "tiled kernel, KO forced by the caller";
    } else if (unit_last) {
      c.outputs_per_thread = 1;
      c.reason = "tiled kernel, KO 1 (unit last axis)";
    } else {
      c.outputs_per_thread = 0;
      c.reason = "tiled kernel";
    }
  }
  c.reason += ", " + std::to_string(c.block_rows) + " block row(s) (axis 1 has " +
              std::to_string(axis1_extent) + " outputs)";
  return c;
}

double tiled_ko_cost(const KoCandidate& c, const TiledWork& w, int64_t last_axis_extent,
                     std::size_t allowed_local_bytes) {
  if (c.outputs_per_thread < 1 || c.local_bytes > allowed_local_bytes || c.blocks_per_sm < 1 ||
      c.occupancy <= 0)
    return std::numeric_limits<double>::infinity();
  const double ko = c.outputs_per_thread;
  const double tx = w.outputs_along_x;
  const double k0 = static_cast<double>(std::max<int64_t>(1, w.k0));
  const double k1 = static_cast<double>(std::max<int64_t>(1, w.k1));
  const double k2 = static_cast<double>(std::max<int64_t>(1, w.k2));
  const double k3 = static_cast<double>(std::max<int64_t>(1, w.k3));
  const double planes = (ko + k3 - 1) * k2;
  const double fmas = tx * ko * k0 * k1 * k2 * k3;
  const double loads =
      ko * k3 * k1 * k2 * std::ceil(k0 / 4) + planes * k1 * std::ceil((tx + k0 - 1) / 4);
  const double per_output =
      (fmas * kFmaCost + loads * kLoadCost + planes * kTiledPlaneCost) / (tx * ko);
  const double n = static_cast<double>(std::max<int64_t>(1, last_axis_extent));
  const double tail = n / (std::ceil(n / ko) * ko);
  const double latency = std::min(1.0, c.occupancy / kOccupancyTarget);
  return per_output / tail / latency;
}

KoChoice choose_tiled_outputs_per_thread(const std::vector<KoCandidate>& candidates,
                                         const TiledWork& work, int64_t last_axis_extent,
                                         std::size_t allowed_local_bytes) {
  KoChoice choice;
  const auto cost = [&](const KoCandidate& c) {
    return tiled_ko_cost(c, work, last_axis_extent, allowed_local_bytes);
  };
  std::string costs;
  for (const KoCandidate& c : candidates) {
    char one[96];
    std::snprintf(one, sizeof one, "%sKO %d %.1f", costs.empty() ? "" : ", ", c.outputs_per_thread,
                  cost(c));
    costs += one;
  }
  double best = 0;
  const KoCandidate* winner = least_cost(
      candidates, cost, [](const KoCandidate&) { return false; }, best);
  if (winner == nullptr) {
    choice.reason = "no tiled instantiation is usable (all spill or cannot be resident)";
    return choice;
  }
  char resources[64];
  std::snprintf(resources, sizeof resources, "; %d registers, occupancy %.2f",
                winner->registers_per_thread, winner->occupancy);
  choice.outputs_per_thread = winner->outputs_per_thread;
  choice.reason = "KO " + std::to_string(winner->outputs_per_thread) +
                  " by register budget: lowest modelled cost per output (" + costs + resources +
                  ")";
  return choice;
}

bool prefer_wide_x(int dims, int64_t filter_extent_x, int min_taps) {
  return dims == 2 && filter_extent_x >= min_taps;
}

}  // namespace ndconv::cuda_backend
