#include "perf/e2e.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <regex>
#include <sstream>

#include "ndconv/errors.h"
#include "perf/floors.h"
#include "perf/gpu.h"
#include "perf/phantom.h"

namespace ndconv::perf {

namespace fs = std::filesystem;

ProcessRun run_process(const std::vector<std::string>& argv) {
  if (argv.empty())
    throw InvalidArgument("run_process: no command");
  // Output goes to an unlinked temporary file: no pipe to drain, nothing left behind.
  char log_name[] = "/tmp/ndconv-bench-log-XXXXXX";
  const int log = mkstemp(log_name);
  if (log < 0)
    throw InvalidArgument("cannot create a temporary file for a child's output");
  unlink(log_name);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    throw InvalidArgument("cannot start " + argv[0]);
  }
  if (pid == 0) {
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProcessRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  const off_t size = lseek(log, 0, SEEK_END);
  const off_t keep = std::min<off_t>(size, 1 << 16);
  run.output.resize(static_cast<std::size_t>(keep));
  if (keep > 0 && pread(log, run.output.data(), run.output.size(), size - keep) != keep)
    run.output.clear();
  close(log);
  return run;
}

bool help_lists_output_folder(const std::string& help) {
  static const std::regex option(R"((^|[\s,\[])-o([\s,=]|$))");
  return std::regex_search(help, option);
}

namespace {

// A command as timed: one or more processes run one after another (a batch done as separate
// commands), `clean` run before each (removing the previous outputs, untimed).
struct TimedCommand {
  std::string device;  ///< empty for the floor
  std::vector<std::vector<std::string>> processes;
  std::function<void()> clean;
  std::function<std::string()> check_outputs;  ///< after the first run: "" or what is wrong
  std::vector<double> samples_s;
  /// The commands' own --verbose account, per timed run (summed over its processes and files).
  std::vector<double> read_s, filter_s, write_s;
  std::vector<double> outside_stages_s, outside_program_s;  // in all - stages; wall - in all
  bool filtered_on_gpu = false;  ///< a run's --verbose plan named the CUDA backend
  std::string error;
};

std::string joined(const std::vector<std::string>& argv, const std::string& binary,
                   const std::string& work) {
  std::string s;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::string a = i == 0 && argv[i] == binary ? "ndconv" : argv[i];
    if (a.rfind(work, 0) == 0)
      a = "$WORK" + a.substr(work.size());
    s += (i ? " " : "") + a;
  }
  return s;
}

}  // namespace

StageSeconds stage_seconds(const std::string& output) {
  StageSeconds t;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("timings: read ", 0) != 0)
      continue;
    auto value = [&](const char* key, double& sum) {
      const auto at = line.find(key);
      double v = 0;
      if (at != std::string::npos &&
          std::sscanf(line.c_str() + at + std::strlen(key), "%lf", &v) == 1)
        sum += v;
    };
    value("timings: read ", t.read);
    value(", filter ", t.filter);
    value(", write ", t.write);
    double in_all = 0;
    value(", in all ", in_all);
    t.in_all = std::max(t.in_all, in_all);
  }
  return t;
}

