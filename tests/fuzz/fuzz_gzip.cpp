// libFuzzer target: ndconv's gzip and zlib readers (io/parallel_deflate.h): the members of its
// parallel compressor found by their "ND" subfield, the length count, and the exact inflation
// into a buffer of the size the first two bytes give (at most 64 KiB).
#include <vector>

#include "fuzz_files.h"
#include "io/parallel_deflate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ndconv;
  if (size < 2)
    return 0;
  const size_t out_size = static_cast<size_t>(data[0]) << 8 | data[1];
  data += 2;
  size -= 2;
  (void)io::find_gzip_members(data, size);
  (void)io::gzip_length_up_to(data, size, 1 << 16);
  std::vector<unsigned char> out(out_size);
  (void)io::inflate_gzip_exactly(data, size, out.data(), out.size(), 1);
  (void)io::inflate_zlib_exactly(data, size, out.data(), out.size());
  return 0;
}
