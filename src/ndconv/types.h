// ndconv public types: plain views of volumes and filters, the options of a run and the report
// of what the engine did. Everything here is ITK-free and CUDA-free so that any caller (the ITK
// filter layer, the command line, the benchmarks, the tests) can use the engine with only a C++17
// compiler.
//
// Axis convention: axis 0 is x, the fastest-varying axis in memory; the last axis (y in 2D, z in
// 3D, t in 4D) is the slowest. Strides are in elements, not bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ndconv {

inline constexpr int kMaxDims = 4;
/// Largest dense filter extent per axis for 2D and 3D volumes.
inline constexpr int64_t kMaxDenseExtent3D = 31;
/// Largest dense filter extent per axis for 4D volumes.
inline constexpr int64_t kMaxDenseExtent4D = 15;
/// Largest 1D filter of a separable filter (a Gaussian of sigma 127 voxels truncated at 4 sigma).
inline constexpr int64_t kMaxSeparableExtent = 1023;

using Index = std::array<int64_t, kMaxDims>;

/// A strided view of a float32 volume of dimension 1..4 (the engine accepts 2, 3 and 4).
template <typename T>
struct BasicVolumeView {
  int dims = 0;
  Index extent{1, 1, 1, 1};  ///< voxels per axis; axes >= dims are 1
  Index stride{0, 0, 0, 0};  ///< elements between neighbours along each axis
  std::array<double, kMaxDims> spacing{1.0, 1.0, 1.0, 1.0};  ///< physical size of a voxel
  T* data = nullptr;

  int64_t voxel_count() const {
    int64_t n = 1;
    for (int a = 0; a < dims; ++a)
      n *= extent[a];
    return n;
  }
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int a = 0; a < dims; ++a) {
      if (extent[a] > 1 && stride[a] != expected)
        return false;
      expected *= extent[a];
    }
    return true;
  }
  T& at(const Index& i) const {
    int64_t offset = 0;
    for (int a = 0; a < dims; ++a)
      offset += i[a] * stride[a];
    return data[offset];
  }
};

using VolumeView = BasicVolumeView<float>;
using ConstVolumeView = BasicVolumeView<const float>;

/// A contiguous (x fastest) view of `data` with the given extents.
template <typename T>
BasicVolumeView<T> make_view(T* data, int dims, const Index& extent,
                             const std::array<double, kMaxDims>& spacing = {1.0, 1.0, 1.0, 1.0}) {
  BasicVolumeView<T> v;
  v.dims = dims;
  v.data = data;
  v.spacing = spacing;
  int64_t s = 1;
  for (int a = 0; a < kMaxDims; ++a) {
    v.extent[a] = a < dims ? extent[a] : 1;
    v.stride[a] = s;
    s *= v.extent[a];
  }
  return v;
}

inline ConstVolumeView as_const(const VolumeView& v) {
  ConstVolumeView c;
  c.dims = v.dims;
  c.extent = v.extent;
  c.stride = v.stride;
  c.spacing = v.spacing;
  c.data = v.data;
  return c;
}

/// A dense filter of the same dimension as the volume, taps contiguous with x fastest.
/// An extent of 1 along an axis means no filtering along it (e.g. a 3D kernel applied to each
/// frame of a 4D volume is a 4D filter of extent 1 along t).
struct DenseFilter {
  int dims = 0;
  Index extent{1, 1, 1, 1};
  const float* taps = nullptr;
  int64_t tap_count() const {
    int64_t n = 1;
    for (int a = 0; a < dims; ++a)
      n *= extent[a];
    return n;
  }
};

/// One 1D filter per axis; an empty vector skips that axis.
struct SeparableFilter {
  int dims = 0;
  std::array<std::vector<float>, kMaxDims> taps;
  /// The axes in the order the 1D passes run (a permutation of 0 .. dims - 1). It changes the
  /// result only under Boundary::Constant with a value other than 0, where each pass pads its own
  /// input (scipy.ndimage runs its passes along its axes 0, 1, ..., which are ndconv's axes from
  /// the last to the first for a C-ordered array; its sobel and prewitt run the derivative's axis
  /// first).
  std::array<int, kMaxDims> pass_order{0, 1, 2, 3};
};

/// What lies outside the volume, at any distance from it (also for a filter larger than the
/// volume). scipy.ndimage's names: Zero and Constant 'constant', Replicate 'nearest', Mirror
/// 'mirror', Periodic 'wrap', Reflect 'reflect'.
enum class Boundary {
  Zero,       ///< zeros (ITK's ConstantBoundaryCondition with value 0)
  Replicate,  ///< the nearest edge voxel (ITK's ZeroFluxNeumannBoundaryCondition)
  Mirror,     ///< reflection without repeating the edge: d c b | a b c d | c b a
  Periodic,   ///< wrap around (ITK's PeriodicBoundaryCondition)
  Reflect,  ///< reflection repeating the edge (half-sample symmetric): d c b a | a b c d | d c b a
  /// Options::boundary_value. A separable filter pads the input of each 1D pass with it, as
  /// scipy.ndimage does (for 1D taps that do not sum to 1 this differs from padding the volume
  /// once); the passes run along the axes in SeparableFilter::pass_order. With the value 0 it is
  /// Zero.
  Constant,
};
/// How many Boundary values there are (the last one + 1; name tables are checked against it).
inline constexpr std::size_t kBoundaryCount = static_cast<std::size_t>(Boundary::Constant) + 1;

