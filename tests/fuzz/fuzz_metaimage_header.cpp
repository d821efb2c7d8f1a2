// libFuzzer target: ndconv's MetaImage header parser and data-file policy (check_header in
// io/header_check.h: keys, LIST and slice patterns, compressed sizes, the header it hands ITK).
// The first byte picks .mha or .mhd.
#include "fuzz_files.h"
#include "io/header_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ndconv;
  if (size < 1)
    return 0;
  const std::string path = fuzz::write_input(data[0] % 2 ? "in.mhd" : "in.mha", data + 1, size - 1);
  fuzz::expect_answer([&] { (void)io::check_header(path); });
  return 0;
}
