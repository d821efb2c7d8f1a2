// End-to-end: `ndconv smooth` and `ndconv convolve` on files the tests write byte by byte (every
// component type, 2D/3D/4D, MetaImage and NIfTI, RGB PNG); the output's geometry must equal the
// input's and its values the float64 reference (tests/common) within 1e-5 relative L2 error.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cli_run.h"
#include "io/image.h"
#include "io/pixel_convert.h"
#include "ndconv/gaussian.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using io::ComponentType;
constexpr double kTolerance = 1e-5;

const ComponentType kAllTypes[] = {
    ComponentType::UInt8,   ComponentType::Int8,   ComponentType::UInt16, ComponentType::Int16,
    ComponentType::UInt32,  ComponentType::Int32,  ComponentType::UInt64, ComponentType::Int64,
    ComponentType::Float32, ComponentType::Float64};

RawImage make_raw(int dims, ComponentType type, uint64_t seed, int components = 1) {
  return oriented_volume(dims, type, seed, components);
}

std::vector<std::string> with_device(std::vector<std::string> args) {
  args.push_back("--device");
  args.push_back(test_device());
  args.push_back("--quiet");
  return args;
}

void expect_same_geometry(const io::ImageInfo& got, const io::ImageInfo& want) {
  const io::Geometry &g = got.geometry, &w = want.geometry;
  ASSERT_EQ(g.dims, w.dims);
  for (int a = 0; a < g.dims; ++a) {
    EXPECT_EQ(g.extent[a], w.extent[a]) << "axis " << a;
    EXPECT_NEAR(g.spacing[a], w.spacing[a], 1e-6) << "axis " << a;
    EXPECT_NEAR(g.origin[a], w.origin[a], 1e-4) << "axis " << a;
    for (int r = 0; r < g.dims; ++r)
      EXPECT_NEAR(g.direction[r * kMaxDims + a], w.direction[r * kMaxDims + a], 1e-6);
  }
  EXPECT_EQ(got.components, want.components);
}

// Output of `smooth` against the reference, for every component.
void expect_smoothed(const std::string& in, const std::string& out,
                     const std::array<double, kMaxDims>& sigma_vox,
                     Boundary boundary = Boundary::Replicate) {
  const io::Image input = io::read_image(in);
  const io::Image output = io::read_image(out);
  expect_same_geometry(output.info, input.info);
  const SeparableFilter f = gaussian_filter(input.info.geometry.dims, sigma_vox, 4.0);
  for (int c = 0; c < input.info.components; ++c) {
    const auto ref = reference_separable(input.plane_view(c), f, Operation::Correlation, boundary,
                                         OutputRegion::Same);
    EXPECT_LT(relative_l2_error(output.planes[c], ref), kTolerance) << "component " << c;
  }
}

TEST(CliSmooth, EveryTypeDimensionAndFormatMatchesReferenceAndKeepsGeometry) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims = 2; dims <= 4; ++dims) {
    for (ComponentType t : kAllTypes) {
      for (bool nifti : {false, true}) {
        SCOPED_TRACE(std::to_string(dims) + "D " + io::to_string(t) + (nifti ? " NIfTI" : " MHA"));
        const RawImage raw = make_raw(dims, t, seed + dims * 100 + static_cast<int>(t));
        const std::string in = dir / (nifti ? "in.nii" : "in.mha");
        const std::string out = dir / (nifti ? "out.nii.gz" : "out.mha");
        nifti ? write_nifti(in, raw) : write_meta(in, raw);
        const CliResult r =
            run_ndconv(with_device({"smooth", in, out, "--sigma", "1.2vox", "--force"}));
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(io::read_info(out).component_type, ComponentType::Float32);
        // 4D: each frame on its own (no smoothing along t).
        expect_smoothed(in, out, {1.2, 1.2, dims >= 3 ? 1.2 : 0.0, 0.0});
      }
    }
  }
}

