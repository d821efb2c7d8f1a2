#include "io/parallel_deflate.h"

#include "io/parallel_for.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

namespace ndconv::io {

namespace {

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};
struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

void put_le32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<unsigned char>(v >> (8 * i));
}

uint32_t get_le32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// A gzip member header with FEXTRA and one "ND" subfield (4 bytes: the member's length).
constexpr size_t kGzipHeaderBytes = 10 + 2 + 4 + 4;
constexpr size_t kGzipTrailerBytes = 8;

std::vector<unsigned char> gzip_member(libdeflate_compressor* c, const unsigned char* in,
                                       size_t n) {
  const size_t bound = libdeflate_deflate_compress_bound(c, n);
  std::vector<unsigned char> out(kGzipHeaderBytes + bound + kGzipTrailerBytes);
  unsigned char* h = out.data();
  const unsigned char header[12] = {0x1f, 0x8b, 8, 4 /* FEXTRA */, 0, 0,
                                    0,    0,    0, 3 /* Unix */,   8, 0 /* XLEN */};
  std::copy(header, header + 12, h);
  h[12] = 'N';
  h[13] = 'D';
  h[14] = 4;
  h[15] = 0;
  const size_t deflated = libdeflate_deflate_compress(c, in, n, h + kGzipHeaderBytes, bound);
  if (deflated == 0)
    throw std::runtime_error("deflate: the output bound was too small");
  const size_t total = kGzipHeaderBytes + deflated + kGzipTrailerBytes;
  put_le32(h + 16, static_cast<uint32_t>(total));
  put_le32(h + kGzipHeaderBytes + deflated, libdeflate_crc32(0, in, n));
  put_le32(h + kGzipHeaderBytes + deflated + 4, static_cast<uint32_t>(n));
  out.resize(total);
  return out;
}

// One piece of a raw deflate stream: ends on a byte boundary unless `last`, which ends the
// stream. libdeflate compresses the piece as a whole stream (its last block final); for a piece
// that is not last, zlib's inflate (Z_BLOCK, which stops at every block boundary) finds where
// that final block's header lies and where the data ends, the BFINAL bit is cleared, and an
// empty stored block (what zlib's sync flush writes) brings the stream to a byte boundary.
// Inflating costs a fraction of what compressing with zlib itself would.
std::vector<unsigned char> deflate_piece(libdeflate_compressor* c, const unsigned char* in,
                                         size_t n, bool last) {
  std::vector<unsigned char> out(libdeflate_deflate_compress_bound(c, n) + 5);
  const size_t deflated = libdeflate_deflate_compress(c, in, n, out.data(), out.size() - 5);
  if (deflated == 0)
    throw std::runtime_error("deflate: the output bound was too small");
  out.resize(deflated);
  if (last)
    return out;
  z_stream s{};
  if (inflateInit2(&s, -15) != Z_OK)
    throw std::runtime_error("inflate: cannot make a decompressor");
  std::vector<unsigned char> scratch(std::max<size_t>(n, 1));
  s.next_in = out.data();
  s.avail_in = static_cast<uInt>(out.size());
  s.next_out = scratch.data();
  s.avail_out = static_cast<uInt>(scratch.size());
  // After each block inflate stops with data_type bit 128 set; bit 64 says the block just ended
  // was the final one. The bit position is the bytes taken less the unused bits of the last.
  uint64_t final_header_bit = 0, end_bit = 0;
  int rc;
  while ((rc = inflate(&s, Z_BLOCK)) == Z_OK) {
    if ((s.data_type & 128) == 0)
      continue;
    const uint64_t bit = uint64_t(s.total_in) * 8 - static_cast<unsigned>(s.data_type & 7);
    if (s.data_type & 64)
      end_bit = bit;
    else
      final_header_bit = bit;
  }
  const bool whole = rc == Z_STREAM_END && s.total_out == n && s.total_in == out.size() &&
                     end_bit > out.size() * 8 - 8;
  inflateEnd(&s);
  if (!whole)
    throw std::runtime_error("deflate: a compressed piece did not decode to its input");
  const unsigned unused_bits = static_cast<unsigned>(out.size() * 8 - end_bit);
  out[final_header_bit / 8] &= static_cast<unsigned char>(~(1u << (final_header_bit % 8)));
  // The bits after the end are padding: zero them; three of them (BFINAL 0, BTYPE 00 stored)
  // start the empty stored block, or a new byte does when fewer remain.
  out.back() &= static_cast<unsigned char>((1u << (8 - unused_bits)) - 1);
  if (unused_bits < 3)
    out.push_back(0);
  for (const unsigned char b : {0x00, 0x00, 0xFF, 0xFF})  // LEN 0, NLEN
    out.push_back(b);
  return out;
}

