// The filter bank's front end: validates the request with the single-filter front end's rules
// (each filter is checked as a dense filter), flips the filters for convolution, turns the output
// region into an input offset (problem.h) and runs the CPU or the GPU bank driver.
#include <algorithm>
#include <chrono>
#include <string>

#include "engine/adaptive/bank_front.h"

#include "core/seconds_since.h"
#include "core/view_overlap.h"
#include "cpu/cpu_backend.h"
#include "cuda/bank/bank_backend.h"
#include "engine/backend_work.h"
#include "engine/filter_checks.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"

namespace ndconv {

namespace {

template <typename T>
void check_view(const BasicVolumeView<T>& v, const OutputGeometry& g, const std::string& what) {
  if (v.data == nullptr)
    throw InvalidArgument(what + " has no data");
  if (v.dims != g.dims)
    throw InvalidArgument(what + " has dimension " + std::to_string(v.dims) + ", expected " +
                          std::to_string(g.dims));
  for (int a = 0; a < g.dims; ++a) {
    if (v.extent[a] != g.extent[a])
      throw InvalidArgument(what + " has " + std::to_string(v.extent[a]) + " voxels along axis " +
                            std::to_string(a) + ", expected " + std::to_string(g.extent[a]));
  }
}

}  // namespace

detail::BankProblem detail::prepare_bank(const ConstVolumeView& input, const FilterBank& bank,
                                         const Options& options, std::vector<float>& flipped) {
  if (input.data == nullptr)
    throw InvalidArgument("the input volume has no data");
  if (bank.count < 1)
    throw InvalidArgument("the filter bank has no filters");
  if (bank.taps == nullptr)
    throw InvalidArgument("the filter bank has no taps");
  if (bank.dims != input.dims)
    throw InvalidArgument("the filter bank is " + std::to_string(bank.dims) +
                          "D but the volume is " + std::to_string(input.dims) + "D");
  const int64_t taps = bank.tap_count();
  for (int f = 0; f < bank.count; ++f) {
    DenseFilter one;
    one.dims = bank.dims;
    one.extent = bank.extent;
    one.taps = bank.taps + f * taps;
    validate_dense_filter(one);
  }
  const OutputGeometry g =
      output_geometry(input.dims, input.extent, bank.extent, options.operation, options.region);
  detail::BankProblem p;
  p.input = input;
  p.filter_extent = bank.extent;
  p.count = bank.count;
  p.taps = bank.taps;
  if (options.operation == Operation::Convolution) {
    flipped.assign(bank.taps, bank.taps + taps * bank.count);
    for (int f = 0; f < bank.count; ++f)  // reversing a filter's buffer flips every axis
      std::reverse(flipped.begin() + f * taps, flipped.begin() + (f + 1) * taps);
    p.taps = flipped.data();
  }
  p.boundary = detail::backend_boundary(options, "the filter bank");
  p.output_extent = g.extent;
  for (int a = 0; a < input.dims; ++a) {
    const int64_t kk = bank.extent[a];
    const int64_t anchor = options.operation == Operation::Correlation ? kk / 2 : kk - 1 - kk / 2;
    p.offset[a] = g.start[a] - anchor;
  }
  return p;
}

void detail::choose_bank_backend(const Options& options, RunReport& report,
                                 const Index* filter_extent, int dims) {
  BackendWork work;
  if (filter_extent != nullptr)
    work = bank_backend_work(*filter_extent, dims);
  work.filter = "filter bank";
  choose_backend(options, work, report);
}

RunReport detail::run_bank_problem(const BankProblem& p, const Options& options) {
  const auto t0 = std::chrono::steady_clock::now();
  RunReport report;
  choose_bank_backend(options, report, &p.filter_extent, p.input.dims);
  if (report.backend == Backend::Cuda)
    cuda_bank::run_bank(p, options, report);
  else
    cpu_backend::run_bank(p, options, report);
  report.seconds_total = detail::seconds_since(t0);
  return report;
}

namespace {

OutputGeometry geometry_of(const detail::BankProblem& p) {
  OutputGeometry g;
  g.dims = p.input.dims;
  g.extent = p.output_extent;
  return g;
}

}  // namespace

RunReport filter_bank(const ConstVolumeView& input, const FilterBank& bank,
                      const std::vector<VolumeView>& outputs, const Options& options) {
  std::vector<float> flipped;
  detail::BankProblem p = detail::prepare_bank(input, bank, options, flipped);
  if (static_cast<int>(outputs.size()) != bank.count)
    throw InvalidArgument("the filter bank has " + std::to_string(bank.count) + " filters but " +
                          std::to_string(outputs.size()) + " outputs");
  const OutputGeometry g = geometry_of(p);
  for (size_t f = 0; f < outputs.size(); ++f) {
    check_view(outputs[f], g, "output " + std::to_string(f));
    if (detail::views_overlap(input, outputs[f]))
      throw InvalidArgument("input and output " + std::to_string(f) + " overlap");
    for (size_t e = 0; e < f; ++e)
      if (detail::views_overlap(outputs[e], outputs[f]))
        throw InvalidArgument("outputs " + std::to_string(e) + " and " + std::to_string(f) +
                              " overlap");
  }
  p.outputs = outputs;
  return detail::run_bank_problem(p, options);
}

RunReport filter_bank_weighted_sum(const ConstVolumeView& input, const FilterBank& bank,
                                   const std::vector<ConstVolumeView>& weights,
                                   const VolumeView& output, const Options& options) {
  std::vector<float> flipped;
  detail::BankProblem p = detail::prepare_bank(input, bank, options, flipped);
  if (static_cast<int>(weights.size()) != bank.count)
    throw InvalidArgument("the filter bank has " + std::to_string(bank.count) + " filters but " +
                          std::to_string(weights.size()) + " weight volumes");
  const OutputGeometry g = geometry_of(p);
  check_view(output, g, "the output volume");
  if (detail::views_overlap(input, output))
    throw InvalidArgument("input and output volumes overlap");
  for (size_t f = 0; f < weights.size(); ++f) {
    check_view(weights[f], g, "weight volume " + std::to_string(f));
    if (detail::views_overlap(weights[f], output))
      throw InvalidArgument("weight volume " + std::to_string(f) + " and the output overlap");
  }
  p.weights = weights;
  p.sum_output = output;
  return detail::run_bank_problem(p, options);
}

}  // namespace ndconv
