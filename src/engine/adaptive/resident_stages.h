// The adaptive filter's resident GPU path (resident_stages.cpp): stages 1 to 4 with the data on
// the device from the input's upload to the output's download, for the pipeline (pipeline.cpp)
// to try before the stages that go through host memory.
#pragma once

#include <string>
#include <vector>

#include "core/control_voxel.h"
#include "ndconv/adaptive.h"
#include "ndconv/types.h"

namespace ndconv::detail {

// The stages after the orientation input's downsampling with the data on the device from the
// first upload to the last download (cuda_bank::ResidentAdaptive), where both banks run on the
// GPU, the orientation is estimated at full resolution and the working set fits in the device's
// memory; appends the stage timings and the normalising scale (the largest magnitude over the
// voxels `region` holds, or parameters.normalisation_scale) and returns true; with `scale_only`
// stops there (`output` unused). Otherwise returns false having done nothing
// (`fallback_note` says why when it was the memory), and the stages go through host memory.
bool filter_volume_resident(const ConstVolumeView& input, const VolumeView& output,
                            const AdaptiveParameters& parameters, const Options& options,
                            const std::vector<DesignedFilter>& quadrature,
                            const std::vector<DesignedFilter>& reconstruction, double q_share,
                            AdaptiveReport& report, std::string& fallback_note,
                            const MagnitudeRegion& region = {}, bool scale_only = false);

}  // namespace ndconv::detail
