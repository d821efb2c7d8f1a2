// The bundled sample volumes through the command line (the README's first command among them),
// the preview picture, `info`, --verbose, --version and --help.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "cli_run.h"
#include "io/image.h"
#include "ndconv/gaussian.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

const std::string kSamples = NDCONV_SAMPLES_DIR;

std::vector<std::string> with_device(std::vector<std::string> args) {
  args.insert(args.end(), {"--device", test_device(), "--quiet"});
  return args;
}

// A block of `image` (same geometry, origin moved to the block's first voxel).
io::Image crop(const io::Image& image, const Index& start, const Index& size) {
  io::Image out;
  out.info = image.info;
  io::Geometry& g = out.info.geometry;
  for (int a = 0; a < g.dims; ++a)
    g.extent[a] = std::min(size[a], image.info.geometry.extent[a] - start[a]);
  for (int r = 0; r < g.dims; ++r)
    for (int a = 0; a < g.dims; ++a)
      g.origin[r] += g.direction[r * kMaxDims + a] * static_cast<double>(start[a]) * g.spacing[a];
  const io::Geometry& w = image.info.geometry;
  out.planes.assign(image.planes.size(), std::vector<float>(g.voxel_count()));
  for (size_t c = 0; c < image.planes.size(); ++c) {
    Index i{0, 0, 0, 0};
    int64_t o = 0;
    for (i[3] = 0; i[3] < g.extent[3]; ++i[3])
      for (i[2] = 0; i[2] < g.extent[2]; ++i[2])
        for (i[1] = 0; i[1] < g.extent[1]; ++i[1])
          for (i[0] = 0; i[0] < g.extent[0]; ++i[0]) {
            const int64_t src = (((i[3] + start[3]) * w.extent[2] + i[2] + start[2]) * w.extent[1] +
                                 i[1] + start[1]) *
                                    w.extent[0] +
                                i[0] + start[0];
            out.planes[c][o++] = image.planes[c][src];
          }
  }
  return out;
}

// Each sample, whole: smoothed by 1 voxel (4D frame by frame), geometry kept, values a convex
// combination of the input's (a Gaussian's taps are positive and sum to 1). A 40-voxel block of
// each, as its own file: values against the float64 reference (the dense reference on the whole
// volumes would take half a minute).
TEST(CliSamples, SmoothEverySampleMatchesReferenceAndKeepsGeometry) {
  TempDir dir;
  for (const char* name :
       {"cardiacfield_example_vol.nii.gz", "cardiacfield_a4c_rotation_stack.mha",
        "nibabel_example4d.nii.gz", "plus_SpinePhantomFreehandReconstructed.mha"}) {
    SCOPED_TRACE(name);
    const std::string in = kSamples + "/" + name;
    const std::string out = dir / (std::string("out_") + name);
    CliResult r = run_ndconv(with_device({"smooth", in, out, "--sigma", "1vox"}));
    ASSERT_EQ(r.code, 0) << r.err;
    const io::Image input = io::read_image(in), output = io::read_image(out);
    const io::Geometry &g = output.info.geometry, &w = input.info.geometry;
    ASSERT_EQ(g.dims, w.dims);
    for (int a = 0; a < g.dims; ++a) {
      EXPECT_EQ(g.extent[a], w.extent[a]);
      EXPECT_NEAR(g.spacing[a], w.spacing[a], 1e-6);
      EXPECT_NEAR(g.origin[a], w.origin[a], 1e-4);
      for (int r2 = 0; r2 < g.dims; ++r2)
        EXPECT_NEAR(g.direction[r2 * kMaxDims + a], w.direction[r2 * kMaxDims + a], 1e-6);
    }
    const auto [in_lo, in_hi] = std::minmax_element(input.planes[0].begin(), input.planes[0].end());
    double in_sum = 0, out_sum = 0;
    for (size_t v = 0; v < output.planes[0].size(); ++v) {
      ASSERT_GE(output.planes[0][v], *in_lo - 1e-3f);
      ASSERT_LE(output.planes[0][v], *in_hi + 1e-3f);
      in_sum += input.planes[0][v];
      out_sum += output.planes[0][v];
    }
    EXPECT_NEAR(out_sum / in_sum, 1.0, 0.01);

    Index start{0, 0, 0, 0};
    for (int a = 0; a < 3; ++a)
      start[a] = std::max<int64_t>(0, w.extent[a] / 2 - 20);
    const std::string block = dir / "block.mha", block_out = dir / "block_out.mha";
    const io::Image part = crop(input, start, {40, 40, 40, 2});
    io::write_image(block, part, io::ComponentType::Float32, true);
    r = run_ndconv(with_device({"smooth", block, block_out, "--sigma", "1vox", "--force"}));
    ASSERT_EQ(r.code, 0) << r.err;
    const SeparableFilter f = gaussian_filter(w.dims, {1.0, 1.0, 1.0, 0.0}, 4.0);
    const auto ref = reference_separable(part.plane_view(0), f, Operation::Correlation,
                                         Boundary::Replicate, OutputRegion::Same);
    EXPECT_LT(relative_l2_error(io::read_image(block_out).planes[0], ref), 1e-5);
  }
}

