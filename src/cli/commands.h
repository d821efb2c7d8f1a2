// The subcommands of `ndconv`, one file each (smooth.cpp, convolve.cpp, info.cpp, adaptive.cpp,
// convert.cpp).
#pragma once

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

}  // namespace ndconv::cli
