// The resident call (ChunkPlan::resident, chunk_plan.h): the whole input and output on the device,
// pieces uploaded in order, chunks computed on several streams and downloaded on their own, so
// that nothing is uploaded twice. A template over the family's launch, included by
// cuda_backend.cu only.
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

namespace ndconv::cuda_backend {

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
    // The chunk reads its own input rows (detail::input_rows_read: the boundary resolves in them as
    // in the whole input), so that nothing a launch does to its input (a padded copy) reads rows of
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

}  // namespace ndconv::cuda_backend
