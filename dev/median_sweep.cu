// Experiment: the 3^3 median's kernel shapes (issue 49, row median3d_r1), timed side by side on
// 256^3 float32 (replicate boundary, data on the device, CUDA events, median of 20 after warm-ups)
// against a device-to-device copy of the volume in the same run (the memory floor: one read and
// one write). Variants:
//   main        main's kernel at aac0af7 (median_kernel with each plane sorted from the raw tile,
//               8 outputs a thread; a dev copy of its selection, MainSortedPlanes);
//   lean<N>     the same selection with the tile copied as one flat range of keys (every lane
//               busy; constant divisions, 32-bit offsets) for blocks inside the volume, the
//               block's origin from 32-bit divisions, N outputs per thread along z stored as they
//               are selected;
//   cols<N>     lean<N> whose planes are sorted from three y-columns sorted once per block in a
//               second shared buffer: 16 comparators a plane instead of 25;
//   percol<N>   no raw tile: each y-column's 3 voxels read from global memory, converted, sorted
//               and stored by one thread (fused_kernel);
//   columns<N>  the product (median_columns_kernel, median_columns.h): strips of 6 voxels along y,
//               each read and converted once, 4 sorted columns a strip. Its columns padded to 4
//               keys (16-byte shared accesses; the product's option at b11d343) ran 0.1470-0.1482
//               ms at 8-12 outputs against 0.1418-0.1466 unpadded (round 2): not kept;
//               percol8pad here is the per-column form of it.
// Every variant is compared bit for bit with a sort-based CPU reference on an odd-sized volume
// with NaNs, ties, signed zeros and infinities under every boundary rule, and with main on the
// timing volume. The winner's shape goes into Tuning::median_column_outputs; this file
// stays an experiment (not built by CMake). `median_sweep profile NAME...` launches the named
// variants once each on the timing volume (for ncu).
//
// build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I src -I .
// dev/median_sweep.cu -o median_sweep
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/median/median_kernel.cuh"
#include "cuda/median/median_merge.h"
#include "cuda_check.h"

using namespace ndconv::cuda_median;
using ndconv::detail::boundary_index_hd;
using ndconv::detail::boundary_index_t;

