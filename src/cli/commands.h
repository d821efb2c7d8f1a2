// The subcommands of `ndconv`, one file each (smooth.cpp, convolve.cpp, info.cpp, adaptive.cpp,
// convert.cpp, serve.cpp).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace ndconv::cli {

void add_smooth_command(CLI::App& app);
void add_convolve_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_adaptive_command(CLI::App& app);
/// kernel (kernel_command.cpp).
void add_kernel_command(CLI::App& app);
/// mean, median, gradient, laplacian, derivative, unsharp (filter_commands.cpp).
void add_filter_commands(CLI::App& app);
void add_convert_command(CLI::App& app);
/// serve (serve.cpp): its help entry; main() runs `ndconv serve` itself (serve()).
void add_serve_command(CLI::App& app);

/// Runs one command line (argc, argv as main() gets them) and returns its exit code.
using CommandRunner = std::function<int(int, char**)>;
/// `ndconv serve`: runs the commands read from standard input with `run`, one after the other,
/// each answered on standard output (serve.cpp has the protocol); returns 0 at the end of input.
/// Throws Error for a malformed request or an answer that cannot be written.
int serve(const CommandRunner& run);

}  // namespace ndconv::cli
