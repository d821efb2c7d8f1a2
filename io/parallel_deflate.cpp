#include "io/parallel_deflate.h"

#include "io/parallel_for.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
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
// A stored deflate block: 5 bytes (BFINAL and BTYPE 00 padded to a byte, LEN, NLEN) and up to
// 65535 bytes as they are.
constexpr size_t kStoredBlockBytes = 65535;

size_t stored_bound(size_t n) {
  return n + 5 * std::max<size_t>(1, (n + kStoredBlockBytes - 1) / kStoredBlockBytes);
}

// `n` bytes as stored blocks from a byte boundary to a byte boundary, the last block final when
// `last`; returns the bytes written at `out` (stored_bound(n) at most).
size_t stored_blocks(const unsigned char* in, size_t n, bool last, unsigned char* out) {
  unsigned char* o = out;
  size_t at = 0;
  do {
    const size_t len = std::min(n - at, kStoredBlockBytes);
    *o++ = last && at + len == n ? 1 : 0;
    const unsigned nlen = ~static_cast<unsigned>(len) & 0xFFFF;
    *o++ = static_cast<unsigned char>(len);
    *o++ = static_cast<unsigned char>(len >> 8);
    *o++ = static_cast<unsigned char>(nlen);
    *o++ = static_cast<unsigned char>(nlen >> 8);
    if (len > 0)
      std::memcpy(o, in + at, len);
    o += len;
    at += len;
  } while (at < n);
  return static_cast<size_t>(o - out);
}

using Compressor = std::unique_ptr<libdeflate_compressor, CompressorDeleter>;

Compressor make_compressor(int level) {
  Compressor c(libdeflate_alloc_compressor(level));
  if (!c)
    throw std::runtime_error("deflate: cannot make a compressor");
  return c;
}

// What one worker thread keeps from chunk to chunk: a compressor per level it used and the
// buffers of the default level's estimate and of the pieces' check, so that no chunk allocates.
struct WorkerState {
  Compressor compressors[kMaxCompressionLevel + 1];
  std::vector<unsigned char> scratch;
  libdeflate_compressor* compressor(int level) {
    if (!compressors[level])
      compressors[level] = make_compressor(level);
    return compressors[level].get();
  }
  unsigned char* scratch_of(size_t n) {
    if (scratch.size() < n)
      scratch.resize(n);
    return scratch.data();
  }
};

// At the fast default level, a chunk that deflate would shrink by less than a sixth is stored:
// float32 outputs of noisy volumes (echo speckle) shrink by about an eighth at 5 times the time of
// storing them, so compressing them saves less I/O time than it costs. The estimate deflates the
// chunk's first 64 KiB.
int chunk_level(WorkerState& w, int level, const unsigned char* in, size_t n) {
  if (level != kDefaultCompressionLevel || n == 0)
    return level;
  const size_t probe = std::min<size_t>(n, size_t{64} << 10);
  libdeflate_compressor* c = w.compressor(level);
  const size_t bound = libdeflate_deflate_compress_bound(c, probe);
  const size_t deflated = libdeflate_deflate_compress(c, in, probe, w.scratch_of(bound), bound);
  return deflated == 0 || 6 * deflated > 5 * probe ? 0 : level;
}

// The deflate data of `n` bytes at `level` from a byte boundary: the stream's end when `last`,
// else a piece that ends on a byte boundary and lets the stream go on. Returns the bytes written
// at `out`, which holds piece_bound(n) bytes.
//
// Stored blocks are written as they are. A compressed piece is compressed by libdeflate as a
// whole stream (its last block final); for a piece that is not last, zlib's inflate (Z_BLOCK,
// which stops at every block boundary) finds where that final block's header lies and where the
// data ends, the BFINAL bit is cleared, and an empty stored block (what zlib's sync flush
// writes) brings the stream to a byte boundary, as pigz does. Inflating costs a fraction of what
// compressing with zlib itself would.
size_t deflate_piece(WorkerState& w, int level, const unsigned char* in, size_t n, bool last,
                     unsigned char* out) {
  if (level == 0)
    return stored_blocks(in, n, last, out);
  libdeflate_compressor* c = w.compressor(level);
  const size_t deflated =
      libdeflate_deflate_compress(c, in, n, out, libdeflate_deflate_compress_bound(c, n));
  if (deflated == 0)
    throw std::runtime_error("deflate: the output bound was too small");
  if (last)
    return deflated;
  z_stream s{};
  if (inflateInit2(&s, -15) != Z_OK)
    throw std::runtime_error("inflate: cannot make a decompressor");
  s.next_in = out;
  s.avail_in = static_cast<uInt>(deflated);
  s.next_out = w.scratch_of(std::max<size_t>(n, 1));
  s.avail_out = static_cast<uInt>(std::max<size_t>(n, 1));
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
  const bool whole = rc == Z_STREAM_END && s.total_out == n && s.total_in == deflated &&
                     end_bit > deflated * 8 - 8;
  inflateEnd(&s);
  if (!whole)
    throw std::runtime_error("deflate: a compressed piece did not decode to its input");
  const unsigned unused_bits = static_cast<unsigned>(deflated * 8 - end_bit);
  out[final_header_bit / 8] &= static_cast<unsigned char>(~(1u << (final_header_bit % 8)));
  // The bits after the end are padding: zero them; three of them (BFINAL 0, BTYPE 00 stored)
  // start the empty stored block, or a new byte does when fewer remain.
  size_t size = deflated;
  out[size - 1] &= static_cast<unsigned char>((1u << (8 - unused_bits)) - 1);
  if (unused_bits < 3)
    out[size++] = 0;
  for (const unsigned char b : {0x00, 0x00, 0xFF, 0xFF})  // LEN 0, NLEN
    out[size++] = b;
  return size;
}

