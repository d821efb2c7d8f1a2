// libFuzzer target: ndconv's NRRD header parser and data-file policy (io/nrrd_header.h), the
// Slicer sequence fields (io/nrrd_sequence.h) and the header it hands ITK (io/itk_header_file.h).
// The first byte picks the name: attached (.nrrd), detached (.nhdr) or a sequence (.seq.nrrd).
#include "fuzz_files.h"
#include "io/itk_header_file.h"
#include "io/nrrd_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ndconv;
  if (size < 1)
    return 0;
  static const char* const names[] = {"in.nrrd", "in.nhdr", "in.seq.nrrd"};
  const std::string path = fuzz::write_input(names[data[0] % 3], data + 1, size - 1);
  fuzz::expect_answer([&] {
    const io::NrrdHeader h = io::check_nrrd_header(path);
    const io::ItkHeaderFile file(h.itk_header, path);
    (void)file.text();
  });
  return 0;
}
