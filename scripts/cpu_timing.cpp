// Throwaway timing of the CPU backend (not part of the build or CI): a 160^3 float volume with a
// 7^3 dense kernel, every instruction set and blocking factor, best of N runs, after checking
// one run against the float64 reference on a 40^3 crop of the problem. Build and run:
//   g++ -std=c++17 -O2 -Isrc -Itests/common scripts/cpu_timing.cpp tests/common/reference.cpp \
//       tests/common/test_data.cpp build-cpu/src/libndconv_core.a -lpthread -o /tmp/cpu_timing
//   /tmp/cpu_timing [n=160] [k=7] [repeats=5] [threads=0]
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cpu/isa_dispatch.h"
#include "engine/cpu_backend.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "reference.h"
#include "test_data.h"

using namespace ndconv;

// CPU seconds of the whole process (all threads): unlike wall time, barely affected when other
// processes share the cores.
static double process_cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoi(argv[1]) : 160;
  const int64_t k = argc > 2 ? std::atoi(argv[2]) : 7;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 0;
  const Index extent{n, n, n, 1}, kextent{k, k, k, 1};
  const auto input = test::random_values(n * n * n, 1);
  const auto taps = test::random_values(k * k * k, 2);
  DenseFilter filter;
  filter.dims = 3;
  filter.extent = kextent;
  filter.taps = taps.data();
  std::vector<float> output(n * n * n);

  // Validate before timing: a small crop against the float64 reference.
  {
    const Index small{40, 37, 33, 1};
    const auto in = test::random_values(40 * 37 * 33, 3);
    std::vector<float> out(in.size());
    test::poison(out);
    Options o;
    o.backend = Backend::Cpu;
    filter_dense(make_view(in.data(), 3, small), filter, make_view(out.data(), 3, small), o);
    const auto ref = test::reference_dense(make_view(in.data(), 3, small), filter, o.operation,
                                           o.boundary, o.region);
    const double err = test::relative_l2_error(out, ref);
    std::printf("validation (40x37x33, %lldx%lldx%lld): relative L2 error %.2e\n", (long long)k,
                (long long)k, (long long)k, err);
    if (!(err < 1e-5))
      return 1;
  }
  const double fmas = double(n * n * n) * double(k * k * k);
  for (const cpu::KernelSet* set : cpu::available_kernel_sets()) {
    setenv("NDCONV_CPU_ISA", set->isa, 1);
    for (int factor : {0, 1, 2, 4, 8}) {
      Options o;
      o.backend = Backend::Cpu;
      o.expert.outputs_per_thread = factor;
      o.threads = threads;
      double best = 1e30, best_cpu = 1e30;
      RunReport report;
      for (int r = 0; r < repeats; ++r) {
        const double c0 = process_cpu_seconds();
        report = filter_dense(make_view(input.data(), 3, extent), filter,
                              make_view(output.data(), 3, extent), o);
        best_cpu = std::min(best_cpu, process_cpu_seconds() - c0);
        best = std::min(best, report.seconds_total);
      }
      std::printf("%-7s B=%d%s threads=%d  wall %.4f s  cpu %.4f s  %.1f GFMA/s per cpu-second\n",
                  set->isa, report.outputs_per_thread, factor == 0 ? " (auto)" : "       ",
                  report.threads, best, best_cpu, fmas / best_cpu * 1e-9);
    }
  }
  unsetenv("NDCONV_CPU_ISA");
  // Separable Gaussian, sigma 2 (17 taps) per axis.
  const SeparableFilter g = gaussian_filter(3, {2.0, 2.0, 2.0, 0});
  Options o;
  o.backend = Backend::Cpu;
  o.threads = threads;
  double best = 1e30;
  for (int r = 0; r < repeats; ++r)
    best = std::min(best, filter_separable(make_view(input.data(), 3, extent), g,
                                           make_view(output.data(), 3, extent), o)
                              .seconds_total);
  std::printf("separable gaussian sigma 2 (%zu taps/axis): best %.4f s, %.2f GB/s of volume\n",
              g.taps[0].size(), best, double(n * n * n) * 4 * 2 / best * 1e-9);
  return 0;
}
