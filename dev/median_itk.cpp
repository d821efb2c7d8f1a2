// The CPU median against itk::MedianImageFilter on the same cores, in one run: a volume of
// random floats or of 8-bit values, ndconv::median_filter (replicate boundary, as ITK's
// ZeroFluxNeumann) and ITK's filter on its float or unsigned char image, each timed as the
// median of --reps calls after one untimed call; the outputs must be equal voxel for voxel.
// Prints one JSON line per case. --raw F --extent NX NY NZ reads float32 data and --out G writes
// ndconv's output (for dev/median_peers.py, which times scipy on the same data).
//   g++ -O2 -std=c++17 -I src -I /usr/include/ITK-5.2 dev/median_itk.cpp
//       build/src/libndconv_core.a -L/usr/lib -lITKCommon-5.2 -litksys-5.2 -litkvnl-5.2
//       -litkvnl_algo-5.2 -litkv3p_netlib-5.2 -lpthread -ldl -o median_itk
#include <itkImage.h>
#include <itkImportImageFilter.h>
#include <itkMedianImageFilter.h>
#include <itkMultiThreaderBase.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ndconv/filters.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double median_ms(int reps, F run) {
  run();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

template <typename T>
typename itk::Image<T, 3>::Pointer itk_image(const std::vector<float>& values, const int64_t* n) {
  auto image = itk::Image<T, 3>::New();
  typename itk::Image<T, 3>::SizeType size;
  for (int a = 0; a < 3; ++a)
    size[a] = static_cast<itk::SizeValueType>(n[a]);
  image->SetRegions(size);
  image->Allocate();
  T* p = image->GetBufferPointer();
  for (size_t i = 0; i < values.size(); ++i)
    p[i] = static_cast<T>(values[i]);
  return image;
}

template <typename T>
void run_case(const char* kind, const std::vector<float>& values, const int64_t* n, int r,
              int threads, int reps, const std::string& out_path) {
  ndconv::Options o;
  o.backend = ndconv::Backend::Cpu;
  o.boundary = ndconv::Boundary::Replicate;
  o.threads = threads;
  std::vector<float> out(values.size());
  const auto in = ndconv::make_view(values.data(), 3, {n[0], n[1], n[2], 1});
  const auto ov = ndconv::make_view(out.data(), 3, {n[0], n[1], n[2], 1});
  const double ndconv_ms = median_ms(reps, [&] { ndconv::median_filter(in, ov, {r, r, r, 0}, o); });

  auto image = itk_image<T>(values, n);
  using Filter = itk::MedianImageFilter<itk::Image<T, 3>, itk::Image<T, 3>>;
  typename Filter::InputSizeType radius;
  radius.Fill(static_cast<itk::SizeValueType>(r));
  typename Filter::Pointer filter;
  const double itk_ms = median_ms(reps, [&] {
    filter = Filter::New();
    filter->SetInput(image);
    filter->SetRadius(radius);
    filter->SetNumberOfWorkUnits(static_cast<unsigned>(threads));
    filter->Update();
  });
  const T* itk_out = filter->GetOutput()->GetBufferPointer();
  int64_t differ = 0;
  for (size_t i = 0; i < out.size(); ++i)
    differ += static_cast<T>(out[i]) != itk_out[i];
  std::printf(
      "{\"case\": \"%s\", \"extent\": [%lld, %lld, %lld], \"radius\": %d, \"threads\": %d, "
      "\"ndconv_ms\": %.2f, \"itk_ms\": %.2f, \"itk_over_ndconv\": %.2f, \"differ\": %lld}\n",
      kind, static_cast<long long>(n[0]), static_cast<long long>(n[1]),
      static_cast<long long>(n[2]), r, threads, ndconv_ms, itk_ms, itk_ms / ndconv_ms,
      static_cast<long long>(differ));
  std::fflush(stdout);
  if (!out_path.empty()) {
    std::ofstream f(out_path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(out.data()),
            static_cast<std::streamsize>(out.size() * 4));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n[3] = {160, 160, 160};
  int threads = 2, reps = 5;
  std::vector<int> radii{1, 2, 3};
  std::string raw, out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--extent" && i + 3 < argc) {
      for (int k = 0; k < 3; ++k)
        n[k] = std::stoll(argv[++i]);
    } else if (a == "--radii" && i + 1 < argc) {
      radii.clear();
      for (const char* p = argv[++i]; *p != '\0'; ++p)
        if (*p >= '0' && *p <= '9')
          radii.push_back(*p - '0');
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::stoi(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::stoi(argv[++i]);
    } else if (a == "--raw" && i + 1 < argc) {
      raw = argv[++i];
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: median_itk [--extent NX NY NZ] [--radii 123] [--threads T] "
                   "[--reps R] [--raw FLOAT32_FILE [--out FILE]]\n");
      return 2;
    }
  }
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(threads);
  const size_t count = static_cast<size_t>(n[0] * n[1] * n[2]);
  std::vector<float> values(count);
  if (!raw.empty()) {
    std::ifstream f(raw, std::ios::binary);
    if (!f.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * 4))) {
      std::fprintf(stderr, "median_itk: %s does not hold %zu floats\n", raw.c_str(), count);
      return 1;
    }
    for (int r : radii)
      run_case<float>("float32 (file)", values, n, r, threads, reps, out);
    return 0;
  }
  std::mt19937 rng(47);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : values)
    v = uniform(rng);
  for (int r : radii)
    run_case<float>("float32", values, n, r, threads, reps, "");
  // 8-bit data: speckle-like values, many ties (ndconv reads them as floats, ITK as uint8).
  std::uniform_int_distribution<int> byte(0, 255);
  for (float& v : values)
    v = static_cast<float>(byte(rng) * byte(rng) / 255);
  for (int r : radii)
    run_case<unsigned char>("uint8", values, n, r, threads, reps, "");
  return 0;
}