namespace {

constexpr int kTx = 32, kTy = 4, kThreads = kTx * kTy;

// The sorted-planes selection for N outputs along z from planes sorted by `sorted_plane(p, v)`,
// each median handed to emit(k, key) as soon as it is known.
template <int N, typename Plane, typename Emit>
__device__ __forceinline__ void planes_medians(Plane sorted_plane, Emit emit) {
  uint32_t s0[9], s1[9], s2[9], s3[9];
  sorted_plane(0, s0);
  sorted_plane(1, s1);
#pragma unroll
  for (int k = 0; k < N; k += 2) {
    sorted_plane(k + 2, s2);
    sorted_plane(k + 3, s3);
    uint32_t m[10];
    merge_middle(s1, s2, m);
    emit(k, median_of_planes(s0, m));
    emit(k + 1, median_of_planes(s3, m));
#pragma unroll
    for (int i = 0; i < 9; ++i) {
      s0[i] = s2[i];
      s1[i] = s3[i];
    }
  }
}

// main's selection at aac0af7 (the product before the sorted columns): each 3 x 3 plane sorted
// from the raw tile by sort_nine, 8 outputs a thread, in median_kernel (median_kernel.cuh).
struct MainSortedPlanes {
  static constexpr int kMinBlocksPerSm = 8;
  __device__ void operator()(const MedianGrid& g, const uint32_t* tile, int corner,
                             uint32_t (&median)[kOutputs]) const {
    const int row = g.tile[0], plane = g.tile[0] * g.tile[1];
    auto sorted_plane = [&](int p, uint32_t(&v)[9]) {
      const uint32_t* first = tile + corner + p * plane;
#pragma unroll
      for (int i = 0; i < 9; ++i)
        v[i] = first[i % 3 + i / 3 * row];
      sort_nine(v);
    };
    planes_medians<kOutputs>(sorted_plane, [&](int k, uint32_t key) { median[k] = key; });
  }
};

template <int N>
struct Lean {
  static constexpr int T0 = kTx + 2, T1 = kTy + 2, T2 = N + 2, kKeys = T0 * T1 * T2;
};

// The grid of a lean<N> launch: the product's grid with N outputs per thread along z.
MedianGrid lean_grid(const int64_t* extent, int boundary, float outside, int n) {
  const int64_t radius[3] = {1, 1, 1};
  return median_grid(3, extent, radius, boundary, outside, kTx, kTy, n);
}

// Copies the block's tile (flat, interior blocks) or by load_tile (the others); returns origin.
template <int N>
__device__ __forceinline__ void lean_load(const float* __restrict__ in, const MedianGrid& g,
                                          uint32_t* tile, int64_t* origin) {
  using S = Lean<N>;
  unsigned b = blockIdx.x;
  const unsigned nbx = static_cast<unsigned>(g.blocks[0]), nby = static_cast<unsigned>(g.blocks[1]);
  const unsigned bx = b % nbx;
  b /= nbx;
  const unsigned by = b % nby;
  const unsigned bz = b / nby;
  origin[0] = int64_t{bx} * kTx;
  origin[1] = int64_t{by} * kTy;
  origin[2] = int64_t{bz} * N;
  origin[3] = 0;
  const bool interior = origin[0] >= 1 && origin[0] - 1 + S::T0 <= g.extent[0] && origin[1] >= 1 &&
                        origin[1] - 1 + S::T1 <= g.extent[1] && origin[2] >= 1 &&
                        origin[2] - 1 + S::T2 <= g.extent[2];
  const int tid = threadIdx.x + kTx * threadIdx.y;
  if (interior) {
    const int e0 = static_cast<int>(g.extent[0]);
    const int plane = static_cast<int>(g.extent[0] * g.extent[1]);
    const float* base =
        in + ((origin[2] - 1) * g.extent[1] + origin[1] - 1) * g.extent[0] + origin[0] - 1;
#pragma unroll
    for (int j = 0; j < (S::kKeys + kThreads - 1) / kThreads; ++j) {
      const int i = tid + kThreads * j;
      if ((j + 1) * kThreads <= S::kKeys || i < S::kKeys) {
        const int x = i % S::T0, r = i / S::T0, y = r % S::T1, z = r / S::T1;
        tile[i] = median_key(__ldg(base + z * plane + y * e0 + x));
      }
    }
  } else {
    load_tile(g, origin, tile, threadIdx.x, kTx, threadIdx.y, kTy,
              [in](int64_t i) { return __ldg(in + i); });
  }
}

template <int N>
__device__ __forceinline__ void lean_store(float* __restrict__ out, const MedianGrid& g,
                                           const int64_t* origin, int k, uint32_t key) {
  const int64_t x = origin[0] + threadIdx.x, y = origin[1] + threadIdx.y, z = origin[2] + k;
  if (x < g.extent[0] && y < g.extent[1] && z < g.extent[2])
    out[(z * g.extent[1] + y) * g.extent[0] + x] = median_value(key);
}

template <int N, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    lean_kernel(const float* __restrict__ in, float* __restrict__ out, MedianGrid g) {
  using S = Lean<N>;
  extern __shared__ uint32_t tile[];
  int64_t origin[4];
  lean_load<N>(in, g, tile, origin);
  __syncthreads();
  const uint32_t* first = tile + threadIdx.x + threadIdx.y * S::T0;
  auto sorted_plane = [&](int p, uint32_t(&v)[9]) {
#pragma unroll
    for (int i = 0; i < 9; ++i)
      v[i] = first[p * S::T0 * S::T1 + i % 3 + i / 3 * S::T0];
    sort_nine(v);
  };
  planes_medians<N>(sorted_plane,
                    [&](int k, uint32_t key) { lean_store<N>(out, g, origin, k, key); });
}

// cols<N>: after the tile, the sorted y-columns: column (x, y, z) holds tile keys (x, y..y+2, z)
// sorted, for x < T0, y < kTy, z < T2, at cols[3 * ((z * kTy + y) * T0 + x) + i].
template <int N, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    cols_kernel(const float* __restrict__ in, float* __restrict__ out, MedianGrid g) {
  using S = Lean<N>;
  extern __shared__ uint32_t tile[];
  uint32_t* cols = tile + S::kKeys;
  int64_t origin[4];
  lean_load<N>(in, g, tile, origin);
  __syncthreads();
  constexpr int kColumns = S::T0 * kTy * S::T2;
  const int tid = threadIdx.x + kTx * threadIdx.y;
#pragma unroll 2
  for (int c = tid; c < kColumns; c += kThreads) {
    const int x = c % S::T0, r = c / S::T0, y = r % kTy, z = r / kTy;
    const uint32_t* t = tile + (z * S::T1 + y) * S::T0 + x;
    uint32_t a = t[0], b = t[S::T0], d = t[2 * S::T0];
    order(a, b);
    order(b, d);
    order(a, b);
    cols[3 * c] = a;
    cols[3 * c + 1] = b;
    cols[3 * c + 2] = d;
  }
  __syncthreads();
  const uint32_t* first = cols + 3 * (threadIdx.x + threadIdx.y * S::T0);
  auto sorted_plane = [&](int p, uint32_t(&v)[9]) {
#pragma unroll
    for (int i = 0; i < 9; ++i)
      v[i] = first[3 * p * S::T0 * kTy + i];
    sort_nine_from_triples(v);
  };
  planes_medians<N>(sorted_plane,
                    [&](int k, uint32_t key) { lean_store<N>(out, g, origin, k, key); });
}

// percol<N> (fused_kernel): no raw tile; each thread reads y-columns of 3 voxels from global memory
// (a voxel is read by the three columns that hold it, from L1), converts, sorts and stores them as
// cols<N> lays them out: one shared buffer, one barrier, no second pass over shared memory.
template <int kStride>
__device__ __forceinline__ void put_column(uint32_t* cols, int c, uint32_t a, uint32_t b,
                                           uint32_t d) {
  if constexpr (kStride == 4) {
    reinterpret_cast<uint4*>(cols)[c] = make_uint4(a, b, d, 0u);
  } else {
    cols[3 * c] = a;
    cols[3 * c + 1] = b;
    cols[3 * c + 2] = d;
  }
}

template <int N, int kMinBlocks, int kStride = 3>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    fused_kernel(const float* __restrict__ in, float* __restrict__ out, MedianGrid g) {
  using S = Lean<N>;
  static_assert(S::kKeys > 0, "the raw tile it does without");
  extern __shared__ uint32_t cols[];
  unsigned b = blockIdx.x;
  const unsigned nbx = static_cast<unsigned>(g.blocks[0]), nby = static_cast<unsigned>(g.blocks[1]);
  const unsigned bx = b % nbx;
  b /= nbx;
  const unsigned by = b % nby;
  const unsigned bz = b / nby;
  const int64_t origin[4] = {int64_t{bx} * kTx, int64_t{by} * kTy, int64_t{bz} * N, 0};
  const bool interior = origin[0] >= 1 && origin[0] - 1 + S::T0 <= g.extent[0] && origin[1] >= 1 &&
                        origin[1] - 1 + S::T1 <= g.extent[1] && origin[2] >= 1 &&
                        origin[2] - 1 + S::T2 <= g.extent[2];
  constexpr int kColumns = S::T0 * kTy * S::T2;
  const int tid = threadIdx.x + kTx * threadIdx.y;
  const int e0 = static_cast<int>(g.extent[0]);
  if (interior) {
    const int plane = static_cast<int>(g.extent[0] * g.extent[1]);
    const float* base =
        in + ((origin[2] - 1) * g.extent[1] + origin[1] - 1) * g.extent[0] + origin[0] - 1;
#pragma unroll 4
    for (int c = tid; c < kColumns; c += kThreads) {
      const int x = c % S::T0, r = c / S::T0, y = r % kTy, z = r / kTy;
      const float* p = base + z * plane + y * e0 + x;
      uint32_t k0 = median_key(__ldg(p)), k1 = median_key(__ldg(p + e0)),
               k2 = median_key(__ldg(p + 2 * e0));
      order(k0, k1);
      order(k1, k2);
      order(k0, k1);
      put_column<kStride>(cols, c, k0, k1, k2);
    }
  } else {
    const int e1 = static_cast<int>(g.extent[1]), e2 = static_cast<int>(g.extent[2]);
    for (int c = tid; c < kColumns; c += kThreads) {
      const int x = c % S::T0, r = c / S::T0, y = r % kTy, z = r / kTy;
      const int ix = boundary_index_t<int>(static_cast<int>(origin[0]) - 1 + x, e0, g.boundary);
      const int iz = boundary_index_t<int>(static_cast<int>(origin[2]) - 1 + z, e2, g.boundary);
      uint32_t k[3];
      for (int d = 0; d < 3; ++d) {
        const int iy =
            boundary_index_t<int>(static_cast<int>(origin[1]) - 1 + y + d, e1, g.boundary);
        k[d] = ix < 0 || iy < 0 || iz < 0
                   ? g.outside_key
                   : median_key(__ldg(in + (int64_t{iz} * e1 + iy) * e0 + ix));
      }
      order(k[0], k[1]);
      order(k[1], k[2]);
      order(k[0], k[1]);
      put_column<kStride>(cols, c, k[0], k[1], k[2]);
    }
  }
  __syncthreads();
  const int corner = threadIdx.x + threadIdx.y * S::T0;
  auto sorted_plane = [&](int p, uint32_t(&v)[9]) {
    if constexpr (kStride == 4) {
      const uint4* f = reinterpret_cast<const uint4*>(cols) + corner + p * S::T0 * kTy;
#pragma unroll
      for (int j = 0; j < 3; ++j) {
        const uint4 q = f[j];
        v[3 * j] = q.x;
        v[3 * j + 1] = q.y;
        v[3 * j + 2] = q.z;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 9; ++i)
        v[i] = cols[3 * (corner + p * S::T0 * kTy) + i];
    }
    sort_nine_from_triples(v);
  };
  planes_medians<N>(sorted_plane,
                    [&](int k, uint32_t key) { lean_store<N>(out, g, origin, k, key); });
}

struct Variant {
  std::string name;
  void (*kernel)(const float*, float*, MedianGrid);
  int n;          // outputs per thread along z; 0: the product's launch
  int smem_keys;  // keys of shared memory per block
};

template <int N, int B>
Variant lean(const char* name) {
  return {name, lean_kernel<N, B>, N, Lean<N>::kKeys};
}
template <int N>
Variant product(const char* name) {
  using Shape = ColumnShape<kTx, kTy, N>;
  return {name, median_columns_kernel<Shape>, N, Shape::kKeys};
}
template <int N, int B, int kStride = 3>
Variant fused(const char* name) {
  return {name, fused_kernel<N, B, kStride>, N, kStride * Lean<N>::T0 * kTy * Lean<N>::T2};
}
template <int N, int B>
Variant cols(const char* name) {
  return {name, cols_kernel<N, B>, N, Lean<N>::kKeys + 3 * Lean<N>::T0 * kTy * Lean<N>::T2};
}

void run_variant(const Variant& v, const float* in, float* out, const int64_t* extent, int boundary,
                 float outside) {
  if (v.n == 0) {
    // As median_launch.cu launches it (the widest shape, 32 x 4, always fits this window).
    const int64_t radius[3] = {1, 1, 1};
    const MedianGrid g = median_grid(3, extent, radius, boundary, outside, kTx, kTy);
    median_kernel<MainSortedPlanes>
        <<<static_cast<unsigned>(g.block_count()), dim3(kTx, kTy), g.tile_keys() * 4>>>(in, out, g);
    CHECK(cudaGetLastError());
    return;
  }
  const MedianGrid g = lean_grid(extent, boundary, outside, v.n);
  const int bytes = v.smem_keys * 4;
  CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  v.kernel<<<static_cast<unsigned>(g.block_count()), dim3(kTx, kTy), bytes>>>(in, out, g);
  CHECK(cudaGetLastError());
}

// The sort-based reference: every window's 27 keys (the boundary rule as the kernels map it),
// the 14th by nth_element.
std::vector<float> reference(const std::vector<float>& in, const int64_t* e, int boundary,
                             float outside) {
  std::vector<float> out(in.size());
  const uint32_t outside_key = median_key(outside);
  uint32_t w[27];
  for (int64_t z = 0; z < e[2]; ++z)
    for (int64_t y = 0; y < e[1]; ++y)
      for (int64_t x = 0; x < e[0]; ++x) {
        int n = 0;
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const int64_t ix = boundary_index_hd(x + dx, e[0], boundary),
                            iy = boundary_index_hd(y + dy, e[1], boundary),
                            iz = boundary_index_hd(z + dz, e[2], boundary);
              w[n++] = ix < 0 || iy < 0 || iz < 0 ? outside_key
                                                  : median_key(in[(iz * e[1] + iy) * e[0] + ix]);
            }
        std::nth_element(w, w + 13, w + 27);
        out[(z * e[1] + y) * e[0] + x] = median_value(w[13]);
      }
  return out;
}

