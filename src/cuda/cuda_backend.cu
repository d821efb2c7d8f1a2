// The CUDA backend's host path (cuda/cuda_backend.h): probing the devices, and for each call a
// pipeline of chunks along the last axis (chunk_plan.h: resident where the problem fits the
// device, else staged slabs, whose halo staging.h explains) whose uploads, kernels and downloads
// overlap on several streams, with device and pinned staging buffers kept between calls
// (buffer_pools.h), and the RunReport. Kernels are launched through the low-level API (launch.h).
// Calls from several threads run at once: all state of a call is its own, and the tap buffers the
// launchers share order only the launches whose taps would overwrite another's (uploaded_taps.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/parallel_for.h"
#include "core/first_touch.h"
#include "cuda/buffer_pools.h"
#include "cuda/check.h"
#include "cuda/chunk_plan.h"
#include "cuda/convert/convert.h"
#include "cuda/device_facts.h"
#include "cuda/device_memory.h"
#include "cuda/launch.h"
#include "cuda/plan.h"
#include "cuda/staging.h"
#include "cuda/stream_scratch.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_host.h"
#include "core/stored_access.h"
#include "ndconv/memory.h"

namespace ndconv::cuda_backend {

CudaStatus probe() {
  CudaStatus s;
  s.compiled = true;
  try {
    cudaRuntimeGetVersion(&s.runtime_version);
    cudaDriverGetVersion(&s.driver_version);
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      cudaGetLastError();  // reset the runtime's last-error state (the error is not sticky)
      s.reason = std::string(err == cudaErrorInsufficientDriver ? "no usable CUDA driver"
                             : err == cudaErrorNoDevice         ? "no CUDA device"
                                                                : "CUDA unavailable") +
                 " (" + cudaGetErrorName(err) + ", error " + std::to_string(int(err)) + ")";
      return s;
    }
    if (count == 0) {
      s.reason = "no CUDA device";
      return s;
    }
    for (int d = 0; d < count; ++d) {
      const DeviceInfo info = device_info(d);
      mark_started(d);
      s.devices.push_back(info);
    }
    s.usable = true;
    s.reason = std::to_string(count) + " CUDA device(s), runtime " +
               std::to_string(s.runtime_version) + ", driver " + std::to_string(s.driver_version);
  } catch (const std::exception& e) {
    s.usable = false;
    s.devices.clear();
    s.reason = std::string("CUDA probe failed: ") + e.what();
  }
  return s;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Floats the call may allocate: 90% of the free memory (with the idle buffers this device keeps,
// which the call reuses or frees) less a 64 MiB reserve, under the cap.
int64_t device_budget_floats(const Options& options, RunReport& report) {
  size_t free_bytes = 0, total_bytes = 0;
  NDCONV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  free_bytes += device_cache(options.cuda_device).idle_bytes();
  const size_t reserve = size_t(64) << 20;
  size_t budget = free_bytes > reserve ? (free_bytes - reserve) / 10 * 9 : 0;
  const size_t cap = memory_cap(options);
  if (cap > 0 && cap < budget) {
    budget = cap;
    report.notes.push_back("device memory cap: " + std::to_string(cap) + " bytes");
  }
  return static_cast<int64_t>(budget / sizeof(float));
}

// A device's properties, queried once per process: cudaGetDeviceProperties reads every attribute
// and would add its cost to each call.
const cudaDeviceProp& device_properties(int device) {
  static std::mutex mutex;
  static auto* cache = new std::map<int, cudaDeviceProp>();
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache->find(device);
  if (it != cache->end())
    return it->second;
  cudaDeviceProp prop{};
  NDCONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return cache->emplace(device, prop).first->second;
}

void set_device(const Options& options, RunReport& report) {
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  mark_started(options.cuda_device);
  const cudaDeviceProp& prop = device_properties(options.cuda_device);
  report.device_name = prop.name;
  report.notes.push_back("registers per SM: " + std::to_string(prop.regsPerMultiprocessor) +
                         ", SMs: " + std::to_string(prop.multiProcessorCount));
}

bool needs_conversion(const StoredVolumeView& v) {
  return v.type != ScalarType::Float32 || v.scale != 1.0 || v.offset != 0.0;
}

// One set of buffers in flight: a stream, device buffers for a chunk's input, output and scratch,
// pinned staging where the caller's memory is not pinned or not contiguous, and timing events
// (start, uploaded, computed, downloaded) for the report.
struct BufferSet {
  Stream stream;
  Lease device_in, device_out, device_scratch;
  Lease device_stored;  // the stored values of a chunk that is converted on the device
  Lease staging_in, staging_out;
  Event start{EventTiming::On}, uploaded{EventTiming::On}, computed{EventTiming::On},
      downloaded{EventTiming::On};
  Event staging_in_free{EventTiming::Off};
  bool staging_in_pending = false;  // staging_in_free recorded and not yet waited for
};

// The pipeline of one call. Its destructor waits for the streams before the buffers go back to the
// caches, also when the call ends by an exception.
class Pipeline {
 public:
  // `stored_bytes`: bytes per input value as stored (4 for float32); `convert`: converted on the
  // device from a buffer of stored values.
  Pipeline(const ChunkPlan& plan, int device, std::size_t kept_limit, std::size_t stored_bytes,
           bool convert, bool stage_in, bool stage_out) {
    for (int s = 0; s < plan.buffer_sets; ++s) {
      auto set = std::make_unique<BufferSet>();
      const auto floats = [](int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); };
      set->device_in = Lease(device_cache(device), floats(plan.in_buffer_floats), kept_limit,
                             "cudaMalloc (chunk input)");
      set->device_out = Lease(device_cache(device), floats(plan.out_buffer_floats), kept_limit,
                              "cudaMalloc (chunk output)");
      set->device_scratch = Lease(device_cache(device), floats(plan.scratch_buffer_floats),
                                  kept_limit, "cudaMalloc (separable scratch)");
      const std::size_t stored = static_cast<std::size_t>(plan.in_buffer_floats) * stored_bytes;
      if (convert)
        set->device_stored =
            Lease(device_cache(device), stored, kept_limit, "cudaMalloc (chunk stored values)");
      if (stage_in)
        set->staging_in =
            Lease(staging_cache(), stored, kStagingKeptBytes, "cudaHostAlloc (input staging)");
      if (stage_out)
        set->staging_out = Lease(staging_cache(), floats(plan.out_buffer_floats), kStagingKeptBytes,
                                 "cudaHostAlloc (output staging)");
      sets_.push_back(std::move(set));
    }
  }
  ~Pipeline() {
    for (auto& set : sets_)
      cudaStreamSynchronize(set->stream.get());  // errors were (or will be) reported by the call
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  BufferSet& set(std::size_t chunk) { return *sets_[chunk % sets_.size()]; }

 private:
  std::vector<std::unique_ptr<BufferSet>> sets_;
};

// How the call reaches the caller's memory: the copy engines read and write it directly where it
// is pinned and contiguous; else pinned staging buffers are filled and emptied by the CPU.
struct HostAccess {
  bool input_direct = false;
  bool output_direct = false;
  std::size_t kept_limit = 0;  // device memory the caches keep after the call
  int threads = 1;             // CPU threads of the staging copies
};

HostAccess host_access(const StoredVolumeView& input, const VolumeView& output,
                       const Options& options) {
  HostAccess h;
  h.input_direct =
      input.is_contiguous() &&
      is_pinned(input.data, static_cast<size_t>(input.voxel_count()) * scalar_size(input.type));
  h.output_direct =
      output.is_contiguous() &&
      is_pinned(output.data, static_cast<size_t>(output.voxel_count()) * sizeof(float));
  const size_t cap = memory_cap(options);
  h.kept_limit = cap > 0 ? std::min(cap, kDeviceKeptBytes) : kDeviceKeptBytes;
  h.threads = core::resolve_thread_count(options.threads);
  return h;
}

std::string host_memory_note(const HostAccess& host, double staging_seconds, double call_seconds) {
  return std::string("host memory: input ") +
         (host.input_direct ? "pinned, copied directly" : "staged") + ", output " +
         (host.output_direct ? "pinned, copied directly" : "staged") + "; host staging " +
         std::to_string(staging_seconds * 1e3) + " ms of " + std::to_string(call_seconds * 1e3) +
         " ms";
}

// The buffers and streams of a resident call (ChunkPlan::resident): the whole input and output on
// the device, an upload stream, ChunkPlan::compute_streams compute streams (each with its own
// scratch), a download stream, and two pinned staging buffers per direction where the caller's
// memory is not read or written directly (piece p and chunk c use buffer p % 2 and c % 2). Its
// destructor waits for the streams before the buffers go back to the caches, also when the call
// ends by an exception.
struct ResidentPipeline {
  static constexpr int kStaging = 2;
  Stream upload, download;
  std::vector<std::unique_ptr<Stream>> compute;  // chunk c on compute[c % size]
  std::vector<Lease> device_scratch;             // one per compute stream
  Lease device_in, device_out, device_stored;
  Lease staging_in[kStaging], staging_out[kStaging];
  Event staging_in_free[kStaging] = {Event(EventTiming::Off), Event(EventTiming::Off)};
  std::vector<std::unique_ptr<Event>> uploaded;  // per piece
  // Per chunk: compute start and end, download start and end.
  std::vector<std::unique_ptr<Event>> compute_start, computed, download_start, downloaded;

  ResidentPipeline(const ChunkPlan& plan, int device, const HostAccess& host,
                   std::size_t stored_bytes, bool convert, int64_t in_row, int64_t out_row) {
    const auto floats = [](int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); };
    BlockCache& cache = device_cache(device);
    device_in =
        Lease(cache, floats(plan.in_buffer_floats), host.kept_limit, "cudaMalloc (resident input)");
    device_out = Lease(cache, floats(plan.out_buffer_floats), host.kept_limit,
                       "cudaMalloc (resident output)");
    for (int s = 0; s < plan.compute_streams; ++s) {
      compute.push_back(std::make_unique<Stream>());
      device_scratch.push_back(Lease(cache, floats(plan.scratch_buffer_floats), host.kept_limit,
                                     "cudaMalloc (separable scratch)"));
    }
    if (convert)
      device_stored = Lease(cache, static_cast<std::size_t>(plan.in_buffer_floats) * stored_bytes,
                            host.kept_limit, "cudaMalloc (resident stored values)");
    int64_t piece_rows = 0, chunk_rows = 0;
    for (const Piece& p : plan.pieces)
      piece_rows = std::max(piece_rows, p.rows);
    for (const Chunk& c : plan.chunks)
      chunk_rows = std::max(chunk_rows, c.out_rows);
    for (int b = 0; b < kStaging; ++b) {
      if (!host.input_direct)
        staging_in[b] =
            Lease(staging_cache(), static_cast<std::size_t>(piece_rows * in_row) * stored_bytes,
                  kStagingKeptBytes, "cudaHostAlloc (input staging)");
      if (!host.output_direct)
        staging_out[b] = Lease(staging_cache(), floats(chunk_rows * out_row), kStagingKeptBytes,
                               "cudaHostAlloc (output staging)");
    }
    const auto events = [](std::vector<std::unique_ptr<Event>>& list, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i)
        list.push_back(std::make_unique<Event>(EventTiming::On));
    };
    events(uploaded, plan.pieces.size());
    for (auto* list : {&compute_start, &computed, &download_start, &downloaded})
      events(*list, plan.chunks.size());
  }
  ~ResidentPipeline() {
    cudaStreamSynchronize(upload.get());  // errors were (or will be) reported by the call
    for (const auto& s : compute)
      cudaStreamSynchronize(s->get());
    cudaStreamSynchronize(download.get());
  }
  ResidentPipeline(const ResidentPipeline&) = delete;
  ResidentPipeline& operator=(const ResidentPipeline&) = delete;
};

