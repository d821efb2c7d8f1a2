// The researchers' and benchmarking subcommands of `ndconv`: `sweep` (register-blocking study)
// and `bench` (fixed workloads against the device's measured ceilings), the commands of the
// ITK-free measurement library in src/perf/ with the bench's ITK peer added.
#pragma once

namespace CLI {
class App;
}

namespace ndconv::cli {

/// Adds `sweep` and `bench` to the application.
void add_perf_commands(CLI::App& app);

}  // namespace ndconv::cli
