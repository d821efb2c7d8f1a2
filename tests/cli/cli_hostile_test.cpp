// Issue 30 at the level of the process: inputs that would hang ndconv (a looping TIFF, a FIFO),
// signals in the middle of a hung read, a gzip bomb and a LIST of huge slices refused with a
// bounded peak memory, and the memory estimate the CLI checks against the real peak RSS. Every
// run is bounded by a timeout, so a regression fails instead of hanging the suite.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli_run.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using io::ComponentType;

struct LimitedRun {
  int code = -1;                    ///< exit code; 128 + signal when killed by one
  double seconds = 0;               ///< from start to exit
  double seconds_after_signal = 0;  ///< from the signal we sent to exit
  double peak_rss_mib = 0;          ///< the child's own peak RSS (wait4)
  bool timed_out = false;
  std::vector<pid_t> children;  ///< ndconv's children when the signal was sent
  std::string err;
};

struct RunLimits {
  double timeout_seconds = 10;
  double signal_after_seconds = -1;  ///< < 0: no signal
  int signal = SIGTERM;
  double data_limit_bytes = 0;  ///< RLIMIT_DATA of the child; 0: unchanged
};

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> kids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr)
    return kids;
  while (const dirent* e = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0)
      continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos)
      continue;
    char state;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
      kids.push_back(pid);
  }
  ::closedir(proc);
  return kids;
}

// Gone, or a zombie waiting for its new parent to reap it.
bool process_ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line))
    return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() &&
         (line[close + 2] == 'Z' || line[close + 2] == 'X');
}

LimitedRun run_limited(const std::vector<std::string>& args, const RunLimits& limits,
                       const std::string& stderr_path) {
  std::vector<std::string> argv_store{NDCONV_CLI_PATH};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_store)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  LimitedRun run;
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (limits.data_limit_bytes > 0) {
      const rlimit r{static_cast<rlim_t>(limits.data_limit_bytes),
                     static_cast<rlim_t>(limits.data_limit_bytes)};
      ::setrlimit(RLIMIT_DATA, &r);
    }
    const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  Clock::time_point signalled{};
  bool sent = false;
  while (true) {
    const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid)
      break;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (!sent && limits.signal_after_seconds >= 0 && elapsed >= limits.signal_after_seconds) {
      run.children = children_of(pid);
      signalled = Clock::now();
      ::kill(pid, limits.signal);
      sent = true;
    }
    if (elapsed > limits.timeout_seconds) {
      run.timed_out = true;
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (sent)
    run.seconds_after_signal = std::chrono::duration<double>(Clock::now() - signalled).count();
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  run.err = read_bytes(stderr_path);
  return run;
}

double own_rss_mib() {
  std::ifstream statm("/proc/self/statm");
  double pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1 << 20);
}