// At the fast default level, a chunk that deflate would shrink by less than a sixth is stored:
// float32 outputs of noisy volumes (echo speckle) shrink by about an eighth at 5 times the time of
// storing them, so compressing them saves less I/O time than it costs. The estimate deflates the
// chunk's first 64 KiB.
using Compressor = std::unique_ptr<libdeflate_compressor, CompressorDeleter>;

Compressor make_compressor(int level) {
  Compressor c(libdeflate_alloc_compressor(level));
  if (!c)
    throw std::runtime_error("deflate: cannot make a compressor");
  return c;
}

int chunk_level(int level, const unsigned char* in, size_t n) {
  if (level != kDefaultCompressionLevel || n == 0)
    return level;
  const size_t probe = std::min<size_t>(n, size_t{64} << 10);
  const Compressor c = make_compressor(level);
  std::vector<unsigned char> out(libdeflate_deflate_compress_bound(c.get(), probe));
  const size_t deflated = libdeflate_deflate_compress(c.get(), in, probe, out.data(), out.size());
  return deflated == 0 || 6 * deflated > 5 * probe ? 0 : level;
}

std::vector<unsigned char> zlib_header(int level) {
  // FLEVEL as zlib sets it; 0x78 0x01 / 0x5E / 0x9C / 0xDA each pass the header check.
  const unsigned char flg = level <= 1 ? 0x01 : level <= 5 ? 0x5E : level == 6 ? 0x9C : 0xDA;
  return {0x78, flg};
}

}  // namespace

int worker_threads(int requested) {
  if (requested > 0)
    return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

uint64_t CompressedStream::size() const {
  uint64_t n = 0;
  for (const auto& p : pieces)
    n += p.size();
  return n;
}

CompressedStream compress_parallel(const void* data, size_t size, DeflateContainer container,
                                   int level, int threads, size_t chunk_bytes,
                                   const std::function<void(double)>& progress) {
  if (level < 0 || level > kMaxCompressionLevel)
    throw std::runtime_error("compression level " + std::to_string(level) + " is not in 0..9");
  chunk_bytes = std::max<size_t>(chunk_bytes, 1);
  const auto* in = static_cast<const unsigned char*>(data);
  const size_t chunks = size == 0 ? 1 : (size + chunk_bytes - 1) / chunk_bytes;
  auto chunk_length = [&](size_t i) { return std::min(chunk_bytes, size - i * chunk_bytes); };
  const int workers = worker_threads(threads);
  CompressedStream result;
  std::atomic<size_t> done{0};
  auto chunk_done = [&] {
    const size_t n = ++done;
    if (progress)
      progress(static_cast<double>(n) / static_cast<double>(chunks));
  };

  if (container == DeflateContainer::Gzip) {
    result.pieces.resize(chunks);
    // One compressor per chunk keeps the work independent; making one costs far less than a
    // chunk's compression.
    run_parallel(chunks, workers, [&](size_t i) {
      const size_t n = size == 0 ? 0 : chunk_length(i);
      const Compressor c = make_compressor(chunk_level(level, in + i * chunk_bytes, n));
      result.pieces[i] = gzip_member(c.get(), in + i * chunk_bytes, n);
      chunk_done();
    });
    return result;
  }

  result.pieces.resize(chunks + 2);
  result.pieces.front() = zlib_header(level);
  std::vector<uint32_t> adlers(chunks);
  run_parallel(chunks, workers, [&](size_t i) {
    const size_t n = size == 0 ? 0 : chunk_length(i);
    const Compressor c = make_compressor(chunk_level(level, in + i * chunk_bytes, n));
    result.pieces[i + 1] = deflate_piece(c.get(), in + i * chunk_bytes, n, i + 1 == chunks);
    adlers[i] = libdeflate_adler32(1, in + i * chunk_bytes, n);
    chunk_done();
  });
  uLong adler = adlers[0];
  for (size_t i = 1; i < chunks; ++i)
    adler = adler32_combine64(adler, adlers[i], static_cast<z_off64_t>(chunk_length(i)));
  std::vector<unsigned char> trailer(4);
  for (int b = 0; b < 4; ++b)  // big-endian, as RFC 1950 stores it
    trailer[b] = static_cast<unsigned char>(adler >> (24 - 8 * b));
  result.pieces.back() = std::move(trailer);
  return result;
}

std::vector<GzipMember> find_gzip_members(const unsigned char* data, size_t size) {
  std::vector<GzipMember> members;
  size_t at = 0;
  while (at < size) {
    const unsigned char* h = data + at;
    const bool ours = size - at >= kGzipHeaderBytes + kGzipTrailerBytes && h[0] == 0x1f &&
                      h[1] == 0x8b && h[2] == 8 && h[3] == 4 && h[10] == 8 && h[11] == 0 &&
                      h[12] == 'N' && h[13] == 'D' && h[14] == 4 && h[15] == 0;
    if (!ours)
      return {};
    const size_t length = get_le32(h + 16);
    if (length < kGzipHeaderBytes + kGzipTrailerBytes || length > size - at)
      return {};
    members.push_back({at, length, get_le32(h + length - 4)});
    at += length;
  }
  return members;
}

uint64_t gzip_length_up_to(const unsigned char* data, size_t size, uint64_t enough) {
  const auto members = find_gzip_members(data, size);
  if (!members.empty()) {
    uint64_t total = 0;
    for (const auto& m : members)
      total += m.uncompressed;
    return total;
  }
  std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(libdeflate_alloc_decompressor());
  if (!d)
    throw std::runtime_error("inflate: cannot make a decompressor");
  // Inflated in pieces into one scratch buffer that is overwritten: only the count matters.
  std::vector<unsigned char> scratch(static_cast<size_t>(std::min<uint64_t>(enough, 1u << 30)));
  uint64_t produced = 0;
  size_t at = 0;
  while (produced < enough && at < size) {
    size_t in_used = 0, out_used = 0;
    const auto rc = libdeflate_gzip_decompress_ex(d.get(), data + at, size - at, scratch.data(),
                                                  scratch.size(), &in_used, &out_used);
    if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) {
      // The member is longer than the scratch buffer: count it with zlib in pieces.
      z_stream s{};
      if (inflateInit2(&s, 15 + 16) != Z_OK)
        throw std::runtime_error("inflate: cannot make a decompressor");
      s.next_in = const_cast<unsigned char*>(data + at);
      s.avail_in = static_cast<uInt>(std::min<size_t>(size - at, 1u << 30));
      int z = Z_OK;
      while (z == Z_OK && produced < enough) {
        s.next_out = scratch.data();
        s.avail_out = static_cast<uInt>(scratch.size());
        z = inflate(&s, Z_NO_FLUSH);
        produced += scratch.size() - s.avail_out;
        if (z == Z_OK && s.avail_in == 0 && at + s.total_in < size) {
          s.avail_in = static_cast<uInt>(std::min<size_t>(size - at - s.total_in, 1u << 30));
        }
      }
      at += s.total_in;
      inflateEnd(&s);
      if (z != Z_STREAM_END)
        break;
      continue;
    }
    if (rc != LIBDEFLATE_SUCCESS)
      break;
    produced += out_used;
    at += in_used;
  }
  return std::min(produced, enough);
}