float elapsed_ms(const Event& from, const Event& to) {
  float ms = 0;
  NDCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return ms;
}

// The resident pipeline (chunk_plan.h): the pieces of the input uploaded in order on one stream
// (converted there when stored values need it), each chunk computed on a compute stream (chunks
// take the plan's compute streams in turn, so that small chunks' kernels overlap) once the
// last piece it reads is on the device, as the original problem restricted to its output rows
// (so the kernel resolves every boundary as in one pass), and downloaded on its own stream, so
// that upload, kernels and download overlap and nothing is uploaded twice. The host enqueues each
// chunk once the pieces it waits for are enqueued.
template <typename Launch>
void run_resident(const StoredVolumeView& input, const VolumeView& output, const ChunkPlan& plan,
                  const ChunkRequest& request, const HostAccess& host, const Options& options,
                  RunReport& report, Launch launch) {
  const int dims = input.dims, last = dims - 1;
  const size_t stored_bytes = scalar_size(input.type);
  const bool convert = needs_conversion(input);
  const int64_t in_row = request.in_row, out_row = request.out_row;
  const int64_t row_bytes = in_row * static_cast<int64_t>(stored_bytes);
  const int64_t chunks = static_cast<int64_t>(plan.chunks.size());
  const auto t_start = Clock::now();
  double host_staging = 0;
  ResidentPipeline pipe(plan, options.cuda_device, host, stored_bytes, convert, in_row, out_row);
  const double setup_seconds = seconds_since(t_start);
  double launch_seconds = 0;  // the host's time in the launches (plans, tap uploads, enqueueing)
  float* const d_in = pipe.device_in.floats();
  float* const d_out = pipe.device_out.floats();
  char* const d_stored =
      convert ? static_cast<char*>(pipe.device_stored.get()) : reinterpret_cast<char*>(d_in);
  const cudaStream_t up = pipe.upload.get(), down = pipe.download.get();

  // Host side of a downloaded chunk: its output copied out of staging.
  int64_t finished = 0;
  auto finish_through = [&](int64_t chunk) {
    for (; finished <= chunk; ++finished) {
      pipe.downloaded[static_cast<size_t>(finished)]->synchronize();
      if (host.output_direct)
        continue;
      const Chunk& c = plan.chunks[static_cast<size_t>(finished)];
      const auto t0 = Clock::now();
      const float* staged = pipe.staging_out[finished % ResidentPipeline::kStaging].floats();
      const VolumeView host_out = last_axis_rows(output, c.out_first, c.out_rows);
      if (output.is_contiguous()) {
        detail::copy_on_all_cores(
            host_out.data, staged,
            static_cast<size_t>(c.out_rows * out_row * static_cast<int64_t>(sizeof(float))),
            host.threads);
      } else {
        scatter(staged, host_out);
      }
      host_staging += seconds_since(t0);
    }
  };

  auto enqueue_chunk = [&](int64_t i) {
    if (i > 0 && options.progress && !options.progress(double(i) / double(chunks)))
      throw Aborted();
    const Chunk& c = plan.chunks[static_cast<size_t>(i)];
    const auto e = static_cast<size_t>(i);
    const size_t s = e % pipe.compute.size();
    const cudaStream_t compute = pipe.compute[s]->get();
    NDCONV_CUDA_CHECK(
        cudaStreamWaitEvent(compute, pipe.uploaded[static_cast<size_t>(c.wait_piece)]->get(), 0));
    pipe.compute_start[e]->record(compute);
    Index out_extent = output.extent;
    out_extent[last] = c.out_rows;
    const VolumeView d_out_view = make_view(d_out + c.out_first * out_row, dims, out_extent);
    // The chunk reads its own input rows (resident_input_rows: the boundary resolves in them as in
    // the whole input), so that nothing a launch does to its input (a padded copy) reads rows of
    // pieces still in flight.
    Index in_extent = input.extent;
    in_extent[last] = c.in_rows;
    const auto t_launch = Clock::now();
    launch(make_view<const float>(d_in + c.in_first * in_row, dims, in_extent), d_out_view,
           request.offset_last + c.out_first - c.in_first, pipe.device_scratch[s], compute);
    launch_seconds += seconds_since(t_launch);
    pipe.computed[e]->record(compute);

    // Staging buffer i % 2 was last used by chunk i - 2: its output must be out of it.
    if (!host.output_direct)
      finish_through(i - ResidentPipeline::kStaging);
    NDCONV_CUDA_CHECK(cudaStreamWaitEvent(down, pipe.computed[e]->get(), 0));
    pipe.download_start[e]->record(down);
    float* download_to = host.output_direct
                             ? last_axis_rows(output, c.out_first, c.out_rows).data
                             : pipe.staging_out[i % ResidentPipeline::kStaging].floats();
    NDCONV_CUDA_CHECK(cudaMemcpyAsync(download_to, d_out + c.out_first * out_row,
                                      static_cast<size_t>(c.out_rows * out_row) * sizeof(float),
                                      cudaMemcpyDeviceToHost, down));
    pipe.downloaded[e]->record(down);
  };

  Event upload_start(EventTiming::On);
  upload_start.record(up);
  int64_t next_chunk = 0;
  for (size_t p = 0; p < plan.pieces.size(); ++p) {
    const Piece& piece = plan.pieces[p];
    char* const dst = d_stored + piece.first * row_bytes;
    const size_t bytes = static_cast<size_t>(piece.rows * row_bytes);
    if (host.input_direct) {
      NDCONV_CUDA_CHECK(
          cudaMemcpyAsync(dst, reinterpret_cast<const char*>(input.data) + piece.first * row_bytes,
                          bytes, cudaMemcpyHostToDevice, up));
    } else {
      const size_t b = p % ResidentPipeline::kStaging;
      if (p >= ResidentPipeline::kStaging)
        pipe.staging_in_free[b].synchronize();  // the upload of piece p - 2 has read it
      const auto t0 = Clock::now();
      char* staged = static_cast<char*>(pipe.staging_in[b].get());
      if (input.is_contiguous()) {
        detail::copy_on_all_cores(
            staged, reinterpret_cast<const char*>(input.data) + piece.first * row_bytes,
            static_cast<size_t>(piece.rows * row_bytes), host.threads);
      } else {
        detail::gather_stored_rows(input, piece.first, piece.rows, staged);
      }
      host_staging += seconds_since(t0);
      NDCONV_CUDA_CHECK(cudaMemcpyAsync(dst, staged, bytes, cudaMemcpyHostToDevice, up));
      pipe.staging_in_free[b].record(up);
    }
    if (convert) {
      enqueue_to_float(input.type, dst, d_in + piece.first * in_row, piece.rows * in_row,
                       input.scale, input.offset, up);
    }
    pipe.uploaded[p]->record(up);
    // A staged input keeps the host busy per piece: the chunks that can run are enqueued now.
    // A direct input's pieces are all enqueued first (no host work), so that waiting for a
    // staged output's chunk never holds back an upload; a chunk is enqueued only after the event
    // it waits for is recorded (waiting for an unrecorded event does not wait).
    if (host.input_direct && p + 1 < plan.pieces.size())
      continue;
    for (; next_chunk < chunks &&
           plan.chunks[static_cast<size_t>(next_chunk)].wait_piece <= static_cast<int>(p);
         ++next_chunk)
      enqueue_chunk(next_chunk);
  }
  for (; next_chunk < chunks; ++next_chunk)  // (none: every chunk waits for some piece)
    enqueue_chunk(next_chunk);
  const double enqueued_seconds = seconds_since(t_start);
  finish_through(chunks - 1);

  // The GPU's own time per stage: the upload stream's span, the kernels and downloads summed over
  // chunks (the stages overlap, so the sum may exceed the call's wall time). The last pieces may
  // be read by no chunk: the upload stream is waited for too.
  pipe.uploaded.back()->synchronize();
  report.seconds_upload = elapsed_ms(upload_start, *pipe.uploaded.back()) / 1e3;
  double compute_ms = 0, download_ms = 0;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    compute_ms += elapsed_ms(*pipe.compute_start[i], *pipe.computed[i]);
    download_ms += elapsed_ms(*pipe.download_start[i], *pipe.downloaded[i]);
  }
  report.seconds_compute = compute_ms / 1e3;
  report.seconds_download = download_ms / 1e3;
  report.notes.push_back("pipelined in " + std::to_string(chunks) + " chunks of " +
                         std::to_string(plan.chunks[0].out_rows) + " rows along the last axis on " +
                         std::to_string(plan.compute_streams) +
                         " streams, resident input (uploaded in " +
                         std::to_string(plan.pieces.size()) + " pieces)");
  report.notes.push_back(host_memory_note(host, host_staging, seconds_since(t_start)));
  char line[200];
  std::snprintf(line, sizeof line,
                "host: buffers and events %.3f ms, launches %.3f ms, all enqueued at %.3f ms",
                setup_seconds * 1e3, launch_seconds * 1e3, enqueued_seconds * 1e3);
  report.notes.push_back(line);
}