// The README's first command (scripts/demo.sh): a smoothed echo volume and a preview picture.
TEST(CliSamples, DemoCommandWritesVolumeAndPreview) {
  TempDir dir;
  const std::string in = kSamples + "/cardiacfield_example_vol.nii.gz";
  const CliResult r =
      run_ndconv({"smooth", in, dir / "echo_smoothed.nii.gz", "--sigma", "1.5", "--preview",
                  dir / "echo_preview.png", "--device", test_device()});
  ASSERT_EQ(r.code, 0) << r.err;
  // One line and the unit warning: the cost model's reasoning only under --verbose.
  EXPECT_EQ(r.err.find("filtered on the"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("plan:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ndconv: wrote " + (dir / "echo_smoothed.nii.gz")), std::string::npos)
      << r.err;
  const io::Image pic = io::read_image(dir / "echo_preview.png");
  EXPECT_EQ(pic.info.geometry.dims, 2);
  EXPECT_EQ(pic.info.component_type, io::ComponentType::UInt8);
  const int64_t w = pic.info.geometry.extent[0], h = pic.info.geometry.extent[1];
  EXPECT_GE(w, 256);
  EXPECT_GE(h, 3 * 128);  // three views
  // The left (input) and right (output) halves show the same anatomy but differ: smoothing.
  double left = 0, right = 0, diff = 0;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w / 2; ++x) {
      const float a = pic.planes[0][y * w + x], b = pic.planes[0][y * w + x + w / 2];
      left += a;
      right += b;
      diff += std::abs(a - b);
    }
  EXPECT_GT(left, 0);
  EXPECT_GT(right, 0);
  EXPECT_GT(diff, 0);
  EXPECT_LT(std::abs(left - right) / left, 0.5);
}

// The preview shows input and output through one intensity window, under a caption: an output
// that is the input halved is drawn about half as bright, and the caption's text is white.
TEST(CliSamples, PreviewUsesOneWindowAndHasACaption) {
  TempDir dir;
  RawImage im;
  im.dims = 3;
  im.extent = {24, 20, 16, 1};
  im.type = io::ComponentType::Float32;
  im.values = random_for_type(im.voxels(), im.type, fresh_seed());
  for (double& v : im.values)
    v = 10 + std::abs(v) / 1e5;  // positive, so that halving darkens every voxel
  write_meta(dir / "in.mha", im);
  RawImage half;
  half.dims = 3;
  half.values = {0.5};
  write_meta(dir / "half.mha", half);
  const CliResult r = run_ndconv(with_device(
      {"convolve", dir / "in.mha", dir / "half.mha", dir / "out.nii", "--preview", dir / "p.png"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Image pic = io::read_image(dir / "p.png");
  const int64_t w = pic.info.geometry.extent[0], h = pic.info.geometry.extent[1];
  const auto& px = pic.planes[0];
  // The caption's first line: white text on the grey background.
  int64_t white = 0;
  for (int64_t y = 0; y < 20; ++y)
    for (int64_t x = 0; x < w; ++x)
      white += px[y * w + x] == 255;
  EXPECT_GT(white, 50);
  // The middle band of each column (below the caption and labels): the right one about half as
  // bright as the left one. With a window per column they would be about equal.
  double left = 0, right = 0;
  for (int64_t y = h / 3; y < 2 * h / 3; ++y)
    for (int64_t x = w / 8; x < 3 * w / 8; ++x) {
      left += px[y * w + x];
      right += px[y * w + x + w / 2];
    }
  EXPECT_GT(left, 0);
  EXPECT_LT(right / left, 0.75);
  EXPECT_GT(right / left, 0.25);
}

TEST(CliSamples, PreviewOf2DAnd4D) {
  TempDir dir;
  CliResult r =
      run_ndconv(with_device({"smooth", kSamples + "/nibabel_example4d.nii.gz", dir / "o.nii.gz",
                              "--sigma", "2", "--time-sigma", "1", "--preview", dir / "p4.png"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(io::read_info(dir / "p4.png").geometry.dims, 2);
  RawImage im;
  im.dims = 2;
  im.extent = {20, 10, 1, 1};
  im.type = io::ComponentType::UInt8;
  im.values = random_for_type(200, im.type, fresh_seed());
  write_meta(dir / "in2d.mha", im);
  r = run_ndconv(with_device({"smooth", dir / "in2d.mha", dir / "o2.png", "--sigma", "1vox",
                              "--preview", dir / "p2.png"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const io::ImageInfo p = io::read_info(dir / "p2.png");
  EXPECT_GT(p.geometry.extent[0], p.geometry.extent[1]);  // one row: input | output
}

TEST(CliInfo, DescribesTheFile) {
  const CliResult r = run_ndconv({"info", kSamples + "/nibabel_example4d.nii.gz"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s :
       {"dimension:   4D", "128 x 96 x 24 x 2", "int16 scalar", "spacing:     2 x 2 x 2.2",
        "origin:", "direction:", "time step:   2000", "value range: 0 .. ", "MiB"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " in:\n" << r.out;
}

TEST(CliMisc, VerboseVersionAndHelp) {
  TempDir dir;
  CliResult r = run_ndconv({"smooth", kSamples + "/plus_SpinePhantomFreehandReconstructed.mha",
                            dir / "o.mha", "--sigma", "1", "--verbose", "--device", test_device()});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"plan: backend", "run: outputs per thread", "timings: read"})
    EXPECT_NE(r.err.find(s), std::string::npos) << s << " in:\n" << r.err;
  r = run_ndconv({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("ndconv "), std::string::npos);
  EXPECT_NE(r.out.find("ITK 5."), std::string::npos);
  EXPECT_NE(r.out.find("CUDA"), std::string::npos);
  for (const char* sub : {"smooth", "convolve", "info"}) {
    r = run_ndconv({sub, "--help"});
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub;
  }
  r = run_ndconv({"smooth", "--help"});
  EXPECT_NE(r.out.find("replicate"), std::string::npos);  // defaults are shown
  EXPECT_NE(r.out.find("=4"), std::string::npos);
}

}  // namespace
}  // namespace ndconv::test
