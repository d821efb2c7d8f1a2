// One of the bench's api_* workloads as the development probes call it (api_costs.cpp,
// api_timeline.cpp): pinned input and output buffers, random input, the zero boundary, a dense
// box filter of k taps per axis or a Gaussian of sigma per axis, on the CUDA backend.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "ndconv/memory.h"

struct ApiCall {
  ApiCall(int dims, ndconv::Index extent, int k, double sigma)
      : dims_(dims),
        extent_(extent),
        sigma_(sigma),
        in_(count(dims, extent)),
        out_(count(dims, extent)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    for (size_t i = 0; i < in_.size(); ++i)
      in_.data()[i] = u(rng);
    options_.backend = ndconv::Backend::Cuda;
    options_.boundary = ndconv::Boundary::Zero;  // as the bench's api rows
    if (sigma > 0) {
      std::array<double, ndconv::kMaxDims> s{};
      for (int a = 0; a < dims; ++a)
        s[a] = sigma;
      separable_ = ndconv::gaussian_filter(dims, s);
      return;
    }
    dense_.dims = dims;
    int64_t t = 1;
    for (int a = 0; a < dims; ++a) {
      dense_.extent[a] = k;
      t *= k;
    }
    taps_.assign(static_cast<size_t>(t), 1.0f / static_cast<float>(t));
    dense_.taps = taps_.data();
  }

  /// One whole filter call.
  ndconv::RunReport operator()() {
    const auto src = ndconv::make_view<const float>(in_.data(), dims_, extent_);
    const auto dst = ndconv::make_view(out_.data(), dims_, extent_);
    return sigma_ > 0 ? ndconv::filter_separable(src, separable_, dst, options_)
                      : ndconv::filter_dense(src, dense_, dst, options_);
  }

 private:
  static size_t count(int dims, const ndconv::Index& extent) {
    int64_t n = 1;
    for (int a = 0; a < dims; ++a)
      n *= extent[a];
    return static_cast<size_t>(n);
  }
  int dims_;
  ndconv::Index extent_;
  double sigma_;
  ndconv::PinnedBuffer<float> in_, out_;
  ndconv::Options options_;
  std::vector<float> taps_;
  ndconv::DenseFilter dense_;
  ndconv::SeparableFilter separable_;
};
