// The checks before any work: the output's place and format, the input's header and the output
// type (plan_output), the memory the run needs (check_memory_plan), and whether the GPU may filter
// (gpu_may_filter, gpu_may_win, which starts CUDA where the cost model gives it the work).
#pragma once

#include <string>

#include "io/image.h"
#include "ndconv/plan.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"
#include "options.h"

namespace ndconv::cli {

/// Checks before reading anything: the output is not the input (unless --force), does not exist
/// (unless --force), and its folder is writable; the same for the preview. Then reads the
/// input's header and settles the output type. Returns the input's header.
struct Plan {
  io::ImageInfo input;
  io::ComponentType output_type = io::ComponentType::Float32;
};
Plan plan_output(const std::string& in, const std::string& out, const CommonOptions& common,
                 const OutputOptions& output, int output_dims_hint = 0);

/// Refuses, before the input's pixels are read, a command whose peak memory (reading the input,
/// filtering it with `filter_copies` float32 copies of the output besides the output itself,
/// writing `out`) exceeds what this process may use; --verbose prints the estimate.
void check_memory_plan(const std::string& in, const std::string& out, const Plan& plan,
                       const Index& out_extent, double filter_copies, const CommonOptions& common);

/// Whether a GPU may filter: --device cuda or cuda:N, or auto in a build with CUDA.
bool gpu_may_filter(const CommonOptions& common);

/// The host memory a filtering run reads its input into: pinned once CUDA has started (a batch's
/// later inputs), else ordinary, since a pinned allocation waits for CUDA's start-up (about
/// 0.3 s), which the read would otherwise hide; the GPU then uploads it through pinned staging.
HostMemory input_memory(const CommonOptions& c);

/// The engine's request for a filtering run of the input `plan` describes, with the command's
/// device, threads and expert options; the command fills in the filter.
FilterRequest filter_request(const Plan& plan, const CommonOptions& common);

/// Whether the GPU may filter this run, and for --device auto the decision: CUDA is started in the
/// background (warm_up_cuda_async) only where the engine's plan (ndconv::plan, its start-up costed
/// as hidden behind the read) gives the filter to the GPU; otherwise the run goes the CPU's way
/// from the read on (as with --device cpu) and never pays CUDA's start-up or its teardown at exit.
/// `model_knows`: false where the plan's cost model cannot tell (CUDA then starts, as for other
/// commands). Called by smooth and convolve once the header and the filter are known (main starts
/// CUDA earlier for --device cuda and for the other filtering commands).
bool gpu_may_win(const FilterRequest& request, bool model_knows, const CommonOptions& common);

}  // namespace ndconv::cli
