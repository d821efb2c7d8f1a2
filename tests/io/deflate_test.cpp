// The parallel deflate encoders and the member decoder against zlib, the reference reader: every
// stream compress_parallel makes must inflate with plain zlib to the input, whatever the level,
// chunk size, thread count and length (empty, one byte, a chunk boundary, many chunks).
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/parallel_deflate.h"

namespace ndconv::io {
namespace {

// Data that compresses somewhat, like image data: a smooth signal plus noise.
std::vector<unsigned char> sample(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<unsigned char>((i / 97) % 200 + rng() % 7);
  return v;
}

// A stream as compress_parallel hands it over: one piece per call of the sink.
struct Stream {
  std::vector<std::vector<unsigned char>> pieces;
  uint64_t length = 0;
};

Stream compress(const std::vector<unsigned char>& data, DeflateContainer container, int level,
                int threads = 0, size_t chunk = 1 << 20) {
  Stream s;
  s.length = compress_parallel(
      data.data(), data.size(), container, level,
      [&](const unsigned char* p, size_t n) { s.pieces.emplace_back(p, p + n); }, threads, chunk);
  return s;
}

std::vector<unsigned char> joined(const Stream& s) {
  std::vector<unsigned char> out;
  for (const auto& p : s.pieces)
    out.insert(out.end(), p.begin(), p.end());
  EXPECT_EQ(out.size(), s.length);
  return out;
}

// zlib's inflate over a whole buffer; `window_bits` 15 (zlib) or 31 (gzip). For gzip, members
// after the first are inflated in turn, as gzip and zlib's gzread do.
bool zlib_inflate(const std::vector<unsigned char>& in, int window_bits,
                  std::vector<unsigned char>& out) {
  out.clear();
  size_t at = 0;
  do {
    z_stream s{};
    if (inflateInit2(&s, window_bits) != Z_OK)
      return false;
    s.next_in = const_cast<unsigned char*>(in.data() + at);
    s.avail_in = static_cast<uInt>(in.size() - at);
    unsigned char buf[1 << 15];
    int rc;
    do {
      s.next_out = buf;
      s.avail_out = sizeof buf;
      rc = inflate(&s, Z_NO_FLUSH);
      out.insert(out.end(), buf, buf + (sizeof buf - s.avail_out));
    } while (rc == Z_OK);
    at = in.size() - s.avail_in;
    inflateEnd(&s);
    if (rc != Z_STREAM_END)
      return false;
  } while (window_bits > 15 && at < in.size());
  return at == in.size();
}

struct Case {
  size_t size, chunk;
  int level, threads;
};

TEST(ParallelDeflate, GzipMembersAndZlibStreamInflateWithZlib) {
  const Case cases[] = {{0, 1 << 20, 1, 0},
                        {1, 1 << 20, 1, 0},
                        {4096, 4096, 6, 2},
                        {4097, 4096, 9, 3},
                        {100000, 7000, 0, 4},
                        // stored blocks of exactly 65535 bytes, and one more byte
                        {131070, 1 << 20, 0, 1},
                        {131071, 65535, 0, 2},
                        {300001, 65536, 1, 0},
                        {1 << 20, 1 << 16, 5, 8},
                        // chunks of several deflate blocks each (libdeflate splits long input)
                        {3 << 20, 1 << 20, 1, 2},
                        {(3 << 20) + 17, 1 << 20, 9, 3}};
  for (const Case& c : cases) {
    SCOPED_TRACE("size " + std::to_string(c.size) + " chunk " + std::to_string(c.chunk) +
                 " level " + std::to_string(c.level));
    const auto data = sample(c.size, static_cast<uint32_t>(c.size + 1));
    std::vector<unsigned char> back;
    const auto gz = joined(compress(data, DeflateContainer::Gzip, c.level, c.threads, c.chunk));
    ASSERT_TRUE(zlib_inflate(gz, 15 + 16, back));
    EXPECT_EQ(back, data);
    const auto zl = joined(compress(data, DeflateContainer::Zlib, c.level, c.threads, c.chunk));
    ASSERT_TRUE(zlib_inflate(zl, 15, back));  // one stream: a second one would be refused here
    EXPECT_EQ(back, data);
    // The zlib stream is a single stream: uncompress() (one call, no member loop) reads it.
    std::vector<unsigned char> one(data.size() + 1);
    uLongf n = static_cast<uLongf>(one.size());
    ASSERT_EQ(uncompress(one.data(), &n, zl.data(), static_cast<uLong>(zl.size())), Z_OK);
    one.resize(n);
    EXPECT_EQ(one, data);
    if (c.level > 0 && c.size > 1000) {
      EXPECT_LT(gz.size(), data.size());
      EXPECT_LT(zl.size(), data.size());
    }
  }
}

// The same bytes from one thread and from several, also where the workers reuse the few buffers
// they run ahead in (250 chunks, 3 threads).
TEST(ParallelDeflate, ResultDoesNotDependOnTheThreadCount) {
  const auto data = sample(500000, 7);
  for (auto container : {DeflateContainer::Gzip, DeflateContainer::Zlib}) {
    for (const size_t chunk : {size_t{40000}, size_t{2000}}) {
      const auto one = joined(compress(data, container, 1, 1, chunk));
      EXPECT_EQ(joined(compress(data, container, 1, 5, chunk)), one);
      EXPECT_EQ(joined(compress(data, container, 1, 3, chunk)), one);
    }
  }
}

// compressed_bound holds for data deflate cannot shrink, at every level and container.
TEST(ParallelDeflate, TheBoundHoldsForIncompressibleData) {
  std::mt19937 rng(9);
  std::vector<unsigned char> noise(300001);
  for (auto& b : noise)
    b = static_cast<unsigned char>(rng());
  for (auto container : {DeflateContainer::Gzip, DeflateContainer::Zlib})
    for (int level = 0; level <= kMaxCompressionLevel; ++level)
      for (const size_t size : {size_t{0}, size_t{1}, size_t{65535}, noise.size()}) {
        const std::vector<unsigned char> data(noise.begin(), noise.begin() + size);
        const Stream s = compress(data, container, level, 2, 70000);
        EXPECT_LE(s.length, compressed_bound(size, container, level, 70000))
            << "level " << level << " size " << size;
      }
}

// A sink that throws (a full disk) stops the workers; the exception reaches the caller and
// nothing hangs.
TEST(ParallelDeflate, AFailingSinkStopsTheWorkers) {
  const auto data = sample(400000, 13);
  for (const int threads : {1, 4}) {
    size_t calls = 0;
    auto sink = [&](const unsigned char*, size_t) {
      if (++calls == 5)
        throw std::runtime_error("disk full");
    };
    EXPECT_THROW(
        compress_parallel(data.data(), data.size(), DeflateContainer::Zlib, 1, sink, threads, 5000),
        std::runtime_error);
    EXPECT_EQ(calls, 5u);
  }
}

TEST(ParallelDeflate, MembersAreFoundAndInflatedInParallel) {
  const auto data = sample(250000, 3);
  const auto gz = joined(compress(data, DeflateContainer::Gzip, 1, 0, 30000));
  const auto members = find_gzip_members(gz.data(), gz.size());
  ASSERT_EQ(members.size(), 9u);
  std::vector<unsigned char> out(data.size());
  std::string why;
  ASSERT_TRUE(inflate_gzip_members(gz.data(), members, out.data(), 3, why)) << why;
  EXPECT_EQ(out, data);

  // A flipped bit in one member's data is caught by its CRC.
  auto damaged = gz;
  damaged[members[4].offset + members[4].length / 2] ^= 0x10;
  EXPECT_FALSE(inflate_gzip_members(damaged.data(), members, out.data(), 3, why));
  EXPECT_FALSE(why.empty());

  // Other gzip files (one plain member, as gzip writes) are not taken for ours; nor is a
  // truncated one.
  std::vector<unsigned char> plain(compressBound(static_cast<uLong>(data.size())) + 64);
  z_stream s{};
  ASSERT_EQ(deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  s.next_in = const_cast<unsigned char*>(data.data());
  s.avail_in = static_cast<uInt>(data.size());
  s.next_out = plain.data();
  s.avail_out = static_cast<uInt>(plain.size());
  ASSERT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  plain.resize(s.total_out);
  deflateEnd(&s);
  EXPECT_TRUE(find_gzip_members(plain.data(), plain.size()).empty());
  EXPECT_TRUE(find_gzip_members(gz.data(), gz.size() - 3).empty());
}

// At the default level a chunk that deflate barely shrinks (noise) is stored and one that it
// shrinks well is compressed. Either way the stream inflates to the input.
TEST(ParallelDeflate, TheDefaultLevelStoresChunksThatBarelyShrink) {
  const size_t chunk = 200000;
  std::vector<unsigned char> data = sample(2 * chunk, 11);
  std::mt19937 rng(5);
  for (size_t i = 0; i < chunk; ++i)  // the first chunk: uniform noise
    data[i] = static_cast<unsigned char>(rng());
  for (auto container : {DeflateContainer::Gzip, DeflateContainer::Zlib}) {
    const int window = container == DeflateContainer::Gzip ? 31 : 15;
    const auto fast = compress(data, container, kDefaultCompressionLevel, 2, chunk);
    std::vector<unsigned char> back;
    ASSERT_TRUE(zlib_inflate(joined(fast), window, back));
    EXPECT_EQ(back, data);
    const size_t first = container == DeflateContainer::Gzip ? 0 : 1;  // after the zlib header
    EXPECT_GE(fast.pieces[first].size(), chunk);                       // stored
    EXPECT_LT(fast.pieces[first + 1].size(), chunk * 5 / 6);           // compressed
    const auto level2 = compress(data, container, 2, 2, chunk);
    ASSERT_TRUE(zlib_inflate(joined(level2), window, back));
    EXPECT_EQ(back, data);
    EXPECT_LT(level2.pieces[first + 1].size(), chunk * 5 / 6);
  }
}

TEST(ParallelDeflate, LevelsOutsideZeroToNineAreRefused) {
  const unsigned char byte = 1;
  const std::vector<unsigned char> one(1, byte);
  EXPECT_THROW(compress(one, DeflateContainer::Gzip, -1), std::runtime_error);
  EXPECT_THROW(compress(one, DeflateContainer::Zlib, 10), std::runtime_error);
}

}  // namespace
}  // namespace ndconv::io