namespace {

// Runs every command once untimed, then `repetitions` rounds of each in turn.
void time_interleaved(std::vector<TimedCommand>& commands, int repetitions) {
  auto run_all = [](TimedCommand& c) {
    c.clean();
    double total = 0, in_all = 0;
    StageSeconds stages;
    for (const auto& argv : c.processes) {
      const ProcessRun r = run_process(argv);
      // Ctrl-C reaches the children too: stop the bench rather than record the runs it cut
      // short (the work folder goes with the EndToEndBench).
      if (r.exit_code == 130 || r.exit_code == 128 + SIGINT || r.exit_code == 128 + SIGTERM)
        throw Aborted();
      if (r.exit_code != 0) {
        std::string out = r.output;
        while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
          out.pop_back();
        const auto last = out.rfind('\n');
        c.error = "exit code " + std::to_string(r.exit_code) + ": " +
                  (last == std::string::npos ? out : out.substr(last + 1));
        return 0.0;
      }
      total += r.seconds;
      c.filtered_on_gpu =
          c.filtered_on_gpu || r.output.find("plan: backend cuda") != std::string::npos;
      const StageSeconds own = stage_seconds(r.output);
      stages.read += own.read;
      stages.filter += own.filter;
      stages.write += own.write;
      in_all += own.in_all;
    }
    c.read_s.push_back(stages.read);
    c.filter_s.push_back(stages.filter);
    c.write_s.push_back(stages.write);
    if (in_all > 0) {
      c.outside_stages_s.push_back(in_all - stages.read - stages.filter - stages.write);
      c.outside_program_s.push_back(total - in_all);
    }
    return total;
  };
  for (TimedCommand& c : commands) {
    run_all(c);
    if (c.error.empty() && c.check_outputs)
      c.error = c.check_outputs();
    c.read_s.clear();  // the untimed run's account goes with it
    c.filter_s.clear();
    c.write_s.clear();
    c.outside_stages_s.clear();
    c.outside_program_s.clear();
  }
  for (int r = 0; r < repetitions; ++r) {
    for (TimedCommand& c : commands) {
      if (!c.error.empty())
        continue;
      const double s = run_all(c);
      if (c.error.empty())
        c.samples_s.push_back(s);
    }
  }
}

Json timing_seconds_json(const TimedCommand& c, const std::string& binary,
                         const std::string& work) {
  Json j = {{"command", joined(c.processes.front(), binary, work)}};
  if (!c.device.empty())
    j["filtered_on"] = c.filtered_on_gpu ? "gpu" : "cpu";
  if (c.processes.size() > 1)
    j["processes"] = c.processes.size();
  if (!c.error.empty()) {
    j["error"] = c.error;
    return j;
  }
  const Timing t = summarize(c.samples_s);  // in seconds here, whatever its fields' names say
  j.update({{"median_s", t.median_ms}, {"min_s", t.min_ms}, {"samples_s", t.samples_ms}});
  // What the command says it spent (--verbose), medians: where the time went, and why a floor
  // can exceed its command (deflate's speed depends on what it compresses).
  j["own_account_s"] = {{"read", summarize(c.read_s).median_ms},
                        {"filter", summarize(c.filter_s).median_ms},
                        {"write", summarize(c.write_s).median_ms}};
  // The rest of the wall time: between the stages (planning, allocation, the wait for CUDA), and
  // outside the program's own clock (loading before main, freeing and exit after the last line).
  if (!c.outside_stages_s.empty())
    j["own_account_s"].update({{"between_stages", summarize(c.outside_stages_s).median_ms},
                               {"load_and_exit", summarize(c.outside_program_s).median_ms}});
  return j;
}

using Processes = std::vector<std::vector<std::string>>;

// The floor's processes, then for each device the filtering command's, all sharing `clean` and
// `check`.
std::vector<TimedCommand> floor_and_runs(
    const Processes& floor, const std::vector<std::string>& devices,
    const std::function<Processes(const std::string& device)>& filtering,
    const std::function<void()>& clean, const std::function<std::string()>& check) {
  std::vector<TimedCommand> commands(1 + devices.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    TimedCommand& c = commands[i];
    c.device = i ? devices[i - 1] : "";
    c.processes = i ? filtering(c.device) : floor;
    c.clean = clean;
    c.check_outputs = check;
  }
  return commands;
}

// The floor (commands[0]) and the filtering commands after it as the row's "floor" and "runs";
// `score` adds a run's measure against the floor and says whether it meets the target. Failed
// commands count in `failures`; the row's target is met when every run meets it.
void add_scored_runs(Json& row, const std::vector<TimedCommand>& commands,
                     const std::string& binary, const std::string& work, int& failures,
                     const std::function<bool(Json& run, double run_s, double floor_s)>& score) {
  const Json floor = timing_seconds_json(commands[0], binary, work);
  row["floor"] = floor;
  bool all_met = commands[0].error.empty();
  failures += all_met ? 0 : 1;
  Json runs = Json::array();
  for (std::size_t i = 1; i < commands.size(); ++i) {
    Json r = {{"device", commands[i].device}};
    r.update(timing_seconds_json(commands[i], binary, work));
    if (!commands[i].error.empty()) {
      ++failures;
      all_met = false;
    } else if (floor.contains("median_s")) {
      all_met = score(r, number(r, "median_s"), number(floor, "median_s")) && all_met;
    }
    runs.push_back(r);
  }
  row["runs"] = runs;
  row["target_met"] = all_met;
}

}  // namespace