/// `Same`: the output has the input's extents. `Valid`: only voxels whose whole footprint lies
/// inside the input (n - k + 1 per axis), as ITK's OutputRegionMode VALID.
enum class OutputRegion { Same, Valid };

/// Convolution flips the filter (as itk::ConvolutionImageFilter does); correlation does not.
/// With a filter of extent k along an axis and c = k / 2 (integer division):
///   correlation: out[i] = sum_j f[j] * in[i + j - c]
///   convolution: out[i] = sum_j f[j] * in[i - j + c]
/// which is exactly ITK's convention, also for even k.
enum class Operation { Convolution, Correlation };

enum class Backend { Auto, Cpu, Cuda };
/// How many Backend values there are (the last one + 1; name tables are checked against it).
inline constexpr std::size_t kBackendCount = static_cast<std::size_t>(Backend::Cuda) + 1;

/// Knobs for experts and benchmarks: how the work is split, not what is computed. The defaults
/// are the engine's automatic choices; every value gives the same result.
struct ExpertOptions {
  /// Outputs per thread along the last axis (GPU) or per inner iteration (CPU); 0 = automatic.
  /// A value the backend has not compiled is an InvalidArgument.
  int outputs_per_thread = 0;
  /// The GPU filter bank, and dense 7^3 and 11^3 filters, on the tensor cores where they can take
  /// them (8-bit input, the filter's shape, the device); false: the FP32 kernels always (the
  /// reference they are compared with; the two differ by rounding only, the tensor cores' less).
  bool tensor_cores = true;
};

struct Options {
  Operation operation = Operation::Convolution;
  Boundary boundary = Boundary::Replicate;
  /// The value outside the volume under Boundary::Constant (finite); ignored otherwise.
  float boundary_value = 0;
  OutputRegion region = OutputRegion::Same;
  Backend backend = Backend::Auto;  ///< Auto: the GPU when one is usable, else the CPU
  int cuda_device = 0;
  /// Several GPUs for one dense or separable filter on the GPU (host memory in and out): the
  /// output is cut into slabs along its last axis, one per entry, each filtered on its GPU at once
  /// from the input rows it reads (its share and the filter's halo); the result is bit for bit one
  /// GPU's. Other filters run on cuda_device. Empty (or one entry): cuda_device alone. An index may
  /// repeat (two slabs on one GPU, on their own streams).
  std::vector<int> cuda_devices;
  /// CPU worker threads; 0 = all hardware threads.
  int threads = 0;
  /// Device memory the GPU backend may use, in bytes; 0 = no cap beyond free memory. The
  /// environment variable NDCONV_DEVICE_MEMORY_CAP (bytes, or with a K/M/G suffix) applies when
  /// this is 0. Volumes that do not fit are processed in slabs along the last axis.
  std::size_t device_memory_cap = 0;
  /// Called with the fraction done (0..1) between pieces of work; returning false aborts the run
  /// (the engine then throws ndconv::Aborted). May be empty.
  std::function<bool(double)> progress;
  /// Tuning for experts and benchmarks (ExpertOptions); the defaults suit every use.
  ExpertOptions expert;
};

/// What the engine did, for --verbose and for the ITK filter's getters.
struct RunReport {
  Backend backend = Backend::Cpu;  ///< the backend that ran (never Auto)
  std::string backend_reason;      ///< why it was chosen, e.g. "no usable GPU: ..."
  std::string device_name;         ///< GPU name, or CPU description
  int outputs_per_thread = 0;      ///< KO (GPU) or blocking factor B, or k3 for a ring (CPU) used
  std::string outputs_per_thread_reason;
  int threads = 0;  ///< CPU threads used
  int slabs = 1;    ///< pieces along the last axis
  double seconds_total = 0;
  double seconds_upload = 0;    ///< host to device (GPU only)
  double seconds_compute = 0;   ///< filtering itself
  double seconds_download = 0;  ///< device to host (GPU only)
  std::vector<std::string> notes;
};

/// Placement of the output relative to the input: output voxel o corresponds to input voxel
/// o + start (per axis); its extents are `extent`.
struct OutputGeometry {
  int dims = 0;
  Index extent{1, 1, 1, 1};
  Index start{0, 0, 0, 0};
};

/// A GPU as the engine sees it.
struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;
};

/// Whether the CUDA backend can run here, and why not.
struct CudaStatus {
  bool compiled = false;  ///< built with CUDA support
  bool usable = false;    ///< a driver and at least one device are present
  std::string reason;     ///< human-readable state, e.g. "CUDA driver not installed (error 35)"
  int runtime_version = 0;
  int driver_version = 0;
  std::vector<DeviceInfo> devices;
};

const char* to_string(Boundary b);
const char* to_string(OutputRegion r);
const char* to_string(Operation o);
const char* to_string(Backend b);

}  // namespace ndconv
