// Issue 48, class 2 (special files reached indirectly): the regular-file helpers every opened
// path goes through refuse FIFOs without a writer, devices such as /dev/zero and folders, at
// once and without blocking, naming the path.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <utility>

#include "io/image.h"
#include "io/regular_file.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

TEST(RegularFile, SpecialFilesAreRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir / "fifo.txt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // no writer: an open(2) without O_NONBLOCK blocks
  write_bytes(dir / "list.txt", "a.nii\nb.nii\n");
  const auto start = std::chrono::steady_clock::now();
  const std::pair<std::string, const char*> cases[] = {{fifo, "is a FIFO (named pipe)"},
                                                       {"/dev/zero", "is a device"},
                                                       {dir.path(), "is a folder"},
                                                       {dir / "absent.txt", "cannot read"}};
  for (const auto& [path, expected] : cases) {
    SCOPED_TRACE(path);
    try {
      (void)io::read_regular_file(path, "list files", 1 << 20);
      ADD_FAILURE() << "read";
    } catch (const io::IoError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what();
    }
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  EXPECT_EQ(io::read_regular_file(dir / "list.txt", "list files", 100), "a.nii\nb.nii\n");
  EXPECT_THROW(io::read_regular_file(dir / "list.txt", "list files", 5), io::IoError);
}

}  // namespace
}  // namespace ndconv::test