// The host path shared by run_dense and run_separable: the volume in chunks along the last axis
// (chunk_plan.h): resident (run_resident) where the whole problem fits the device budget, else
// slabs each uploaded, filtered and downloaded on the stream of its buffer set, so that the copies
// of one chunk overlap the kernels of its neighbours. `launch(in_view, out_view, offset_last,
// scratch, stream)` enqueues the filtering of one chunk whose input/output are device views, as
// the problem with that offset along the last axis; `halo` is the filter extent along the last
// axis minus one and `offset_last` the problem's offset along it.
template <typename Launch>
void run_pipelined(const StoredVolumeView& input, const VolumeView& output, Boundary boundary,
                   int64_t halo, int64_t offset_last, int64_t scratch_factor,
                   int64_t reserved_floats, const Options& options, RunReport& report,
                   Launch launch) {
  const int dims = input.dims;
  const int last = dims - 1;
  ChunkRequest request;
  request.out_rows = output.extent[last];
  request.in_rows = input.extent[last];
  request.in_row = input.voxel_count() / input.extent[last];
  request.out_row = output.voxel_count() / output.extent[last];
  request.halo = halo;
  request.offset_last = offset_last;
  request.scratch_factor = scratch_factor;
  request.reserved_floats = reserved_floats;
  request.budget_floats = device_budget_floats(options, report);
  request.boundary = boundary;
  const size_t stored_bytes = scalar_size(input.type);
  const bool convert = needs_conversion(input);
  request.stored_bytes = convert ? static_cast<int64_t>(stored_bytes) : 0;
  const ChunkPlan plan = plan_chunks(request);
  const int64_t chunks = static_cast<int64_t>(plan.chunks.size());
  report.slabs = static_cast<int>(chunks);
  const HostAccess host = host_access(input, output, options);
  if (plan.resident) {
    run_resident(input, output, plan, request, host, options, report, launch);
    return;
  }
  const bool input_direct = host.input_direct, output_direct = host.output_direct;
  const size_t kept_limit = host.kept_limit;
  const int threads = host.threads;
  const int64_t in_row = request.in_row, out_row = request.out_row;

  const auto t_start = Clock::now();
  double host_staging = 0;
  double gpu_upload_ms = 0, gpu_compute_ms = 0, gpu_download_ms = 0;
  Pipeline pipeline(plan, options.cuda_device, kept_limit, stored_bytes, convert, !input_direct,
                    !output_direct);

  // Host side of a finished chunk: the output copied out of staging; the GPU times summed.
  int64_t finished = 0;
  auto finish_through = [&](int64_t chunk) {
    for (; finished <= chunk; ++finished) {
      BufferSet& set = pipeline.set(static_cast<size_t>(finished));
      const Chunk& c = plan.chunks[static_cast<size_t>(finished)];
      set.downloaded.synchronize();
      float ms = 0;
      NDCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, set.start.get(), set.uploaded.get()));
      gpu_upload_ms += ms;
      NDCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, set.uploaded.get(), set.computed.get()));
      gpu_compute_ms += ms;
      NDCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, set.computed.get(), set.downloaded.get()));
      gpu_download_ms += ms;
      if (output_direct)
        continue;
      const auto t0 = Clock::now();
      const VolumeView host_out = last_axis_rows(output, c.out_first, c.out_rows);
      if (output.is_contiguous()) {
        detail::copy_on_all_cores(
            host_out.data, set.staging_out.get(),
            static_cast<size_t>(c.out_rows * out_row * static_cast<int64_t>(sizeof(float))),
            threads);
      } else {
        scatter(set.staging_out.floats(), host_out);
      }
      host_staging += seconds_since(t0);
    }
  };

  for (int64_t i = 0; i < chunks; ++i) {
    if (i > 0 && options.progress && !options.progress(double(i) / double(chunks)))
      throw Aborted();
    const Chunk& c = plan.chunks[static_cast<size_t>(i)];
    BufferSet& set = pipeline.set(static_cast<size_t>(i));
    const cudaStream_t stream = set.stream.get();
    // The set's buffers were last used by chunk i - sets: its output must be out of staging.
    finish_through(i - plan.buffer_sets);

    // Upload: the staged rows as runs of consecutive source rows (one run in one pass and for
    // interior chunks), zeros for a zero boundary. Stored values that need converting land in
    // their own buffer first and are converted into the chunk's input on the device.
    const std::vector<RowRun> runs =
        plan.one_pass ? std::vector<RowRun>{{0, c.in_rows, 0}} : row_runs(c, [&](int64_t i_row) {
          return detail::boundary_index(i_row, input.extent[last], boundary);
        });
    float* const d_in = set.device_in.floats();
    char* const d_stored =
        convert ? static_cast<char*>(set.device_stored.get()) : reinterpret_cast<char*>(d_in);
    const int64_t row_bytes = in_row * static_cast<int64_t>(stored_bytes);
    set.start.record(stream);
    if (input_direct) {
      for (const RowRun& run : runs) {
        if (run.source < 0)
          continue;  // cleared below
        NDCONV_CUDA_CHECK(cudaMemcpyAsync(
            d_stored + run.first * row_bytes,
            reinterpret_cast<const char*>(input.data) + run.source * row_bytes,
            static_cast<size_t>(run.rows * row_bytes), cudaMemcpyHostToDevice, stream));
      }
    } else {
      if (set.staging_in_pending)
        set.staging_in_free.synchronize();  // the upload of chunk i - sets has read it
      const auto t0 = Clock::now();
      char* staged = static_cast<char*>(set.staging_in.get());
      for (const RowRun& run : runs) {
        if (run.source < 0)
          continue;  // cleared on the device below
        char* dst = staged + run.first * row_bytes;
        if (input.is_contiguous()) {
          detail::copy_on_all_cores(
              dst, reinterpret_cast<const char*>(input.data) + run.source * row_bytes,
              static_cast<size_t>(run.rows * row_bytes), threads);
        } else {
          detail::gather_stored_rows(input, run.source, run.rows, dst);
        }
      }
      host_staging += seconds_since(t0);
      NDCONV_CUDA_CHECK(cudaMemcpyAsync(d_stored, staged,
                                        static_cast<size_t>(c.in_rows * row_bytes),
                                        cudaMemcpyHostToDevice, stream));
      set.staging_in_free.record(stream);
      set.staging_in_pending = true;
    }
    if (convert) {
      enqueue_to_float(input.type, d_stored, d_in, c.in_rows * in_row, input.scale, input.offset,
                       stream);
    }
    for (const RowRun& run : runs) {
      if (run.source < 0) {
        NDCONV_CUDA_CHECK(cudaMemsetAsync(d_in + run.first * in_row, 0,
                                          static_cast<size_t>(run.rows * in_row) * sizeof(float),
                                          stream));
      }
    }
    set.uploaded.record(stream);

    Index in_extent = input.extent, out_extent = output.extent;
    in_extent[last] = c.in_rows;
    out_extent[last] = c.out_rows;
    const ConstVolumeView d_in_view = make_view<const float>(d_in, dims, in_extent);
    const VolumeView d_out_view = make_view(set.device_out.floats(), dims, out_extent);
    launch(d_in_view, d_out_view, plan.one_pass ? offset_last : 0, set.device_scratch, stream);
    set.computed.record(stream);

    float* download_to = output_direct ? last_axis_rows(output, c.out_first, c.out_rows).data
                                       : set.staging_out.floats();
    NDCONV_CUDA_CHECK(cudaMemcpyAsync(download_to, set.device_out.floats(),
                                      static_cast<size_t>(c.out_rows * out_row) * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream));
    set.downloaded.record(stream);
  }
  finish_through(chunks - 1);

  // The GPU's own time per stage, summed over chunks (the stages of different chunks overlap,
  // so the sum may exceed the call's wall time); the host's staging copies count as transfers.
  report.seconds_upload = gpu_upload_ms / 1e3;
  report.seconds_compute = gpu_compute_ms / 1e3;
  report.seconds_download = gpu_download_ms / 1e3;
  if (!plan.one_pass) {
    report.notes.push_back(std::string(plan.memory_bound ? "processed in " : "pipelined in ") +
                           std::to_string(chunks) + " slabs of " +
                           std::to_string(plan.chunks[0].out_rows) + " rows along the last axis, " +
                           std::to_string(plan.buffer_sets) + " in flight");
  }
  report.notes.push_back(host_memory_note(host, host_staging, seconds_since(t_start)));
}

}  // namespace

