// Test inputs written byte by byte, without ITK or ndconv_io, so that reading is checked against
// files whose contents the test knows exactly: MetaImage (.mha, data inline) and NIfTI-1 (.nii,
// either byte order, optional scl_slope/scl_inter). Shared by tests/io and tests/cli.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "io/image.h"

namespace ndconv::test {

struct RawImage {
  int dims = 3;
  Index extent{1, 1, 1, 1};
  std::array<double, kMaxDims> spacing{1, 1, 1, 1};
  std::array<double, kMaxDims> origin{0, 0, 0, 0};
  /// direction[row * kMaxDims + axis], as io::Geometry
  std::array<double, kMaxDims * kMaxDims> direction{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  io::ComponentType type = io::ComponentType::Float32;
  int components = 1;
  std::vector<double> values;  ///< interleaved (components per voxel), x fastest
  int64_t voxels() const;
};

/// 9 x 7 (x 6 (x 3)) voxels of random `type` values (`components` per voxel), spacing 0.5, 1, 2 mm
/// (0.25 s), origin (-3.5, 12, 7.25), in 3D and 4D rotated by 0.3 rad about y.
RawImage oriented_volume(int dims, io::ComponentType type, uint64_t seed, int components = 1);

/// A 3D (or, with extent[3] > 1, 4D) volume of `extent` voxels of random `type` values, with
/// unequal spacings (0.8, 1, 1.25 mm, 0.5 s), origin 0, no rotation.
RawImage random_volume(Index extent, io::ComponentType type, uint64_t seed);

/// Random values representable in `type` (integers for integer types), spread over a good part
/// of its range but avoiding exact zeros; at most +-1e6 for floats.
std::vector<double> random_for_type(int64_t count, io::ComponentType type, uint64_t seed);

/// MetaImage with the data inline (ElementDataFile = LOCAL), little-endian.
void write_meta(const std::string& path, const RawImage& image, int ndims_override = 0);

/// NIfTI-1 single file, no qform/sform (spacing from pixdim; ITK then reads the LPS identity
/// flip diag(-1,-1,1)). `datatype_override` writes another datatype code (e.g. 32, complex).
void write_nifti(const std::string& path, const RawImage& image, bool big_endian = false,
                 double scl_slope = 0, double scl_inter = 0, int datatype_override = 0);

/// Orientation written into a NIfTI header (qform and/or sform); codes 0 = absent.
struct NiftiForm {
  int qform_code = 0, sform_code = 0;
  double qfac = 1;                ///< pixdim[0]
  double quatern[3] = {0, 0, 0};  ///< b, c, d
  double qoffset[3] = {0, 0, 0};
  double srow[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};  ///< srow_x, srow_y, srow_z
};

/// The same with a NIfTI-2 header (540 bytes, 64-bit dims, double fields).
void write_nifti2(const std::string& path, const RawImage& image, bool big_endian = false,
                  double scl_slope = 0, double scl_inter = 0, const NiftiForm& form = {});

/// NIfTI-1 with an orientation.
void write_nifti_form(const std::string& path, const RawImage& image, const NiftiForm& form);

/// Writes `bytes` to `path`.
void write_bytes(const std::string& path, const std::string& bytes);
std::string read_bytes(const std::string& path);
/// Overwrites `size` bytes of the file at `offset` with `value`; throws std::runtime_error when
/// the file is shorter.
void patch_bytes(const std::string& path, size_t offset, const void* value, size_t size);
/// The same with a field of type T in this machine's byte order (a header field of a file written
/// little-endian, on a little-endian machine).
template <typename T>
void patch_field(const std::string& path, size_t offset, T value) {
  patch_bytes(path, offset, &value, sizeof(T));
}

/// A fresh temporary folder, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  /// Names in the folder (hidden ones included).
  std::vector<std::string> list() const;

 private:
  std::string path_;
};

}  // namespace ndconv::test
