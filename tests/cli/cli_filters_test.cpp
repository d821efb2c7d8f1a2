// End-to-end: the filter subcommands (mean, median, gradient, laplacian, derivative, unsharp,
// smooth --mask), `ndconv kernel` and `convolve --kernel` on files the tests write, in 2D, 3D and
// 4D; values against the float64 references (tests/common), the warnings and the errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>

#include "cli_run.h"
#include "io/image.h"
#include "ndconv/filters.h"
#include "ndconv/gaussian.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;

Boundary parse_boundary_name(const std::string& name) {
  return name == "zero"       ? Boundary::Zero
         : name == "mirror"   ? Boundary::Mirror
         : name == "periodic" ? Boundary::Periodic
         : name == "reflect"  ? Boundary::Reflect
                              : Boundary::Replicate;
}

// A float32 MetaImage with spacing 0.5 x 1 x 2 (x 0.25 s), random values.
std::string write_input(const TempDir& dir, int dims, const std::string& name) {
  RawImage im;
  im.dims = dims;
  im.extent = {9, 7, dims >= 3 ? 6 : 1, dims == 4 ? 3 : 1};
  im.spacing = {0.5, 1.0, 2.0, 0.25};
  im.type = io::ComponentType::Float32;
  im.values = random_for_type(im.voxels(), im.type, fresh_seed());
  const std::string path = dir / name;
  write_meta(path, im);
  return path;
}

std::vector<std::string> with_device(std::vector<std::string> args) {
  args.push_back("--device");
  args.push_back(test_device());
  args.push_back("--quiet");
  return args;
}

// Runs the command, expects success, and returns the output's first plane.
std::vector<float> run_and_read(const std::vector<std::string>& args, const std::string& out) {
  const CliResult r = run_ndconv(args);
  EXPECT_EQ(r.code, 0) << r.err;
  if (r.code != 0)
    return {};
  return io::read_image(out).planes[0];
}

void expect_error(const std::vector<std::string>& args, int code, const std::string& needle) {
  const CliResult r = run_ndconv(args);
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ndconv: error: "), std::string::npos) << r.err;
}

TEST(CliKernel, WritesEveryBuiltInKernelAndConvolveUsesIt) {
  TempDir dir;
  for (int dims = 2; dims <= 4; ++dims) {
    const std::string in = write_input(dir, dims, "in" + std::to_string(dims) + ".mha");
    const io::Image input = io::read_image(in);
    for (const char* spec :
         {"box:3", "gauss:1.2", "sphere:1.5", "sobel:y", "prewitt:x", "laplace"}) {
      SCOPED_TRACE(std::to_string(dims) + "D " + spec);
      const Kernel k = parse_kernel_spec(spec, dims);
      // The file `ndconv kernel` writes holds the spec's taps.
      const std::string kfile = dir / "k.mha";
      const std::vector<float> written = run_and_read(
          {"kernel", spec, kfile, "--dims", std::to_string(dims), "--force", "--quiet"}, kfile);
      EXPECT_EQ(written, k.taps);
      EXPECT_EQ(io::read_info(kfile).geometry.dims, dims);
      // convolve --kernel SPEC equals the reference convolution with those taps, every boundary.
      for (const char* boundary : {"zero", "replicate", "mirror", "periodic", "reflect"}) {
        const std::string out = dir / "out.mha";
        const std::vector<float> got = run_and_read(
            with_device({"convolve", in, out, "--kernel", spec, "--boundary", boundary, "--force"}),
            out);
        const auto ref = reference_dense(input.plane_view(0), k.filter(), Operation::Convolution,
                                         parse_boundary_name(boundary), OutputRegion::Same);
        EXPECT_LT(relative_l2_error(got, ref), kTolerance) << boundary;
      }
      // The kernel file gives the same result.
      const std::string out_file = dir / "out_file.mha", out_spec = dir / "out.mha";
      EXPECT_EQ(run_and_read(with_device({"convolve", in, kfile, out_file, "--force"}), out_file),
                run_and_read(with_device({"convolve", in, out_spec, "--kernel", spec, "--boundary",
                                          "replicate", "--force"}),
                             out_spec));
    }
  }
  // --dims defaults to the number of values, else 3.
  run_and_read({"kernel", "box:3x5", dir / "k2.nii.gz", "--quiet"}, dir / "k2.nii.gz");
  EXPECT_EQ(io::read_info(dir / "k2.nii.gz").geometry.extent, (Index{3, 5, 1, 1}));
  run_and_read({"kernel", "gauss:1", dir / "k3.mha", "--quiet"}, dir / "k3.mha");
  EXPECT_EQ(io::read_info(dir / "k3.mha").geometry.extent, (Index{9, 9, 9, 1}));
}