void run_dense(const detail::CorrelationProblem& problem, const Options& options,
               RunReport& report) {
  DenseKernelRequest request;
  request.outputs_per_thread = options.expert.outputs_per_thread;
  run_dense(problem, options, report, request, Tuning{});
}

void run_dense(const detail::CorrelationProblem& problem, const Options& options, RunReport& report,
               const DenseKernelRequest& request, const Tuning& tuning) {
  run_dense_stored(problem, stored_view(problem.input), options, report, request, tuning);
}

void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report) {
  run_separable(problem, options, report, Tuning{});
}

void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report, const Tuning& tuning) {
  run_separable_stored(problem, stored_view(problem.input), options, report, tuning);
}

void run_dense_stored(const detail::CorrelationProblem& problem, const StoredVolumeView& input,
                      const Options& options, RunReport& report) {
  DenseKernelRequest request;
  request.outputs_per_thread = options.expert.outputs_per_thread;
  run_dense_stored(problem, input, options, report, request, Tuning{});
}

void run_dense_stored(const detail::CorrelationProblem& problem, const StoredVolumeView& input,
                      const Options& options, RunReport& report, const DenseKernelRequest& request,
                      const Tuning& tuning) {
  set_device(options, report);
  const int last = problem.input.dims - 1;
  // Large filters keep their taps in device memory (at most 31^3 or 15^4 floats).
  int64_t reserved_taps = 1;
  for (int a = 0; a <= last; ++a)
    reserved_taps *= problem.filter_extent[a];

  LaunchPlan plan;
  run_pipelined(input, problem.output, problem.boundary, problem.filter_extent[last] - 1,
                problem.offset[last], 0, reserved_taps, options, report,
                [&](const ConstVolumeView& in, const VolumeView& out, int64_t offset_last,
                    const Lease&, cudaStream_t stream) {
                  detail::CorrelationProblem p = problem;
                  p.input = in;
                  p.output = out;
                  p.offset[last] = offset_last;
                  plan = launch_dense_device(p, request, options.cuda_device, stream, tuning);
                });
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back("dense plan: " + plan.describe());
}

