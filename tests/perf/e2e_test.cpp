// The end-to-end and API rows' parts that need neither a GPU nor the ndconv binary: the echo-like
// phantom's statistics (it must compress like echo data, its speckle must be Rayleigh), the
// bench's own file writers, the floors' arithmetic, the child-process timer, the batch detection,
// and the rows' registration and options.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <set>

#include "ndconv/errors.h"
#include "perf/bench.h"
#include "perf/commands.h"
#include "perf/e2e.h"
#include "perf/floors.h"
#include "perf/phantom.h"
#include "perf/volume_files.h"

namespace ndconv::perf {
namespace {

double zlib_ratio(const std::vector<uint8_t>& v) {
  uLongf size = compressBound(static_cast<uLong>(v.size()));
  std::vector<Bytef> out(size);
  EXPECT_EQ(compress2(out.data(), &size, v.data(), static_cast<uLong>(v.size()), 6), Z_OK);
  return static_cast<double>(v.size()) / static_cast<double>(size);
}

TEST(EchoPhantom, CompressesLikeEchoDataNotLikeNoise) {
  const Shape s = parse_shape("96x96x96x2", "test");
  const std::vector<uint8_t> v = make_echo_sequence(s, 11);
  ASSERT_EQ(v.size(), static_cast<std::size_t>(s.count()));
  // Zeros outside the sector and correlated speckle inside: well above uniform noise (1.0), well
  // below a smooth image (tens).
  const double ratio = zlib_ratio(v);
  EXPECT_GT(ratio, 1.8);
  EXPECT_LT(ratio, 6.0);
  double sum = 0, sum2 = 0;
  int64_t zeros = 0, saturated = 0;
  for (uint8_t b : v) {
    sum += b;
    sum2 += double(b) * b;
    zeros += b == 0;
    saturated += b == 255;
  }
  const double n = static_cast<double>(v.size());
  const double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_GT(mean, 8.0);
  EXPECT_LT(mean, 60.0);
  EXPECT_GT(var, mean);  // speckle: far from a flat image
  EXPECT_GT(zeros / n, 0.2);
  EXPECT_LT(zeros / n, 0.7);
  EXPECT_LT(saturated / n, 0.01);
}

TEST(EchoPhantom, SpeckleIsRayleighWithMeanOne) {
  const Shape s = parse_shape("64x64x64", "test");
  const std::vector<uint8_t> v = make_echo_sequence(s, 5);
  double sum = 0, sum2 = 0;
  int64_t n = 0;
  for (int64_t z = 0; z < 64; ++z)
    for (int64_t y = 0; y < 64; ++y)
      for (int64_t x = 0; x < 64; ++x) {
        const double a = echo_amplitude(s, x, y, z, 0);
        if (a < 0.3 || a > 0.7)
          continue;  // bright enough that 8 bits resolve the speckle, dim enough not to clip
        const double speckle =
            v[static_cast<std::size_t>((z * 64 + y) * 64 + x)] / (kEchoFullScale * a);
        sum += speckle;
        sum2 += speckle * speckle;
        ++n;
      }
  ASSERT_GT(n, 5000);
  const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
  EXPECT_NEAR(mean, 1.0, 0.04);
  // Rayleigh: standard deviation / mean = sqrt(4 / pi - 1) = 0.5227.
  EXPECT_NEAR(sd / mean, 0.5227, 0.04);
}

TEST(EchoPhantom, SameSeedSameBytesAndTheShellBeats) {
  const Shape s = parse_shape("40x40x40x4", "test");
  EXPECT_EQ(make_echo_sequence(s, 3), make_echo_sequence(s, 3));
  EXPECT_NE(make_echo_sequence(s, 3), make_echo_sequence(s, 4));
  int changed = 0;
  for (int64_t z = 0; z < 40; ++z)
    changed += echo_amplitude(s, 20, 20, z, 0) != echo_amplitude(s, 20, 20, z, 1);
  EXPECT_GT(changed, 0);
  EXPECT_EQ(echo_amplitude(s, 0, 20, 1, 0), 0.0);  // outside the sector near the probe
}

TEST(VolumeFiles, NiftiHeaderFields) {
  const Shape s = parse_shape("5x6x7x8", "test");
  const std::string h = nifti1_header(RawVolume{s, {0.5, 0.5, 0.7, 0.04}, VoxelType::Float32});
  ASSERT_EQ(h.size(), 352u);
  int32_t sizeof_hdr = 0;
  int16_t dim[8] = {}, datatype = 0;
  float pixdim[8] = {}, vox_offset = 0;
  std::memcpy(&sizeof_hdr, &h[0], 4);
  std::memcpy(dim, &h[40], 16);
  std::memcpy(&datatype, &h[70], 2);
  std::memcpy(pixdim, &h[76], 32);
  std::memcpy(&vox_offset, &h[108], 4);
  EXPECT_EQ(sizeof_hdr, 348);
  EXPECT_EQ(dim[0], 4);
  EXPECT_EQ(dim[1], 5);
  EXPECT_EQ(dim[4], 8);
  EXPECT_EQ(datatype, 16);
  EXPECT_FLOAT_EQ(pixdim[3], 0.7f);
  EXPECT_FLOAT_EQ(pixdim[4], 0.04f);
  EXPECT_EQ(vox_offset, 352.0f);
  EXPECT_EQ(std::string(&h[344]), "n+1");
}

TEST(VolumeFiles, Extensions) {
  EXPECT_STREQ(extension(FileFormat::Mha), ".mha");
  EXPECT_STREQ(extension(FileFormat::Nii), ".nii");
  EXPECT_STREQ(extension(FileFormat::NiiGz), ".nii.gz");
  EXPECT_STREQ(extension(static_cast<FileFormat>(kFileFormatCount)), "");
}

TEST(Floors, CallFloorIsTheSlowestStage) {
  // 1 GB each way: upload 100 ms at 10 GB/s, download 50 ms at 20 GB/s.
  CallFloor f = call_floor(1e9, 1e9, 30.0, 10e9, 20e9);
  EXPECT_DOUBLE_EQ(f.upload_ms, 100.0);
  EXPECT_DOUBLE_EQ(f.download_ms, 50.0);
  EXPECT_DOUBLE_EQ(f.floor_ms, 100.0);
  EXPECT_EQ(f.bound, "upload");
  f = call_floor(1e9, 1e9, 30.0, 20e9, 10e9);
  EXPECT_EQ(f.bound, "download");
  EXPECT_DOUBLE_EQ(f.floor_ms, 100.0);
  f = call_floor(1e9, 1e9, 250.0, 10e9, 20e9);
  EXPECT_EQ(f.bound, "kernel");
  EXPECT_DOUBLE_EQ(f.floor_ms, 250.0);
  EXPECT_THROW(call_floor(1e9, 1e9, 1.0, 0.0, 1e9), InvalidArgument);
  EXPECT_THROW(call_floor(-1.0, 1e9, 1.0, 1e9, 1e9), InvalidArgument);
}

TEST(Floors, RatiosAndThroughputShare) {
  EXPECT_DOUBLE_EQ(ratio_to_floor(3.0, 2.0), 1.5);
  EXPECT_TRUE(std::isnan(ratio_to_floor(1.0, 0.0)));
  // 40 volumes in 10 s against the I/O alone in 9 s: 90% of its throughput.
  EXPECT_DOUBLE_EQ(throughput_share(10.0, 9.0), 0.9);
  EXPECT_TRUE(std::isnan(throughput_share(0.0, 9.0)));
}

TEST(ChildProcess, ExitCodeTimeAndOutput) {
  ProcessRun r = run_process({"/bin/sh", "-c", "echo hello; echo oops >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_GT(r.seconds, 0.0);
  EXPECT_NE(r.output.find("hello"), std::string::npos);
  EXPECT_NE(r.output.find("oops"), std::string::npos);
  r = run_process({"/nonexistent/ndconv"});
  EXPECT_EQ(r.exit_code, 127);
}

TEST(ChildProcess, BatchDetectionReadsTheHelp) {
  EXPECT_TRUE(help_lists_output_folder("  -o,--output-dir DIR  write each output there"));
  EXPECT_TRUE(help_lists_output_folder("usage: ndconv smooth IN... [-o DIR]"));
  EXPECT_TRUE(help_lists_output_folder("  -o DIR"));
  EXPECT_FALSE(help_lists_output_folder("  --outputs-per-thread TEXT  KO\n  -f,--force"));
  EXPECT_FALSE(help_lists_output_folder("  --foo-o X"));
}

TEST(ChildProcess, TheCommandsOwnAccountIsSummedOverFiles) {
  const StageSeconds t = stage_seconds(
      "plan: backend cpu\n"
      "timings: read 0.250 s, filter 1.500 s (upload 0.000 s, compute 1.400 s, download 0.000 s), "
      "write 2.000 s, in all 4.000 s\n"
      "ndconv: wrote out.nii (float32)\n"
      "timings: read 0.125 s, write 0.500 s, in all 4.750 s\n");
  EXPECT_DOUBLE_EQ(t.read, 0.375);
  EXPECT_DOUBLE_EQ(t.filter, 1.5);
  EXPECT_DOUBLE_EQ(t.write, 2.5);
  EXPECT_DOUBLE_EQ(t.in_all, 4.75);
  EXPECT_EQ(stage_seconds("no timings here").read, 0.0);
}

TEST(BenchRows, RegisteredOnceEach) {
  std::set<std::string> names;
  int api = 0, e2e = 0, batch = 0;
  for (const Workload& w : bench_workloads()) {
    EXPECT_TRUE(names.insert(w.name).second) << w.name;
    api += w.kind == Workload::Kind::Api;
    e2e += w.kind == Workload::Kind::EndToEnd;
    batch += w.kind == Workload::Kind::Batch;
    if (w.kind == Workload::Kind::Api) {
      EXPECT_EQ(w.name, "api_" + w.base);
      EXPECT_TRUE(names.count(w.base)) << w.base;
    }
  }
  EXPECT_EQ(api, 6);
  EXPECT_EQ(e2e, 6);
  EXPECT_EQ(batch, 1);
  for (const char* n : {"e2e_smooth_mha", "e2e_smooth_nii", "e2e_smooth_niigz", "e2e_convolve_mha",
                        "e2e_convolve_nii", "e2e_convolve_niigz", "batch", "api_dense3d_11",
                        "api_gauss3d_s2", "api_gauss3d_s2_272"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(BenchRows, OptionsOfTheCommandRows) {
  BenchArgs a;
  parse_options(bench_command_line(a, false),
                {"--e2e-device", "auto,cpu,cuda:1", "--e2e-reps", "5", "--e2e-volume", "32x32x32x2",
                 "--batch-volume", "16x16x16", "--batch-count", "3", "--work-dir", "/tmp"});
  const BenchConfig c = bench_config(a);
  EXPECT_EQ(c.e2e.devices, (std::vector<std::string>{"auto", "cpu", "cuda:1"}));
  EXPECT_EQ(c.e2e.repetitions, 5);
  EXPECT_EQ(c.e2e.sequence, parse_shape("32x32x32x2", "t"));
  EXPECT_EQ(c.e2e.batch_count, 3);
  EXPECT_EQ(c.e2e.work_parent, "/tmp");
  EXPECT_TRUE(c.e2e.ndconv.empty());
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--e2e-device", "gpu"},
                                              {"--e2e-volume", "32x32"},
                                              {"--batch-volume", "8x8x8x2"}}) {
    BenchArgs b;
    parse_options(bench_command_line(b, false), bad);
    EXPECT_THROW(bench_config(b), InvalidArgument) << bad[0];
  }
}

TEST(BenchRows, WithoutTheNdconvBinaryTheCommandRowsSaySo) {
  BenchArgs a;
  a.device = "cpu";
  a.workload = "e2e_smooth_nii,batch";
  BenchConfig c = bench_config(a);
  const BenchResult r = run_bench(c, nullptr);
  ASSERT_EQ(r.summary["workloads"].size(), 2u);
  for (const Json& row : r.summary["workloads"]) {
    EXPECT_NE(text(row, "error").find("not available"), std::string::npos);
    EXPECT_TRUE(row["target_met"].is_null());
  }
  EXPECT_EQ(r.failures, 0);
}

}  // namespace
}  // namespace ndconv::perf
