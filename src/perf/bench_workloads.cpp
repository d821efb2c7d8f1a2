// The bench's fixed list of workloads (bench.h: bench_workloads) and the dense rows outside it
// (bench_rows.h: other_dense_workload).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "perf/bank_rows.h"
#include "perf/tensor_dense_rows.h"
#include "perf/bench.h"
#include "perf/bench_rows.h"
#include "perf/fft_rows.h"
#include "perf/floors.h"
#include "perf/median_rows.h"
#include "perf/params.h"
#include "perf/volume_files.h"

namespace ndconv::perf {

using Kind = Workload::Kind;

const std::vector<Workload>& bench_workloads() {
  static const std::vector<Workload> list = [] {
    std::vector<Workload> l;
    auto dense = [&](const char* name, const char* vol, int dims, int k, double target) {
      Workload w;
      w.name = name;
      w.kind = Kind::GpuDense;
      w.volume = parse_shape(vol, "volume");
      w.filter = cube(dims, k);
      w.target = target;
      w.target_text = ">= " + std::to_string(static_cast<int>(target)) + "% of FMA peak";
      w.description = std::to_string(dims) + "D " + vol + ", dense " + std::to_string(k) + "^" +
                      std::to_string(dims);
      l.push_back(w);
    };
    dense("dense3d_11", "256x256x256", 3, 11, 70);
    dense("dense3d_5", "256x256x256", 3, 5, 50);
    dense("dense4d_7", "96x96x96x16", 4, 7, 60);
    dense("dense2d_17", "4096x4096", 2, 17, 60);
    Workload g;
    g.name = "gauss3d_s2";
    g.kind = Kind::GpuSeparable;
    g.volume = parse_shape("256x256x256", "volume");
    g.sigma = 2.0;
    g.target = 2.0;
    g.target_text = "<= 2x the memory floor";
    g.description = "3D 256x256x256, Gaussian sigma 2 (17 taps per axis), separable";
    l.push_back(g);
    // The same on a volume that is no multiple of the kernels' tiles: a 256^3 block with an
    // 8-voxel halo on each side, as a blocked (dask) array hands it over.
    g.name = "gauss3d_s2_272";
    g.volume = parse_shape("272x272x272", "volume");
    g.description = "3D 272x272x272, Gaussian sigma 2 (17 taps per axis), separable";
    l.push_back(g);
    Workload c;
    c.name = "cpu3d_7";
    c.kind = Kind::CpuDense;
    c.volume = parse_shape("160x160x160", "volume");
    c.filter = cube(3, 7);
    c.target = 20.0;
    c.target_text = ">= 20x itk::ConvolutionImageFilter";
    c.description = "CPU 3D 160x160x160, dense 7^3, all cores";
    l.push_back(c);
    Workload cpu_bank = c;
    cpu_bank.name = "cpu_bank_3d";
    cpu_bank.kind = Kind::CpuBank;
    cpu_bank.target = 60.0;
    cpu_bank.target_text = ">= 60% of the CPU's FMA peak";
    cpu_bank.description = "CPU 3D 160x160x160, filter bank of 12 real 7^3 filters, all cores";
    l.push_back(cpu_bank);
    Workload cpu_bank_u8 = cpu_bank;
    cpu_bank_u8.name = "cpu_bank_3d_u8";
    cpu_bank_u8.eight_bit_input = true;
    cpu_bank_u8.target = 300.0;
    cpu_bank_u8.target_text = ">= 300% of the CPU's FP32 FMA peak (useful multiply-adds)";
    cpu_bank_u8.description =
        "CPU 3D 160x160x160 of integers 0..255, filter bank of 12 real 7^3 filters, all cores "
        "(AMX-INT8 where the CPU has it)";
    l.push_back(cpu_bank_u8);
    const std::size_t kernel_rows = l.size();
    for (std::size_t i = 0; i < kernel_rows; ++i) {
      if (l[i].kind == Kind::CpuDense || l[i].kind == Kind::CpuBank)
        continue;
      Workload a = l[i];
      a.name = "api_" + l[i].name;
      a.kind = Kind::Api;
      a.base = l[i].name;
      a.target = kMaxRatioToFloor;
      a.target_text = "<= 1.5x max(upload, kernel, download), pageable and pinned";
      a.description = "whole filter call on host buffers: " + l[i].description;
      l.push_back(a);
    }
    add_median_workloads(l);
    for (const Workload& w : bank_workloads())
      l.push_back(w);
    for (const Workload& w : tensor_dense_workloads())
      l.push_back(w);
    add_fft_workloads(l);
    for (const char* command : {"smooth", "convolve"}) {
      for (FileFormat f : {FileFormat::Mha, FileFormat::Nii, FileFormat::NiiGz}) {
        Workload e;
        std::string ext = extension(f);
        ext.erase(std::remove(ext.begin(), ext.end(), '.'), ext.end());
        e.name = std::string("e2e_") + command + "_" + ext;
        e.kind = Kind::EndToEnd;
        e.command = command;
        e.format = f;
        e.volume = parse_shape("160x160x160x20", "volume");
        e.target = kMaxRatioToFloor;
        e.target_text = "<= 1.5x the I/O-only floor (ndconv convert)";
        e.description = std::string("ndconv ") + command + " on an echo-like uint8 sequence, " +
                        (e.command == "smooth" ? "sigma 1 mm" : "dense 7^4 kernel") + ", float32 " +
                        extension(f) + " out";
        l.push_back(e);
      }
    }
    Workload b;
    b.name = "batch";
    b.kind = Kind::Batch;
    b.volume = parse_shape("160x160x160", "volume");
    b.target = kMinBatchThroughputShare;
    b.target_text = ">= 90% of the I/O-only floor's throughput";
    b.description = "ndconv smooth --sigma 1 on 40 echo-like uint8 .nii.gz volumes";
    l.push_back(b);
    return l;
  }();
  return list;
}

// A dense GPU row that is not in the fixed list, named as those are (denseND_K: a K^N cube filter)
// on the volume of the fixed dense row with N dimensions, without a target (for studies of other
// filter sizes, e.g. where a launch plan's rule changes); false when `name` is not of that form.
bool other_dense_workload(const std::string& name, Workload& out) {
  int dims = 0, k = 0, used = 0;
  if (std::sscanf(name.c_str(), "dense%dd_%d%n", &dims, &k, &used) != 2 ||
      used != static_cast<int>(name.size()) || k < 1 || k > 63)
    return false;
  for (const Workload& w : bench_workloads()) {
    if (w.kind != Kind::GpuDense || w.volume.dims != dims)
      continue;
    out = w;
    out.name = name;
    out.filter = cube(dims, k);
    out.target = -1;
    out.target_text = "none (not a fixed row)";
    out.description = w.description.substr(0, w.description.rfind(' ')) + " " + std::to_string(k) +
                      "^" + std::to_string(dims);
    return true;
  }
  return false;
}

}  // namespace ndconv::perf
