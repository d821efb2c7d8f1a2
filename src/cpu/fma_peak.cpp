// The CPU's FP32 multiply-add ceiling, measured (cpu_backend.h): every thread runs the bank
// kernels' register-resident FMA loop (bank_row_kernel.h, fma_rounds) of the instruction set the
// kernels use, for about the time asked; the ceiling is the multiply-adds of all threads over the
// wall time, so that a benchmark can state its kernels' share of it in the same run.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/parallel_for.h"
#include "cpu/bank_kernel_set.h"
#include "cpu/cpu_backend.h"
#include "cpu/isa_dispatch.h"

namespace ndconv::cpu_backend {

FmaPeak measure_fma_peak(int threads, double seconds) {
  const cpu::BankKernelSet& kernels = cpu::bank_kernel_set(cpu::select_kernel_set().isa);
  FmaPeak peak;
  peak.isa = kernels.isa;
  peak.threads = core::resolve_thread_count(threads);
  // Rounds per call: about a millisecond at a few GHz, so that the clock is read seldom.
  constexpr int64_t kRounds = 200000;
  const double per_call =
      static_cast<double>(kRounds) * kernels.peak_chains * static_cast<double>(kernels.lanes);
  std::atomic<int64_t> calls{0};
  std::atomic<float> sink{0};
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  const auto work = [&](int worker) {
    float sum = 0;
    int64_t done = 0;
    do {
      sum += kernels.fma_rounds(kRounds, static_cast<float>(worker + done));
      ++done;
    } while (std::chrono::steady_clock::now() < until);
    calls += done;
    sink = sink + sum;
  };
  std::vector<std::thread> others;
  for (int t = 1; t < peak.threads; ++t)
    others.emplace_back(work, t);
  work(0);
  for (std::thread& t : others)
    t.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  peak.multiply_adds_per_second = static_cast<double>(calls.load()) * per_call / elapsed;
  peak.checksum = sink.load();
  return peak;
}

}  // namespace ndconv::cpu_backend
