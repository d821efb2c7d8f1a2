// The staged call (chunk_plan.h): slabs along the last axis, each uploaded, filtered and
// downloaded on the stream of its buffer set, so that the copies of one chunk overlap the kernels
// of its neighbours; run_pipelined hands a problem that fits the device to the resident call. A
// template over the family's launch, included by cuda_backend.cu only.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/first_touch.h"
#include "core/parallel_for.h"
#include "core/stored_access.h"
#include "cuda/buffer_pools.h"
#include "cuda/check.h"
#include "cuda/chunk_plan.h"
#include "cuda/convert/convert.h"
#include "cuda/device_memory.h"
#include "cuda/host_call.h"
#include "cuda/staging.h"
#include "cuda/stream_scratch.h"
#include "ndconv/memory.h"
#include "cuda/resident_pipeline.h"

namespace ndconv::cuda_backend {

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

}  // namespace ndconv::cuda_backend
