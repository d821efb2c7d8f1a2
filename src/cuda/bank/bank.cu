// The filter bank on the GPU (ndconv/adaptive.h: filter_bank, filter_bank_weighted_sum), kernel
// in bank_kernel.cuh: passes of four filters, each thread 8 outputs along x times KO along the
// last axis times the pass's four filters.
//
// The rule: KO 2 where the last axis has at least 2 outputs (64 accumulators of the 255 registers
// a thread may hold, 4 blocks per SM), else 1; Options::expert.outputs_per_thread may ask for 1
// or 2. A 2D image is run with its rows on axis 1 (32 per block), KO 1.
//
// The input is padded on the host (the CPU backend's build_padded) and the whole padded volume,
// the weights and the outputs stay on the device at once; views that are contiguous travel by one
// copy, others are gathered and scattered on every core.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cpu/canonical_axes.h"
#include "cpu/padding.h"
#include "cpu/parallel_for.h"
#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/bank_kernel.cuh"
#include "cuda/check.h"

namespace ndconv::cuda_bank {

namespace {

using Launch = void (*)(int, size_t, const BankGeometry&, const BankTiles&, const float*,
                        const float*, int, float*, int64_t, const float*, float*, bool);

// Launches one pass with as many blocks as the device holds at once (at most one per tile).
template <int K0, int KO, bool kWeighted>
void launch(int device, size_t shared_bytes, const BankGeometry& g, const BankTiles& tiles,
            const float* in, const float* taps, int valid, float* out, int64_t stride,
            const float* weights, float* sum, bool accumulate) {
  const auto kernel = bank_kernel<K0, KO, kWeighted>;
  if (shared_bytes > 48 * 1024)  // above the default: opt in, for tall filters
    NDCONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(shared_bytes)));
  int per_sm = 0, sms = 0;
  NDCONV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, kernel, BankShape::kThreads, shared_bytes));
  NDCONV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (per_sm < 1)
    throw InvalidArgument("the filter bank's tile does not fit in the GPU's shared memory (" +
                          std::to_string(shared_bytes) + " bytes)");
  const int64_t blocks = std::min<int64_t>(tiles.count(g.n2), int64_t{per_sm} * sms);
  kernel<<<static_cast<unsigned>(blocks), BankShape::kThreads, shared_bytes>>>(
      g, tiles, in, taps, valid, out, stride, weights, sum, accumulate);
}

template <int K0, bool kWeighted>
Launch pick_ko(int ko) {
  return ko == 1 ? &launch<K0, 1, kWeighted> : &launch<K0, 2, kWeighted>;
}

