#include "preflight.h"

#include <unistd.h>

#include "batch.h"
#include "io/memory_check.h"
#include "io/output_encode.h"
#include "io/output_file.h"
#include "io/parallel_for.h"
#include "messages.h"
#include "ndconv/device.h"

namespace ndconv::cli {

namespace {
// The output's place first, so that a folder is called a folder, not "exists"; paths are compared
// by what they resolve to (`..`, symlinks).
void check_target(const std::string& in, const std::string& target, const CommonOptions& c) {
  io::check_output_location(target);
  if (!c.force && io::same_file(in, target)) {
    throw UsageError(target + ": is the input file; use --force to replace it");
  }
  if (!c.force && ::access(target.c_str(), F_OK) == 0)
    throw io::RequestError(target + ": exists; use --force to overwrite it");
}
}  // namespace

Plan plan_output(const std::string& in, const std::string& out, const CommonOptions& c,
                 const OutputOptions& o, int output_dims_hint) {
  check_target(in, out, c);
  io::check_companions(out, io::output_names(out, o.compression), c.force);
  if (!o.preview.empty()) {
    if (io::same_file(o.preview, out))
      throw UsageError(o.preview + ": the preview and the output are the same file");
    check_target(in, o.preview, c);
    io::check_output_format(o.preview, 2, 1, io::ComponentType::UInt8);
  }
  Plan plan;
  plan.input = io::read_info(in);
  const int dims = output_dims_hint > 0 ? output_dims_hint : plan.input.geometry.dims;
  std::string why;
  if (o.type.empty()) {
    plan.output_type = io::default_output_type(out, plan.input.component_type, why);
  } else if (o.type == "same") {
    plan.output_type = plan.input.component_type;
  } else {
    io::parse_component_type(o.type, plan.output_type);
  }
  io::check_output_format(out, dims, plan.input.components, plan.output_type, &plan.input.geometry);
  if (!why.empty())
    explain(c, out + ": " + why);
  return plan;
}

void check_memory_plan(const std::string& in, const std::string& out, const Plan& plan,
                       const Index& out_extent, double filter_copies, const CommonOptions& c) {
  io::MemoryPlan m;
  const io::Geometry& g = plan.input.geometry;
  m.input_values = static_cast<double>(g.voxel_count()) * plan.input.components;
  m.input_bytes = io::component_bytes(plan.input.component_type);
  m.input_nifti = plan.input.format == "NiftiImageIO";
  m.input_local_metaimage = plan.input.metaimage_pixels.offset >= 0;
  m.output_values = static_cast<double>(plan.input.components);
  for (int a = 0; a < g.dims; ++a)
    m.output_values *= static_cast<double>(out_extent[a]);
  m.output_bytes = io::component_bytes(plan.output_type);
  const std::string ext = out.size() >= 4 ? out.substr(out.size() - 4) : out;
  m.output_compressed =
      ext == ".mha" || ext == ".mhd" || (out.size() >= 3 && out.substr(out.size() - 3) == ".gz");
  m.filter_copies = filter_copies;
  m.compress_threads = io::worker_threads(c.threads);
  // A batch holds the volumes of the jobs it overlaps.
  m.input_values *= jobs_in_flight();
  m.output_values *= jobs_in_flight();
  if (c.verbose) {
    print_line("plan: memory: about %s at peak; %s usable",
               io::human_bytes(io::peak_bytes(m)).c_str(),
               io::human_bytes(io::usable_memory_bytes()).c_str());
  }
  io::check_plan_fits(in, m);
}

bool gpu_may_filter(const CommonOptions& c) {
  const DeviceWish device = parse_device(c.device);
  return device.backend == Backend::Cuda || (device.backend == Backend::Auto && cuda_built());
}

HostMemory input_memory(const CommonOptions& c) {
  if (c.device == "cpu")
    return HostMemory::Ordinary;
  return cuda_started(engine_options(c).cuda_device) ? HostMemory::Pinned : HostMemory::Ordinary;
}

FilterRequest filter_request(const Plan& plan, const CommonOptions& c) {
  FilterRequest r;
  r.dims = plan.input.geometry.dims;
  for (int a = 0; a < r.dims; ++a)
    r.extent[a] = plan.input.geometry.extent[a];
  r.options = engine_options(c);
  return r;
}

bool gpu_may_win(const FilterRequest& request, bool model_knows, const CommonOptions& c) {
  if (!gpu_may_filter(c))
    return false;
  if (request.options.backend == Backend::Auto && model_knows) {
    FilterRequest before_read = request;
    before_read.startup_hidden = true;  // the start-up runs behind the read
    before_read.probe_devices = false;  // probing would wait for the driver
    if (ndconv::plan(before_read).backend != Backend::Cuda)
      return false;
  }
  warm_up_cuda_async(request.options.cuda_device);
  return true;
}

}  // namespace ndconv::cli
