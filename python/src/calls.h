// What every binding shares: the run options from Python's arguments, and running engine work with
// the GIL released, Ctrl-C answered and engine errors turned into Python exceptions.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <functional>
#include <string>

#include "arrays.h"
#include "ndconv/types.h"

namespace ndconv::python {

/// The arguments every filter takes, as the package passes them.
struct CallSettings {
  std::string boundary = "replicate";  ///< an engine boundary name (to_string(Boundary))
  double boundary_value = 0;           ///< the constant boundary's value
  std::string device = "auto";         ///< "auto", "cpu", "cuda" or "cuda:N"
  int threads = 0;                     ///< CPU threads, 0 = all
  uintptr_t stream = 0;                ///< the caller's CUDA stream (device arrays); 0 = default
  bool want_report = true;  ///< the device-address entries return the report only when asked
};

/// Engine options from `settings` for an array at `where` (a device array runs on its own GPU
/// and its device text must allow that). Throws ValueError for unknown names.
Options options_of(const CallSettings& settings, const Placement& where);

/// Runs `work` with the GIL released. Options::progress (set here) checks for Ctrl-C between
/// pieces of work; an interrupted run raises KeyboardInterrupt. Engine errors become ValueError
/// (a request the engine refuses), MemoryError or RuntimeError (a CUDA or other failure).
void run_released(Options& options, const std::function<void()>& work);

/// A report as a Python dict: backend, reason, device, outputs per thread, threads, seconds.
nb::dict report_dict(const RunReport& report);

}  // namespace ndconv::python
