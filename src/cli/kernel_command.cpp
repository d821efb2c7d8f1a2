// `ndconv kernel SPEC OUT`: writes a built-in kernel (box:3x3x3, gauss:1.5, sobel:x, laplace, ...)
// as a float32 image, to read, edit, or pass to `convolve` as a kernel file.
#include <CLI/CLI.hpp>

#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "io/image.h"
#include "ndconv/filters.h"

namespace ndconv::cli {

namespace {

struct KernelArgs {
  std::string spec, out;
  int dims = 0;
  bool force = false, quiet = false;
};

void run_kernel(const KernelArgs& a) {
  Kernel k;
  try {
    k = parse_kernel_spec(a.spec, a.dims);
  } catch (const InvalidArgument& e) {
    throw UsageError(e.what());
  }
  const int file_dims = k.dims;
  io::check_output_format(a.out, file_dims, 1, io::ComponentType::Float32);
  io::Image image;
  image.info.path = a.out;
  image.info.geometry.dims = file_dims;
  image.info.geometry.extent = k.extent;
  image.info.components = 1;
  image.info.component_type = io::ComponentType::Float32;
  image.planes.push_back(k.taps);
  io::write_image(a.out, image, io::ComponentType::Float32, a.force);
  if (!a.quiet) {
    std::string shape;
    for (int ax = 0; ax < file_dims; ++ax)
      shape += (ax ? "x" : "") + std::to_string(k.extent[ax]);
    std::fprintf(stderr, "ndconv: wrote %s (%s kernel %s, float32)\n", a.out.c_str(), shape.c_str(),
                 a.spec.c_str());
  }
}

}  // namespace

void add_kernel_command(CLI::App& app) {
  auto a = std::make_shared<KernelArgs>();
  CLI::App* sub = app.add_subcommand(
      "kernel",
      std::string("Write a built-in kernel as an image, for convolve or to edit. SPEC: ") +
          kernel_spec_grammar());
  sub->add_option("SPEC", a->spec, "e.g. box:3x3x3, gauss:1.5, sphere:2, sobel:x, laplace")
      ->required();
  sub->add_option("OUT", a->out, "kernel file, e.g. k.mha or k.nii.gz")->required();
  sub->add_option("--dims", a->dims,
                  "kernel dimension 2, 3 or 4 (default: the number of values in SPEC, 3 for one)")
      ->check(CLI::Range(2, 4));
  sub->add_flag("-f,--force", a->force, "overwrite an existing file");
  sub->add_flag("-q,--quiet", a->quiet, "no note");
  sub->callback([a] { run_kernel(*a); });
}

}  // namespace ndconv::cli
