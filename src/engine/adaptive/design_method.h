// How the adaptive filter's filters are designed (src/engine/adaptive/design.cpp, design_fit.cpp,
// design_cache.cpp), for the tests and the timing harness. Every method fits the same weighted
// least-squares problem and stops on the same rule (residual of the normal equations below 1e-9 of
// their right-hand side), so the filters agree within the solver's tolerance; the default is the
// fast one, and the public design_*_filters (ndconv/adaptive.h) use it.
#pragma once

#include <vector>

#include "ndconv/adaptive.h"

namespace ndconv::detail {

struct DesignMethod {
  /// A filter whose direction is a signed permutation Q of another filter's direction (of the
  /// same kind) has that filter's taps moved by Q instead of being solved again: the frequency
  /// grid (the same on every axis, symmetric about 0) and the weight (a function of |u|) are
  /// invariant under Q, so the fit's solution moves with its ideal response.
  bool reuse_symmetric = true;
  /// Conjugate gradients preconditioned by A'^H W^-1 A' on a coarser grid of size + 2
  /// frequencies per axis (close to the inverse of the normal matrix A^H W A, which is a
  /// multilevel Toeplitz matrix with symbol W): a few iterations instead of a few dozen.
  bool preconditioned = true;
  /// Real filters: the DFTs run on the u_0 >= 0 half of the grid (their responses are Hermitian
  /// symmetric), about half the work.
  bool half_spectrum = true;
  /// Threads for the independent solves; 0 = every hardware thread.
  int threads = 0;
  /// Reuse the filters of an earlier call with the same parameters (a small, thread-safe,
  /// in-process cache of the most recent designs).
  bool cached = true;
};

/// Every filter solved on its own by unpreconditioned conjugate gradients on the whole grid, on
/// one thread, without the cache: the straightforward method the fast one is checked against.
DesignMethod plain_design_method();

std::vector<DesignedFilter> design_quadrature_filters(int dims, const QuadratureDesign& design,
                                                      const DesignMethod& method);
std::vector<DesignedFilter> design_reconstruction_filters(int dims,
                                                          const ReconstructionDesign& design,
                                                          const DesignMethod& method);

}  // namespace ndconv::detail
