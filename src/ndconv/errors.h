// Exceptions thrown by the engine. Library code never calls exit(): every failure, a CUDA error
// included, becomes one of these, so that the command line can print one line and the ITK layer
// can turn it into an itk::ExceptionObject.
#pragma once

#include <stdexcept>
#include <string>

namespace ndconv {

/// Base of every ndconv error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The caller asked for something the engine does not do (bad extents, filter too large, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// A CUDA runtime call failed; the message names the call, the file and the line.
class CudaError : public Error {
 public:
  CudaError(const std::string& call, int code, const std::string& code_name,
            const std::string& description, const char* file, int line)
      : Error(call + " failed: " + code_name + " (" + std::to_string(code) + "): " + description +
              " at " + file + ":" + std::to_string(line)),
        code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// The progress callback asked the engine to stop.
class Aborted : public Error {
 public:
  Aborted() : Error("aborted by the caller") {}
};

}  // namespace ndconv