int64_t bit_differences(const std::vector<float>& a, const std::vector<float>& b) {
  int64_t d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d += std::memcmp(&a[i], &b[i], 4) != 0;
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  // "profile": one launch of each variant named after it on the timing volume, for ncu.
  const bool profile = argc > 1 && std::string(argv[1]) == "profile";
  const std::vector<Variant> variants = {
      {"main", nullptr, 0, 0},  lean<8, 8>("lean8"),      cols<8, 8>("cols8"),
      fused<14, 8>("percol14"), product<8>("columns8"),   product<12>("columns12"),
      product<14>("columns14"), product<16>("columns16"), fused<8, 8, 4>("percol8pad"),
  };
  int failures = 0;
  if (profile) {
    const int64_t e[3] = {256, 256, 256};
    const int64_t n = e[0] * e[1] * e[2];
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * 4));
    CHECK(cudaMalloc(&d_out, n * 4));
    std::vector<float> h(static_cast<size_t>(n));
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (auto& v : h)
      v = u(rng);
    CHECK(cudaMemcpy(d_in, h.data(), n * 4, cudaMemcpyHostToDevice));
    for (int i = 2; i < argc; ++i)
      for (const auto& v : variants)
        if (v.name == argv[i])
          run_variant(v, d_in, d_out, e, 1, 0.0f);
    CHECK(cudaDeviceSynchronize());
    return 0;
  }

  // Correctness: odd extents (border and interior blocks), NaNs, ties, signed zeros, infinities.
  {
    const int64_t e[3] = {67, 45, 37};
    const int64_t n = e[0] * e[1] * e[2];
    std::mt19937 rng(49);
    std::uniform_int_distribution<int> level(0, 15), pick(0, 99);
    std::vector<float> h(static_cast<size_t>(n));
    for (auto& v : h) {
      const int p = pick(rng);
      v = p < 5    ? std::nanf("")
          : p < 7  ? -std::nanf("")
          : p < 9  ? INFINITY
          : p < 11 ? -INFINITY
          : p < 14 ? -0.0f
          : p < 17 ? 0.0f
                   : static_cast<float>(level(rng) - 7) * 0.25f;
    }
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * 4));
    CHECK(cudaMalloc(&d_out, n * 4));
    CHECK(cudaMemcpy(d_in, h.data(), n * 4, cudaMemcpyHostToDevice));
    std::vector<float> got(h.size());
    for (int b = 0; b <= 5; ++b) {
      const float outside = b == 5 ? 0.25f : 0.0f;
      const std::vector<float> want = reference(h, e, b, outside);
      for (const auto& v : variants) {
        CHECK(cudaMemset(d_out, 0xff, n * 4));  // NaN poison
        run_variant(v, d_in, d_out, e, b, outside);
        CHECK(cudaMemcpy(got.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
        const int64_t d = bit_differences(got, want);
        if (d != 0) {
          std::printf("FAIL %s boundary %d: %lld of %lld differ from the reference\n",
                      v.name.c_str(), b, static_cast<long long>(d), static_cast<long long>(n));
          ++failures;
        }
      }
    }
    std::printf("check 67x45x37, NaN/ties/zeros/inf, boundaries 0-5: %d failures\n", failures);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
  }

  // Timing: 256^3 uniform in [0, 1), replicate.
  const int64_t e[3] = {256, 256, 256};
  const int64_t n = e[0] * e[1] * e[2];
  std::vector<float> h(static_cast<size_t>(n));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (auto& v : h)
    v = u(rng);
  float *d_in, *d_out, *d_ref;
  CHECK(cudaMalloc(&d_in, n * 4));
  CHECK(cudaMalloc(&d_out, n * 4));
  CHECK(cudaMalloc(&d_ref, n * 4));
  CHECK(cudaMemcpy(d_in, h.data(), n * 4, cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  auto time = [&](auto&& launch) {
    for (int i = 0; i < 3; ++i)
      launch();
    std::vector<float> ms;
    for (int i = 0; i < 20; ++i) {
      CHECK(cudaEventRecord(t0));
      launch();
      CHECK(cudaEventRecord(t1));
      CHECK(cudaEventSynchronize(t1));
      float m = 0;
      CHECK(cudaEventElapsedTime(&m, t0, t1));
      ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  const float copy_ms =
      time([&] { CHECK(cudaMemcpyAsync(d_out, d_in, n * 4, cudaMemcpyDeviceToDevice)); });
  std::printf("copy 256^3 (the floor): %.4f ms, %.0f GB/s\n", copy_ms, 2.0 * n * 4 / copy_ms / 1e6);
  run_variant(variants[0], d_in, d_ref, e, 1, 0.0f);
  std::vector<float> want(h.size()), got(h.size());
  CHECK(cudaMemcpy(want.data(), d_ref, n * 4, cudaMemcpyDeviceToHost));
  for (const auto& v : variants) {
    CHECK(cudaMemset(d_out, 0xff, n * 4));
    run_variant(v, d_in, d_out, e, 1, 0.0f);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(got.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
    const int64_t d = bit_differences(got, want);
    failures += d != 0;
    const float ms = time([&] { run_variant(v, d_in, d_out, e, 1, 0.0f); });
    std::printf("%-10s %.4f ms  %.2fx floor  differences from main %lld\n", v.name.c_str(), ms,
                ms / copy_ms, static_cast<long long>(d));
  }
  std::printf("%s\n", failures == 0 ? "ALL OK" : "FAILURES");
  return failures == 0 ? 0 : 1;
}