struct EndToEndBench::Impl {
  EndToEndConfig cfg;
  std::string work;  ///< the temporary folder, removed at the end
  bool have_sequence[3] = {false, false, false};
  std::string kernel;
  std::vector<uint8_t> sequence;

  std::string ensure_sequence(FileFormat f) {
    const int i = static_cast<int>(f);
    const std::string path = work + "/sequence" + extension(f);
    if (!have_sequence[i]) {
      if (sequence.empty())
        sequence = make_echo_sequence(cfg.sequence, cfg.seed);
      RawVolume v{cfg.sequence, {1.0, 1.0, 1.0, 0.04}, VoxelType::UInt8, sequence.data()};
      write_volume(path, f, v);
      have_sequence[i] = true;
    }
    return path;
  }

  std::string ensure_kernel() {
    if (kernel.empty()) {
      // A dense 7^4 kernel of positive weights summing to 1 (a 3D sequence gets 7^3).
      const Shape k = cube(cfg.sequence.dims, 7);
      std::mt19937_64 rng(cfg.seed + 7);
      std::uniform_real_distribution<float> u(0.1f, 1.0f);
      std::vector<float> taps(static_cast<std::size_t>(k.count()));
      double sum = 0;
      for (float& t : taps)
        sum += (t = u(rng));
      for (float& t : taps)
        t = static_cast<float>(t / sum);
      kernel = work + "/kernel7.nii";
      write_volume(kernel, FileFormat::Nii,
                   RawVolume{k, {1, 1, 1, 0.04}, VoxelType::Float32, taps.data()});
    }
    return kernel;
  }

  void remove_file(const std::string& path) {
    std::error_code ec;
    fs::remove(path, ec);
  }

  /// What CUDA costs a command on this machine beyond its work, which an I/O-only floor does not
  /// pay: the context's start-up where nothing hides it and its release at the end. Measured once,
  /// on first use: a 16^3 volume smoothed with --device cuda less the same with --device cpu,
  /// medians of interleaved runs. {"error": ...} where the GPU command fails (no GPU).
  const Json& cuda_cost() {
    if (!cuda_cost_.is_null())
      return cuda_cost_;
    const Shape tiny = parse_shape("16x16x16", "volume");
    const std::vector<uint8_t> v = make_echo_sequence(tiny, cfg.seed + 2);
    const std::string in = work + "/tiny.nii", out = work + "/tiny_out.nii";
    write_volume(in, FileFormat::Nii, RawVolume{tiny, {1, 1, 1, 1}, VoxelType::UInt8, v.data()});
    std::string gpu = "cuda";
    for (const std::string& d : cfg.devices)
      if (d.rfind("cuda", 0) == 0)
        gpu = d;
    std::vector<TimedCommand> commands(2);
    for (int i = 0; i < 2; ++i) {
      TimedCommand& c = commands[i];
      c.device = i == 0 ? gpu : "cpu";
      c.processes = {{cfg.ndconv, "smooth", in, out, "--sigma", "1", "--type", "float", "--device",
                      c.device, "-v"}};
      c.clean = [this, out] { remove_file(out); };
    }
    time_interleaved(commands, std::max(5, cfg.repetitions));
    remove_file(out);
    remove_file(in);
    if (!commands[0].error.empty() || !commands[1].error.empty()) {
      cuda_cost_ = {{"error", commands[0].error.empty() ? commands[1].error : commands[0].error}};
      return cuda_cost_;
    }
    const double gpu_s = summarize(commands[0].samples_s).median_ms;
    const double cpu_s = summarize(commands[1].samples_s).median_ms;
    cuda_cost_ = {{"command", joined(commands[0].processes.front(), cfg.ndconv, work)},
                  {"gpu_median_s", gpu_s},
                  {"cpu_median_s", cpu_s},
                  {"cost_s", std::max(0.0, gpu_s - cpu_s)}};
    return cuda_cost_;
  }

 private:
  Json cuda_cost_;
};

EndToEndBench::EndToEndBench(EndToEndConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->cfg = std::move(config);
  if (impl_->cfg.ndconv.empty())
    return;
  std::string parent = impl_->cfg.work_parent;
  if (parent.empty()) {
    std::error_code ec;  // the system's temporary folder (TMPDIR), else /tmp
    parent = fs::temp_directory_path(ec).string();
    if (ec || parent.empty())
      parent = "/tmp";
  }
  std::string name = parent + "/ndconv-bench-XXXXXX";
  if (!mkdtemp(name.data()))
    throw InvalidArgument(parent + ": cannot create the bench's work folder there");
  impl_->work = name;
}