void run_separable_stored(const detail::SeparableProblem& problem, const StoredVolumeView& input,
                          const Options& options, RunReport& report) {
  run_separable_stored(problem, input, options, report, Tuning{});
}

void run_separable_stored(const detail::SeparableProblem& problem, const StoredVolumeView& input,
                          const Options& options, RunReport& report, const Tuning& tuning) {
  set_device(options, report);
  const int last = problem.input.dims - 1;
  const int64_t k_last = std::max<int64_t>(1, problem.taps[last].size());
  const int64_t scratch_halves =
      static_cast<int64_t>(separable_scratch_floats(problem) / problem.input.voxel_count());

  LaunchPlan plan;
  run_pipelined(input, problem.output, problem.boundary, k_last - 1, problem.offset[last],
                scratch_halves, 0, options, report,
                [&](const ConstVolumeView& in, const VolumeView& out, int64_t offset_last,
                    const Lease& scratch, cudaStream_t stream) {
                  detail::SeparableProblem p = problem;
                  p.input = in;
                  p.output = out;
                  p.offset[last] = offset_last;
                  if (separable_scratch_floats(p) * sizeof(float) > scratch.bytes())
                    throw InvalidArgument("internal: the chunk's separable scratch is too small");
                  plan = launch_separable_device(p, scratch.floats(), options.cuda_device, stream,
                                                 options.expert.outputs_per_thread, tuning);
                });
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back("separable plan: " + plan.describe());
}

