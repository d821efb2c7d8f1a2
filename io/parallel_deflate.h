// Deflate compression on all cores, producing standard containers that any single-threaded
// reader (zlib, gzip -t, ITK, nibabel) accepts:
//  - gzip: the input cut into chunks, each its own gzip member (RFC 1952 allows a file of several
//    members; zlib's gzread, gzip and Python's gzip read them in sequence). Each member carries an
//    FEXTRA subfield "ND" holding the member's own length, so that a reader can find the members
//    without inflating and decode them in parallel (as BGZF does with its "BC" subfield).
//  - zlib: one zlib stream (what MetaImage's CompressedData needs): the chunks are compressed
//    (libdeflate) as raw-deflate pieces that end on a byte boundary, only the last one final, as
//    pigz does, behind one zlib header and one Adler-32 combined from the chunks'.
// ITK-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/parallel_for.h"

namespace ndconv::io {

/// The compression level used when the user gives none: the fastest level that still compresses
/// (deflate level 1).
constexpr int kDefaultCompressionLevel = 1;
/// Levels accepted by --compression: 0 (stored, no compression) to 9 (smallest), zlib's scale.
constexpr int kMaxCompressionLevel = 9;

enum class DeflateContainer { Gzip, Zlib };

/// The unit of parallel compression: large enough that splitting costs almost no ratio, small
/// enough that a 100 MB volume keeps 16 cores busy.
constexpr size_t kDeflateChunkBytes = size_t(1) << 20;

/// The compressed chunks compress_parallel holds at once for `chunks` chunks on `workers` threads:
/// the workers run at most this many chunks ahead of the sink (the memory estimate counts them).
inline size_t chunks_in_flight(size_t workers, size_t chunks) {
  return chunks < 2 * workers + 2 ? chunks : 2 * workers + 2;
}

/// Receives a compressed stream's bytes, in order; the bytes are valid during the call only.
using StreamSink = std::function<void(const unsigned char* data, size_t size)>;

/// Compresses `size` bytes at `data` into `container` at `level` (0..9) on `threads` threads
/// (0: all hardware threads; at the default level, chunks that deflate would shrink by less than a
/// sixth are stored), handing the stream to `sink` on the calling thread while the workers
/// compress the chunks after it: the caller writes the file as it is made, and the workers run at
/// most a few chunks per thread ahead, reusing their buffers. `chunk_bytes` is the unit of
/// parallel work (tests use small chunks to get many). Returns the stream's length. Throws
/// std::runtime_error when a compressor cannot be made, and whatever `sink` throws, after every
/// worker has stopped. `progress` (may be empty) is called on the calling thread with the
/// fraction of chunks handed to `sink`.
uint64_t compress_parallel(const void* data, size_t size, DeflateContainer container, int level,
                           const StreamSink& sink, int threads = 0,
                           size_t chunk_bytes = kDeflateChunkBytes,
                           const std::function<void(double)>& progress = {});

/// An upper bound of compress_parallel's length for `size` bytes with these settings (for a
/// header that names the length and is written before the stream).
uint64_t compressed_bound(size_t size, DeflateContainer container, int level,
                          size_t chunk_bytes = kDeflateChunkBytes);

/// The members of a gzip file written by compress_parallel (found through their "ND" subfield):
/// offset and length of each member. Empty when the file is not made of such members (e.g. a
/// gzip file from another program), so that the caller falls back to a sequential reader.
struct GzipMember {
  size_t offset = 0, length = 0;
  uint32_t uncompressed = 0;  ///< ISIZE: the member's uncompressed length
};
std::vector<GzipMember> find_gzip_members(const unsigned char* data, size_t size);

/// Inflates the members found by find_gzip_members into `out` (which must hold the sum of their
/// ISIZE) on `threads` threads, checking each member's CRC-32 and length. Returns false with
/// `why` set when a member is damaged.
bool inflate_gzip_members(const unsigned char* data, const std::vector<GzipMember>& members,
                          unsigned char* out, int threads, std::string& why);

/// How inflate_gzip_exactly ended.
enum class ExactInflate {
  Done,
  Other,    ///< not exactly `out_size` bytes, ends early or does not inflate: read it another way
  Damaged,  ///< a member of compress_parallel's fails its CRC or length check
};

/// Inflates the gzip file `data` (`size` bytes) into `out`, which it must fill exactly: the members
/// of a file from compress_parallel on `threads` threads (0: all hardware threads), any other gzip
/// file member after member in single libdeflate calls (each member's CRC and length checked).
/// `out` is undefined unless Done; a file that is not exactly that long is never written past.
ExactInflate inflate_gzip_exactly(const unsigned char* data, size_t size, unsigned char* out,
                                  size_t out_size, int threads);

/// Inflates the zlib stream at the start of `data` (`size` bytes; bytes after the stream are not
/// read) into `out`, which it must fill exactly, its Adler-32 checked (libdeflate). False when it
/// does not inflate to exactly `out_size` bytes; `out` is then undefined.
bool inflate_zlib_exactly(const unsigned char* data, size_t size, unsigned char* out,
                          size_t out_size);

/// How many bytes a gzip file inflates to, counted up to `enough` (a length check that needs
/// no buffer of the whole data): the bytes its members inflate to (libdeflate, member after
/// member, each member's CRC and length field checked) until `enough` are seen or the data ends
/// or is damaged. No length field is taken on trust, not even those of compress_parallel.
uint64_t gzip_length_up_to(const unsigned char* data, size_t size, uint64_t enough);

}  // namespace ndconv::io
