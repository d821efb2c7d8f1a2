// Building the adaptive filter's quadrature and reconstruction banks (stage_banks.h) from the
// designed filters.
#include "engine/adaptive/stage_banks.h"

#include <algorithm>
#include <string>

namespace ndconv::detail {

QuadratureBank quadrature_bank(int dims, const std::vector<DesignedFilter>& quadrature,
                               const Options& options) {
  if (quadrature.empty() || quadrature[0].imag.empty())
    throw InvalidArgument("structure_tensor needs complex quadrature filters");
  QuadratureBank b;
  b.dims = dims;
  b.filters = static_cast<int>(quadrature.size());
  b.extent = quadrature[0].extent;
  std::vector<std::array<double, kMaxDims>> directions;
  for (const DesignedFilter& f : quadrature)
    directions.push_back(f.direction);
  b.duals = dual_tensors(dims, directions);
  const size_t taps = quadrature[0].real.size();
  b.flipped.resize(2 * quadrature.size() * taps);
  for (size_t q = 0; q < quadrature.size(); ++q) {
    std::reverse_copy(quadrature[q].real.begin(), quadrature[q].real.end(),
                      b.flipped.begin() + 2 * q * taps);
    std::reverse_copy(quadrature[q].imag.begin(), quadrature[q].imag.end(),
                      b.flipped.begin() + (2 * q + 1) * taps);
  }
  b.options = options;
  b.options.operation = Operation::Convolution;
  b.options.region = OutputRegion::Same;
  return b;
}

ReconstructionBank reconstruction_bank(int dims, const std::vector<DesignedFilter>& reconstruction,
                                       const Options& options) {
  const int m = component_count(dims);
  if (static_cast<int>(reconstruction.size()) != m + 1)
    throw InvalidArgument("reconstruct needs the lowpass, " + std::to_string(m) +
                          " highpass filters and " + std::to_string(m) + " tensor components");
  std::vector<std::array<double, kMaxDims>> directions;
  for (int k = 1; k <= m; ++k)
    directions.push_back(reconstruction[k].direction);
  const std::vector<Tensor> duals = dual_tensors(dims, directions);
  ReconstructionBank b;
  b.dims = dims;
  b.count = m + 1;
  b.extent = reconstruction[0].extent;
  const size_t taps = reconstruction[0].real.size();
  b.taps.resize((m + 1) * taps);
  for (int k = 0; k <= m; ++k)
    std::copy(reconstruction[k].real.begin(), reconstruction[k].real.end(),
              b.taps.begin() + k * taps);
  for (int k = 0; k < m; ++k)
    for (int i = 0; i < dims; ++i)
      for (int j = i; j < dims; ++j)
        b.coefficients.push_back((i == j ? 1.0 : 2.0) * duals[k][i * dims + j]);
  b.options = options;
  b.options.operation = Operation::Convolution;
  b.options.region = OutputRegion::Same;
  return b;
}

}  // namespace ndconv::detail
