// The FFT family's kernels: grid-stride loops over the transform's real data, its half spectrum or
// the outputs, each element through the index maps of fft_box.h (which the CI tests run on the
// host).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/fft/kernels/fft_box.h"

namespace ndconv::cuda_backend {

/// Calls f(row, x) for every x < width of every row < rows: x along the block's threads and
/// blocks, rows along the grid's y (launched with fft_row_grid).
template <typename F>
__device__ void fft_for_rows(int64_t width, int rows, F f) {
  const int64_t x = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (x >= width)
    return;
  for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < rows; row += gridDim.y * blockDim.y)
    f(row, x);
}

/// buffer element p = value(p) for every element of the real data (FftBox::row_pitch per row).
template <typename Value>
__device__ void fft_fill(const FftBox& g, double* __restrict__ buffer, Value value) {
  fft_for_rows(g.row_pitch, fft_buffer_rows(g), [&](int row, int64_t x) {
    int64_t p[3];
    fft_buffer_position(g, row, x, p);
    buffer[row * g.row_pitch + x] = value(p);
  });
}

/// The boundary-resolved box, zero padded: buffer[i] = in_b[offset + p] inside the box, 0 outside.
/// A value that is not finite is written as 0 and raises *nonfinite: fft_nonfinite_kernel adds
/// its terms to the outputs afterwards.
__global__ void fft_pad_kernel(const float* __restrict__ in, FftBox g, double* __restrict__ buffer,
                               int* __restrict__ nonfinite) {
  fft_fill(g, buffer, [&](const int64_t p[3]) {
    const int64_t source = fft_source_index(g, p);
    const double v = source < 0 ? 0.0 : static_cast<double>(in[source]);
    if (isfinite(v))
      return v;
    *nonfinite = 1;
    return 0.0;
  });
}

/// The taps zero padded to the transform's extents (the filter's buffer before its transform).
__global__ void fft_taps_kernel(const float* __restrict__ taps, FftBox g,
                                double* __restrict__ buffer) {
  fft_fill(g, buffer, [&](const int64_t p[3]) {
    const int64_t tap = fft_tap_index(g, p);
    return tap < 0 ? 0.0 : static_cast<double>(taps[tap]);
  });
}

/// data = data conj(spectrum) scale over the half spectrum.
__global__ void fft_product_kernel(double2* __restrict__ data, const double2* __restrict__ spectrum,
                                   int64_t count, double scale) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    double2 d = data[i];
    const double2 w = spectrum[i];
    fft_correlate_spectrum(d.x, d.y, w.x, w.y, scale);
    data[i] = d;
  }
}

/// The outputs from the inverse transform, rounded to float once.
__global__ void fft_crop_kernel(const double* __restrict__ buffer, FftBox g,
                                float* __restrict__ out) {
  fft_for_rows(g.out_extent[0], fft_output_rows(g), [&](int row, int64_t x) {
    int64_t o[3];
    fft_output_position(g, row, x, o);
    out[o[0] * g.out_stride[0] + o[1] * g.out_stride[1] + o[2] * g.out_stride[2]] =
        static_cast<float>(buffer[fft_output_source(g, o)]);
  });
}

/// Where *nonfinite is set: each box element whose input is not finite adds tap * value to every
/// output whose footprint holds it, so that NaN and Inf reach exactly those outputs (a sum holding
/// NaN, or infinities of both signs, is NaN in any order; one with infinities of one sign is that
/// infinity). Returns at once otherwise.
__global__ void fft_nonfinite_kernel(const float* __restrict__ in, const float* __restrict__ taps,
                                     FftBox g, const int* __restrict__ nonfinite,
                                     float* __restrict__ out) {
  if (*nonfinite == 0)
    return;
  const int64_t n = g.box[0] * g.box[1] * g.box[2];
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t p[3] = {i % g.box[0], (i / g.box[0]) % g.box[1], i / (g.box[0] * g.box[1])};
    const int64_t source = fft_source_index(g, p);
    if (source < 0 || isfinite(in[source]))
      continue;
    const float v = in[source];
    for (int64_t j2 = 0; j2 < g.filter[2]; ++j2) {
      const int64_t o2 = p[2] - j2;
      if (o2 < 0 || o2 >= g.out_extent[2])
        continue;
      for (int64_t j1 = 0; j1 < g.filter[1]; ++j1) {
        const int64_t o1 = p[1] - j1;
        if (o1 < 0 || o1 >= g.out_extent[1])
          continue;
        for (int64_t j0 = 0; j0 < g.filter[0]; ++j0) {
          const int64_t o0 = p[0] - j0;
          if (o0 < 0 || o0 >= g.out_extent[0])
            continue;
          const float w = taps[(j2 * g.filter[1] + j1) * g.filter[0] + j0];
          atomicAdd(out + o0 * g.out_stride[0] + o1 * g.out_stride[1] + o2 * g.out_stride[2],
                    w * v);
        }
      }
    }
  }
}

}  // namespace ndconv::cuda_backend
