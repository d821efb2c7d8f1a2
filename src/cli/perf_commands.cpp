// `ndconv sweep` and `ndconv bench`: the perf library's commands and options (src/perf/commands.h,
// which ndconv-perf mounts too) mounted on CLI11. This layer adds what needs ITK: the bench's
// CPU row compares ndconv's CPU backend with itk::ConvolutionImageFilter on the same machine,
// the same number of threads and the same data (convolution, zero-flux Neumann boundary = ITK's
// default, `same` region), and checks that both give the same result.
#include "perf_commands.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "itkConvolutionImageFilter.h"
#include "itkImage.h"
#include "itkImageRegionIterator.h"
#include "itkMultiThreaderBase.h"
#include "perf/commands.h"
#include "perf/gpu.h"

namespace ndconv::cli {

namespace {

using perf::DenseCase;
using perf::PeerRun;

template <unsigned Dim>
typename itk::Image<float, Dim>::Pointer to_itk(const std::vector<float>& data,
                                                const Index& extent) {
  using Image = itk::Image<float, Dim>;
  typename Image::SizeType size;
  for (unsigned a = 0; a < Dim; ++a)
    size[a] = static_cast<itk::SizeValueType>(extent[a]);
  auto image = Image::New();
  image->SetRegions(typename Image::RegionType(size));
  image->Allocate();
  std::copy(data.begin(), data.end(), image->GetBufferPointer());  // both x fastest
  return image;
}

template <unsigned Dim>
PeerRun itk_convolution(const DenseCase& c, int threads, int repetitions) {
  using Image = itk::Image<float, Dim>;
  // ITK's pool threader: cap both the maximum and the default so that ITK uses `threads` cores.
  const auto saved_max = itk::MultiThreaderBase::GetGlobalMaximumNumberOfThreads();
  const auto saved_default = itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads();
  itk::MultiThreaderBase::SetGlobalMaximumNumberOfThreads(threads);
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(threads);
  auto input = to_itk<Dim>(c.input, c.volume.extent);
  auto kernel = to_itk<Dim>(c.taps, c.filter.extent);
  PeerRun run;
  run.name = "itk::ConvolutionImageFilter (ITK " + std::string(ITK_VERSION_STRING) + ", " +
             std::to_string(threads) + " threads)";
  std::vector<double> samples;
  typename Image::Pointer out;
  for (int r = 0; r < repetitions; ++r) {
    auto filter = itk::ConvolutionImageFilter<Image, Image>::New();
    filter->SetInput(input);
    filter->SetKernelImage(kernel);
    filter->SetNumberOfWorkUnits(threads);
    const auto t0 = std::chrono::steady_clock::now();
    filter->Update();
    samples.push_back(1e3 * seconds_since(t0));
    out = filter->GetOutput();
  }
  itk::MultiThreaderBase::SetGlobalMaximumNumberOfThreads(saved_max);
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(saved_default);
  run.median_ms = perf::summarize(samples).median_ms;
  run.repetitions = repetitions;
  const float* p = out->GetBufferPointer();
  run.output.assign(p, p + c.volume.count());
  return run;
}

// The bench's CPU row is 3D; other dimensions are not instantiated (ITK 5.2's 2D neighbourhood
// code also trips GCC's -Warray-bounds in ITK's own headers).
perf::CpuPeer itk_peer() {
  return [](const DenseCase& c, int threads, int repetitions) {
    if (c.volume.dims != 3)
      throw InvalidArgument("the ITK peer runs 3D workloads only");
    return itk_convolution<3>(c, threads, repetitions);
  };
}

// Errors to the command line's convention: bad options 2, anything else 1 (main prints them).
template <typename F>
void run_mapped(F f) {
  try {
    f();
  } catch (const perf::GpuUnavailable& e) {
    throw Error(std::string(e.what()) +
                "; no measurements made (--device cpu runs the CPU backend instead)");
  } catch (const perf::ValidationFailed&) {
    throw;
  } catch (const InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

// Adds the perf library's options of `command` to `sub`; a value the option refuses is a CLI11
// validation error, reported as any other bad option.
CLI::App* mount(CLI::App& app, perf::CommandLine command) {
  CLI::App* sub = app.add_subcommand(command.name, command.summary);
  sub->footer(perf::wrapped(command.description, 0));
  for (perf::Option& o : command.options) {
    auto set = [set = std::move(o.set)](const std::string& v) {
      try {
        set(v);
      } catch (const InvalidArgument& e) {
        throw CLI::ValidationError(e.what());  // the message names the option
      }
    };
    if (o.value_name.empty())
      sub->add_flag_callback(
          o.name, [set] { set(""); }, o.help);
    else
      sub->add_option_function<std::string>(o.name, set, o.help)->type_name(o.value_name);
  }
  return sub;
}

}  // namespace

void add_perf_commands(CLI::App& app) {
  auto s = std::make_shared<perf::SweepArgs>();
  mount(app, perf::sweep_command_line(*s))->callback([s] {
    run_mapped([&] {
      perf::sweep_command(*s, perf::typed_command_line("ndconv sweep"), std::cout, &std::cerr);
    });
  });
  auto b = std::make_shared<perf::BenchArgs>();
  // The e2e rows run this very binary's subcommands as child processes.
  std::error_code ec;
  b->ndconv_binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  mount(app, perf::bench_command_line(*b, true))->callback([b] {
    run_mapped([&] {
      perf::bench_command(*b, perf::typed_command_line("ndconv bench"), itk_peer(), std::cout,
                          &std::cerr);
    });
  });
}

}  // namespace ndconv::cli
