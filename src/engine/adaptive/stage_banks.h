// The adaptive filter's two filter banks as the stages run them: the quadrature bank of the
// structure tensor and the reconstruction bank, each with its flipped taps, dual tensors or
// weight coefficients and its options. stage_banks.cpp builds them from the designed filters, in
// one way for the host-memory stages (orientation.cpp, reconstruction.cpp) and the resident GPU
// path (resident_stages.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/bank_problem.h"
#include "engine/adaptive/stage_support.h"
#include "engine/filter_checks.h"
#include "ndconv/adaptive.h"
#include "ndconv/types.h"

namespace ndconv::detail {

// The structure tensor's bank: the real part of quadrature filter q at 2q, its imaginary part at
// 2q + 1, run as a convolution over the `same` region (each filter flipped along every axis into
// correlation order), and the dual tensors of the filters' directions.
struct QuadratureBank {
  int dims = 0;
  int filters = 0;  // K
  Index extent{1, 1, 1, 1};
  std::vector<Tensor> duals;
  std::vector<float> flipped;  // 2K filters, correlation order
  Options options;

  // The bank over `planes` planes of the output from plane `first` of the last axis.
  detail::BankProblem slab(const ConstVolumeView& input, int64_t first, int64_t planes) const {
    const int last = dims - 1;
    detail::BankProblem p;
    p.input = input;
    p.filter_extent = extent;
    p.count = 2 * filters;
    p.taps = flipped.data();
    p.boundary = detail::backend_boundary(options, "the adaptive filter");
    p.output_extent = input.extent;
    p.output_extent[last] = planes;
    for (int a = 0; a < dims; ++a) {
      const int64_t kk = extent[a];
      p.offset[a] = -(kk - 1 - kk / 2) + (a == last ? first : 0);
    }
    return p;
  }

  // Each filter's dual tensor's upper triangle, in the structure tensor's component order.
  std::vector<Tensor> upper_duals() const {
    std::vector<Tensor> upper(static_cast<size_t>(filters), Tensor{});
    for (int q = 0; q < filters; ++q)
      for (int i = 0, c = 0; i < dims; ++i)
        for (int j = i; j < dims; ++j)
          upper[q][c++] = duals[q][i * dims + j];
    return upper;
  }

  // The duals' upper triangles, filter by filter (the GPU's layout).
  std::vector<double> flat_duals() const {
    std::vector<double> flat;
    for (int q = 0; q < filters; ++q)
      for (int i = 0; i < dims; ++i)
        for (int j = i; j < dims; ++j)
          flat.push_back(duals[q][i * dims + j]);
    return flat;
  }
};

QuadratureBank quadrature_bank(int dims, const std::vector<DesignedFilter>& quadrature,
                               const Options& options);

// The reconstruction's bank: the lowpass, then the m highpass filters, run as a convolution over
// the `same` region, and the coefficients of its weights: 1 for the lowpass, <C, M_k> =
// sum_c coefficients[k * m + c] C_c for highpass k.
struct ReconstructionBank {
  int dims = 0;
  int count = 0;  // m + 1
  Index extent{1, 1, 1, 1};
  std::vector<float> taps;  // m + 1 filters, convolution order
  std::vector<double> coefficients;
  Options options;

  FilterBank filter_bank() const {
    FilterBank bank;
    bank.dims = dims;
    bank.extent = extent;
    bank.count = count;
    bank.taps = taps.data();
    return bank;
  }
};

ReconstructionBank reconstruction_bank(int dims, const std::vector<DesignedFilter>& reconstruction,
                                       const Options& options);

}  // namespace ndconv::detail
