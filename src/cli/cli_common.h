// What every filtering subcommand shares, one header per concern: options.h (the common options
// and UsageError), messages.h (notes, warnings, timings' clocks), batch.h (IN... -o DIR/ and
// --list), preflight.h (the checks before any work) and filter_run.h (read, filter, write).
#pragma once

#include "batch.h"
#include "filter_run.h"
#include "messages.h"
#include "options.h"
#include "preflight.h"
