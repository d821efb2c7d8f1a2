// ndconv's image I/O: an ITK-free description of an image file and its pixels, so that the
// command line and the tests can use it without ITK headers. Reading and writing go through
// ITK's ImageIOBase (io/image_read.cpp, io/image_write.cpp): the file's header is read first and
// the dimension, component type and component count come from it, never from the extension.
//
// Pixels are held as float32, one contiguous plane per component (x fastest), which is exactly
// what the engine filters; a multi-component pixel (RGB, RGBA, vector) is filtered per plane.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "io/parallel_deflate.h"
#include "ndconv/errors.h"
#include "ndconv/memory.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::io {

/// A file could not be read or written. The message starts with the file's path.
class IoError : public Error {
 public:
  using Error::Error;
};

/// The request cannot be honoured before any work starts: the output exists and overwriting was
/// not allowed, or the output's format cannot hold the image (dimension, pixel type).
class RequestError : public Error {
 public:
  using Error::Error;
};

/// Component (storage) types ndconv reads and writes.
enum class ComponentType {
  UInt8,
  Int8,
  UInt16,
  Int16,
  UInt32,
  Int32,
  UInt64,
  Int64,
  Float32,
  Float64
};

const char* to_string(ComponentType t);
/// Parses "uint8", "int16", "float", "float32", "double", "float64", ...; false if unknown.
bool parse_component_type(const std::string& name, ComponentType& out);
/// Smallest and largest value of an integer type (+-max float for float types).
double lowest_value(ComponentType t);
double highest_value(ComponentType t);
bool is_integer(ComponentType t);
int component_bytes(ComponentType t);

/// Position and shape of an image in physical space.
struct Geometry {
  int dims = 0;
  Index extent{1, 1, 1, 1};
  std::array<double, kMaxDims> spacing{1, 1, 1, 1};  ///< axis 3: the time step of a 4D series
  std::array<double, kMaxDims> origin{0, 0, 0, 0};
  /// direction[row * kMaxDims + axis]: column `axis` is that axis's unit vector.
  std::array<double, kMaxDims * kMaxDims> direction{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  int64_t voxel_count() const;
};

/// What a file holds, from its header alone.
struct ImageInfo {
  std::string path;
  std::string format;      ///< ITK's ImageIO, e.g. "NiftiImageIO", "MetaImageIO", "PNGImageIO"
  std::string pixel_kind;  ///< "scalar", "rgb", "rgba", "vector", ...
  Geometry geometry;
  ComponentType component_type = ComponentType::Float32;
  int components = 1;
  /// Set when the header does not say in which unit its voxel sizes are (NIfTI's xyzt_units 0; a
  /// PNG, JPEG, BMP or TIFF file) or names one that is not applied (NRRD space units other than
  /// mm): the reason, e.g. "xyzt_units 0". The spacing is then read as millimetres, as ITK does.
  /// Empty when the unit is known (NIfTI, DICOM) or fixed by the format's convention (MetaImage
  /// and NRRD without space units: millimetres).
  std::string spatial_unit_unknown;
  /// The same for the time step of a 4D NIfTI series (its time unit 0), which is read as seconds.
  std::string time_unit_unknown;
  /// A MetaImage holding its pixels in one file (ElementDataFile = LOCAL or one data file,
  /// binary, little-endian), for ndconv's own reader: where they start in the file (-1 for any
  /// other image), which file (empty: the image's own), whether they are compressed and the
  /// compressed bytes the header declares (-1: up to the end of the file).
  struct LocalPixels {
    double offset = -1;
    bool compressed = false;
    std::string file;
    double compressed_size = -1;
  } metaimage_pixels;
  /// NRRD: the header's key/value pairs ("key:=value"), kept for a volume sequence output
  /// (nrrd_sequence.h); and the list axis of a volume sequence input (0 or 3; -1 otherwise).
  std::vector<std::pair<std::string, std::string>> nrrd_key_values;
  int nrrd_list_axis = -1;
  /// Bytes of the pixels in the file's own type (what the file holds uncompressed).
  int64_t native_bytes() const;
};

/// An image in memory: float32 planes, one per component.
struct Image {
  ImageInfo info;
  std::vector<std::vector<float>> planes;

