// The filter bank on the GPU (ndconv/adaptive.h: filter_bank, filter_bank_weighted_sum):
// register blocking along the last axis (KO outputs per thread) and across filters (FP filters
// per pass). Each thread owns one x position of one (m1, m2) column and KO consecutive outputs
// along the last axis; every input value it loads feeds FP x KO accumulators.
//
// The rule: FP = the largest of {1, 2, 4, 8} not above the filters left, KO the largest of
// {1, 2, 4, 8} not above the outputs along the last axis with FP * KO <= 32 accumulators (of the
// 255 registers a thread may hold, leaving room for addresses and the loop), unless
// Options::outputs_per_thread asks for a KO.
//
// This first version pads the input on the host (the CPU backend's build_padded) and keeps the
// whole padded volume, the weights and the outputs on the device at once; taps are read through
// the read-only cache (every thread of a warp reads the same tap: a broadcast).
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cpu/canonical_axes.h"
#include "cpu/padding.h"
#include "cpu/parallel_for.h"
#include "cuda/bank/bank_gpu.h"
#include "cuda/check.h"

namespace ndconv::cuda_bank {

namespace {

struct Geometry {
  int64_t row_length, e1, e2;  // padded row length and padded extents of axes 1 and 2
  int k0, k1, k2, k3;
  int64_t n0, n1, n2, n3;  // outputs per canonical axis
};

template <int FP, int KO>
__global__ void bank_kernel(const float* __restrict__ in, Geometry g,
                            const float* __restrict__ taps, int64_t filter_taps, float* out,
                            int64_t out_filter_stride, const float* __restrict__ weights,
                            float* sum, bool accumulate) {
  const int64_t x = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t m1 = blockIdx.y;
  const int64_t m2 = blockIdx.z % g.n2, block = blockIdx.z / g.n2;
  if (x >= g.n0)
    return;
  float acc[FP][KO];
#pragma unroll
  for (int f = 0; f < FP; ++f)
#pragma unroll
    for (int b = 0; b < KO; ++b)
      acc[f][b] = 0.0f;
  for (int j3r = 0; j3r < g.k3 + KO - 1; ++j3r)
    for (int j2 = 0; j2 < g.k2; ++j2)
      for (int j1 = 0; j1 < g.k1; ++j1) {
        const float* row =
            in + (((block * KO + j3r) * g.e2 + (m2 + j2)) * g.e1 + (m1 + j1)) * g.row_length + x;
        for (int jx = 0; jx < g.k0; ++jx) {
          const float v = __ldg(row + jx);
#pragma unroll
          for (int b = 0; b < KO; ++b) {
            const int j3 = j3r - b;
            if (j3 < 0 || j3 >= g.k3)
              continue;
            const int64_t t = ((static_cast<int64_t>(j3) * g.k2 + j2) * g.k1 + j1) * g.k0 + jx;
#pragma unroll
            for (int f = 0; f < FP; ++f)
              acc[f][b] = fmaf(__ldg(taps + f * filter_taps + t), v, acc[f][b]);
          }
        }
      }
  const int64_t plane = g.n0 * g.n1 * g.n2;
#pragma unroll
  for (int b = 0; b < KO; ++b) {
    const int64_t m3 = block * KO + b;
    if (m3 >= g.n3)
      break;
    const int64_t voxel = m3 * plane + (m2 * g.n1 + m1) * g.n0 + x;
    if (weights == nullptr) {
#pragma unroll
      for (int f = 0; f < FP; ++f)
        out[f * out_filter_stride + voxel] = acc[f][b];
    } else {
      float s = accumulate ? sum[voxel] : 0.0f;
#pragma unroll
      for (int f = 0; f < FP; ++f)
        s = fmaf(__ldg(weights + f * out_filter_stride + voxel), acc[f][b], s);
      sum[voxel] = s;
    }
  }
}

using Launch = void (*)(dim3, dim3, const float*, Geometry, const float*, int64_t, float*, int64_t,
                        const float*, float*, bool);

template <int FP, int KO>
void launch(dim3 grid, dim3 block, const float* in, Geometry g, const float* taps,
            int64_t filter_taps, float* out, int64_t stride, const float* weights, float* sum,
            bool accumulate) {
  bank_kernel<FP, KO>
      <<<grid, block>>>(in, g, taps, filter_taps, out, stride, weights, sum, accumulate);
}

constexpr int kShapes[] = {1, 2, 4, 8};

template <int FP>
Launch pick_ko(int ko) {
  switch (ko) {
    case 1:
      return &launch<FP, 1>;
    case 2:
      return &launch<FP, 2>;
    case 4:
      return &launch<FP, 4>;
    default:
      return &launch<FP, 8>;
  }
}

Launch pick(int fp, int ko) {
  switch (fp) {
    case 1:
      return pick_ko<1>(ko);
    case 2:
      return pick_ko<2>(ko);
    case 4:
      return pick_ko<4>(ko);
    default:
      return pick_ko<8>(ko);
  }
}

// Device memory freed when it goes out of scope, also when an exception passes.
struct DeviceBuffer {
  float* data = nullptr;
  explicit DeviceBuffer(size_t count) {
    NDCONV_CUDA_CHECK(cudaMalloc(&data, std::max<size_t>(count, 1) * sizeof(float)));
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace

int bank_outputs_per_thread(int filters_per_pass, int requested, int64_t outputs_along_axis) {
  if (requested != 0) {
    if (requested != 1 && requested != 2 && requested != 4 && requested != 8)
      throw InvalidArgument("outputs per thread " + std::to_string(requested) +
                            " is not supported by the GPU filter bank (use 0 for automatic, or "
                            "1, 2, 4 or 8)");
    return requested;
  }
  int ko = 1;
  for (int c : kShapes)
    if (c <= outputs_along_axis && filters_per_pass * c <= 32)
      ko = c;
  return ko;
}

void run_bank(const detail::BankProblem& p, const Options& options, RunReport& report) {
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  const int dims = p.input.dims;
  const Index n_in = cpu::to_canonical(dims, p.input.extent, 1);
  const Index in_stride = cpu::to_canonical(dims, p.input.stride, 0);
  const Index n_out = cpu::to_canonical(dims, p.output_extent, 1);
  const Index offset = cpu::to_canonical(dims, p.offset, 0);
  const Index k = cpu::to_canonical(dims, p.filter_extent, 1);
  const int64_t filter_taps = k[0] * k[1] * k[2] * k[3];
  const int64_t voxels = n_out[0] * n_out[1] * n_out[2] * n_out[3];
  const bool weighted = p.outputs.empty();

  // Passes of FP filters; one KO for all of them (that of the widest pass).
  std::vector<std::pair<int, int>> passes;  // (first filter, FP)
  for (int first = 0; first < p.count;) {
    int fp = 1;
    for (int c : kShapes)
      if (c <= p.count - first)
        fp = c;
    passes.emplace_back(first, fp);
    first += fp;
  }
  const int ko =
      bank_outputs_per_thread(passes.front().second, options.outputs_per_thread, n_out[3]);
  const int64_t blocks = (n_out[3] + ko - 1) / ko;

  const int threads = cpu::resolve_thread_count(options.threads);
  cpu::PaddedVolume padded;
  const Index padded_extent{0, n_out[1] + k[1] - 1, n_out[2] + k[2] - 1, blocks * ko + k[3] - 1};
  const int64_t row_length = n_out[0] + k[0] - 1;
  cpu::build_padded(p.input.data, n_in, in_stride, offset, padded_extent, row_length, row_length,
                    p.boundary, threads, cpu::ProgressSpan{&options.progress, 0, 0.05}, padded);
  const size_t padded_count =
      static_cast<size_t>(padded_extent[1] * padded_extent[2] * padded_extent[3] * row_length);

  // Outputs and weights travel as contiguous canonical volumes.
  auto canonical_offset = [&](int64_t v, const Index& stride) {
    int64_t rest = v, off = 0;
    for (int a = 0; a < 4; ++a) {
      off += (rest % n_out[a]) * stride[a];
      rest /= n_out[a];
    }
    return off;
  };
  std::vector<float> host_weights;
  if (weighted) {
    host_weights.resize(static_cast<size_t>(voxels * p.count));
    for (int f = 0; f < p.count; ++f) {
      const Index s = cpu::to_canonical(dims, p.weights[f].stride, 0);
      for (int64_t v = 0; v < voxels; ++v)
        host_weights[f * voxels + v] = p.weights[f].data[canonical_offset(v, s)];
    }
  }
  const auto t_upload = std::chrono::steady_clock::now();
  DeviceBuffer d_in(padded_count), d_taps(static_cast<size_t>(filter_taps * p.count));
  DeviceBuffer d_out(weighted ? voxels : voxels * p.count);
  DeviceBuffer d_weights(weighted ? voxels * p.count : 1);
  NDCONV_CUDA_CHECK(cudaMemcpy(d_in.data, padded.storage.get(), padded_count * sizeof(float),
                               cudaMemcpyHostToDevice));
  NDCONV_CUDA_CHECK(cudaMemcpy(d_taps.data, p.taps, filter_taps * p.count * sizeof(float),
                               cudaMemcpyHostToDevice));
  if (weighted)
    NDCONV_CUDA_CHECK(cudaMemcpy(d_weights.data, host_weights.data(),
                                 host_weights.size() * sizeof(float), cudaMemcpyHostToDevice));
  report.seconds_upload =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_upload).count();

  Geometry g{row_length,
             padded_extent[1],
             padded_extent[2],
             static_cast<int>(k[0]),
             static_cast<int>(k[1]),
             static_cast<int>(k[2]),
             static_cast<int>(k[3]),
             n_out[0],
             n_out[1],
             n_out[2],
             n_out[3]};
  if (n_out[1] > 65535 || n_out[2] * blocks > 65535)
    throw InvalidArgument("the GPU filter bank handles at most 65535 rows per grid axis");
  const dim3 block(128);
  const dim3 grid(static_cast<unsigned>((n_out[0] + 127) / 128), static_cast<unsigned>(n_out[1]),
                  static_cast<unsigned>(n_out[2] * blocks));
  const auto t_compute = std::chrono::steady_clock::now();
  for (size_t i = 0; i < passes.size(); ++i) {
    const auto [first, fp] = passes[i];
    // Every pass shares the KO of the padded layout (that of the widest pass).
    pick(fp, ko)(grid, block, d_in.data, g, d_taps.data + first * filter_taps, filter_taps,
                 weighted ? nullptr : d_out.data + first * voxels, voxels,
                 weighted ? d_weights.data + first * voxels : nullptr,
                 weighted ? d_out.data : nullptr, i > 0);
    NDCONV_CUDA_CHECK_LAUNCH("the filter bank kernel");
    if (options.progress && !options.progress(0.05 + 0.9 * (i + 1) / passes.size()))
      throw Aborted();
  }
  NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  report.seconds_compute =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_compute).count();

