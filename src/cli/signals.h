// Signals and the console streams: Ctrl-C and SIGTERM end the run at once with exit code 130 (the
// staging folders of unfinished writes removed first); SIGPIPE is ignored, so that a closed output
// pipe is a failed write (EPIPE) like a full device; a failed write to stdout or stderr stops the
// run as an interrupt does, and the command then exits 1.
#pragma once

namespace ndconv::cli {

/// Installs the handlers of SIGINT and SIGTERM, ignores SIGPIPE and SIGXFSZ (past a file size
/// limit a write fails with EFBIG, which the writers report and clean up after) and unblocks
/// SIGINT and SIGTERM where the parent started ndconv with them blocked, so that one sent before
/// now is handled at once. Runs before any library's initialisers (from the executable's
/// .preinit_array) and again first thing in main; only system calls, safe to repeat.
void install_signal_handling();

/// Ctrl-C or SIGTERM arrived (the handler ends the process; a thread may see this first).
bool interrupted();

/// A write to stdout or stderr failed (closed pipe, full device, I/O error).
bool console_failed();

/// Whether the run must stop: interrupted() or console_failed().
bool stop_requested();

/// Throws ndconv::Aborted when stop_requested().
void check_stopped();

/// The end of main: flushes stdout and stderr and checks every write made to them; a failed one
/// turns exit code 0 into 1 (with a message on stderr when only stdout failed). Returns the code.
int finish_console(int code);

}  // namespace ndconv::cli