EndToEndBench::~EndToEndBench() {
  if (!impl_->work.empty()) {
    std::error_code ec;
    fs::remove_all(impl_->work, ec);
  }
}

namespace {

Json not_available(const char* what) {
  return {{"error", std::string("not available: ") + what}, {"target_met", nullptr}};
}

const char* kNeedsNdconv =
    "the end-to-end rows run the ndconv command line, which this front end does not have (run "
    "`ndconv bench` from an ndconv built with ITK)";

}  // namespace

Json EndToEndBench::sequence_row(const std::string& command, FileFormat format, int& failures) {
  Impl& m = *impl_;
  if (m.cfg.ndconv.empty())
    return not_available(kNeedsNdconv);
  if (!can_write(format))
    return not_available("this build has no zlib to write the .nii.gz input");
  const std::string in = m.ensure_sequence(format);
  const std::string out = m.work + "/output" + extension(format);
  const int64_t float_bytes = m.cfg.sequence.count() * 4;
  auto check = [out, format, float_bytes]() -> std::string {
    const int64_t bytes = file_bytes(out);
    if (bytes <= 0)
      return "no output written";
    if (format == FileFormat::Nii && bytes != 352 + float_bytes)
      return "the output has " + std::to_string(bytes) + " bytes, not " +
             std::to_string(352 + float_bytes) + " (float32 NIfTI-1)";
    return "";
  };
  auto clean = [&m, out] { m.remove_file(out); };
  const std::string kernel = command == "convolve" ? m.ensure_kernel() : "";
  std::vector<TimedCommand> commands = floor_and_runs(
      {{m.cfg.ndconv, "convert", in, out, "--type", "float", "-v"}}, m.cfg.devices,
      [&](const std::string& device) {
        std::vector<std::string> argv{m.cfg.ndconv, command, in};
        if (!kernel.empty())
          argv.push_back(kernel);
        argv.insert(argv.end(), {out, "--type", "float", "--device", device, "-v"});
        if (command == "smooth")
          argv.insert(argv.end(), {"--sigma", "1"});
        return Processes{argv};
      },
      clean, check);
  time_interleaved(commands, m.cfg.repetitions);
  m.remove_file(out);

  Json row = {{"input",
               {{"format", std::string(extension(format)).substr(1)},
                {"type", "uint8"},
                {"bytes", file_bytes(in)},
                {"writer",
                 "the bench's own (perf/volume_files.h); .nii.gz: one gzip stream, "
                 "zlib level 6"}}},
              {"output_type", "float32"},
              {"repetitions", m.cfg.repetitions}};
  // A run that filtered on the GPU is also set against the floor plus what CUDA costs a command
  // here (cuda_cost: the context's start-up, which a small read does not hide, and its release),
  // so that a row says how much of its distance to the floor is CUDA's own (no target).
  const bool on_gpu = std::any_of(commands.begin() + 1, commands.end(),
                                  [](const TimedCommand& c) { return c.filtered_on_gpu; });
  const Json cost = on_gpu ? m.cuda_cost() : Json();
  if (on_gpu)
    row["cuda_fixed_cost"] = cost;
  add_scored_runs(
      row, commands, m.cfg.ndconv, m.work, failures,
      [&cost](Json& r, double run_s, double floor_s) {
        const double ratio = ratio_to_floor(run_s, floor_s);
        r.update({{"ratio_to_floor", ratio}, {"target_met", ratio <= kMaxRatioToFloor}});
        if (text(r, "filtered_on") == "gpu" && cost.contains("cost_s")) {
          const double with_cuda = floor_s + number(cost, "cost_s");
          r.update({{"floor_plus_cuda_s", with_cuda},
                    {"ratio_to_floor_plus_cuda", ratio_to_floor(run_s, with_cuda)}});
        }
        return ratio <= kMaxRatioToFloor;
      });
  if (row["runs"].size() > 0 && row["runs"][0].contains("ratio_to_floor"))
    row["ratio_to_floor"] = row["runs"][0]["ratio_to_floor"];
  return row;
}