void expect_one_error_line(const LimitedRun& r, const std::string& expected) {
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.err.rfind("ndconv: error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find(expected), std::string::npos)
      << "expected '" << expected << "' in " << r.err;
}

// A 4x4 8-bit TIFF whose only IFD names itself as the next one.
std::string looping_tiff() {
  std::string b = std::string("II*\0", 4);
  auto u16 = [&](uint16_t v) { b.append(reinterpret_cast<const char*>(&v), 2); };
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  u32(8);
  const uint16_t entries[][2] = {{256, 4}, {257, 4}, {258, 8}, {259, 1}, {262, 1},
                                 {273, 0}, {277, 1}, {278, 4}, {279, 16}};
  const uint16_t count = sizeof entries / sizeof entries[0];
  const uint32_t data_offset = 8 + 2 + 12 * count + 4;
  u16(count);
  for (const auto& e : entries) {
    u16(e[0]);
    const bool offsets = e[0] == 273 || e[0] == 279;
    u16(offsets ? 4 : 3);
    u32(1);
    if (offsets)
      u32(e[0] == 273 ? data_offset : e[1]);
    else {
      u16(e[1]);
      u16(0);
    }
  }
  u32(8);  // the next IFD: this one again
  b.append(16, '\x40');
  return b;
}

class CliHostile : public ::testing::Test {
 protected:
  std::string log() const { return dir / ".stderr"; }
  TempDir dir;
};

TEST_F(CliHostile, LoopingTiffIsRefusedWithinTheDecoderTimeLimit) {
  write_bytes(dir / "loop.tif", looping_tiff());
  const LimitedRun r = run_limited({"info", dir / "loop.tif"}, {}, log());
  EXPECT_EQ(r.code, 1) << r.err;
  expect_one_error_line(r, "did not finish");
  EXPECT_LT(r.seconds, 9.0);
}

TEST_F(CliHostile, SignalsEndAHungReadWithinASecondAndTheSandboxedDecoderWithIt) {
  write_bytes(dir / "loop.tif", looping_tiff());
  for (const int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(strsignal(sig));
    RunLimits limits;
    limits.signal_after_seconds = 1.0;
    limits.signal = sig;
    const LimitedRun r =
        run_limited({"smooth", dir / "loop.tif", dir / "out.nii", "--sigma", "1"}, limits, log());
    EXPECT_EQ(r.code, 130) << r.err;
    expect_one_error_line(r, "interrupted");
    EXPECT_LT(r.seconds_after_signal, 1.0);
    EXPECT_FALSE(r.children.empty()) << "the decoder was not running in its sandbox";
    for (const pid_t child : r.children) {
      const auto until = Clock::now() + std::chrono::seconds(1);
      while (!process_ended(child) && Clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      EXPECT_TRUE(process_ended(child)) << "the sandboxed decoder " << child << " outlived ndconv";
    }
    EXPECT_FALSE(fs::exists(dir / "out.nii"));
  }
}

TEST_F(CliHostile, FifosAreRefusedAsInputAndKernel) {
  ASSERT_EQ(::mkfifo((dir / "pipe.nii").c_str(), 0600), 0);
  write_meta(dir / "in.mha", [] {
    RawImage im;
    im.extent = {6, 5, 4, 1};
    im.values = random_for_type(im.voxels(), ComponentType::Float32, fresh_seed());
    return im;
  }());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"info", dir / "pipe.nii"},
           {"smooth", dir / "pipe.nii", dir / "out.nii", "--sigma", "1"},
           {"convolve", dir / "in.mha", dir / "pipe.nii", dir / "out.nii"}}) {
    SCOPED_TRACE(args[0]);
    const LimitedRun r = run_limited(args, {}, log());
    EXPECT_EQ(r.code, 1) << r.err;
    expect_one_error_line(r, "FIFO");
    EXPECT_LT(r.seconds, 5.0);
    EXPECT_FALSE(fs::exists(dir / "out.nii"));
  }
}