// Bytes a chunk's piece may take: stored or compressed, with the empty stored block after a
// compressed piece and, for gzip, the member's header and trailer.
size_t piece_bound(WorkerState& w, int level, DeflateContainer container, size_t n) {
  size_t bound = stored_bound(n);
  if (level > 0)
    bound = std::max(bound, libdeflate_deflate_compress_bound(w.compressor(level), n) + 5);
  return bound + (container == DeflateContainer::Gzip ? kGzipHeaderBytes + kGzipTrailerBytes : 0);
}

// Chunk `n` bytes at `in` as its piece of the container at `out` (piece_bound bytes); `check`
// receives the chunk's Adler-32 (zlib, combined by the caller) or nothing (gzip: each member
// carries its CRC-32).
size_t encode_chunk(WorkerState& w, int level, DeflateContainer container, const unsigned char* in,
                    size_t n, bool last, unsigned char* out, uint32_t& check) {
  const int chosen = chunk_level(w, level, in, n);
  if (container == DeflateContainer::Zlib) {
    check = static_cast<uint32_t>(libdeflate_adler32(1, in, n));
    return deflate_piece(w, chosen, in, n, last, out);
  }
  const unsigned char header[12] = {0x1f, 0x8b, 8, 4 /* FEXTRA */, 0, 0,
                                    0,    0,    0, 3 /* Unix */,   8, 0 /* XLEN */};
  std::copy(header, header + 12, out);
  out[12] = 'N';
  out[13] = 'D';
  out[14] = 4;
  out[15] = 0;
  const size_t deflated = deflate_piece(w, chosen, in, n, true, out + kGzipHeaderBytes);
  const size_t total = kGzipHeaderBytes + deflated + kGzipTrailerBytes;
  put_le32(out + 16, static_cast<uint32_t>(total));
  put_le32(out + kGzipHeaderBytes + deflated, libdeflate_crc32(0, in, n));
  put_le32(out + kGzipHeaderBytes + deflated + 4, static_cast<uint32_t>(n));
  check = 0;
  return total;
}

std::vector<unsigned char> zlib_header(int level) {
  // FLEVEL as zlib sets it; 0x78 0x01 / 0x5E / 0x9C / 0xDA each pass the header check.
  const unsigned char flg = level <= 1 ? 0x01 : level <= 5 ? 0x5E : level == 6 ? 0x9C : 0xDA;
  return {0x78, flg};
}

// The chunks of `size` bytes in `chunk_bytes` (at least 1; an empty input is one empty chunk).
size_t chunk_count(size_t size, size_t chunk_bytes) {
  return size == 0 ? 1 : (size + chunk_bytes - 1) / chunk_bytes;
}

void check_level(int level) {
  if (level < 0 || level > kMaxCompressionLevel)
    throw std::runtime_error("compression level " + std::to_string(level) + " is not in 0..9");
}

}  // namespace