  const auto t_download = std::chrono::steady_clock::now();
  std::vector<float> host_out(static_cast<size_t>(weighted ? voxels : voxels * p.count));
  NDCONV_CUDA_CHECK(cudaMemcpy(host_out.data(), d_out.data, host_out.size() * sizeof(float),
                               cudaMemcpyDeviceToHost));
  const int outputs = weighted ? 1 : p.count;
  for (int f = 0; f < outputs; ++f) {
    const VolumeView& view = weighted ? p.sum_output : p.outputs[f];
    const Index s = cpu::to_canonical(dims, view.stride, 0);
    for (int64_t v = 0; v < voxels; ++v)
      view.data[canonical_offset(v, s)] = host_out[f * voxels + v];
  }
  report.seconds_download =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_download).count();
  report.backend = Backend::Cuda;
  report.outputs_per_thread = ko;
  report.outputs_per_thread_reason =
      options.outputs_per_thread != 0
          ? std::string("requested")
          : "automatic: the largest of 1, 2, 4, 8 with FP * KO <= 32 accumulators (FP = " +
                std::to_string(passes.front().second) + ")";
  report.notes.push_back("GPU filter bank: " + std::to_string(passes.size()) + " passes over " +
                         std::to_string(p.count) + " filters");
}

}  // namespace ndconv::cuda_bank
