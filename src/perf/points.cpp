#include "perf/points.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "core/enum_names.h"
#include "ndconv/errors.h"

namespace ndconv::perf {

using cuda_backend::DenseKernel;
using cuda_backend::DenseKernelRequest;
using cuda_backend::DenseKernelVariant;

namespace {

// The default tiled shape; the other compiled shapes are swept only with --block-shapes.
constexpr int kDefaultTiledTx = 8;

bool kept(const std::vector<int64_t>& kos, int ko) {
  return kos.empty() || std::find(kos.begin(), kos.end(), ko) != kos.end();
}

}  // namespace

const char* family_name(DenseKernel kernel) {
  static constexpr EnumName<DenseKernel> kFamilyNames[] = {{DenseKernel::Auto, "auto"},
                                                           {DenseKernel::Tiled, "tiled"},
                                                           {DenseKernel::Blocked, "blocked"},
                                                           {DenseKernel::Fft, "fft"}};
  static_assert(lists_every(kFamilyNames, cuda_backend::kDenseKernelCount),
                "a DenseKernel without its name");
  return name_of(kernel, kFamilyNames, "auto");
}

std::string block_text(const cuda_backend::LaunchPlan& plan) {
  return std::to_string(plan.block[0]) + "x" + std::to_string(plan.block[1]) + "x" +
         std::to_string(plan.block[2]);
}

std::string PointRequest::label() const {
  if (is_auto)
    return "auto";
  std::string s = family_name(request.kernel);
  if (request.kernel == DenseKernel::Tiled)
    s += " TX=" + std::to_string(request.tiled_outputs_along_x);
  s += " KO=" + std::to_string(request.outputs_per_thread);
  if (request.tiled_block_rows != 0)
    s += " rows=" + std::to_string(request.tiled_block_rows);
  return s;
}

std::vector<PointRequest> sweep_points(const std::vector<DenseKernelVariant>& variants, int dims,
                                       const std::vector<int64_t>& kos, bool block_shapes) {
  std::vector<PointRequest> points;
  // (family, TX, KO, block rows) already listed: each blocked KO has two tap flavours, and the
  // default tiled point stands for the automatic block rows of every TX 8 entry with its KO.
  std::set<std::tuple<int, int, int, int>> listed;
  auto add = [&](DenseKernel kernel, int tx, int ko, int rows) {
    if (!listed.insert({static_cast<int>(kernel), tx, ko, rows}).second)
      return;
    PointRequest p;
    p.request.kernel = kernel;
    p.request.outputs_per_thread = ko;
    if (kernel == DenseKernel::Tiled) {
      p.request.tiled_outputs_along_x = tx;
      p.request.tiled_block_rows = rows;
    }
    points.push_back(p);
  };
  for (const DenseKernelVariant& v : variants) {
    const int ko = v.resources.outputs_per_thread;
    if (v.kernel == DenseKernel::Blocked && kept(kos, ko))
      add(DenseKernel::Blocked, 1, ko, 0);
  }
  for (const bool explicit_shapes : {false, true}) {
    if (explicit_shapes && !block_shapes)
      break;
    for (const DenseKernelVariant& v : variants) {
      const int ko = v.resources.outputs_per_thread;
      if (v.kernel != DenseKernel::Tiled || !kept(kos, ko) || (dims == 2 && ko != 1))
        continue;
      if (explicit_shapes)
        add(DenseKernel::Tiled, v.outputs_along_x, ko, v.block_rows);
      else if (v.outputs_along_x == kDefaultTiledTx)
        add(DenseKernel::Tiled, kDefaultTiledTx, ko, 0);
    }
  }
  PointRequest automatic;
  automatic.is_auto = true;
  points.push_back(automatic);
  return points;
}

void check_compiled_kos(const std::vector<DenseKernelVariant>& variants,
                        const std::vector<int64_t>& kos) {
  std::set<int> compiled;
  for (const DenseKernelVariant& v : variants)
    compiled.insert(v.resources.outputs_per_thread);
  for (int64_t ko : kos) {
    if (compiled.count(static_cast<int>(ko)))
      continue;
    std::string have;
    for (int k : compiled)
      have += (have.empty() ? "" : ",") + std::to_string(k);
    throw InvalidArgument("--ko " + std::to_string(ko) +
                          ": no kernel has such an instantiation (compiled: " + have + ")");
  }
}

}  // namespace ndconv::perf