int worker_threads(int requested) {
  if (requested > 0)
    return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

uint64_t compressed_bound(size_t size, DeflateContainer container, int level, size_t chunk_bytes) {
  check_level(level);
  chunk_bytes = std::max<size_t>(chunk_bytes, 1);
  WorkerState w;
  const size_t chunks = chunk_count(size, chunk_bytes);
  const size_t full = piece_bound(w, level, container, chunk_bytes);
  const size_t tail = size - (chunks - 1) * chunk_bytes;
  const uint64_t wrapper = container == DeflateContainer::Zlib ? 2 + 4 : 0;
  return wrapper + uint64_t(chunks - 1) * full + piece_bound(w, level, container, tail);
}

uint64_t compress_parallel(const void* data, size_t size, DeflateContainer container, int level,
                           const StreamSink& sink, int threads, size_t chunk_bytes,
                           const std::function<void(double)>& progress) {
  check_level(level);
  chunk_bytes = std::max<size_t>(chunk_bytes, 1);
  const auto* in = static_cast<const unsigned char*>(data);
  const size_t chunks = chunk_count(size, chunk_bytes);
  auto chunk_length = [&](size_t i) { return std::min(chunk_bytes, size - i * chunk_bytes); };
  const size_t workers = std::min<size_t>(static_cast<size_t>(worker_threads(threads)), chunks);
  // Chunk i is compressed into slot i % window once chunk i - window has gone to the sink, so the
  // workers run at most `window` chunks ahead of the sink and reuse the slots' memory.
  const size_t window = chunks_in_flight(workers, chunks);
  struct Slot {
    std::vector<unsigned char> bytes;
    size_t length = 0;
    uint32_t check = 0;
    bool ready = false;
  };
  std::vector<Slot> slots(window);

  uint64_t total = 0;
  uLong adler = 1;
  auto emit = [&](const unsigned char* p, size_t n) {
    sink(p, n);
    total += n;
  };
  if (container == DeflateContainer::Zlib) {
    const auto header = zlib_header(level);
    emit(header.data(), header.size());
  }
  auto emit_chunk = [&](size_t i, const Slot& slot) {
    emit(slot.bytes.data(), slot.length);
    if (container == DeflateContainer::Zlib)
      adler = i == 0
                  ? slot.check
                  : adler32_combine64(adler, slot.check, static_cast<z_off64_t>(chunk_length(i)));
    if (progress)
      progress(static_cast<double>(i + 1) / static_cast<double>(chunks));
  };
  auto encode = [&](WorkerState& w, size_t i, Slot& slot) {
    const size_t n = size == 0 ? 0 : chunk_length(i);
    const size_t bound = piece_bound(w, level, container, n);
    if (slot.bytes.size() < bound)
      slot.bytes.resize(bound);
    slot.length = encode_chunk(w, level, container, in + i * chunk_bytes, n, i + 1 == chunks,
                               slot.bytes.data(), slot.check);
  };

  if (workers <= 1) {
    WorkerState w;
    for (size_t i = 0; i < chunks; ++i) {
      encode(w, i, slots[0]);
      emit_chunk(i, slots[0]);
    }
  } else {
    std::mutex mutex;
    std::condition_variable chunk_ready, slot_free;
    size_t next = 0, emitted = 0;
    bool stop = false;
    std::exception_ptr failure;
    auto work = [&] {
      try {
        WorkerState w;
        std::unique_lock<std::mutex> lock(mutex);
        for (;;) {
          const size_t i = next++;
          if (i >= chunks)
            return;
          slot_free.wait(lock, [&] { return stop || i < emitted + window; });
          if (stop)
            return;
          Slot& slot = slots[i % window];
          lock.unlock();
          encode(w, i, slot);
          lock.lock();
          slot.ready = true;
          chunk_ready.notify_all();
        }
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!failure)
          failure = std::current_exception();
        stop = true;
        chunk_ready.notify_all();
        slot_free.notify_all();
      }
    };
    std::vector<std::thread> pool;
    auto stop_workers = [&] {
      {
        const std::lock_guard<std::mutex> lock(mutex);
        stop = true;
      }
      slot_free.notify_all();
      for (auto& t : pool)
        t.join();
    };
    try {
      for (size_t t = 0; t < workers; ++t)
        pool.emplace_back(work);
      for (size_t i = 0; i < chunks; ++i) {
        Slot& slot = slots[i % window];
        {
          std::unique_lock<std::mutex> lock(mutex);
          chunk_ready.wait(lock, [&] { return slot.ready || failure; });
          if (failure)
            break;
        }
        emit_chunk(i, slot);  // the slot is the sink's alone until it is marked free
        {
          const std::lock_guard<std::mutex> lock(mutex);
          slot.ready = false;
          emitted = i + 1;
        }
        slot_free.notify_all();
      }
    } catch (...) {
      stop_workers();
      throw;
    }
    stop_workers();
    if (failure)
      std::rethrow_exception(failure);
  }

  if (container == DeflateContainer::Zlib) {
    unsigned char trailer[4];
    for (int b = 0; b < 4; ++b)  // big-endian, as RFC 1950 stores it
      trailer[b] = static_cast<unsigned char>(adler >> (24 - 8 * b));
    emit(trailer, 4);
  }
  return total;
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
  // Every member is inflated, ndconv's own included: a length field (ISIZE) is a claim, which
  // libdeflate checks against the data with the member's CRC.
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
