// The CPU median's fast path (src/cpu/median_row_kernel.h) against the sorting reference
// (tests/common), bit for bit: every instruction set, 2D/3D/4D, radii 0 to 7 (also wider than the
// volume), every boundary (constant with a value other than 0), data with NaNs, infinities and
// signed zeros, dark data, 8-bit data with many ties, contiguous and strided views, one and three
// threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu_cases.h"
#include "ndconv/device.h"
#include "ndconv/errors.h"
#include "ndconv/filters.h"
#include "reference.h"
#include "strided_views.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

// A NaN ndconv never writes (it writes the quiet NaN 0x7fc00000), so an unwritten voxel differs
// from every reference value.
constexpr uint32_t kPoisonBits = 0x7fa5a5a5u;

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

enum class Data { Random, Special, Dark, Bytes };

const char* name(Data d) {
  return d == Data::Random    ? "random"
         : d == Data::Special ? "NaN, inf, signed zeros"
         : d == Data::Dark    ? "dark"
                              : "8-bit";
}

std::vector<float> make_data(Data kind, int64_t count, uint64_t seed) {
  std::vector<float> v = random_values(count, seed);
  std::mt19937_64 rng(seed + 1);
  std::uniform_int_distribution<int> pick(0, 99);
  std::uniform_int_distribution<int> byte(0, 255);
  const float inf = std::numeric_limits<float>::infinity();
  for (float& x : v) {
    const int p = pick(rng);
    switch (kind) {
      case Data::Random:
        break;
      case Data::Special:  // a NaN of each sign and with a payload, infinities, both zeros
        x = p < 8    ? std::nanf("")
            : p < 12 ? -std::nanf("7")
            : p < 18 ? inf
            : p < 24 ? -inf
            : p < 32 ? 0.0f
            : p < 40 ? -0.0f
                     : x;
        break;
      case Data::Dark:  // mostly zeros, a few tiny and subnormal values
        x = p < 80 ? 0.0f : p < 90 ? x * 1e-40f : x * 1e-3f;
        break;
      case Data::Bytes:  // speckle-like 8-bit values stored as floats: many ties
        x = static_cast<float>(byte(rng) * byte(rng) / 255);
        break;
    }
  }
  return v;
}

float constant_for(Data d) {
  return d == Data::Bytes ? 37.0f : d == Data::Dark ? -0.0f : 0.37f;
}

struct Case {
  int dims;
  Index extent;
  Index radius;
};

// Radii 0 to 7 along each axis, wider than the volume on some, odd extents along x so that the
// last lanes of a row are partial for every instruction set.
const Case kCases[] = {
    {2, {37, 9, 1, 1}, {1, 1, 0, 0}}, {2, {21, 13, 1, 1}, {7, 0, 0, 0}},
    {2, {5, 17, 1, 1}, {3, 7, 0, 0}}, {2, {16, 3, 1, 1}, {0, 2, 0, 0}},
    {3, {19, 7, 6, 1}, {1, 1, 1, 0}}, {3, {11, 5, 4, 1}, {2, 3, 2, 0}},
    {3, {3, 4, 9, 1}, {5, 0, 4, 0}},  {3, {13, 6, 5, 1}, {0, 0, 0, 0}},
    {4, {9, 4, 3, 5}, {1, 1, 1, 1}},  {4, {6, 3, 3, 4}, {2, 1, 0, 6}},
};

std::string label(const Case& c, Boundary b, Data d) {
  std::string s = std::to_string(c.dims) + "D " + to_string(b) + " " + name(d) + ", radius";
  for (int a = 0; a < c.dims; ++a)
    s += " " + std::to_string(c.radius[a]);
  return s;
}

void expect_bits(const std::vector<float>& got, const std::vector<float>& ref, const char* how) {
  ASSERT_EQ(got.size(), ref.size());
  int64_t differ = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    if (bits_of(got[i]) != bits_of(ref[i])) {
      first = differ++ == 0 ? static_cast<int64_t>(i) : first;
    }
  }
  EXPECT_EQ(differ, 0) << how << ": first at " << first << " (" << got[first] << " for "
                       << ref[first] << ")";
}