template <bool kWeighted>
Launch pick_width(int k0, int ko) {
  switch (k0) {
    case 3:
      return pick_ko<3, kWeighted>(ko);
    case 5:
      return pick_ko<5, kWeighted>(ko);
    case 7:
      return pick_ko<7, kWeighted>(ko);
    case 9:
      return pick_ko<9, kWeighted>(ko);
    case 11:
      return pick_ko<11, kWeighted>(ko);
    case 13:
      return pick_ko<13, kWeighted>(ko);
    default:
      return pick_ko<15, kWeighted>(ko);
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

bool packed(const Index& n, const Index& stride) {
  int64_t expected = 1;
  for (int a = 0; a < kMaxDims; ++a) {
    if (n[a] > 1 && stride[a] != expected)
      return false;
    expected *= n[a];
  }
  return true;
}

// Copies between a canonical view (extents n, strides `stride`) and a packed canonical volume, a
// row of n[0] values at a time on `threads` threads.
template <bool kToPacked>
void copy_rows(float* view, const Index& n, const Index& stride, float* packed_data, int threads) {
  const int64_t rows = n[1] * n[2] * n[3];
  cpu::parallel_for(threads, rows,
                    [&](int64_t begin, int64_t end, int) {
                      for (int64_t r = begin; r < end; ++r) {
                        const int64_t i1 = r % n[1], i2 = (r / n[1]) % n[2], i3 = r / (n[1] * n[2]);
                        float* v = view + i1 * stride[1] + i2 * stride[2] + i3 * stride[3];
                        float* p = packed_data + r * n[0];
                        for (int64_t x = 0; x < n[0]; ++x) {
                          if constexpr (kToPacked)
                            p[x] = v[x * stride[0]];
                          else
                            v[x * stride[0]] = p[x];
                        }
                      }
                    },
                    {});
}

}  // namespace

int bank_outputs_per_thread(int requested, int64_t outputs_along_axis) {
  if (requested != 0) {
    if (requested != 1 && requested != 2)
      throw InvalidArgument("outputs per thread " + std::to_string(requested) +
                            " is not supported by the GPU filter bank (use 0 for automatic, 1 "
                            "or 2)");
    return requested;
  }
  return outputs_along_axis >= 2 ? 2 : 1;
}

std::string bank_cannot_implement(const Index& filter_extent, int dims) {
  const Index k = cpu::to_canonical(dims, filter_extent, 1);
  if (k[0] < 3 || k[0] > 15 || k[0] % 2 == 0)
    return "the GPU filter bank takes 3, 5, 7, 9, 11, 13 or 15 taps along x (the filter has " +
           std::to_string(k[0]) + ")";
  return {};
}

void run_bank(const detail::BankProblem& p, const Options& options, RunReport& report) {
  const std::string unfit = bank_cannot_implement(p.filter_extent, p.input.dims);
  if (!unfit.empty())
    throw InvalidArgument(unfit);
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
  const int threads = cpu::resolve_thread_count(options.threads);

  // A 2D image's rows (canonical axis 3) go on axis 1, where a block takes 32 of them; the padded
  // volume's layout is the same either way.
  const bool rows_on_axis1 = n_out[1] == 1 && n_out[2] == 1 && k[1] == 1 && k[2] == 1;
  const int ko =
      rows_on_axis1 ? 1 : bank_outputs_per_thread(options.expert.outputs_per_thread, n_out[3]);
  const int64_t blocks3 = (n_out[3] + ko - 1) / ko;
  const int width = static_cast<int>(k[0]);
  constexpr int FP = BankShape::kFilters;
  const int passes = (p.count + FP - 1) / FP;

  // The taps of each pass as [j3][j2][j1][jx][filter]; a last pass of fewer than FP filters has
  // zeros for the missing ones (computed, never written).
  const int64_t pass_taps = k[3] * k[2] * k[1] * width * FP;
  std::vector<float> laid_out(static_cast<size_t>(passes * pass_taps), 0.0f);
  for (int f = 0; f < p.count; ++f)
    for (int64_t j = 0; j < filter_taps; ++j) {
      const int64_t jx = j % k[0], rest = j / k[0];  // rest = (j3 * k2 + j2) * k1 + j1
      laid_out[(f / FP) * pass_taps + (rest * width + jx) * FP + f % FP] =
          p.taps[f * filter_taps + j];
    }

  cpu::PaddedVolume padded;
  const Index padded_extent{0, n_out[1] + k[1] - 1, n_out[2] + k[2] - 1, blocks3 * ko + k[3] - 1};
  const int64_t row_length = BankShape::row_length(n_out[0], width);
  cpu::build_padded(p.input.data, n_in, in_stride, offset, padded_extent, n_out[0] + width - 1,
                    row_length, p.boundary, threads, cpu::ProgressSpan{&options.progress, 0, 0.05},
                    padded);
  const size_t padded_count =
      static_cast<size_t>(padded_extent[1] * padded_extent[2] * padded_extent[3] * row_length);

  const auto t_upload = std::chrono::steady_clock::now();
  DeviceBuffer d_in(padded_count), d_taps(laid_out.size());
  DeviceBuffer d_out(weighted ? voxels : voxels * p.count);
  DeviceBuffer d_weights(weighted ? voxels * p.count : 1);
  NDCONV_CUDA_CHECK(cudaMemcpy(d_in.data, padded.storage.get(), padded_count * sizeof(float),
                               cudaMemcpyHostToDevice));
  NDCONV_CUDA_CHECK(cudaMemcpy(d_taps.data, laid_out.data(), laid_out.size() * sizeof(float),
                               cudaMemcpyHostToDevice));
  if (weighted) {
    std::vector<float> gathered;
    for (int f = 0; f < p.count; ++f) {
      const Index s = cpu::to_canonical(dims, p.weights[f].stride, 0);
      const float* src = p.weights[f].data;
      if (!packed(n_out, s)) {
        gathered.resize(static_cast<size_t>(voxels));
        copy_rows<true>(const_cast<float*>(p.weights[f].data), n_out, s, gathered.data(), threads);
        src = gathered.data();
      }
      NDCONV_CUDA_CHECK(cudaMemcpy(d_weights.data + f * voxels, src, voxels * sizeof(float),
                                   cudaMemcpyHostToDevice));
    }
  }
  report.seconds_upload =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_upload).count();

  BankGeometry g{row_length,
                 padded_extent[1],
                 padded_extent[2],
                 static_cast<int>(k[1]),
                 static_cast<int>(k[2]),
                 static_cast<int>(k[3]),
                 n_out[0],
                 n_out[1],
                 n_out[2],
                 n_out[3]};
  if (rows_on_axis1) {
    g.e1 = padded_extent[3];
    g.k1 = g.k3;
    g.k3 = 1;
    g.n1 = g.n3;
    g.n3 = 1;
  }
  const BankTiles tiles{
      (g.n0 + BankShape::kBx * BankShape::kTx - 1) / (BankShape::kBx * BankShape::kTx),
      (g.n1 + BankShape::kBy - 1) / BankShape::kBy, (g.n3 + ko - 1) / ko};
  const size_t shared_bytes = BankShape::shared_floats(width, g.k1, ko) * sizeof(float);
  const Launch launch = weighted ? pick_width<true>(width, ko) : pick_width<false>(width, ko);
  const auto t_compute = std::chrono::steady_clock::now();
  for (int i = 0; i < passes; ++i) {
    const int first = i * FP, valid = std::min(FP, p.count - first);
    launch(options.cuda_device, shared_bytes, g, tiles, d_in.data, d_taps.data + i * pass_taps,
           valid, weighted ? nullptr : d_out.data + first * voxels, voxels,
           weighted ? d_weights.data + first * voxels : nullptr, weighted ? d_out.data : nullptr,
           i > 0);
    NDCONV_CUDA_CHECK_LAUNCH("the filter bank kernel");
    if (options.progress && !options.progress(0.05 + 0.9 * (i + 1) / passes))
      throw Aborted();
  }
  NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  report.seconds_compute =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_compute).count();

  const auto t_download = std::chrono::steady_clock::now();
  const int outputs = weighted ? 1 : p.count;
  std::vector<float> scattered;
  for (int f = 0; f < outputs; ++f) {
    const VolumeView& view = weighted ? p.sum_output : p.outputs[f];
    const Index s = cpu::to_canonical(dims, view.stride, 0);
    const bool direct = packed(n_out, s);
    if (!direct)
      scattered.resize(static_cast<size_t>(voxels));
    NDCONV_CUDA_CHECK(cudaMemcpy(direct ? view.data : scattered.data(), d_out.data + f * voxels,
                                 voxels * sizeof(float), cudaMemcpyDeviceToHost));
    if (!direct)
      copy_rows<false>(view.data, n_out, s, scattered.data(), threads);
  }
  report.seconds_download =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_download).count();
  report.backend = Backend::Cuda;
  report.outputs_per_thread = ko;
  report.outputs_per_thread_reason =
      options.expert.outputs_per_thread != 0 ? std::string("requested")
      : rows_on_axis1 ? std::string("automatic: 1 for a 2D image (rows on axis 1)")
                      : "automatic: 2 where the last axis has 2 outputs or more (4 filters x "
                        "2 outputs x 8 along x = 64 accumulators), else 1";
  report.notes.push_back("GPU filter bank: " + std::to_string(passes) +
                         " passes of 4 filters over " + std::to_string(p.count) + " filters");
}

}  // namespace ndconv::cuda_bank