// gzip members of zeros, concatenated (gzip readers read them as one stream): a 2.7 MB file that
// inflates to 1400^3 bytes, written in a fraction of a second.
void write_gzip_bomb(const std::string& path, const std::string& header, double total) {
  auto member = [](const std::string& bytes) {
    z_stream z{};
    deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, bytes.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(bytes.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
  };
  const size_t chunk = 64 << 20;
  const std::string zeros = member(std::string(chunk, '\0'));
  std::string file = member(header);
  double written = static_cast<double>(header.size());
  while (written + chunk <= total) {
    file += zeros;
    written += chunk;
  }
  file += member(std::string(static_cast<size_t>(total - written), '\0'));
  write_bytes(path, file);
}

TEST_F(CliHostile, GzipBombIsRefusedQuicklyWithBoundedMemory) {
  // A legal NIfTI-1 header for 1400^3 uint8 (2.7 GB of pixels).
  std::string header(352, '\0');
  auto poke = [&](size_t at, auto v) { std::memcpy(&header[at], &v, sizeof v); };
  poke(0, int32_t{348});
  const int16_t dim[8] = {3, 1400, 1400, 1400, 1, 1, 1, 1};
  std::memcpy(&header[40], dim, sizeof dim);
  poke(70, int16_t{2});
  poke(72, int16_t{8});
  for (int i = 0; i < 8; ++i)
    poke(76 + 4 * i, 1.0f);
  poke(108, 352.0f);
  std::memcpy(&header[344], "n+1", 4);
  const std::string bomb = dir / "bomb.nii.gz";
  write_gzip_bomb(bomb, header, 352.0 + 1400.0 * 1400 * 1400);
  EXPECT_LT(fs::file_size(bomb), 4u << 20);
  RunLimits limits;
  limits.data_limit_bytes = 8.0 * (1ull << 30);  // the same answer on machines of any size
  const LimitedRun r =
      run_limited({"smooth", bomb, dir / "out.nii.gz", "--sigma", "1"}, limits, log());
  EXPECT_EQ(r.code, 1) << r.err;
  expect_one_error_line(r, "of memory");
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_LT(r.peak_rss_mib, 200.0);
  EXPECT_FALSE(fs::exists(dir / "out.nii.gz"));
}

TEST_F(CliHostile, ListOfHugeSlicesIsRefusedBeforeAllocating) {
  std::string header =
      "ObjectType = Image\nNDims = 3\nDimSize = 20000 20000 4\nElementType = MET_UCHAR\n"
      "ElementDataFile = LIST\n";
  for (int i = 0; i < 4; ++i) {
    header += "s" + std::to_string(i) + ".raw\n";
    write_bytes(dir / ("s" + std::to_string(i) + ".raw"), std::string(1000, 'x'));
  }
  write_bytes(dir / "slices.mhd", header);
  const LimitedRun r =
      run_limited({"smooth", dir / "slices.mhd", dir / "out.nii", "--sigma", "1"}, {}, log());
  EXPECT_EQ(r.code, 1) << r.err;
  expect_one_error_line(r, "holds only 4000 bytes");
  EXPECT_LT(r.peak_rss_mib, 100.0);
  EXPECT_FALSE(fs::exists(dir / "out.nii"));
}

// Every geometry field of a NIfTI-1 header (pixdim, vox_offset, qform, sform) set to each extreme
// value: ndconv answers (exit 0 or a one-line error, exit 1) and never hangs or crashes; niftilib
// looped on a value near FLT_MAX, ITK's vnl_svd aborted on NaN.
TEST_F(CliHostile, ExtremeNiftiGeometryNeverHangsOrCrashes) {
  RawImage im;
  im.dims = 4;
  im.extent = {5, 4, 3, 2};
  im.values = random_for_type(im.voxels(), ComponentType::Float32, fresh_seed());
  NiftiForm form;
  form.qform_code = form.sform_code = 1;
  form.quatern[2] = 0.5;
  write_nifti_form(dir / "good.nii", im, form);
  const std::string good = read_bytes(dir / "good.nii");
  std::vector<size_t> offsets;
  for (size_t at = 76; at <= 112; at += 4)  // pixdim[0..7], vox_offset, scl_slope
    offsets.push_back(at);
  for (size_t at = 256; at < 328; at += 4)  // quatern, qoffset, srow_x/y/z
    offsets.push_back(at);
  const float extremes[] = {std::nanf(""), INFINITY, -3.4e38f, 3.4e38f, 1e20f, 0.0f, -1.0f};
  for (const size_t at : offsets) {
    for (const float value : extremes) {
      std::string bytes = good;
      std::memcpy(&bytes[at], &value, 4);
      write_bytes(dir / "bad.nii", bytes);
      RunLimits limits;
      limits.timeout_seconds = 20;
      const LimitedRun r = run_limited({"info", dir / "bad.nii"}, limits, log());
      SCOPED_TRACE("byte " + std::to_string(at) + " = " + std::to_string(value));
      ASSERT_FALSE(r.timed_out);
      ASSERT_TRUE(r.code == 0 || r.code == 1) << "exit " << r.code << ": " << r.err;
      if (r.code == 1)
        expect_one_error_line(r, "bad.nii");
    }
  }
}

// A NIfTI sform holding a subnormal float beside an entry of -2^31 (found by fuzzing): ITK's float
// SVD of it never returned. Refused with a one-line error, in time.
TEST_F(CliHostile, SubnormalSformEntryIsRefusedNotHung) {
  RawImage im;
  im.extent = {5, 4, 3, 1};
  im.values = random_for_type(im.voxels(), ComponentType::Float32, fresh_seed());
  NiftiForm form;
  form.sform_code = 1;
  form.srow[1] = 1e-39;  // subnormal as a float
  form.srow[8] = -2147483648.0;
  write_nifti_form(dir / "bad.nii", im, form);
  RunLimits limits;
  limits.timeout_seconds = 20;
  const LimitedRun r = run_limited({"info", dir / "bad.nii"}, limits, log());
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.code, 1) << r.err;
  expect_one_error_line(r, "subnormal");
}

// Geometry that a NIfTI sform would hold as subnormal floats never reaches a NIfTI output: a
// direction cosine of 1e-39 beside a voxel size of 2.1e9 is written as 0, so the output reads
// back; a voxel size of 1e-39 is refused (exit 2) and nothing is written.
TEST_F(CliHostile, NiftiOutputsHoldNoSubnormalGeometry) {
  const std::string pixels(60, '\x07');
  write_bytes(dir / "tiny_cosine.mha",
              "ObjectType = Image\nNDims = 3\nDimSize = 5 4 3\nElementSpacing = 1 1 2.1e9\n"
              "TransformMatrix = 1 1e-39 0 0 1 0 0 0 1\nElementType = MET_UCHAR\n"
              "ElementDataFile = LOCAL\n" +
                  pixels);
  RunLimits limits;
  limits.timeout_seconds = 20;
  LimitedRun r = run_limited({"convert", dir / "tiny_cosine.mha", dir / "out.nii"}, limits, log());
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_limited({"info", dir / "out.nii"}, limits, log());
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.code, 0) << r.err;

  write_bytes(dir / "tiny_voxel.mha",
              "ObjectType = Image\nNDims = 3\nDimSize = 5 4 3\nElementSpacing = 1e-39 1 1\n"
              "ElementType = MET_UCHAR\nElementDataFile = LOCAL\n" +
                  pixels);
  r = run_limited({"convert", dir / "tiny_voxel.mha", dir / "out2.nii.gz"}, limits, log());
  EXPECT_EQ(r.code, 2) << r.err;
  expect_one_error_line(r, "smallest normal float");
  EXPECT_FALSE(fs::exists(dir / "out2.nii.gz"));
  r = run_limited({"convert", dir / "tiny_voxel.mha", dir / "out2.mha"}, limits, log());
  EXPECT_EQ(r.code, 0) << r.err;  // MetaImage keeps the value as text
}

