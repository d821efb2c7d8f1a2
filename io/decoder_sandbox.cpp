#include "io/decoder_sandbox.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <thread>

#include "io/image.h"
#include "io/itk_support.h"
#include "io/memory_check.h"

#include "itkImageIOFactory.h"

namespace ndconv::io {

namespace {

bool looks_like_2d_format(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char m[4] = {0, 0, 0, 0};
  f.read(reinterpret_cast<char*>(m), 4);
  const bool png = m[0] == 0x89 && m[1] == 'P' && m[2] == 'N' && m[3] == 'G';
  const bool jpeg = m[0] == 0xFF && m[1] == 0xD8;
  const bool tiff = (m[0] == 'I' && m[1] == 'I') || (m[0] == 'M' && m[1] == 'M');
  const bool bmp = m[0] == 'B' && m[1] == 'M';
  return png || jpeg || tiff || bmp;
}

double decoder_time_limit_seconds(const std::string& path) {
  struct stat st;
  const double mib =
      ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) / (1 << 20) : 0;
  return 5.0 + 2.0 * mib;
}

}  // namespace

void check_decoder_survives(const std::string& path) {
  if (!looks_like_2d_format(path))
    return;
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0)
    return;  // cannot sandbox: decode directly
  if (child == 0) {
    // Dies with ndconv: a Ctrl-C or kill that ends the parent must not leave a decoder spinning.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(1);
    int code = 1;
    try {
      itk::ImageIOBase::Pointer io =
          itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::IOFileModeEnum::ReadMode);
      if (io) {
        io->SetFileName(path);
        io->ReadImageInformation();
        double values = 1;
        for (unsigned a = 0; a < io->GetNumberOfDimensions(); ++a)
          values *= static_cast<double>(io->GetDimensions(a));
        check_memory(path, values * io->GetNumberOfComponents(),
                     static_cast<int>(io->GetComponentSize()));
        std::vector<char> buffer(static_cast<size_t>(io->GetImageSizeInBytes()));
        io->Read(buffer.data());
        code = 0;
      }
    } catch (...) {
    }
    ::_exit(code);
  }
  // Polled rather than blocking in waitpid, so that the time limit holds and a signal handler
  // that ends the process is never held up here.
  const double limit = decoder_time_limit_seconds(path);
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR))
      break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit) {
      ::kill(child, SIGKILL);
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      char text[160];
      std::snprintf(text, sizeof text,
                    ": corrupt image (ITK's decoder for this format did not finish within %.0f s; "
                    "a looping or damaged file)",
                    limit);
      throw IoError(path + text);
    }
    ::usleep(2000);
  }
  if (WIFSIGNALED(status)) {
    throw IoError(path + ": corrupt image (ITK's decoder for this format failed on it: " +
                  strsignal(WTERMSIG(status)) + ")");
  }
}

}  // namespace ndconv::io