TEST(CliKernel, TheDocumentedTextKernelFileWorks) {
  // The MetaImage text kernel of the documentation: a 3x3 horizontal difference, in ASCII.
  TempDir dir;
  write_bytes(dir / "diff.mha",
              "ObjectType = Image\nNDims = 2\nDimSize = 3 3\nElementSpacing = 1 1\n"
              "ElementType = MET_FLOAT\nBinaryData = False\nElementDataFile = LOCAL\n"
              "0 0 0\n1 0 -1\n0 0 0\n");
  const io::Image k = io::read_image(dir / "diff.mha");
  EXPECT_EQ(k.planes[0], (std::vector<float>{0, 0, 0, 1, 0, -1, 0, 0, 0}));
  const std::string in = write_input(dir, 2, "in.mha"), out = dir / "out.mha";
  const io::Image input = io::read_image(in);
  const std::vector<float> got =
      run_and_read(with_device({"convolve", in, dir / "diff.mha", out}), out);
  // Convolution with [1 0 -1] along x: in[x + 1] - in[x - 1].
  for (int64_t y = 0; y < 7; ++y)
    for (int64_t x = 1; x < 8; ++x)
      EXPECT_NEAR(got[y * 9 + x], input.planes[0][y * 9 + x + 1] - input.planes[0][y * 9 + x - 1],
                  1e-6);
}

TEST(CliFilters, MeanBoxAndSphereInVoxelsAndMillimetres) {
  TempDir dir;
  for (int dims = 2; dims <= 4; ++dims) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    const std::string in = write_input(dir, dims, "in.mha"), out = dir / "out.mha";
    const io::Image input = io::read_image(in);
    // --box 3mm on spacing 0.5 x 1 x 2: 6, 3, 1.5 voxels, to the nearest odd: 7, 3, 1.
    const std::pair<const char*, Index> boxes[] = {
        {"3vox", {3, 3, 3, 1}}, {"3mm", {7, 3, 1, 1}}, {"5x1x3vox", {5, 1, 3, 1}}};
    for (const auto& [width, extent] : boxes) {
      if (dims == 2 && std::string(width) == "5x1x3vox")
        continue;
      SeparableFilter expected;
      expected.dims = dims;
      for (int a = 0; a < std::min(dims, 3); ++a) {
        if (extent[a] > 1)
          expected.taps[a].assign(extent[a], 1.0f / static_cast<float>(extent[a]));
      }
      for (const char* boundary : {"zero", "mirror"}) {
        const auto got = run_and_read(
            with_device({"mean", in, out, "--box", width, "--boundary", boundary, "--force"}), out);
        EXPECT_LT(relative_l2_error(got, reference_separable(
                                             input.plane_view(0), expected, Operation::Correlation,
                                             parse_boundary_name(boundary), OutputRegion::Same)),
                  kTolerance)
            << width << " " << boundary;
      }
    }
    // --sphere 1mm: radii 2, 1, 0.5 voxels.
    const Kernel sphere = ellipsoid_mean_kernel(dims, {2, 1, dims >= 3 ? 0.5 : 0, 0});
    const auto got =
        run_and_read(with_device({"mean", in, out, "--sphere", "1mm", "--force"}), out);
    EXPECT_LT(relative_l2_error(
                  got, reference_dense(input.plane_view(0), sphere.filter(), Operation::Convolution,
                                       Boundary::Replicate, OutputRegion::Same)),
              kTolerance);
  }
}