  VolumeView plane_view(int component);
  ConstVolumeView plane_view(int component) const;
};

// While ITK reads or writes, stderr (C and C++) is pointed at /dev/null, because MetaIO and
// niftilib print their own messages there; ndconv's exceptions carry what matters. Threads may
// read and write at once; their messages go through print_stderr_line.

/// Reads only the header. Throws IoError naming the file and the problem (missing, unreadable,
/// not an image, corrupt header, unsupported dimension or pixel type).
ImageInfo read_info(const std::string& path);

/// Reads the whole image into float32 planes (NIfTI scl_slope/scl_inter applied).
Image read_image(const std::string& path);

/// An image's pixels as the file stores them, for the stored-type API (ndconv/stored.h): an 8-bit
/// volume stays 8 bits until the GPU converts it. The memory comes from ndconv::pinned_allocate
/// (page-locked, where asked for and a GPU is usable, so that it crosses PCIe without a staging
/// copy).
struct StoredImage {
  ImageInfo info;
  PinnedBuffer<unsigned char> storage;  ///< the pixels start `first` bytes in
  size_t first = 0;
  ScalarType type = ScalarType::Float32;
  double scale = 1.0, offset = 0.0;  ///< NIfTI scl_slope/scl_inter where ITK applies them
  StoredVolumeView view() const;
};

/// Reads `path` into `out` when it is a scalar image of uint8, int8, uint16, int16 or float32
/// values (after NIfTI's scl_slope/scl_inter the same float32 values as read_image); false, having
/// read only the header, for any other image (read_image then reads it). Throws IoError as
/// read_image does. `memory`: the kind of host memory the pixels are read into.
bool read_stored_image(const std::string& path, StoredImage& out,
                       HostMemory memory = HostMemory::Pinned);

/// What writing did to the values.
struct WriteReport {
  ComponentType type = ComponentType::Float32;
  int64_t clamped = 0;     ///< values outside the type's range, set to its nearest limit
  int64_t nan_zeroed = 0;  ///< NaN written as 0 (integer types only)
  /// Range of the finite values before conversion to an integer type (0, 0 for a floating-point
  /// output, which keeps every value as it is)
  double min = 0, max = 0;
};

/// Checks, before any work, that `path` can be written as an image of the given shape and type:
/// a known output format that holds this dimension, component count and type, and, where
/// `geometry` is given, its voxel sizes (NIfTI stores none below float's smallest normal number).
/// Throws RequestError otherwise.
void check_output_format(const std::string& path, int dims, int components, ComponentType type,
                         const Geometry* geometry = nullptr);

/// The component type to write when the user did not ask for one: float32 when the format holds
/// it, else `input_type` when it does, else the first type the format holds. `note` says why
/// when the result is not float32.
ComponentType default_output_type(const std::string& path, ComponentType input_type,
                                  std::string& note);

/// How write_image encodes.
struct WriteSettings {
  /// Deflate level of compressed outputs (.nii.gz, .mha, .mhd), 0 (stored) to 9 (smallest).
  /// MetaImage at level 0 is written uncompressed.
  int compression = kDefaultCompressionLevel;
  int threads = 0;  ///< compression threads; 0: all hardware threads
  /// Reference for tests: ITK's own single-threaded encoders write the file under its final
  /// name (MetaImage compressed), as ndconv wrote before its parallel encoders.
  bool itk_encoder = false;
  /// Called with the fraction of the write done (0 to 1), from any thread; may be empty.
  std::function<void(double)> progress;
};

/// Writes `image` to `path` as `type` (rounded to nearest, clamped to the type's range), through
/// a temporary folder beside `path` and a rename, so that a failure leaves no partial output:
/// every file is checked complete and flushed (fsync) before it is renamed into place; a full
/// disk is an IoError with the system's reason. An existing file is replaced only when
/// `overwrite`; otherwise RequestError. A companion file (the .img of a .hdr, the data file of a
/// .mhd) is replaced only together with its existing target.
WriteReport write_image(const std::string& path, const Image& image, ComponentType type,
                        bool overwrite, const WriteSettings& settings = {});

/// Prints `line` and a newline on stderr, also while another thread has stderr silenced for ITK
/// (its line is then not lost). For messages from threads that run while others read or write.
void print_stderr_line(const std::string& line);

/// "5.2.1"
std::string itk_version();

}  // namespace ndconv::io