TEST(Median, FastPathIsBitIdenticalToSorting) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Case& c : kCases) {
    for (Data d : {Data::Random, Data::Special, Data::Dark, Data::Bytes}) {
      const int64_t count = c.extent[0] * c.extent[1] * c.extent[2] * c.extent[3];
      const std::vector<float> values = make_data(d, count, seed + count);
      const ConstVolumeView in = make_view(values.data(), c.dims, c.extent);
      StridedBuffer strided_in(c.dims, c.extent, 2);
      strided_in.fill(values);
      for (size_t bi = 0; bi < kBoundaryCount; ++bi) {
        const auto b = static_cast<Boundary>(bi);
        SCOPED_TRACE(label(c, b, d));
        Options o;
        o.backend = Backend::Cpu;
        o.boundary = b;
        // scipy's mode='constant' with a cval inside the data's range, so that it is often the
        // median near the boundary.
        o.boundary_value = b == Boundary::Constant ? constant_for(d) : 0.0f;
        const std::vector<float> ref = reference_median_bits(in, c.radius, b, o.boundary_value);
        for (const std::string& isa : available_isas()) {
          SCOPED_TRACE("isa " + isa);
          ScopedIsa use(isa.c_str());
          std::vector<float> out(values.size());
          std::fill(out.begin(), out.end(), [] {
            float p;
            std::memcpy(&p, &kPoisonBits, sizeof p);
            return p;
          }());
          o.threads = 1;
          median_filter(in, make_view(out.data(), c.dims, c.extent), c.radius, o);
          expect_bits(out, ref, "contiguous, 1 thread");
          StridedBuffer strided_out(c.dims, c.extent, 3);
          o.threads = 3;
          median_filter(as_const(strided_in.view), strided_out.view, c.radius, o);
          expect_bits(strided_out.values(), ref, "strided, 3 threads");
          EXPECT_EQ(strided_out.touched_gaps(), 0) << "wrote outside the output view";
          if (::testing::Test::HasFailure())
            return;
        }
      }
    }
  }
}

TEST(Median, RefusesANonFiniteBoundaryValue) {
  std::vector<float> in = random_values(64, fresh_seed()), out(64);
  const ConstVolumeView iv = make_view(static_cast<const float*>(in.data()), 2, {8, 8});
  Options o;
  o.backend = Backend::Cpu;
  o.boundary = Boundary::Constant;
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    o.boundary_value = bad;
    EXPECT_THROW(median_filter(iv, make_view(out.data(), 2, {8, 8}), {1, 1, 0, 0}, o),
                 InvalidArgument);
  }
  o.boundary_value = -3;  // the value outside: the corners' windows of 9 hold 5 of it
  median_filter(iv, make_view(out.data(), 2, {8, 8}), {1, 1, 0, 0}, o);
  EXPECT_EQ(out[0], -3.0f);
  EXPECT_EQ(out[63], -3.0f);
}

// Without a GPU (CI) the device entry point refuses with InvalidArgument, never a crash; a bad
// request is refused before CUDA is asked.
TEST(Median, DeviceEntryPointRefusesWithoutCudaAndTheCpu) {
  std::vector<float> in = random_values(64, fresh_seed()), out(64);
  const ConstVolumeView iv = make_view(static_cast<const float*>(in.data()), 2, {8, 8});
  Options o;
  EXPECT_THROW(median_filter_device(iv, make_view(out.data(), 2, {8, 8}), {1, 1, 0, 0}, o, nullptr),
               InvalidArgument);
  EXPECT_THROW(median_filter_device(iv, make_view(out.data(), 2, {8, 8}), {8, 1, 0, 0}, o, nullptr),
               InvalidArgument);
  o.backend = Backend::Cpu;
  EXPECT_THROW(median_filter_device(iv, make_view(out.data(), 2, {8, 8}), {1, 1, 0, 0}, o, nullptr),
               InvalidArgument);
}

}  // namespace
}  // namespace ndconv::test
