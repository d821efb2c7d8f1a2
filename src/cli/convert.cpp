// `ndconv convert IN OUT`: format conversion (and, with --type, pixel type conversion) through the
// same reader and writer as the filtering commands, with no filter in between: the I/O-only pass
// that the bench's end-to-end rows are measured against. By default the pixel type is the one
// the input reads as (its stored type; float32 for a NIfTI with scl_slope/scl_inter, whose values
// are scaled), so that nothing is rounded unless --type asks for it.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "io/image.h"

namespace ndconv::cli {

namespace {

struct ConvertArgs {
  std::vector<std::string> files;  ///< IN OUT, or the inputs of a batch
  BatchOptions batch;
  std::string in, out;
  CommonOptions common;
  OutputOptions output;
};

void run_convert(ConvertArgs a) {
  const bool default_type = a.output.type.empty();
  if (default_type)
    a.output.type = "same";
  Plan plan;
  try {
    plan = plan_output(a.in, a.out, a.common, a.output);
  } catch (const io::RequestError&) {
    if (!default_type)
      throw;
    // The output format cannot hold the stored type: the format's default (float32 where it can).
    a.output.type.clear();
    plan = plan_output(a.in, a.out, a.common, a.output);
  }
  const auto t_read = std::chrono::steady_clock::now();
  const io::Image input = io::read_image(a.in);
  const double seconds_read = seconds_since(t_read);
  double seconds_write = 0;
  write_result(a.out, input, input, plan, a.common, a.output, seconds_write);
  if (a.common.verbose)
    print_line("timings: read %.3f s, write %.3f s, in all %.3f s", seconds_read, seconds_write,
               seconds_since_start());
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto a = std::make_shared<ConvertArgs>();
  CLI::App* sub = app.add_subcommand(
      "convert", "Convert an image to another format (or pixel type) without filtering it.");
  sub->add_option("FILES", a->files,
                  std::string("IN OUT: ") + kInputHelp +
                      "; output image (the format follows the extension). With -o DIR: IN... "
                      "(a batch)");
  add_batch_options(*sub, a->batch);
  sub->add_option("--type", a->output.type,
                  "output pixel type: same (default: the stored type, or float where the format "
                  "cannot hold it), float, double, uint8, int8, uint16, int16, uint32, int32; "
                  "integers are rounded and clamped")
      ->group(kOutputGroup)
      ->check(output_type_error);
  add_compression_option(*sub, a->output);
  add_threads_option(*sub, a->common);
  sub->add_flag("-f,--force", a->common.force,
                "overwrite an existing output (also when it is the input)")
      ->group(kOutputGroup);
  auto* quiet =
      sub->add_flag("-q,--quiet", a->common.quiet, "print nothing but errors")->group(kRunGroup);
  auto* verbose =
      sub->add_flag("-v,--verbose", a->common.verbose, "print the timings")->group(kRunGroup);
  quiet->excludes(verbose);
  add_input_options(*sub);
  sub->callback([a] { run_jobs_of(a->files, *a, run_convert); });
}

}  // namespace ndconv::cli