Json EndToEndBench::batch_row(int& failures) {
  Impl& m = *impl_;
  if (m.cfg.ndconv.empty())
    return not_available(kNeedsNdconv);
  if (!can_write(FileFormat::NiiGz))
    return not_available("this build has no zlib to write the .nii.gz inputs");
  const std::string in_dir = m.work + "/batch_in", out_dir = m.work + "/batch_out";
  fs::create_directories(in_dir);
  fs::create_directories(out_dir);
  std::vector<std::string> inputs;
  for (int i = 0; i < m.cfg.batch_count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/volume_%03d.nii.gz", i);
    inputs.push_back(in_dir + name);
    const std::vector<uint8_t> v = make_echo_sequence(m.cfg.batch_volume, m.cfg.seed + 1000 + i);
    write_volume(inputs.back(), FileFormat::NiiGz,
                 RawVolume{m.cfg.batch_volume, {1, 1, 1, 1}, VoxelType::UInt8, v.data()});
  }
  auto takes_folder = [&m](const char* command) {
    const ProcessRun r = run_process({m.cfg.ndconv, command, "--help"});
    return r.exit_code == 0 && help_lists_output_folder(r.output);
  };
  const std::vector<std::string> type{"--type", "float", "-v"};
  // One command over all volumes when the tree's command takes -o DIR/, else one per volume.
  auto processes = [&](const std::string& command, bool batch, std::vector<std::string> extra) {
    Processes p;
    extra.insert(extra.end(), type.begin(), type.end());
    if (batch) {
      std::vector<std::string> argv{m.cfg.ndconv, command};
      argv.insert(argv.end(), inputs.begin(), inputs.end());
      argv.insert(argv.end(), {"-o", out_dir + "/"});
      argv.insert(argv.end(), extra.begin(), extra.end());
      p.push_back(argv);
    } else {
      for (const std::string& in : inputs) {
        std::vector<std::string> argv{m.cfg.ndconv, command, in,
                                      out_dir + "/" + fs::path(in).filename().string()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        p.push_back(argv);
      }
    }
    return p;
  };
  const bool smooth_batch = takes_folder("smooth"), convert_batch = takes_folder("convert");
  auto clean = [out_dir] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(out_dir, ec))
      fs::remove(e.path(), ec);
  };
  const int count = m.cfg.batch_count;
  auto check = [out_dir, count]() -> std::string {
    std::error_code ec;
    int n = 0;
    for (const auto& e : fs::directory_iterator(out_dir, ec))
      n += e.is_regular_file() && fs::file_size(e.path(), ec) > 0;
    return n == count
               ? ""
               : std::to_string(n) + " outputs written for " + std::to_string(count) + " inputs";
  };
  std::vector<TimedCommand> commands = floor_and_runs(
      processes("convert", convert_batch, {}), m.cfg.devices,
      [&](const std::string& device) {
        return processes("smooth", smooth_batch, {"--sigma", "1", "--device", device});
      },
      clean, check);
  time_interleaved(commands, m.cfg.repetitions);
  clean();
  int64_t input_bytes = 0;
  for (const std::string& in : inputs)
    input_bytes += file_bytes(in);
  fs::remove_all(in_dir);

  const char* one = "one command for all volumes (-o DIR/)";
  const char* each = "one command per volume (this tree's command takes no -o DIR/)";
  Json row = {{"volumes", count},
              {"mode", smooth_batch ? one : each},
              {"floor_mode", convert_batch ? one : each},
              {"input", {{"format", "nii.gz"}, {"type", "uint8"}, {"bytes", input_bytes}}},
              {"output_type", "float32"},
              {"repetitions", m.cfg.repetitions}};
  add_scored_runs(row, commands, m.cfg.ndconv, m.work, failures,
                  [count](Json& r, double run_s, double floor_s) {
                    const double share = throughput_share(run_s, floor_s);
                    r.update({{"volumes_per_s", count / run_s},
                              {"throughput_share_of_floor", share},
                              {"target_met", share >= kMinBatchThroughputShare}});
                    return share >= kMinBatchThroughputShare;
                  });
  if (row["runs"].size() > 0 && row["runs"][0].contains("throughput_share_of_floor"))
    row["throughput_share_of_floor"] = row["runs"][0]["throughput_share_of_floor"];
  return row;
}

}  // namespace ndconv::perf
