// libFuzzer target: ndconv's NIfTI-1 header checks (check_header in io/header_check.h) and its
// NIfTI-2 reader (io/nifti2_reader.h), header and pixels, plain or gzip (the first byte picks
// .nii or .nii.gz; a gzip input is inflated by znzlib as the readers do).
#include "fuzz_files.h"
#include "io/header_check.h"
#include "io/nifti2_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ndconv;
  if (size < 1)
    return 0;
  const std::string path =
      fuzz::write_input(data[0] % 2 ? "in.nii.gz" : "in.nii", data + 1, size - 1);
  fuzz::expect_answer([&] { (void)io::check_header(path); });
  fuzz::expect_answer([&] {
    if (io::is_nifti2(path)) {
      (void)io::read_nifti2(path, false);
      (void)io::read_nifti2(path, true);
    }
  });
  return 0;
}
