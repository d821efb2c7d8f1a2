// The adaptive filter's CPU stages in slabs along one axis (slab_stages.cpp), so that true 4D
// runs in bounded memory: only the relaxed structure tensor is kept for the whole image (its
// global normalisation needs every voxel's), one of its components in the output's buffer until
// the reconstruction writes over it; the quadrature responses, the relaxation's intermediates, the
// control tensor and the reconstruction's weights exist for one slab at a time. Every voxel gets
// the value the whole-image stages give it (tests/engine/adaptive_slab_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/adaptive/stage_banks.h"
#include "engine/adaptive/stage_support.h"
#include "ndconv/adaptive.h"
#include "ndconv/types.h"

namespace ndconv::detail {

/// Planes per slab of each CPU stage, along `axis` (z for 3D and 4D, y for 2D).
struct CpuSlabPlan {
  int axis = 0;
  int64_t quadrature = 1;      ///< planes of the quadrature responses
  int64_t relaxation = 1;      ///< output planes of a relaxation slab (its input has 2 halo more)
  int64_t halo = 0;            ///< the relaxation's halo, planes on each side
  int64_t reconstruction = 1;  ///< planes of the control tensor and the weights
};

/// The slabs for a `dims`-dimensional volume of `extent` under `parameters`; `slab_bytes` caps
/// each stage's slab buffers (0: the default, 96 MiB).
CpuSlabPlan cpu_slab_plan(int dims, const Index& extent, const AdaptiveParameters& parameters,
                          double slab_bytes = 0);

/// Planes of a reconstruction slab: the weights and the control tensor of one slab.
int64_t reconstruction_slab_planes(int dims, const Index& extent, double slab_bytes = 0);

/// Bytes adaptive_filter holds on the CPU at its peak besides the input and the output, for a
/// `dims`-dimensional volume of `extent`: in slabs, the kept tensor components (less the one in
/// the output) and the largest stage's slab buffers; stage by stage (`slabs` false: the coarse
/// orientation estimate, a periodic boundary), the whole tensor and the largest of the
/// relaxation's volumes, the quadrature responses and the reconstruction's slab; both with the
/// filters and per-thread rows (measured: tests/cli/cli_hostile_test.cpp).
double cpu_working_bytes(int dims, const Index& extent, const AdaptiveParameters& parameters,
                         bool slabs);

/// T from the 2K quadrature responses of `count` voxels: responses[2q], responses[2q + 1] at
/// `from`, T's m components at `to` (upper_duals: each filter's dual tensor's upper triangle).
void tensor_from_responses(const float* const* responses, int filters, int m,
                           const std::vector<Tensor>& upper_duals, int64_t from,
                           float* const* tensor, int64_t to, int64_t count);

/// The reconstruction's weights from the control tensor of `count` voxels, in place: component c
/// of C at tensor[c] becomes the weight of highpass filter c (<C, M_c>, coefficients of
/// ReconstructionBank).
void weights_from_control(const std::vector<double>& coefficients, int m, float* const* tensor,
                          int64_t count, int threads);

/// The reconstruction bank's weighted sum for planes [first, first + planes) of `axis` into the
/// same planes of `output`: `weights` holds the lowpass's weights (ones) and the m highpass
/// filters' for those planes, contiguous.
RunReport reconstruct_planes(const ConstVolumeView& input, const ReconstructionBank& bank,
                             const std::vector<const float*>& weights, const VolumeView& output,
                             int axis, int64_t first, int64_t planes, const Options& options);

/// out = (1 - blend) out + blend in, voxel by voxel.
void blend_with_input(const ConstVolumeView& input, const VolumeView& output, double blend);

/// Stages 1 to 4 on the CPU in slabs (orientation at full resolution); the shares of the progress
/// bar as pipeline.cpp splits it; appends the stage timings and the normalising scale to `report`
/// (the largest magnitude over the voxels `region` holds, or parameters.normalisation_scale where
/// it is given). With `scale_only`, stops once the scale is known (`output` unused).
struct StageShares {
  double orientation = 0, relaxation = 0, control = 0, reconstruction = 0;
};
void filter_volume_cpu_slabs(const ConstVolumeView& input, const VolumeView& output,
                             const AdaptiveParameters& parameters, const Options& options,
                             const std::vector<DesignedFilter>& quadrature,
                             const std::vector<DesignedFilter>& reconstruction,
                             const StageShares& shares, AdaptiveReport& report,
                             double slab_bytes = 0, const MagnitudeRegion& region = {},
                             bool scale_only = false);

}  // namespace ndconv::detail
