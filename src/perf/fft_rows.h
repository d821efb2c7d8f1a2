// The bench's FFT rows (fft3d_11, fft3d_15, fft3d_21: 256³ float, dense K³, zero boundary): the
// same correlation through the direct kernels, through the FFT (cuda/fft/) and as the automatic
// plan chooses, each checked per voxel against float64 (max |error| / sum |w||x|, on uniform random
// and on dark data) and timed on the device; and the cost model's per-device constants as this
// device measures them (cuda_backend::FftPolicy), for the lead to set.
#pragma once

#include <cstdint>
#include <vector>

#include "perf/bench.h"
#include "perf/bench_rows.h"
#include "perf/report.h"

namespace ndconv::perf {

/// The fft rows, appended to the bench's list.
void add_fft_workloads(std::vector<Workload>& list);

/// One fft row.
Json fft_gpu_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
                 int& failures);

/// Their table for people.
void print_fft_rows(std::ostream& out, const Json& rows);

/// Per-voxel accuracy of `got` (the `same` correlation of `input` by `taps`, zero boundary) on a
/// sample of outputs: the first and last corner boxes of `corner` outputs per axis and `random`
/// voxels more; max over them of |got - ref| / sum |w||x| with ref and the sum in float64.
/// Infinite when a sampled output is not finite.
double max_weighted_error(const Shape& volume, const Shape& filter, const std::vector<float>& input,
                          const std::vector<float>& taps, const std::vector<float>& got,
                          int64_t corner, int64_t random, uint64_t seed);

}  // namespace ndconv::perf
