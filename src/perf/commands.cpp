#include "perf/commands.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "perf/gpu.h"

namespace ndconv::perf {

SweepConfig sweep_config(const SweepArgs& a) {
  if (a.device != "gpu" && a.device != "cpu")
    throw InvalidArgument("--device: '" + a.device + "' is neither gpu nor cpu");
  SweepConfig c = a.quick ? quick_config() : study_config();
  c.cpu = a.device == "cpu";
  if (c.cpu && a.volumes.empty()) {
    // The GPU study's volumes would take hours on a CPU: smaller defaults, same filter sizes.
    c.volumes = parse_shape_list(
        a.quick ? "256x256,48x48x48,24x24x24x6" : "1024x1024,96x96x96,40x40x40x8", "volumes");
  }
  if (!a.volumes.empty())
    c.volumes = parse_shape_list(a.volumes, "--volumes");
  if (!a.dims.empty()) {
    const std::vector<int64_t> dims = parse_int_list(a.dims, "--dims", 2, 4);
    std::vector<Shape> kept;
    for (const Shape& s : c.volumes)
      if (std::find(dims.begin(), dims.end(), s.dims) != dims.end())
        kept.push_back(s);
    c.volumes = kept;
  }
  if (c.volumes.empty())
    throw InvalidArgument("--dims/--volumes: no volume left to sweep");
  for (const Shape& s : c.volumes) {
    if (s.dims < 2)
      throw InvalidArgument("--volumes: ndconv filters 2D, 3D and 4D volumes");
  }
  if (!a.filters.empty()) {
    const std::vector<int64_t> ks = parse_int_list(a.filters, "--filters", 1, 31);
    for (int d = 2; d <= 4; ++d)
      c.filters[d] = ks;
    for (int64_t k : ks) {
      for (const Shape& s : c.volumes)
        if (s.dims == 4 && k > 15)
          throw InvalidArgument("--filters: " + std::to_string(k) +
                                " exceeds the 4D dense limit of 15");
    }
  }
  if (!a.ko.empty())
    c.kos = parse_int_list(a.ko, "--ko", 1, 1024);
  if (a.block_shapes && c.cpu)
    throw InvalidArgument("--block-shapes: the CPU backend has no block shape (GPU only)");
  c.block_shapes = a.block_shapes;
  if (a.warmup >= 0)
    c.warmup = a.warmup;
  if (a.repetitions >= 0) {
    if (a.repetitions < 1)
      throw InvalidArgument("--reps must be at least 1");
    c.repetitions = a.repetitions;
  }
  if (a.no_flush)
    c.flush_l2 = false;
  if (a.check_budget > 0)
    c.check_budget_fmas = a.check_budget;
  c.cuda_device = a.cuda_device;
  c.threads = a.threads;
  c.seed = a.seed;
  return c;
}

BenchConfig bench_config(const BenchArgs& a) {
  if (a.device != "gpu" && a.device != "cpu")
    throw InvalidArgument("--device: '" + a.device + "' is neither gpu nor cpu");
  if (a.repetitions < 1 || a.call_repetitions < 1)
    throw InvalidArgument("--reps and --call-reps must be at least 1");
  BenchConfig c;
  c.cpu_only = a.device == "cpu";
  c.cuda_device = a.cuda_device;
  c.threads = a.threads;
  c.repetitions = a.repetitions;
  c.call_repetitions = a.call_repetitions;
  c.seed = a.seed;
  if (a.quick) {
    c.repetitions = std::min(c.repetitions, 5);
    c.call_repetitions = std::min(c.call_repetitions, 2);
    c.all_kos = false;
    c.all_boundaries = a.boundaries;
  }
  std::stringstream names(a.workload);
  for (std::string n; std::getline(names, n, ',');)
    if (!n.empty())
      c.workloads.push_back(n);
  return c;
}

namespace {

template <typename F>
int guarded(const char* name, std::ostream& err, F f) {
  try {
    return f();
  } catch (const ValidationFailed& e) {
    err << "ndconv " << name << ": " << e.what() << "\n";
    return kExitValidationFailed;
  } catch (const GpuUnavailable& e) {
    err << "ndconv " << name << ": " << e.what()
        << "; no measurements made (--device cpu runs the CPU backend instead)\n";
    return kExitNoGpu;
  } catch (const std::exception& e) {
    err << "ndconv " << name << ": error: " << e.what() << "\n";
    return kExitError;
  }
}

void refuse_existing(const std::string& path, bool force) {
  if (path.empty() || path == "-" || force)
    return;
  std::ifstream f(path);
  if (f.good())
    throw InvalidArgument("'" + path + "' exists; not overwriting it (use --force)");
}

}  // namespace

void sweep_command(const SweepArgs& args, const std::string& command_line, std::ostream& out,
                   std::ostream* progress) {
  SweepConfig config = sweep_config(args);
  config.command_line = command_line;
  // Check the outputs before the measurements, and write them only at the end.
  refuse_existing(args.csv, args.force);
  refuse_existing(args.json, args.force);
  // A long run keeps <csv>.partial up to date after each problem, so that an interrupted study
  // leaves what it measured; the file goes away when the run completes.
  const std::string partial = args.csv.empty() ? "" : args.csv + ".partial";
  if (!partial.empty()) {
    config.on_problem_done = [&](const std::vector<Json>& rows) {
      std::ostringstream csv;
      write_csv(csv, rows);
      write_file(partial, csv.str(), true);
    };
  }
  const SweepResult r = run_sweep(config, progress);
  if (!partial.empty())
    std::remove(partial.c_str());
  print_sweep_table(out, r);
  if (!args.csv.empty()) {
    std::ostringstream csv;
    write_csv(csv, r.rows);
    write_file(args.csv, csv.str(), true);
  }
  if (!args.json.empty())
    write_file(args.json, r.summary.dump() + "\n", true);
  const Json* o = r.summary.find("overall");
  out << "points: " << o->find("points")->scalar_text() << ", validation failures: " << r.failures
      << ", not implementable: " << o->find("not_implementable")->scalar_text()
      << ", automatic plan within 5% of the best point: "
      << o->find("auto_within_5pct_of_best")->scalar_text() << " of "
      << o->find("problems")->scalar_text() << " problems\n";
  if (!args.csv.empty())
    out << "wrote " << args.csv << (args.json.empty() ? "" : " and " + args.json) << "\n";
  if (r.failures) {
    throw ValidationFailed(std::to_string(r.failures) +
                           " point(s) failed validation against the CPU backend (see "
                           "rel_l2_error; results written)");
  }
}

void bench_command(const BenchArgs& args, const std::string& command_line, CpuPeer peer,
                   std::ostream& out, std::ostream* progress) {
  BenchConfig config = bench_config(args);
  config.command_line = command_line;
  config.cpu_peer = std::move(peer);
  refuse_existing(args.json, args.force);
  const BenchResult r = run_bench(config, progress);
  if (args.json == "-") {
    out << r.summary.dump() << "\n";
  } else {
    print_bench_table(out, r);
    if (!args.json.empty()) {
      write_file(args.json, r.summary.dump() + "\n", true);
      out << "wrote " << args.json << "\n";
    }
  }
  if (r.failures) {
    throw ValidationFailed(std::to_string(r.failures) +
                           " validation failure(s) (see rel_l2_error; results written)");
  }
}

int run_sweep_command(const SweepArgs& args, const std::string& command_line, std::ostream& out,
                      std::ostream& err) {
  return guarded("sweep", err, [&] {
    sweep_command(args, command_line, out, &err);
    return static_cast<int>(kExitOk);
  });
}

int run_bench_command(const BenchArgs& args, const std::string& command_line, CpuPeer peer,
                      std::ostream& out, std::ostream& err) {
  return guarded("bench", err, [&] {
    bench_command(args, command_line, std::move(peer), out, &err);
    return static_cast<int>(kExitOk);
  });
}

}  // namespace ndconv::perf