TEST(CliSmooth, MillimetresPerAxisValuesFwhmAndBoundary) {
  TempDir dir;
  const RawImage raw = make_raw(3, ComponentType::Float32, fresh_seed());  // spacing 0.5, 1, 2
  const std::string in = dir / "in.mha", out = dir / "out.mha";
  write_meta(in, raw);
  struct Case {
    std::vector<std::string> options;
    std::array<double, kMaxDims> sigma_vox;
    Boundary boundary;
  };
  const double fwhm_of_1 = 2.0 * std::sqrt(2.0 * std::log(2.0));
  const Case cases[] = {
      {{"--sigma", "1"}, {2.0, 1.0, 0.5, 0}, Boundary::Replicate},
      {{"--sigma", "1mm"}, {2.0, 1.0, 0.5, 0}, Boundary::Replicate},
      {{"--sigma", "1x2x3vox"}, {1, 2, 3, 0}, Boundary::Replicate},
      {{"--sigma", "1x1x0vox"}, {1, 1, 0, 0}, Boundary::Replicate},
      {{"--fwhm", std::to_string(fwhm_of_1) + "mm"}, {2.0, 1.0, 0.5, 0}, Boundary::Replicate},
      {{"--sigma", "1.5vox", "--boundary", "mirror"}, {1.5, 1.5, 1.5, 0}, Boundary::Mirror},
      {{"--sigma", "1.5vox", "--boundary", "zero"}, {1.5, 1.5, 1.5, 0}, Boundary::Zero},
      {{"--sigma", "1.5vox", "--boundary", "periodic"}, {1.5, 1.5, 1.5, 0}, Boundary::Periodic},
      {{"--sigma", "1.5vox", "--boundary", "reflect"}, {1.5, 1.5, 1.5, 0}, Boundary::Reflect},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"smooth", in, out, "--force"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    SCOPED_TRACE(c.options[0] + " " + c.options[1]);
    const CliResult r = run_ndconv(with_device(args));
    ASSERT_EQ(r.code, 0) << r.err;
    expect_smoothed(in, out, c.sigma_vox, c.boundary);
  }
}

TEST(CliSmooth, TimeSigmaInFramesOrSecondsSmoothsAlongTime) {
  TempDir dir;
  const RawImage raw = make_raw(4, ComponentType::Int16, fresh_seed());  // time step 0.25 s
  const std::string in = dir / "in.nii", out = dir / "out.nii.gz";
  write_nifti(in, raw);
  for (const char* t : {"2", "0.5s"}) {
    SCOPED_TRACE(t);
    const CliResult r = run_ndconv(
        with_device({"smooth", in, out, "--sigma", "1vox", "--time-sigma", t, "--force"}));
    ASSERT_EQ(r.code, 0) << r.err;
    expect_smoothed(in, out, {1, 1, 1, 2});
  }
}

