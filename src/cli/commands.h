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
void add_convert_command(CLI::App& app);

}  // namespace ndconv::cli