TEST(CliFilters, MaskedSmoothAndMeanStayInsideTheMask) {
  TempDir dir;
  for (int dims = 3; dims <= 4; ++dims) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    const std::string in = write_input(dir, dims, "in.mha"), out = dir / "out.mha";
    const io::Image input = io::read_image(in);
    // A 3D mask (also for the 4D series: each frame), the upper half of x out.
    RawImage m;
    m.dims = 3;
    m.extent = {9, 7, 6, 1};
    m.spacing = {0.5, 1.0, 2.0, 1};
    for (int64_t i = 0; i < m.voxels(); ++i)
      m.values.push_back(i % 9 < 5 ? 1.0 : 0.0);
    write_meta(dir / "mask.mha", m);
    const int64_t n = static_cast<int64_t>(input.planes[0].size());
    std::vector<float> weighted(n), weight(n);
    for (int64_t i = 0; i < n; ++i) {
      weight[i] = i % 9 < 5 ? 1.0f : 0.0f;
      weighted[i] = weight[i] * input.planes[0][i];
    }
    const ConstVolumeView wv =
        make_view(static_cast<const float*>(weighted.data()), dims, input.info.geometry.extent);
    const ConstVolumeView mv =
        make_view(static_cast<const float*>(weight.data()), dims, input.info.geometry.extent);
    // --sigma 0.75 (mm): 1.5, 0.75, 0.375 voxels.
    const SeparableFilter gauss = gaussian_filter(dims, {1.5, 0.75, 0.375, 0});
    const SeparableFilter box = box_filter(dims, {3, 3, 3, 1});
    struct Case {
      std::vector<std::string> args;
      const SeparableFilter& filter;
      double outside;  // NaN: the input's value
    };
    const Case cases[] = {
        {{"smooth", in, out, "--sigma", "0.75", "--mask", dir / "mask.mha"}, gauss, 0},
        {{"smooth", in, out, "--sigma", "0.75", "--mask", dir / "mask.mha", "--outside", "-1"},
         gauss,
         -1},
        {{"mean", in, out, "--box", "3vox", "--mask", dir / "mask.mha", "--outside", "input"},
         box,
         std::nan("")},
    };
    for (const Case& c : cases) {
      std::vector<std::string> args = c.args;
      args.push_back("--force");
      const auto got = run_and_read(with_device(args), out);
      const auto num = reference_separable(wv, c.filter, Operation::Correlation,
                                           Boundary::Replicate, OutputRegion::Same);
      const auto den = reference_separable(mv, c.filter, Operation::Correlation,
                                           Boundary::Replicate, OutputRegion::Same);
      std::vector<double> ref(n);
      for (int64_t i = 0; i < n; ++i)
        ref[i] = weight[i] != 0          ? num[i] / den[i]
                 : std::isnan(c.outside) ? input.planes[0][i]
                                         : c.outside;
      EXPECT_LT(relative_l2_error(got, ref), kTolerance) << c.args[0] << " " << c.args.back();
    }
  }
}

TEST(CliFilters, MedianMatchesReference) {
  TempDir dir;
  for (int dims = 2; dims <= 4; ++dims) {
    const std::string in = write_input(dir, dims, "in.mha"), out = dir / "out.mha";
    const io::Image input = io::read_image(in);
    const std::pair<const char*, Index> radii[] = {{"1", {1, 1, 1, 0}}, {"2x1x0", {2, 1, 0, 0}}};
    for (const auto& [text, r] : radii) {
      if (dims == 2 && std::string(text) == "2x1x0")
        continue;
      Index radius{0, 0, 0, 0};
      for (int a = 0; a < std::min(dims, 3); ++a)
        radius[a] = r[a];
      for (const char* boundary : {"zero", "replicate", "mirror", "periodic", "reflect"}) {
        SCOPED_TRACE(std::to_string(dims) + "D " + text + " " + boundary);
        const auto got = run_and_read(
            with_device({"median", in, out, "--radius", text, "--boundary", boundary, "--force"}),
            out);
        EXPECT_LT(relative_l2_error(got, reference_median(input.plane_view(0), radius,
                                                          parse_boundary_name(boundary))),
                  1e-7);
      }
    }
  }
}

