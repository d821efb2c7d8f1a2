#include "calls.h"

#include <Python.h>
#include <nanobind/stl/string.h>

#include <exception>
#include <new>

#include "ndconv/engine.h"
#include "ndconv/errors.h"
#include "ndconv/plan.h"

namespace ndconv::python {

namespace {

Boundary parse_boundary(const std::string& name) {
  std::string names;
  for (std::size_t i = 0; i < kBoundaryCount; ++i) {
    const auto b = static_cast<Boundary>(i);
    if (name == to_string(b))
      return b;
    names += (i ? ", " : "") + std::string(to_string(b));
  }
  throw nb::value_error(("unknown boundary '" + name + "'; the engine knows " + names).c_str());
}

}  // namespace

Options options_of(const CallSettings& settings, const Placement& where) {
  Options o;
  o.operation = Operation::Correlation;
  o.boundary = parse_boundary(settings.boundary);
  o.boundary_value = static_cast<float>(settings.boundary_value);
  o.threads = settings.threads;
  DeviceWish wish;
  try {
    wish = parse_device(settings.device);
  } catch (const InvalidArgument& e) {
    throw nb::value_error(e.what());
  }
  o.backend = wish.backend;
  o.cuda_device = wish.cuda_device;
  if (!where.on_gpu && (!wish.cuda_devices.empty() || wish.all_cuda_devices)) {
    try {
      o.cuda_devices = cuda_devices_of(wish);  // a host array's output in slabs over the GPUs
    } catch (const InvalidArgument& e) {
      throw nb::value_error(e.what());
    }
  }
  if (where.on_gpu) {
    if (wish.backend == Backend::Cpu)
      throw nb::value_error(
          "device='cpu' was asked for an array in GPU memory; move it to the "
          "host first (e.g. cupy.asnumpy, tensor.cpu())");
    if (settings.device != "auto" && settings.device != "cuda" && wish.cuda_device != where.device)
      throw nb::value_error(("device='" + settings.device + "' was asked for an array on GPU " +
                             std::to_string(where.device))
                                .c_str());
    o.backend = Backend::Cuda;
    o.cuda_device = where.device;
  }
  return o;
}

void run_released(Options& options, const std::function<void()>& work) {
  // Ctrl-C sets a flag that Python's handler only sees when the main thread runs Python code;
  // the engine's progress calls give it that chance between pieces of work.
  bool interrupted = false;
  options.progress = [&interrupted](double) {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      interrupted = true;
      return false;
    }
    return true;
  };
  std::exception_ptr failure;
  {
    nb::gil_scoped_release released;
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  if (!failure)
    return;
  if (interrupted && PyErr_Occurred())
    throw nb::python_error();
  try {
    std::rethrow_exception(failure);
  } catch (const InvalidArgument& e) {
    throw nb::value_error(e.what());
  } catch (const std::bad_alloc&) {
    throw;  // nanobind raises MemoryError
  } catch (const nb::python_error&) {
    throw;
  } catch (const nb::builtin_exception&) {
    throw;
  } catch (const std::exception& e) {
    // CudaError, Aborted without a pending signal, and failures of the machine.
    PyErr_SetString(PyExc_RuntimeError, e.what());
    throw nb::python_error();
  }
}

nb::dict report_dict(const RunReport& r) {
  nb::dict d;
  d["backend"] = to_string(r.backend);
  d["backend_reason"] = r.backend_reason;
  d["device_name"] = r.device_name;
  d["outputs_per_thread"] = r.outputs_per_thread;
  d["outputs_per_thread_reason"] = r.outputs_per_thread_reason;
  d["threads"] = r.threads;
  d["slabs"] = r.slabs;
  d["seconds_total"] = r.seconds_total;
  d["seconds_compute"] = r.seconds_compute;
  return d;
}

}  // namespace ndconv::python
