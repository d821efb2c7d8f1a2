// The run path's read side end to end: `--device auto` (which, in a build with CUDA, reads the
// input in its stored type for the GPU and lets the engine convert it) writes the same bytes as
// `--device cpu` (float planes); `convert`, the I/O-only floor, takes the same --compression and
// --threads as the filtering commands.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_run.h"
#include "io/image.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

using io::ComponentType;

TEST(CliIoPath, AutoAndCpuWriteTheSameBytes) {
  TempDir dir;
  write_nifti(dir / "u8.nii", random_volume({40, 33, 21, 4}, ComponentType::UInt8, 3));
  write_nifti(dir / "i16s.nii", random_volume({35, 30, 24, 1}, ComponentType::Int16, 4), true, 0.25,
              -7);
  write_meta(dir / "u16.mha", random_volume({31, 29, 27, 1}, ComponentType::UInt16, 5));
  ASSERT_EQ(run_ndconv({"convert", dir / "u8.nii", dir / "u8.nii.gz", "-q"}).code, 0);
  const std::vector<std::vector<std::string>> commands = {{"smooth", "--sigma", "1.2"},
                                                          {"convolve", "--kernel", "box:3"}};
  for (const auto& command : commands) {
    for (const std::string in : {"u8.nii.gz", "i16s.nii", "u16.mha"}) {
      SCOPED_TRACE(command[0] + " " + in);
      std::string bytes[2];
      int k = 0;
      for (const std::string device : {"cpu", "auto"}) {
        const std::string out = dir / (device + "_" + in);
        std::vector<std::string> args = command;
        args.insert(args.begin() + 1, {dir / in, out});
        args.insert(args.end(), {"--device", device, "-q", "-f"});
        const CliResult r = run_ndconv(args);
        ASSERT_EQ(r.code, 0) << r.err;
        bytes[k++] = read_bytes(out);
      }
      EXPECT_FALSE(bytes[0].empty());
      EXPECT_TRUE(bytes[0] == bytes[1]);
    }
  }
}

TEST(CliIoPath, ConvertTakesCompressionAndThreads) {
  TempDir dir;
  write_nifti(dir / "a.nii", random_volume({64, 64, 40, 1}, ComponentType::UInt8, 8));
  const CliResult stored = run_ndconv({"convert", dir / "a.nii", dir / "s.nii.gz", "--type",
                                       "float", "--compression", "0", "--threads", "1", "-q"});
  ASSERT_EQ(stored.code, 0) << stored.err;
  const CliResult packed = run_ndconv({"convert", dir / "a.nii", dir / "p.nii.gz", "--type",
                                       "float", "--compression", "6", "--threads", "2", "-q"});
  ASSERT_EQ(packed.code, 0) << packed.err;
  // Level 0 stores the 64*64*40 float32 values; uint8 values as float compress well at level 6.
  EXPECT_GT(read_bytes(dir / "s.nii.gz").size(), 64u * 64 * 40 * 4);
  EXPECT_LT(read_bytes(dir / "p.nii.gz").size(), 64u * 64 * 40 * 4 / 2);
  EXPECT_TRUE(io::read_image(dir / "s.nii.gz").planes == io::read_image(dir / "p.nii.gz").planes);
  EXPECT_TRUE(io::read_image(dir / "s.nii.gz").planes == io::read_image(dir / "a.nii").planes);
  EXPECT_EQ(run_ndconv({"convert", dir / "a.nii", dir / "x.nii.gz", "--compression", "10"}).code,
            2);
}

}  // namespace
}  // namespace ndconv::test