// The estimate printed by --verbose (and checked against the usable memory) must not be below
// the real peak of the run, nor more than 20% above it: the Gaussian, the dense filter and the
// adaptive filter (3D, true 4D in slabs, and stage by stage with the coarse orientation).
TEST_F(CliHostile, MemoryEstimateIsWithinTwentyPercentAboveThePeakRss) {
  auto random_volume = [](int n, ComponentType type) {
    RawImage im;
    im.extent = {n, n, n, 1};
    im.type = type;
    im.values = random_for_type(im.voxels(), type, fresh_seed());
    return im;
  };
  write_meta(dir / "f32.mha", random_volume(160, ComponentType::Float32));
  write_nifti(dir / "u8.nii", random_volume(160, ComponentType::UInt8));
  write_nifti(dir / "i16.nii", random_volume(144, ComponentType::Int16));
  RawImage series = random_volume(56, ComponentType::UInt8);  // true 4D adaptive: slabs along z
  series.dims = 4;
  series.extent[3] = 6;
  series.values = random_for_type(series.voxels(), ComponentType::UInt8, fresh_seed());
  write_nifti(dir / "u8_4d.nii", series);
  RawImage kernel = random_volume(3, ComponentType::Float32);
  write_meta(dir / "k.mha", kernel);
  const std::vector<std::vector<std::string>> commands = {
      {"smooth", dir / "f32.mha", dir / "out.mha", "--sigma", "2vox"},
      {"smooth", dir / "u8.nii", dir / "out.nii.gz", "--sigma", "2vox", "--type", "uint8"},
      {"smooth", dir / "f32.mha", dir / "out.nii", "--sigma", "1x0x0vox"},
      {"convolve", dir / "i16.nii", dir / "k.mha", dir / "out.mha"},
      {"convolve", dir / "f32.mha", dir / "k.mha", dir / "out.nii", "--type", "int16"},
      {"adaptive", dir / "u8.nii", dir / "out.nii", "--preset", "echo"},
      {"adaptive", dir / "u8_4d.nii", dir / "out.nii", "--preset", "echo"},
      {"adaptive", dir / "u8_4d.nii", dir / "out.nii", "--coarse-orientation"},
  };
  for (auto args : commands) {
    const std::string out = args[args[0] == "convolve" ? 3 : 2];
    SCOPED_TRACE(args[0] + " " + args[1] + " " + out);
    for (const char* extra : {"--verbose", "--device", "cpu", "--force"})
      args.push_back(extra);
    // The child's peak RSS (ru_maxrss) includes what it inherited from this process before
    // exec: give the freed memory of the test's own volumes back to the system first.
    ::malloc_trim(0);
    ASSERT_LT(own_rss_mib(), 40.0) << "this process is too large to measure a child's peak";
    RunLimits limits;
    limits.timeout_seconds = 60;
    const LimitedRun r = run_limited(args, limits, log());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto at = r.err.find("plan: memory: about ");
    ASSERT_NE(at, std::string::npos) << r.err;
    double estimate = 0;
    char unit[8] = {0};
    ASSERT_EQ(std::sscanf(r.err.c_str() + at + 20, "%lf %7s", &estimate, unit), 2);
    ASSERT_STREQ(unit, "MiB");
    std::printf("%s -> %s: estimate %.1f MiB, peak RSS %.1f MiB (%+.1f%%)\n",
                fs::path(args[1]).filename().c_str(), fs::path(out).filename().c_str(), estimate,
                r.peak_rss_mib, 100.0 * (estimate / r.peak_rss_mib - 1));
    EXPECT_GE(estimate, r.peak_rss_mib) << "the estimate is below the real peak";
    EXPECT_LE(estimate, 1.2 * r.peak_rss_mib) << "the estimate is more than 20% above the peak";
    fs::remove(out);
  }
}

}  // namespace
}  // namespace ndconv::test
