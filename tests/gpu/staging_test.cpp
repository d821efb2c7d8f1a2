// The CUDA backend's host staging (src/cuda/staging.h), in CI: the memory-size setting, strided
// gather/scatter and the rows that fit a budget (chunk_pipeline_test.cpp checks the chunks of the
// pipeline against one pass).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/chunk_plan.h"
#include "cuda/staging.h"
#include "scoped_env.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using cuda_backend::parse_memory_size;

TEST(Staging, ParsesMemorySizes) {
  EXPECT_EQ(parse_memory_size("4096", "cap"), 4096u);
  EXPECT_EQ(parse_memory_size("3K", "cap"), 3u * 1024);
  EXPECT_EQ(parse_memory_size("64m", "cap"), 64u << 20);
  EXPECT_EQ(parse_memory_size("2G", "cap"), 2ull << 30);
  for (const char* bad : {"", "abc", "-5", "0", "12Q", "5KB", "1.5G", "K"})
    EXPECT_THROW(parse_memory_size(bad, "cap"), InvalidArgument) << bad;
}

TEST(Staging, MemoryCapPrefersTheOption) {
  Options o;
  {
    ScopedEnvs env;
    env.set("NDCONV_DEVICE_MEMORY_CAP", "2M");
    EXPECT_EQ(cuda_backend::memory_cap(o), 2u << 20);
    o.device_memory_cap = 1000;
    EXPECT_EQ(cuda_backend::memory_cap(o), 1000u);
    o.device_memory_cap = 0;
    env.set("NDCONV_DEVICE_MEMORY_CAP", "lots");
    EXPECT_THROW(cuda_backend::memory_cap(o), InvalidArgument);
  }
  ::unsetenv("NDCONV_DEVICE_MEMORY_CAP");  // neither the option nor the variable
  EXPECT_EQ(cuda_backend::memory_cap(o), 0u);
}

TEST(Staging, GatherScatterRoundTripStridedViews) {
  std::vector<float> big = random_values(9 * 8 * 7, fresh_seed());
  ConstVolumeView v = make_view<const float>(big.data() + 2, 3, {9, 8, 7});
  v.extent = {5, 6, 4, 1};
  std::vector<float> packed(5 * 6 * 4);
  cuda_backend::gather(v, packed.data());
  EXPECT_EQ(packed[0], big[2]);
  EXPECT_EQ(packed[5], big[2 + 9]);       // next y
  EXPECT_EQ(packed[30], big[2 + 9 * 8]);  // next z
  std::vector<float> back(big.size(), 0.0f);
  VolumeView w = make_view(back.data() + 2, 3, {9, 8, 7});
  w.extent = v.extent;
  cuda_backend::scatter(packed.data(), w);
  for (int64_t z = 0; z < 4; ++z)
    for (int64_t y = 0; y < 6; ++y)
      for (int64_t x = 0; x < 5; ++x)
        EXPECT_EQ(w.at({x, y, z, 0}), v.at({x, y, z, 0}));
}

TEST(Staging, SlabRowsFitTheBudget) {
  // 100 floats per input row, 90 per output row, halo of 4 rows, one scratch copy of the input.
  cuda_backend::ChunkRequest r;
  r.in_row = 100;
  r.out_row = 90;
  r.halo = 4;
  r.scratch_factor = 1;
  const int64_t rows = cuda_backend::rows_fitting(r, 10000, 1);
  EXPECT_EQ(rows, (10000 - 4 * 200) / (200 + 90));
  EXPECT_LE((rows + 4) * 200 + rows * 90, 10000);
  EXPECT_EQ(cuda_backend::rows_fitting(r, 800, 1), 0);           // not even the halo fits
  EXPECT_EQ(cuda_backend::rows_fitting(r, 2 * 10000, 2), rows);  // per set in flight
}

}  // namespace
}  // namespace ndconv::test
