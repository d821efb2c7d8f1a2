// PLACEHOLDER until the perf helper lands `sweep` and `bench`: registers nothing yet.
#include "perf_commands.h"

namespace ndconv::cli {

void add_perf_commands(CLI::App&) {}

}  // namespace ndconv::cli