TEST(CliSmooth, RgbPngIsFilteredPerComponent) {
  TempDir dir;
  io::Image rgb;
  rgb.info.geometry.dims = 2;
  rgb.info.geometry.extent = {12, 9, 1, 1};
  rgb.info.pixel_kind = "rgb";
  const auto noise = random_values(3 * 108, fresh_seed());
  for (int c = 0; c < 3; ++c) {
    rgb.planes.emplace_back(108);
    for (int v = 0; v < 108; ++v)
      rgb.planes[c][v] = std::floor((noise[c * 108 + v] + 1.0f) * 127.5f);
  }
  const std::string in = dir / "in.png";
  io::write_image(in, rgb, ComponentType::UInt8, false);
  CliResult r = run_ndconv(with_device({"smooth", in, dir / "out.mha", "--sigma", "1vox"}));
  ASSERT_EQ(r.code, 0) << r.err;
  expect_smoothed(in, dir / "out.mha", {1, 1, 0, 0});
  // To PNG: float32 does not fit, so the input's type is written, rounded, with a note (--verbose).
  r = run_ndconv(
      {"smooth", in, dir / "out.png", "--sigma", "1vox", "--device", test_device(), "-v"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("writing uint8 (the input's type)"), std::string::npos) << r.err;
  const io::Image f = io::read_image(dir / "out.mha"), png = io::read_image(dir / "out.png");
  EXPECT_EQ(png.info.pixel_kind, "rgb");
  for (int c = 0; c < 3; ++c)
    for (int v = 0; v < 108; ++v)
      ASSERT_EQ(png.planes[c][v], io::convert_value(f.planes[c][v], ComponentType::UInt8));
}

// A kernel file with random taps.
std::vector<float> write_kernel(const std::string& path, int dims, const Index& extent,
                                uint64_t seed) {
  RawImage k;
  k.dims = dims;
  k.extent = extent;
  k.type = ComponentType::Float32;
  const auto taps = random_values(k.voxels(), seed);
  k.values.assign(taps.begin(), taps.end());
  write_meta(path, k);
  return taps;
}

TEST(CliConvolve, BoundariesOperationsRegionsAndNormalizeMatchReference) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const RawImage raw = make_raw(3, ComponentType::UInt16, seed);
  const std::string in = dir / "in.nii", kernel = dir / "k.mha", out = dir / "out.nii.gz";
  write_nifti(in, raw);
  const Index kext{3, 4, 2, 1};
  std::vector<float> taps = write_kernel(kernel, 3, kext, seed + 1);
  const io::Image input = io::read_image(in);
  const char* boundaries[] = {"zero", "replicate", "mirror", "periodic", "reflect"};
  const Boundary kinds[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                            Boundary::Periodic, Boundary::Reflect};
  for (int b = 0; b < 5; ++b) {
    for (bool correlate : {false, true}) {
      for (bool valid : {false, true}) {
        SCOPED_TRACE(std::string(boundaries[b]) + (correlate ? " correlate" : " convolve") +
                     (valid ? " valid" : " same"));
        std::vector<std::string> args{"convolve",    in,         kernel,
                                      out,           "--force",  "--boundary",
                                      boundaries[b], "--region", valid ? "valid" : "same"};
        if (correlate)
          args.push_back("--correlate");
        const CliResult r = run_ndconv(with_device(args));
        ASSERT_EQ(r.code, 0) << r.err;
        DenseFilter f;
        f.dims = 3;
        f.extent = kext;
        f.taps = taps.data();
        const Operation op = correlate ? Operation::Correlation : Operation::Convolution;
        const OutputRegion region = valid ? OutputRegion::Valid : OutputRegion::Same;
        const auto ref = reference_dense(input.plane_view(0), f, op, kinds[b], region);
        const io::Image output = io::read_image(out);
        EXPECT_LT(relative_l2_error(output.planes[0], ref), kTolerance);
        // Geometry: same region keeps everything; valid moves the origin to the first voxel
        // whose footprint lies inside.
        io::ImageInfo want = input.info;
        if (valid) {
          const Index ext = reference_output_extent(input.plane_view(0), kext, region);
          Index start{0, 0, 0, 0};
          for (int a = 0; a < 3; ++a) {
            want.geometry.extent[a] = ext[a];
            start[a] = correlate ? kext[a] / 2 : kext[a] - 1 - kext[a] / 2;
          }
          for (int r2 = 0; r2 < 3; ++r2)
            for (int a = 0; a < 3; ++a)
              want.geometry.origin[r2] += want.geometry.direction[r2 * kMaxDims + a] *
                                          static_cast<double>(start[a]) * want.geometry.spacing[a];
        }
        expect_same_geometry(output.info, want);
      }
    }
  }
  // --normalize divides by the kernel's sum.
  const CliResult r =
      run_ndconv(with_device({"convolve", in, kernel, out, "--force", "--normalize"}));
  ASSERT_EQ(r.code, 0) << r.err;
  double sum = 0;
  for (float t : taps)
    sum += t;
  std::vector<float> normalized(taps.size());
  for (size_t i = 0; i < taps.size(); ++i)
    normalized[i] = static_cast<float>(taps[i] / sum);
  DenseFilter f;
  f.dims = 3;
  f.extent = kext;
  f.taps = normalized.data();
  const auto ref = reference_dense(input.plane_view(0), f, Operation::Convolution,
                                   Boundary::Replicate, OutputRegion::Same);
  EXPECT_LT(relative_l2_error(io::read_image(out).planes[0], ref), kTolerance);
}

TEST(CliConvolve, ThreeDimensionalKernelFiltersEachFrameOfA4DSeries) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  const RawImage raw = make_raw(4, ComponentType::Float32, seed);
  const std::string in = dir / "in.mha", kernel = dir / "k.nii", out = dir / "out.mha";
  write_meta(in, raw);
  RawImage k;
  k.dims = 3;
  k.extent = {3, 3, 3, 1};
  const auto taps = random_values(27, seed + 1);
  k.values.assign(taps.begin(), taps.end());
  write_nifti(kernel, k);
  const CliResult r = run_ndconv(with_device({"convolve", in, kernel, out}));
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Image input = io::read_image(in), output = io::read_image(out);
  expect_same_geometry(output.info, input.info);
  DenseFilter f;
  f.dims = 4;
  f.extent = {3, 3, 3, 1};
  f.taps = taps.data();
  const auto ref = reference_dense(input.plane_view(0), f, Operation::Convolution,
                                   Boundary::Replicate, OutputRegion::Same);
  EXPECT_LT(relative_l2_error(output.planes[0], ref), kTolerance);
}

