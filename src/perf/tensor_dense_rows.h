// The tensor-core dense filter's bench rows (issue 49; src/cuda/tensor_dense/):
//  dense3d_7_tc, dense3d_11_tc  one dense 7^3 / 11^3 filter on a 256^3 8-bit volume (uniform
//                               0..255) on the tensor cores, data on the device, against the
//                               measured FP32 FMA peak (useful FLOP/s = 2 x taps x voxels / time)
//                               and against the FP32 dense kernel's automatic direct plan on the
//                               same data in the same run.
// Each is validated against the CPU backend on windows of the output before it is timed.
#pragma once

#include <iosfwd>
#include <vector>

#include "perf/bench.h"
#include "perf/gpu.h"

namespace ndconv::perf {

/// The rows above (Workload::Kind::GpuTensorDense), in order.
std::vector<Workload> tensor_dense_workloads();

/// Runs one of them on `device` (its ceilings measured, `timer` on it); counts validation
/// failures into `failures`.
Json tensor_dense_row(const Workload& w, const BenchConfig& config, int device,
                      const gpu::Ceilings& ceilings, gpu::Timer& timer, uint64_t seed,
                      int& failures);

/// The rows' comparison with the FP32 kernel, after the kernel table; nothing when `rows` holds
/// none of them.
void print_tensor_dense_rows(std::ostream& out, const Json& rows);

}  // namespace ndconv::perf
