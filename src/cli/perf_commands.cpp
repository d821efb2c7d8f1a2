// `ndconv sweep` and `ndconv bench`: CLI11 front ends over the ITK-free perf library
// (src/perf/commands.h), which ndconv-perf shares. This layer adds what needs ITK: the bench's
// CPU row compares ndconv's CPU backend with itk::ConvolutionImageFilter on the same machine,
// the same number of threads and the same data (convolution, zero-flux Neumann boundary = ITK's
// default, `same` region), and checks that both give the same result.
#include "perf_commands.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
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
    samples.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
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
perf::CpuPeer itk_peer(int repetitions) {
  return [repetitions](const DenseCase& c, int threads) {
    if (c.volume.dims != 3)
      throw InvalidArgument("the ITK peer runs 3D workloads only");
    return itk_convolution<3>(c, threads, repetitions);
  };
}

// The command as typed, for the JSON record (Linux: /proc/self/cmdline; else the subcommand).
std::string command_line_of(const CLI::App& sub) {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.empty())
    return "ndconv " + sub.get_name();
  std::replace(all.begin(), all.end(), '\0', ' ');
  while (!all.empty() && all.back() == ' ')
    all.pop_back();
  return all;
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

}  // namespace

void add_perf_commands(CLI::App& app) {
  auto s = std::make_shared<perf::SweepArgs>();
  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "Register-blocking study: time every kernel instantiation (blocked and tiled, each KO) and "
      "the automatic plan over dimensions, volume and filter extents, each point validated "
      "against the CPU backend, against the FMA peak and bandwidth measured at the start; CSV + "
      "JSON");
  sweep
      ->add_option("--device", s->device,
                   "gpu: the GPU kernels' KO; cpu: the CPU backend's "
                   "blocking factor")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  sweep->add_option("--cuda-device", s->cuda_device, "CUDA device index");
  sweep->add_option("--dims", s->dims, "dimensions to keep, e.g. 2,3");
  sweep->add_option("--volumes", s->volumes,
                    "volume extents, e.g. 4096x4096,256x256x256 (default: the study's)");
  sweep->add_option("--filters", s->filters,
                    "cube filter extents, e.g. 3:15:2 or 3,5,7 (default: per dimension)");
  sweep->add_option("--ko", s->ko, "KO values, e.g. 1,2,4,8 (default: every compiled one)");
  sweep->add_flag("--block-shapes", s->block_shapes,
                  "also the tiled kernel's other compiled block shapes (TX 16 with 2x64 threads, "
                  "128x1 threads; GPU)");
  sweep->add_flag("--quick", s->quick, "a small grid that runs in under a minute");
  sweep->add_option("--warmup", s->warmup, "untimed runs per point (-1: preset)");
  sweep->add_option("--reps", s->repetitions, "timed runs per point (-1: preset)");
  sweep->add_flag("--no-flush", s->no_flush, "do not flush L2 between repetitions");
  sweep->add_option("--threads", s->threads, "CPU threads (0: all)");
  sweep->add_option("--check-budget", s->check_budget,
                    "CPU FMAs per validation window (0: preset, 2e9)");
  sweep->add_option("--seed", s->seed, "fixed random seed (0: fresh)");
  sweep->add_option("--csv", s->csv, "CSV output (one row per point)");
  sweep->add_option("--json", s->json, "JSON summary output");
  sweep->add_flag("--force", s->force, "overwrite existing outputs");
  sweep->callback([s, sweep] {
    run_mapped([&] { perf::sweep_command(*s, command_line_of(*sweep), std::cout, &std::cerr); });
  });

  auto b = std::make_shared<perf::BenchArgs>();
  auto itk_reps = std::make_shared<int>(1);
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Fixed workloads (issue 6) validated then timed on the device and as whole calls, against "
      "the measured FMA peak and bandwidth; the CPU row against itk::ConvolutionImageFilter");
  bench->add_option("--device", b->device, "gpu: all workloads; cpu: the CPU row only")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  bench->add_option("--cuda-device", b->cuda_device, "CUDA device index");
  bench->add_option("--workload", b->workload,
                    "comma-separated: dense3d_11, dense3d_5, dense4d_7, dense2d_17, gauss3d_s2, "
                    "cpu3d_7 (default: all); also denseND_K, a K^N filter on the volume of "
                    "that dense row, without a target");
  bench->add_option("--json", b->json, "also write the JSON here (-: JSON on stdout instead)");
  bench->add_flag("--force", b->force, "overwrite an existing JSON file");
  bench->add_option("--threads", b->threads, "CPU threads for the CPU row and ITK (0: all)");
  bench->add_option("--reps", b->repetitions, "timed device repetitions");
  bench->add_option("--call-reps", b->call_repetitions, "timed whole-call repetitions");
  bench->add_option("--itk-reps", *itk_reps, "timed ITK repetitions (ITK is slow)")
      ->check(CLI::PositiveNumber);
  bench->add_flag("--quick", b->quick, "fewer repetitions, no per-KO or boundary timings");
  bench->add_flag("--boundaries", b->boundaries,
                  "with --quick: time the other boundaries all the same");
  bench->add_option("--seed", b->seed, "fixed random seed (0: fresh)");
  bench->callback([b, bench, itk_reps] {
    run_mapped([&] {
      perf::bench_command(*b, command_line_of(*bench), itk_peer(*itk_reps), std::cout, &std::cerr);
    });
  });
}

}  // namespace ndconv::cli
