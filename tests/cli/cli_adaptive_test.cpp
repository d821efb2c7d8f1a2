// End-to-end: `ndconv adaptive` on files the test writes (2D, 3D, true 4D and 4D frame by frame)
// against the engine's adaptive_filter with the same parameters (relative L2 <= 1e-5, geometry
// kept), and its command-line errors (exit 2, one line, nothing written).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "cli_run.h"
#include "io/image.h"
#include "ndconv/adaptive.h"
#include "test_data.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

RawImage make_input(int dims, uint64_t seed) {
  RawImage im;
  im.dims = dims;
  im.extent = {dims == 2 ? 21 : 10, dims == 2 ? 17 : 9, dims >= 3 ? 8 : 1, dims == 4 ? 4 : 1};
  im.spacing = {0.5, 1.0, 2.0, 0.25};
  im.type = io::ComponentType::Float32;
  const std::vector<float> noise = random_values(im.voxels(), seed);
  for (int64_t v = 0; v < im.voxels(); ++v)
    im.values.push_back(2.0 + std::sin(0.6 * static_cast<double>(v % im.extent[0])) + noise[v]);
  return im;
}

std::vector<float> engine_result(const RawImage& im, const AdaptiveParameters& p) {
  std::vector<float> in(im.values.begin(), im.values.end()), out(in.size());
  Options options;
  options.backend = Backend::Cpu;
  adaptive_filter(as_const(make_view(in.data(), im.dims, im.extent)),
                  make_view(out.data(), im.dims, im.extent), p, options);
  return out;
}

double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (double{a[i]} - b[i]) * (double{a[i]} - b[i]);
    n += double{b[i]} * b[i];
  }
  return std::isfinite(d) ? std::sqrt(d / n) : INFINITY;
}

TEST(CliAdaptive, MatchesTheEngineIn2D3DAnd4D) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims : {2, 3, 4}) {
    for (bool frames : {false, true}) {
      if (frames && dims != 4)
        continue;
      SCOPED_TRACE(std::to_string(dims) + "D" + (frames ? " frames" : ""));
      const RawImage im = make_input(dims, seed + dims);
      const std::string in = dir / ("in" + std::to_string(dims) + ".mha");
      const std::string out = dir / ("out" + std::to_string(dims) + (frames ? "f" : "") + ".mha");
      write_meta(in, im);
      std::vector<std::string> args{"adaptive",    in,   out, "--smoothing", "1.2",
                                    "--threshold", "0.2"};
      for (const char* option : {"--reconstruction-size", "--quadrature-size"}) {
        args.push_back(option);
        args.push_back("5");
      }
      args.insert(args.end(), {"--device", "cpu", "--quiet"});
      if (frames)
        args.push_back("--frames");
      const CliResult r = run_ndconv(args);
      ASSERT_EQ(r.code, 0) << r.err;
      AdaptiveParameters p;
      p.reconstruction.lowpass_sigma = 1.2;
      p.magnitude_sigma = 0.2;
      p.reconstruction.size = 5;
      p.quadrature.size = 5;
      p.time_as_axis = !frames;
      const io::Image result = io::read_image(out);
      ASSERT_EQ(result.info.geometry.extent, im.extent);
      EXPECT_NEAR(result.info.geometry.spacing[1], 1.0, 1e-9);
      EXPECT_LT(relative_difference(result.planes[0], engine_result(im, p)), 1e-5);
    }
  }
}

TEST(CliAdaptive, BadParametersAreUsageErrorsAndWriteNothing) {
  TempDir dir;
  const RawImage im = make_input(3, fresh_seed());
  const std::string in = dir / "in.mha", out = dir / "out.mha";
  write_meta(in, im);
  for (const std::vector<std::string>& extra : {std::vector<std::string>{"--frames"},
                                                {"--reconstruction-size", "8"},
                                                {"--preset", "loud"},
                                                {"--anisotropy", "1.5"}}) {
    std::vector<std::string> args{"adaptive", in, out, "--device", "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = run_ndconv(args);
    EXPECT_EQ(r.code, 2) << extra[0] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("ndconv: error: ", 0), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << extra[0];
  }
}

}  // namespace
}  // namespace ndconv::test