TEST(CliFilters, GaussianDerivativeFamilyInMillimetres) {
  TempDir dir;
  for (int dims = 2; dims <= 4; ++dims) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    const std::string in = write_input(dir, dims, "in.mha"), out = dir / "out.mha";
    const io::Image input = io::read_image(in);
    const ConstVolumeView v = input.plane_view(0);
    const int spatial = spatial_axes(dims);
    // --sigma 1 (mm) on spacing 0.5 x 1 x 2: 2, 1, 0.5 voxels.
    const std::array<double, 4> sigma{2, 1, dims >= 3 ? 0.5 : 0, 0};
    const int64_t n = static_cast<int64_t>(input.planes[0].size());
    std::vector<double> grad(n, 0.0), lap(n, 0.0);
    for (int axis = 0; axis < spatial; ++axis) {
      std::array<int, 4> o1{0, 0, 0, 0}, o2{0, 0, 0, 0};
      o1[axis] = 1;
      o2[axis] = 2;
      const auto d1 =
          reference_separable(v, gaussian_derivative_filter(dims, sigma, o1, v.spacing),
                              Operation::Correlation, Boundary::Replicate, OutputRegion::Same);
      const auto d2 =
          reference_separable(v, gaussian_derivative_filter(dims, sigma, o2, v.spacing),
                              Operation::Correlation, Boundary::Replicate, OutputRegion::Same);
      for (int64_t i = 0; i < n; ++i) {
        grad[i] += d1[i] * d1[i];
        lap[i] += d2[i];
      }
      if (axis == 0) {
        const std::string order = dims == 2 ? "1x0" : "1x0x0";
        const auto got = run_and_read(
            with_device({"derivative", in, out, "--sigma", "1", "--order", order, "--force"}), out);
        EXPECT_LT(relative_l2_error(got, d1), kTolerance) << "derivative";
      }
    }
    for (double& g : grad)
      g = std::sqrt(g);
    EXPECT_LT(
        relative_l2_error(
            run_and_read(with_device({"gradient", in, out, "--sigma", "1", "--force"}), out), grad),
        kTolerance);
    EXPECT_LT(
        relative_l2_error(
            run_and_read(with_device({"laplacian", in, out, "--sigma", "1", "--force"}), out), lap),
        kTolerance);
    // unsharp: in + 0.8 (in - G in), threshold 0.
    const auto blurred =
        reference_separable(v, gaussian_filter(dims, sigma), Operation::Correlation,
                            Boundary::Replicate, OutputRegion::Same);
    std::vector<double> sharp(n);
    for (int64_t i = 0; i < n; ++i)
      sharp[i] = input.planes[0][i] + 0.8 * (input.planes[0][i] - blurred[i]);
    EXPECT_LT(relative_l2_error(run_and_read(with_device({"unsharp", in, out, "--sigma", "1",
                                                          "--amount", "0.8", "--force"}),
                                             out),
                                sharp),
              kTolerance);
  }
}

TEST(CliFilters, SmoothAnySigmaThroughTheRecursiveGaussian) {
  TempDir dir;
  for (int dims = 2; dims <= 4; ++dims) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    const std::string in = write_input(dir, dims, "in.mha"), out = dir / "out.mha";
    const io::Image input = io::read_image(in);
    // auto: sigma 200 voxels is past the exact filter's taps, so the recursive one runs (with a
    // note); --method recursive forces it for a small sigma too. Both equal the engine's call.
    const std::pair<std::vector<std::string>, std::array<double, 4>> cases[] = {
        {{"--sigma", "200vox"}, {200, 200, dims >= 3 ? 200.0 : 0.0, 0}},
        {{"--sigma", "1mm", "--method", "recursive", "--boundary", "mirror"},
         {2, 1, dims >= 3 ? 0.5 : 0.0, 0}},
    };
    for (const auto& [options, sigma] : cases) {
      std::vector<std::string> args{"smooth", in, out, "--force", "--device", "auto"};
      args.insert(args.end(), options.begin(), options.end());
      if (options[1] == "200vox")
        args.push_back("-v");  // the choice of the recursive filter is explained
      const CliResult r = run_ndconv(args);
      ASSERT_EQ(r.code, 0) << r.err;
      if (options[1] == "200vox") {
        EXPECT_NE(r.err.find("the recursive (IIR) Gaussian"), std::string::npos) << r.err;
      }
      std::vector<float> want(input.planes[0].size());
      Options o;
      o.backend = Backend::Cpu;
      o.boundary = options.size() > 4 ? Boundary::Mirror : Boundary::Replicate;
      recursive_gaussian(input.plane_view(0),
                         make_view(want.data(), dims, input.info.geometry.extent), sigma, o);
      const std::vector<double> ref(want.begin(), want.end());
      EXPECT_LT(relative_l2_error(io::read_image(out).planes[0], ref), 1e-6) << options[1];
    }
  }
  expect_error(
      {"smooth", dir / "in.mha", dir / "fresh.mha", "--sigma", "0.3vox", "--method", "recursive"},
      2, "needs sigma >= 0.5 voxels");
}

