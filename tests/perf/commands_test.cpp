// The commands as the front ends run them: the option table both front ends mount, option
// checking, the CPU sweep end to end on a tiny grid (rows, columns, rule vs best, the JSON
// document), and the GPU modes on a machine without a usable GPU.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cpu/cpu_backend.h"
#include "ndconv/engine.h"
#include "ndconv/errors.h"
#include "perf/commands.h"
#include "perf/gpu.h"

namespace ndconv::perf {
namespace {

std::vector<std::string> words(std::initializer_list<const char*> list) {
  return std::vector<std::string>(list.begin(), list.end());
}

TEST(Options, ParsedIntoTheArguments) {
  SweepArgs s;
  parse_options(sweep_command_line(s),
                words({"--device", "cpu", "--volumes=64x64", "--reps", "9", "--quick",
                       "--check-budget", "5e8", "--seed", "12345678901", "--csv", ""}));
  EXPECT_EQ(s.device, "cpu");
  EXPECT_EQ(s.volumes, "64x64");
  EXPECT_EQ(s.repetitions, 9);
  EXPECT_TRUE(s.quick);
  EXPECT_EQ(s.check_budget, 5e8);
  EXPECT_EQ(s.seed, 12345678901u);
  EXPECT_EQ(s.csv, "");
  BenchArgs b;
  parse_options(bench_command_line(b, true),
                words({"--workload", "dense3d_5", "--call-reps", "2", "--itk-reps", "3"}));
  EXPECT_EQ(b.workload, "dense3d_5");
  EXPECT_EQ(b.call_repetitions, 2);
  EXPECT_EQ(b.itk_repetitions, 3);
  EXPECT_EQ(bench_config(b).cpu_peer_repetitions, 3);
}

TEST(Options, BadWordsAreOneLineErrors) {
  auto rejects = [](std::initializer_list<const char*> list, const char* says) {
    SweepArgs s;
    try {
      parse_options(sweep_command_line(s), words(list));
      ADD_FAILURE() << "accepted " << *list.begin();
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  rejects({"--bogus"}, "unknown option --bogus");
  rejects({"--reps"}, "--reps needs a value");
  rejects({"--reps", "x"}, "--reps: 'x' is not an integer");
  rejects({"--reps", "0"}, "outside [1,");
  rejects({"--warmup", "-1"}, "outside [0,");
  rejects({"--check-budget", "lots"}, "not a number");
  rejects({"--quick=yes"}, "takes no value");
  BenchArgs b;  // the ITK peer's option only where the front end has the peer
  EXPECT_THROW(parse_options(bench_command_line(b, false), words({"--itk-reps", "2"})),
               InvalidArgument);
}

TEST(Options, HelpListsEveryOptionAndNoIssueNumbers) {
  SweepArgs s;
  BenchArgs b;
  for (const CommandLine& c : {sweep_command_line(s), bench_command_line(b, true)}) {
    std::ostringstream help;
    print_help(help, "ndconv", c);
    EXPECT_EQ(help.str().rfind("usage: ndconv " + c.name + " [options]\n", 0), 0u);
    for (const Option& o : c.options)
      EXPECT_NE(help.str().find("  " + o.name), std::string::npos) << o.name;
    EXPECT_EQ(help.str().find("issue"), std::string::npos) << help.str();
    std::istringstream lines(help.str());
    for (std::string line; std::getline(lines, line);)
      EXPECT_LE(line.size(), 100u) << line;
  }
}

TEST(SweepConfig, PresetsAndOverrides) {
  SweepArgs a;
  a.quick = true;
  a.dims = "3";
  SweepConfig c = sweep_config(a);
  ASSERT_EQ(c.volumes.size(), 1u);
  EXPECT_EQ(c.volumes[0].dims, 3);
  EXPECT_LE(c.repetitions, 3);

  a = SweepArgs();
  a.volumes = "64x64,32x32x32";
  a.filters = "3:7:2";
  a.ko = "1,4";
  a.repetitions = 9;
  a.no_flush = true;
  c = sweep_config(a);
  EXPECT_EQ(c.volumes.size(), 2u);
  EXPECT_EQ(c.filters[3], (std::vector<int64_t>{3, 5, 7}));
  EXPECT_EQ(c.kos, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(c.repetitions, 9);
  EXPECT_FALSE(c.flush_l2);

  a = SweepArgs();
  a.device = "cpu";
  EXPECT_TRUE(sweep_config(a).cpu);
  EXPECT_FALSE(sweep_config(a).block_shapes);

  a = SweepArgs();
  a.block_shapes = true;
  EXPECT_TRUE(sweep_config(a).block_shapes);
  EXPECT_FALSE(sweep_config(SweepArgs()).block_shapes);
}

TEST(SweepConfig, RejectsBadOptions) {
  auto bad = [](auto edit) {
    SweepArgs a;
    edit(a);
    EXPECT_THROW(sweep_config(a), InvalidArgument);
  };
  bad([](SweepArgs& a) { a.device = "tpu"; });
  bad([](SweepArgs& a) { a.dims = "5"; });
  bad([](SweepArgs& a) { a.volumes = "64"; });
  bad([](SweepArgs& a) {
    a.volumes = "64x64";
    a.dims = "3";
  });
  bad([](SweepArgs& a) { a.filters = "33"; });
  bad([](SweepArgs& a) {
    a.volumes = "32x32x32x8";
    a.filters = "17";
  });
  bad([](SweepArgs& a) { a.repetitions = 0; });
  bad([](SweepArgs& a) {
    a.device = "cpu";
    a.block_shapes = true;  // the CPU backend has no block shape
  });
}

std::size_t cpu_backend_factor_count() {
  return cpu_backend::supported_blocking_factors().size();
}

TEST(CpuSweep, TinyGridEndToEnd) {
  SweepArgs a;
  a.device = "cpu";
  a.volumes = "40x24,12x10x9";
  a.filters = "3,5";
  a.repetitions = 1;
  a.warmup = 0;
  a.threads = 2;
  SweepConfig c = sweep_config(a);
  const SweepResult r = run_sweep(c, nullptr);
  EXPECT_EQ(r.failures, 0);
  ASSERT_FALSE(r.rows.empty());
  std::ostringstream csv;
  write_csv(csv, r.rows);
  const std::string header = csv.str().substr(0, csv.str().find('\n'));
  EXPECT_EQ(
      header,
      "mode,device,dims,volume,filter,taps,point,kernel,tx,ko,block,status,note,registers,"
      "spill_bytes,blocks_per_sm,occupancy,rel_l2_error,checked_fraction,valid,seed,median_ms,"
      "min_ms,reps,voxels_per_s,gflops,pct_fma_peak,pct_bandwidth,load_factor_theory,"
      "speedup_vs_ko1,best_point,auto_point,auto_loss_pct");
  int autos = 0;
  for (const Json& row : r.rows) {
    EXPECT_EQ(row["valid"], true);
    EXPECT_EQ(row["status"], "valid");
    EXPECT_EQ(row["kernel"], "cpu");
    EXPECT_GT(number(row, "median_ms"), 0.0);
    EXPECT_EQ(text(row, "pct_fma_peak"), "");  // no CPU ceiling measured
    EXPECT_GE(number(row, "auto_loss_pct"), 0.0);
    autos += row["point"] == "auto";
  }
  EXPECT_EQ(autos, 4);  // one automatic point per problem, timed on its own
  // Each problem's rows: every supported factor, then the auto point.
  EXPECT_EQ(r.rows.size(), 4 * (cpu_backend_factor_count() + 1));

  // The JSON document as written: it parses back and holds the run, every point and each
  // problem's outcome.
  const Json doc = Json::parse(r.summary.dump(2));
  for (const char* key :
       {"tool", "mode", "date", "command", "cpu", "config", "points", "overall", "problems"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["mode"], "cpu");
  ASSERT_EQ(doc["points"].size(), r.rows.size());
  EXPECT_EQ(doc["points"][0]["volume"], "40x24");
  EXPECT_TRUE(doc["points"][0]["pct_fma_peak"].is_null());
  ASSERT_EQ(doc["problems"].size(), 4u);
  for (const Json& p : doc["problems"]) {
    EXPECT_TRUE(p.contains("best_point"));
    EXPECT_TRUE(p.contains("auto_point"));
    EXPECT_GE(number(p, "auto_loss_pct"), 0.0);
    EXPECT_FALSE(p["series"].empty());
  }
  EXPECT_EQ(doc["overall"]["not_implementable"], 0);
  EXPECT_EQ(doc["overall"]["problems"], 4);
}

TEST(GpuModes, NoUsableGpuIsAClearErrorWithoutNumbers) {
  if (cuda_status().usable)
    GTEST_SKIP() << "a usable GPU is present; the no-GPU path is tested by perf_no_gpu_exit_code";
  const std::string dir = ::testing::TempDir();
  SweepArgs a;
  a.quick = true;
  a.csv = dir + "perf_nogpu.csv";
  a.json = dir + "perf_nogpu.json";
  std::remove(a.csv.c_str());
  std::remove(a.json.c_str());
  std::ostringstream out, err;
  EXPECT_EQ(run_sweep_command(a, "test", out, err), kExitNoGpu);
  EXPECT_EQ(out.str(), "");
  EXPECT_NE(err.str().find("no usable GPU"), std::string::npos);
  EXPECT_EQ(err.str().find('\n'), err.str().size() - 1);  // one line
  EXPECT_FALSE(std::ifstream(a.csv).good());
  EXPECT_FALSE(std::ifstream(a.json).good());

  BenchArgs b;
  std::ostringstream bout, berr;
  EXPECT_EQ(run_bench_command(b, "test", nullptr, bout, berr), kExitNoGpu);
  EXPECT_EQ(bout.str(), "");
}

TEST(Bench, CpuRowJsonWithItsPeer) {
  // A stand-in peer that runs the CPU backend on the case it is given (convolution, replicate
  // boundary, as ITK's filter): the row's peer fields, and the repetitions reaching the peer.
  int peer_repetitions = 0;
  const CpuPeer peer = [&](const DenseCase& c, int threads, int repetitions) {
    peer_repetitions = repetitions;
    PeerRun run;
    run.name = "stand-in";
    run.repetitions = repetitions;
    run.output.resize(static_cast<std::size_t>(c.volume.count()));
    run.median_ms = time_host(
                        [&] {
                          filter_dense_case(c, run.output,
                                            run_options(Backend::Cpu, Operation::Convolution,
                                                        c.boundary, threads));
                        },
                        0, repetitions)
                        .median_ms;
    return run;
  };
  BenchArgs b;
  b.device = "cpu";
  b.threads = 2;
  b.call_repetitions = 1;
  b.itk_repetitions = 2;
  b.seed = 7;
  b.json = "-";
  b.workload = "cpu3d_7,cpu_bank_3d";  // --device cpu alone also runs the command rows
  std::ostringstream out;
  bench_command(b, "test", peer, out, nullptr);
  EXPECT_EQ(peer_repetitions, 2);
  const Json doc = Json::parse(out.str());
  EXPECT_EQ(doc["tool"], "ndconv bench");
  EXPECT_FALSE(doc.contains("ceilings"));  // no GPU row, no ceilings measured
  EXPECT_EQ(doc["validation_failures"], 0);
  ASSERT_EQ(doc["workloads"].size(), 2u);
  // Both CPU rows against the CPU's FMA peak measured beside them (a share of it, not above it
  // by more than a clock's drift).
  for (const Json& r : doc["workloads"]) {
    EXPECT_GT(number(r, "cpu_fma_peak_gfma"), 0.0);
    EXPECT_GT(number(r, "pct_cpu_fma_peak"), 0.0);
    EXPECT_LT(number(r, "pct_cpu_fma_peak"), 150.0);
  }
  const Json& bank = doc["workloads"][1];
  EXPECT_EQ(bank["workload"], "cpu_bank_3d");
  EXPECT_EQ(bank["filters"], 12);
  EXPECT_LT(number(bank, "rel_l2_error_vs_dense"), 1e-6);
  EXPECT_TRUE(bank["target_met"].is_boolean());
  const Json& row = doc["workloads"][0];
  EXPECT_EQ(row["workload"], "cpu3d_7");
  EXPECT_EQ(row["backend"], "cpu");
  EXPECT_EQ(row["seed"], "7");
  EXPECT_GT(number(row["device_time"], "median_ms"), 0.0);
  EXPECT_GE(row["plan"]["ko"].get<int>(), 1);
  EXPECT_EQ(row["peer"], "stand-in");
  EXPECT_EQ(row["peer_repetitions"], 2);
  EXPECT_LT(number(row, "rel_l2_error_vs_peer"), 1e-6);
  EXPECT_GT(number(row, "speedup_vs_peer"), 0.0);
  EXPECT_TRUE(row["target_met"].is_boolean());
}

TEST(Bench, UnknownWorkloadAndOptions) {
  std::ostringstream out, err;
  BenchArgs b;
  b.workload = "dense9d";
  EXPECT_EQ(run_bench_command(b, "test", nullptr, out, err), kExitError);
  EXPECT_NE(err.str().find("dense3d_11"), std::string::npos);  // lists the known ones
  // Other cube filters on a fixed dense row's volume: denseND_K with a fixed row of N dimensions.
  for (const char* name : {"dense5d_3", "dense3d_7x", "dense3d_0", "dense3d_", "e2e_bogus*"}) {
    b.workload = name;
    std::ostringstream o, e;
    EXPECT_EQ(run_bench_command(b, "test", nullptr, o, e), kExitError) << name;
    EXPECT_NE(e.str().find("unknown"), std::string::npos) << name << ": " << e.str();
  }
  if (!cuda_status().usable) {  // accepted; without a GPU to time it on
    b.workload = "dense3d_7";
    std::ostringstream o7, e7;
    EXPECT_EQ(run_bench_command(b, "test", nullptr, o7, e7), kExitNoGpu) << e7.str();
  }
  b = BenchArgs();
  b.repetitions = 0;
  EXPECT_THROW(bench_config(b), InvalidArgument);
  b = BenchArgs();
  b.quick = true;
  EXPECT_FALSE(bench_config(b).all_boundaries);
  EXPECT_FALSE(bench_config(b).all_kos);
  b.boundaries = true;  // --quick --boundaries: the boundary timings without the per-KO ones
  EXPECT_TRUE(bench_config(b).all_boundaries);
  EXPECT_FALSE(bench_config(b).all_kos);
  // 9 kernel rows (the CPU's three), 6 api_*, 3 median*, 6 filter bank rows, 2 dense rows on the
  // tensor cores, 3 fft*, 6 e2e_*, batch
  ASSERT_EQ(bench_workloads().size(), 36u);
  EXPECT_EQ(bench_workloads()[0].name, "dense3d_11");
  EXPECT_EQ(bench_workloads()[4].name, "gauss3d_s2");
  EXPECT_EQ(bench_workloads()[5].name, "gauss3d_s2_272");
  EXPECT_EQ(bench_workloads()[7].name, "cpu_bank_3d");
  EXPECT_EQ(bench_workloads()[8].name, "cpu_bank_3d_u8");
  EXPECT_EQ(bench_workloads()[9].name, "api_dense3d_11");
  EXPECT_EQ(bench_workloads().back().name, "batch");
}

TEST(Sweep, RefusesToOverwriteResults) {
  const std::string path = ::testing::TempDir() + "perf_existing.csv";
  std::ofstream(path) << "keep me\n";
  SweepArgs a;
  a.device = "cpu";
  a.volumes = "16x16";
  a.filters = "3";
  a.csv = path;
  a.json = "";
  std::ostringstream out, err;
  EXPECT_EQ(run_sweep_command(a, "test", out, err), kExitError);
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "keep me");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ndconv::perf