namespace {

// The device entry points' checks: contiguous views of memory the device can address.
void check_device_view(const void* data, bool contiguous, int device, const char* what) {
  if (!contiguous)
    throw InvalidArgument(std::string(what) + " must be contiguous for the device entry points");
  cudaPointerAttributes attributes{};
  NDCONV_CUDA_CHECK(cudaPointerGetAttributes(&attributes, data));
  const bool on_device = attributes.type == cudaMemoryTypeDevice && attributes.device == device;
  if (!on_device && attributes.type != cudaMemoryTypeManaged) {
    throw InvalidArgument(std::string(what) + " is not in the memory of CUDA device " +
                          std::to_string(device) + " (use filter_dense / filter_separable for " +
                          "host memory)");
  }
}

void prepare_device_call(const ConstVolumeView& input, const VolumeView& output,
                         const Options& options, RunReport& report) {
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  mark_started(options.cuda_device);
  check_device_view(input.data, input.is_contiguous(), options.cuda_device, "the input volume");
  check_device_view(output.data, output.is_contiguous(), options.cuda_device, "the output volume");
  report.backend = Backend::Cuda;
  report.backend_reason = "device memory on CUDA device " + std::to_string(options.cuda_device);
}

}  // namespace

void run_dense_device(const detail::CorrelationProblem& problem, const Options& options,
                      void* stream_handle, RunReport& report) {
  prepare_device_call(problem.input, problem.output, options, report);
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  const LaunchPlan plan =
      launch_dense_device(problem, options.expert.outputs_per_thread, options.cuda_device, stream);
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back("dense plan: " + plan.describe());
}

void run_separable_device(const detail::SeparableProblem& problem, const Options& options,
                          void* stream_handle, RunReport& report) {
  prepare_device_call(problem.input, problem.output, options, report);
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  const int64_t scratch_floats = static_cast<int64_t>(separable_scratch_floats(problem));
  // Stream-ordered: freed on `stream` after the kernels that use it, without waiting here.
  std::optional<StreamScratch> scratch;
  if (scratch_floats > 0) {
    scratch.emplace(options.cuda_device, scratch_floats, stream);
    if (scratch->get() == nullptr) {
      throw InvalidArgument("no device memory for the separable filter's scratch (" +
                            std::to_string(scratch_floats * 4) + " bytes)");
    }
  }
  const LaunchPlan plan =
      launch_separable_device(problem, scratch ? scratch->get() : nullptr, options.cuda_device,
                              stream, options.expert.outputs_per_thread);
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back("separable plan: " + plan.describe());
}

}  // namespace ndconv::cuda_backend