TEST(CliFilters, WarningsAndErrors) {
  TempDir dir;
  const std::string in = write_input(dir, 3, "in.mha"), in4 = write_input(dir, 4, "in4.mha");
  const std::string out = dir / "out.mha";
  // A sigma that is a single tap warns (and still writes).
  CliResult r = run_ndconv({"smooth", in, out, "--sigma", "0.1vox", "--force"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: smooth: sigma 0.1 voxels along x is a single tap"),
            std::string::npos)
      << r.err;
  r = run_ndconv({"mean", in, out, "--box", "1vox", "--force"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --box 1vox is one voxel wide"), std::string::npos) << r.err;
  // The exact Gaussian's limit names the way past it.
  r = run_ndconv({"smooth", in, out, "--sigma", "400vox", "--method", "exact", "--force"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--sigma: 400 voxels along axis 0, truncated at 4 sigmas"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("; --method recursive takes any sigma"), std::string::npos) << r.err;
  // The verbose plan names the kernel's own dimension and "frames" for time.
  r = run_ndconv({"convolve", in, out, "--kernel", "box:3", "--force", "-v"});
  EXPECT_NE(r.err.find("with a 3x3x3 kernel"), std::string::npos) << r.err;
  r = run_ndconv({"smooth", in4, out, "--sigma", "1vox", "--time-sigma", "2", "--force", "-v"});
  EXPECT_NE(r.err.find("axis 3: sigma 2 frames"), std::string::npos) << r.err;

  const std::string fresh = dir / "fresh.mha";
  expect_error({"median", in, fresh, "--radius", "8"}, 2, "--radius 8: whole numbers");
  expect_error({"median", in, fresh, "--radius", "1mm"}, 2, "in voxels");
  expect_error({"median", in, fresh, "--radius", "1.5"}, 2, "whole numbers");
  expect_error({"mean", in, out}, 2, "give one of --box or --sphere");
  expect_error({"mean", in, fresh, "--box", "3vox", "--mask", dir / "in4.mha"}, 1,
               "the mask needs the image's extents");
  expect_error({"mean", in, fresh, "--box", "3vox", "--mask", in, "--outside", "abc"}, 2,
               "--outside abc");
  expect_error({"convolve", in, in4, fresh, "--kernel", "box:3"}, 2, "not both");
  expect_error({"convolve", in, fresh, "--kernel", "blur:3"}, 2, "unknown kernel 'blur'");
  expect_error({"convolve", in, fresh, "--kernel", "gauss:5"}, 2, "too wide");
  expect_error({"kernel", "box:3", dir / "k.mha", "--dims", "5"}, 2, "--dims");
  expect_error({"derivative", in, fresh, "--sigma", "1", "--order", "1x0"}, 2,
               "one order per spatial axis");
  expect_error({"derivative", in, fresh, "--sigma", "1", "--order", "3x0x0"}, 2, "not 0, 1 or 2");
  expect_error({"unsharp", in, fresh, "--sigma", "1", "--threshold", "-1"}, 2, "--threshold");
  expect_error({"gradient", in, out}, 2, "--sigma");
  // Nothing was written by the failed commands.
  EXPECT_NE(::access((dir / "k.mha").c_str(), F_OK), 0);
  EXPECT_NE(::access(fresh.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace ndconv::test
