// GDCM (Debian's build keeps its assertions) aborts or loops on some damaged files. So a DICOM
// input (a file, or a series) is read once in a forked child first, bounded in time; only if that
// child survives does this process read it. The reading itself is the caller's (a callback), so
// that this sandbox depends on neither the file reader (itk_read.h) nor the series reader
// (dicom_series.h). ITK-free. Internal to ndconv_io.
#pragma once

#include <functional>
#include <string>

namespace ndconv::io {

/// True for a file with DICOM's Part 10 marker ("DICM" at byte 128). Call only on a regular file.
bool is_dicom_file(const std::string& path);

/// Runs `read` (which reads `input` for real) in a forked child, bounded to 60 s plus 1 s per MB of
/// `bytes` (the input's files); throws IoError naming the file the child was reading when it died
/// or ran out of time, or Aborted when it was interrupted. Does nothing inside that child, nor
/// while a DicomSandboxPassed lives.
void check_dicom_survives(const std::string& input, double bytes,
                          const std::function<void()>& read);

/// In the sandbox's child, names the file it starts reading, so that the parent can name the one
/// that killed it; does nothing elsewhere.
void report_dicom_progress(const std::string& file);

/// While one lives, check_dicom_survives does nothing: a series whose child has read it through
/// is read by the parent without one child per slice. ndconv_io reads on one thread.
class DicomSandboxPassed {
 public:
  DicomSandboxPassed();
  ~DicomSandboxPassed();
  DicomSandboxPassed(const DicomSandboxPassed&) = delete;
  DicomSandboxPassed& operator=(const DicomSandboxPassed&) = delete;

 private:
  bool saved_;
};

}  // namespace ndconv::io
