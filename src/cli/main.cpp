// `ndconv`: the command line. Subcommands live one per file (smooth.cpp, convolve.cpp, info.cpp,
// convert.cpp; sweep and bench in perf_commands.cpp). Every failure ends here as one line on stderr
// and an exit code: 0 done, 2 the command line is wrong, 1 the work failed (a failed write to
// stdout or stderr included), 130 interrupted (Ctrl-C, SIGTERM). Nothing escapes main.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "io/image.h"
#include "ndconv/device.h"
#include "ndconv/engine.h"
#include "ndconv/plan.h"
#include "perf_commands.h"
#include "preview.h"
#include "signals.h"

namespace {

std::string version_text() {
  std::string s = std::string("ndconv ") + ndconv::version() + "\nITK " + ndconv::io::itk_version();
  const ndconv::CudaStatus cuda = ndconv::cuda_status(false);  // starts no GPU
  if (!cuda.compiled) {
    s += "\nCUDA: not compiled in (CPU only)";
  } else {
    auto v = [](int x) { return std::to_string(x / 1000) + "." + std::to_string(x % 1000 / 10); };
    s += "\nCUDA runtime " + v(cuda.runtime_version) +
         (cuda.driver_version ? ", driver " + v(cuda.driver_version) : std::string());
    if (cuda.devices.empty()) {
      s += "\nGPU: none (" + cuda.reason + ")";
    } else {
      for (const auto& d : cuda.devices) {
        s += "\nGPU " + std::to_string(d.index) + ": " + d.name + " (compute capability " +
             std::to_string(d.compute_capability_major) + "." +
             std::to_string(d.compute_capability_minor) + ", " +
             std::to_string(d.total_memory >> 20) + " MiB)";
      }
    }
  }
  return s;
}

int fail(int code, std::string message) {
  // One line whatever a hostile file put into the message (a path or header text quoted in it):
  // control characters are shown as '?'.
  for (char& c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  std::fprintf(stderr, "ndconv: error: %s\n", message.c_str());
  return code;
}

int run(int argc, char** argv) {
  CLI::App app{
      "ndconv: fast N-dimensional convolution of 2D, 3D and 4D medical images "
      "(GPU when available, else CPU)",
      "ndconv"};
  app.set_version_flag("--version", version_text,
                       "print ndconv, ITK and CUDA versions and the GPU");
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();
  ndconv::cli::add_smooth_command(app);
  ndconv::cli::add_convolve_command(app);
  ndconv::cli::add_filter_commands(app);
  ndconv::cli::add_kernel_command(app);
  ndconv::cli::add_info_command(app);
  ndconv::cli::add_adaptive_command(app);
  ndconv::cli::add_convert_command(app);
  ndconv::cli::add_perf_commands(app);
  ndconv::cli::add_serve_command(app);
  // CLI11 would take an unknown subcommand for a stray argument; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known)
      return fail(2, std::string("unknown subcommand '") + argv[1] + "'; use one of " + names +
                         " (see ndconv --help)");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string hint = "; see ndconv --help";
    for (const CLI::App* sub : app.get_subcommands())
      hint = "; see ndconv " + sub->get_name() + " --help";
    return fail(2, e.what() + hint);
  }
  return 0;
}

// A subcommand that filters may use the GPU unless --device cpu: CUDA starts on a background
// thread now, while the input is read (without a driver or GPU it does nothing that fails or
// prints). The subcommands that never filter do not start it.
void start_gpu_early(int argc, char** argv) {
  if (argc < 2)
    return;
  const std::string sub = argv[1];
  if (sub.empty() || sub[0] == '-' || sub == "info" || sub == "convert" || sub == "kernel")
    return;
  std::string device = "auto";
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--device" && i + 1 < argc)
      device = argv[i + 1];
    else if (arg.rfind("--device=", 0) == 0)
      device = arg.substr(9);
    else if (arg == "-h" || arg == "--help")
      return;
  }
  // With auto, smooth and convolve start it once they know the work, and only where the GPU may
  // win (gpu_may_win).
  if (device == "auto" && (sub == "smooth" || sub == "convolve"))
    return;
  ndconv::cli::CommonOptions common;
  common.device = device;
  try {
    if (ndconv::cli::gpu_may_filter(common)) {
      // Every GPU of a device list (a batch's lanes, one volume's slabs); cuda:all every GPU.
      const ndconv::DeviceWish wish = ndconv::parse_device(device);
      ndconv::warm_up_cuda_async(wish.all_cuda_devices       ? std::vector<int>{}
                                 : wish.cuda_devices.empty() ? std::vector<int>{wish.cuda_device}
                                                             : wish.cuda_devices);
    }
  } catch (const ndconv::InvalidArgument&) {
    // The command line's check reports a device it cannot parse.
  }
}

// The command itself: its exit code, every error reported on one line.
int run_command(int argc, char** argv) {
  try {
    start_gpu_early(argc, argv);
    return run(argc, argv);
  } catch (const ndconv::Aborted&) {
    if (ndconv::cli::console_failed())
      return fail(1,
                  "writing to the console failed (a closed pipe or a full device); no output "
                  "was written");
    return fail(130, "interrupted; no output was written");
  } catch (const ndconv::cli::UsageError& e) {
    return fail(2, e.what());
  } catch (const ndconv::io::RequestError& e) {
    return fail(2, e.what());
  } catch (const std::bad_alloc&) {
    return fail(1, "out of memory");
  } catch (const std::exception& e) {
    return fail(1, e.what());
  } catch (...) {
    return fail(1, "unexpected internal error");
  }
}

// One command as `ndconv ARGS...` runs it: its exit code after the console's last writes.
int run_one(int argc, char** argv) {
  ndconv::cli::set_preview_caption(argc, argv);
  return ndconv::cli::finish_console(run_command(argc, argv));
}

// `ndconv serve`: the commands of standard input, each as run_one runs it.
int run_server() {
  try {
    return ndconv::cli::serve(run_one);
  } catch (const std::exception& e) {
    return ndconv::cli::finish_console(fail(2, e.what()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  ndconv::cli::install_signal_handling();
  const bool server = argc == 2 && std::strcmp(argv[1], "serve") == 0;
  const int code = server ? run_server() : run_one(argc, argv);
  // A run that ended before CUDA's start-up did (an error, or a small volume filtered on the CPU)
  // does not wait for it: every output is closed by now, so the process ends here, without the
  // static destructors that would wait for the start-up thread.
  if (ndconv::cuda_warm_up_pending()) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}
