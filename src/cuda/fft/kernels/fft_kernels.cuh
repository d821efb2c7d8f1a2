// The FFT family's kernels: grid-stride loops over the in-place transform buffer or the outputs,
// each element through the index maps of fft_box.h (which the CI tests run on the host).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/fft/kernels/fft_box.h"

namespace ndconv::cuda_backend {

/// Calls f(row, row_data(row), x) for every x < width of every row < rows: a warp per row
/// (blockDim.x 32; rows along threadIdx.y and the blocks, looping past gridDim.x blockDim.y), its
/// lanes along x, so that what depends on the row alone is computed once per lane, not per element.
template <typename RowData, typename F>
__device__ void fft_for_rows(int64_t width, int rows, RowData row_data, F f) {
  for (int row = blockIdx.x * blockDim.y + threadIdx.y; row < rows; row += gridDim.x * blockDim.y) {
    const auto data = row_data(row);
#pragma unroll 4  // several loads of a lane in flight at once
    for (int64_t x = threadIdx.x; x < width; x += blockDim.x)
      f(row, data, x);
  }
}

/// buffer element p = value(p) for every element of the in-place buffer.
template <typename Value>
__device__ void fft_fill(const FftBox& g, double* __restrict__ buffer, Value value) {
  fft_for_rows(
      g.row_pitch, fft_buffer_rows(g), [](int row) { return row; },
      [&](int row, int, int64_t x) {
        int64_t p[3];
        fft_buffer_position(g, row, x, p);
        buffer[row * g.row_pitch + x] = value(p);
      });
}

/// The boundary-resolved box, zero padded: buffer[i] = in_b[offset + p] inside the box, 0 outside
/// (fft_source_index, its row part once per row). A value that is not finite is written as 0 and
/// raises *nonfinite: fft_nonfinite_kernel adds its terms to the outputs afterwards.
__global__ void fft_pad_kernel(const float* __restrict__ in, FftBox g, double* __restrict__ buffer,
                               int* __restrict__ nonfinite) {
  fft_for_rows(
      g.row_pitch, fft_buffer_rows(g),
      [&](int row) {
        int64_t p[3];
        fft_buffer_position(g, row, 0, p);
        return fft_source_row(g, p);
      },
      [&](int row, int64_t source_row, int64_t x) {
        const int64_t source = source_row < 0 ? -1 : fft_source_in_row(g, source_row, x);
        double v = source < 0 ? 0.0 : static_cast<double>(in[source]);
        if (!isfinite(v)) {
          *nonfinite = 1;
          v = 0.0;
        }
        buffer[row * g.row_pitch + x] = v;
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

// Where output row `row` starts in the outputs and in the buffer (both maps are linear in x:
// output x of the row is out[out + x * out_stride[0]], read from buffer[source + x]).
struct FftCropRow {
  int64_t out = 0;
  int64_t source = 0;
};

/// The outputs from the inverse transform, rounded to float once.
__global__ void fft_crop_kernel(const double* __restrict__ buffer, FftBox g,
                                float* __restrict__ out) {
  fft_for_rows(
      g.out_extent[0], fft_output_rows(g),
      [&](int row) {
        int64_t o[3];
        fft_output_position(g, row, 0, o);
        return FftCropRow{o[1] * g.out_stride[1] + o[2] * g.out_stride[2], fft_output_source(g, o)};
      },
      [&](int, const FftCropRow& r, int64_t x) {
        out[r.out + x * g.out_stride[0]] = static_cast<float>(buffer[r.source + x]);
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
