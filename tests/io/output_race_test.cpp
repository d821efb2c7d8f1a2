// Issue 48, class 5 (two writers, one output): of writers that all found an output absent exactly
// one places it and the others fail with a clear message; with overwrite the last one wins whole;
// outputs that are not regular files are never replaced.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "io/image.h"
#include "io/output_file.h"
#include "io/regular_file.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

constexpr int kWriters = 6;

// Releases the threads that wait on it all at once, when `count` of them have arrived.
class StartLine {
 public:
  explicit StartLine(int count) : left_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--left_ == 0)
      go_.notify_all();
    else
      go_.wait(lock, [&] { return left_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable go_;
  int left_;
};

std::string content_of(int writer) {
  return std::string(100000 + writer, static_cast<char>('a' + writer));
}

// kWriters threads stage their own content for `target` and commit at the same moment.
// Returns how many commits succeeded; the messages of the others go to `errors`.
int race(const std::string& target, bool overwrite, std::vector<std::string>& errors) {
  std::atomic<int> won{0};
  StartLine start(kWriters);
  std::vector<std::string> why(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      io::StagingFolder stage(target);
      const std::string text = content_of(w);
      io::write_new_file(stage.staged_path(), {{text.data(), text.size()}}, target);
      start.arrive_and_wait();
      try {
        stage.commit(overwrite);
        ++won;
      } catch (const std::exception& e) {
        why[w] = e.what();
      }
    });
  }
  for (auto& t : threads)
    t.join();
  for (const auto& w : why)
    if (!w.empty())
      errors.push_back(w);
  return won;
}

bool is_one_writers_whole_content(const std::string& bytes) {
  for (int w = 0; w < kWriters; ++w)
    if (bytes == content_of(w))
      return true;
  return false;
}

TEST(OutputRace, ExactlyOneOfConcurrentWritersWins) {
  TempDir dir;
  for (int round = 0; round < 20; ++round) {
    const std::string target = dir / ("out" + std::to_string(round) + ".bin");
    std::vector<std::string> errors;
    EXPECT_EQ(race(target, false, errors), 1) << "round " << round;
    EXPECT_TRUE(is_one_writers_whole_content(read_bytes(target)));
    ASSERT_EQ(errors.size(), static_cast<size_t>(kWriters - 1));
    for (const auto& e : errors) {
      EXPECT_EQ(e.rfind(target, 0), 0u) << e;
      const bool clear = e.find("exists; use --force") != std::string::npos ||
                         e.find("was created by another program") != std::string::npos;
      EXPECT_TRUE(clear) << e;
    }
  }
  EXPECT_EQ(dir.list().size(), 20u);  // no staging folder left behind
}

TEST(OutputRace, WithOverwriteTheLastWriterWinsWhole) {
  TempDir dir;
  const std::string target = dir / "out.bin";
  write_bytes(target, "old");
  for (int round = 0; round < 10; ++round) {
    std::vector<std::string> errors;
    EXPECT_EQ(race(target, true, errors), kWriters);
    EXPECT_TRUE(is_one_writers_whole_content(read_bytes(target)));
  }
  EXPECT_EQ(dir.list().size(), 1u);
}

// A header and its data file (.mhd + .raw) from concurrent writers: one pair, never mixed.
TEST(OutputRace, HeaderAndDataFileComeFromOneWriter) {
  TempDir dir;
  for (int round = 0; round < 10; ++round) {
    const std::string target = dir / ("pair" + std::to_string(round) + ".mhd");
    std::atomic<int> won{0};
    StartLine start(kWriters);
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; ++w) {
      threads.emplace_back([&, w] {
        io::Image image;
        image.info.geometry.dims = 3;
        image.info.geometry.extent = {16, 8, 4, 1};
        image.planes.assign(1, std::vector<float>(16 * 8 * 4, static_cast<float>(w)));
        start.arrive_and_wait();
        try {
          io::write_image(target, image, io::ComponentType::Float32, false, {});
          ++won;
        } catch (const std::exception&) {
        }
      });
    }
    for (auto& t : threads)
      t.join();
    EXPECT_EQ(won, 1);
    const io::Image back = io::read_image(target);
    for (float v : back.planes[0])
      ASSERT_EQ(v, back.planes[0][0]);
  }
}

TEST(OutputRace, NonRegularOutputsAreNeverReplaced) {
  TempDir dir;
  const std::string fifo = dir / "fifo.nii";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  io::Image image;
  image.info.geometry.dims = 3;
  image.info.geometry.extent = {4, 4, 4, 1};
  image.planes.assign(1, std::vector<float>(64, 1.0f));
  try {
    io::write_image(fifo, image, io::ComponentType::Float32, true, {});
    ADD_FAILURE() << "a FIFO was replaced";
  } catch (const io::RequestError& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO (named pipe), not a regular file"),
              std::string::npos)
        << e.what();
  }
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THROW(io::check_replaceable("/dev/null"), io::RequestError);
  EXPECT_NO_THROW(io::check_replaceable(dir / "absent.nii"));
  EXPECT_EQ(dir.list().size(), 1u);
}

}  // namespace
}  // namespace ndconv::test