bool inflate_gzip_members(const unsigned char* data, const std::vector<GzipMember>& members,
                          unsigned char* out, int threads, std::string& why) {
  std::vector<size_t> out_offset(members.size() + 1, 0);
  for (size_t i = 0; i < members.size(); ++i)
    out_offset[i + 1] = out_offset[i] + members[i].uncompressed;
  std::atomic<bool> ok{true};
  run_parallel(members.size(), worker_threads(threads), [&](size_t i) {
    if (!ok)
      return;
    std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(
        libdeflate_alloc_decompressor());
    size_t produced = 0;
    const auto rc =
        d ? libdeflate_gzip_decompress(d.get(), data + members[i].offset, members[i].length,
                                       out + out_offset[i], members[i].uncompressed, &produced)
          : LIBDEFLATE_INSUFFICIENT_SPACE;
    if (rc != LIBDEFLATE_SUCCESS || produced != members[i].uncompressed)
      ok = false;
  });
  if (!ok)
    why = "a compressed block is damaged (CRC or length mismatch)";
  return ok;
}

ExactInflate inflate_gzip_exactly(const unsigned char* data, size_t size, unsigned char* out,
                                  size_t out_size, int threads) {
  const auto members = find_gzip_members(data, size);
  if (!members.empty()) {
    uint64_t total = 0;
    for (const auto& m : members)
      total += m.uncompressed;
    if (total != out_size)
      return ExactInflate::Other;
    std::string why;
    return inflate_gzip_members(data, members, out, threads, why) ? ExactInflate::Done
                                                                  : ExactInflate::Damaged;
  }
  std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(libdeflate_alloc_decompressor());
  if (!d)
    return ExactInflate::Other;
  size_t at = 0, produced = 0;
  while (at < size) {
    size_t in_used = 0, out_used = 0;
    // Bounded by what is left of `out`: a member longer than that fails here, without writing
    // past the buffer.
    if (libdeflate_gzip_decompress_ex(d.get(), data + at, size - at, out + produced,
                                      out_size - produced, &in_used,
                                      &out_used) != LIBDEFLATE_SUCCESS) {
      return ExactInflate::Other;
    }
    at += in_used;
    produced += out_used;
  }
  return produced == out_size ? ExactInflate::Done : ExactInflate::Other;
}

bool inflate_zlib_exactly(const unsigned char* data, size_t size, unsigned char* out,
                          size_t out_size) {
  std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(libdeflate_alloc_decompressor());
  if (!d)
    throw std::bad_alloc();
  size_t consumed = 0;
  return libdeflate_zlib_decompress_ex(d.get(), data, size, out, out_size, &consumed, nullptr) ==
         LIBDEFLATE_SUCCESS;
}

}  // namespace ndconv::io