TEST(CliConvolve, TwoDimensionalImageAndVectorPixels) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // 2D image, 2D kernel (NIfTI kernel for a MetaImage input: any format goes).
  const RawImage raw = make_raw(2, ComponentType::Int16, seed);
  write_meta(dir / "in.mha", raw);
  RawImage k;
  k.dims = 2;
  k.extent = {5, 2, 1, 1};
  const auto taps = random_values(10, seed + 1);
  k.values.assign(taps.begin(), taps.end());
  write_nifti(dir / "k.nii", k);
  CliResult r = run_ndconv(with_device(
      {"convolve", dir / "in.mha", dir / "k.nii", dir / "o.mha", "--boundary", "mirror"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Image input = io::read_image(dir / "in.mha"), output = io::read_image(dir / "o.mha");
  expect_same_geometry(output.info, input.info);
  DenseFilter f;
  f.dims = 2;
  f.extent = k.extent;
  f.taps = taps.data();
  EXPECT_LT(relative_l2_error(output.planes[0],
                              reference_dense(input.plane_view(0), f, Operation::Convolution,
                                              Boundary::Mirror, OutputRegion::Same)),
            kTolerance);
  // 3-component vector NIfTI: each component filtered on its own.
  const RawImage vec = make_raw(3, ComponentType::Float32, seed + 2, 3);
  write_nifti(dir / "vec.nii", vec);
  r = run_ndconv(with_device({"smooth", dir / "vec.nii", dir / "vec_s.nii.gz", "--sigma", "1vox"}));
  ASSERT_EQ(r.code, 0) << r.err;
  expect_smoothed(dir / "vec.nii", dir / "vec_s.nii.gz", {1, 1, 1, 0});
}

// An identity kernel passes values through, so --type's rounding and clamping show exactly.
TEST(CliType, RoundingClampingAndSame) {
  TempDir dir;
  RawImage raw = make_raw(3, ComponentType::Float32, fresh_seed());
  for (auto& v : raw.values)
    v = std::round(v / 1250.0) / 2.0;  // halves in [-400, 400]
  const std::string in = dir / "in.mha", kernel = dir / "one.mha";
  write_meta(in, raw);
  RawImage one;
  one.extent = {1, 1, 1, 1};
  one.values = {1.0};
  write_meta(kernel, one);
  for (ComponentType t : {ComponentType::UInt8, ComponentType::Int8, ComponentType::Int16,
                          ComponentType::UInt16, ComponentType::Int32, ComponentType::Float64}) {
    SCOPED_TRACE(io::to_string(t));
    const std::string out = dir / (std::string("out_") + io::to_string(t) + ".nii.gz");
    const std::string type = t == ComponentType::Float64 ? "double" : io::to_string(t);
    const CliResult r = run_ndconv({"convolve", in, kernel, out, "--type", type});
    ASSERT_EQ(r.code, 0) << r.err;
    const io::Image o = io::read_image(out);
    EXPECT_EQ(o.info.component_type, t);
    bool clamps = false;
    for (int64_t v = 0; v < raw.voxels(); ++v) {
      const double want = io::convert_value(static_cast<float>(raw.values[v]), t);
      clamps = clamps || (io::is_integer(t) && want != std::round(raw.values[v]));
      ASSERT_EQ(o.planes[0][v], want) << "value " << raw.values[v];
    }
    EXPECT_EQ(r.err.find("clamped") != std::string::npos, clamps) << r.err;
  }
  // same: the input's type (here int16 from a NIfTI).
  RawImage i16 = make_raw(3, ComponentType::Int16, fresh_seed());
  write_nifti(dir / "i16.nii", i16);
  const CliResult r =
      run_ndconv({"convolve", dir / "i16.nii", kernel, dir / "same.nii", "--type", "same"});
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Image o = io::read_image(dir / "same.nii");
  EXPECT_EQ(o.info.component_type, ComponentType::Int16);
  for (int64_t v = 0; v < i16.voxels(); ++v)
    ASSERT_EQ(o.planes[0][v], i16.values[v]);
}

TEST(CliValues, NanAndInfPropagateWithoutCrashing) {
  TempDir dir;
  RawImage raw = make_raw(3, ComponentType::Float32, fresh_seed());
  raw.values[10] = std::numeric_limits<double>::quiet_NaN();
  raw.values[200] = std::numeric_limits<double>::infinity();
  const std::string in = dir / "in.mha";
  write_meta(in, raw);
  CliResult r = run_ndconv(with_device({"smooth", in, dir / "out.mha", "--sigma", "1vox"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Image o = io::read_image(dir / "out.mha");
  EXPECT_TRUE(std::isnan(o.planes[0][10]));
  // Warnings are silenced by --quiet only.
  r = run_ndconv({"smooth", in, dir / "out.nii", "--sigma", "1vox", "--type", "int16", "--device",
                  test_device()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("NaN values were written as 0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ndconv::test
