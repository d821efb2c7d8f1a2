// A check of a NRRD header (.nrrd with the data attached or in a named file, .nhdr with detached
// data) made by ndconv before ITK's NRRD reader sees the file: ITK's NrrdIO trusts the header's
// sizes, follows any `data file:` it names and passes a data file pattern to sprintf. ITK-free.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/itk_header_file.h"

namespace ndconv::io {

/// True when the file starts with NRRD's magic ("NRRD000").
bool is_nrrd(const std::string& path);

/// What the check learnt from the header.
struct NrrdHeader {
  int dimension = 0;          ///< NRRD's own dimension (a vector axis counts)
  int spatial_dimension = 0;  ///< without a leading non-domain (vector, RGB, ...) axis
  std::vector<int64_t> sizes;
  std::string type;         ///< as written, e.g. "short"
  int type_bytes = 0;       ///< bytes of one value
  std::string encoding;     ///< normalised: raw, gzip, ascii, hex
  std::string data_file;    ///< resolved path of the data (the header's own file when attached)
  bool attached = true;     ///< the data follows the header in the same file
  int64_t data_offset = 0;  ///< attached raw data: the byte where it starts
  double values = 0;        ///< product of the sizes
  /// The space units field as written (e.g. "mm" "mm" "mm"); empty when there is none.
  std::string space_units;
  /// The header ITK's NRRD reader reads in place of the file's own (ItkHeaderFile): the fields
  /// ndconv parsed and checked, each once, naming the data by its resolved path (attached data:
  /// the file itself, its header skipped by `line skip`). So ITK reads exactly what was checked.
  RewrittenHeader itk_header;
  /// The header's key/value pairs ("key:=value"), in order.
  std::vector<std::pair<std::string, std::string>> key_values;
  /// A Slicer volume sequence (nrrd_sequence.h): its list axis (0 or 3; -1 for other images)
  /// and the time axis its index values give.
  int sequence_axis = -1;
  double time_origin = 0, time_step = 1;
};

/// Whether every unit of a NRRD space units field is millimetres (ITK's NRRD reader ignores the
/// field and reads the spacing as millimetres); true for an empty field.
bool space_units_are_mm(const std::string& space_units);

/// Reads and checks the header of `path` (throws IoError naming the file and the field):
/// dimension, sizes (positive, their product times the type's size at most this machine's
/// physical memory), type (integer or floating point; "block" refused), encoding (raw, gzip, ascii,
/// hex; bzip2 refused), spacings, space directions and origin (finite; a direction not zero),
/// byte and line skips, and the data file: it must be a regular file inside the header's folder
/// (after resolving `..` and symbolic links; an absolute name is refused) unless
/// `allow_external_data`; LIST and printf-style patterns are refused. Raw data must hold all the
/// values the header describes; gzip data at least 1/1100 of them (deflate's limit). A header that
/// NRRD readers could parse in more than one way is refused (read_fields in nrrd_header.cpp):
/// NRRD0001..3, a control character or lone \r in a line, a field given twice, a line that is
/// neither a field, a key/value pair nor a comment, a data file name with white space at either
/// end or holding ":=".
NrrdHeader check_nrrd_header(const std::string& path, bool allow_external_data = false);

/// Bytes on disk of the NRRD image `path`: the file, plus its data file when detached; -1 when
/// the header does not pass check_nrrd_header.
double nrrd_data_bytes(const std::string& path);

/// Throws RequestError when `path`, a NRRD output, cannot be read back: a detached header (.nhdr)
/// whose name holds '%', because its data file's name would too, and NRRD reads such a name as a
/// file name pattern.
void check_nrrd_output_name(const std::string& path);

/// The data-file rule shared by the formats whose header names other files: `name` (as written
/// in `header`) must be relative, and resolve (following `..` and symbolic links) to a regular
/// file inside the header's own folder. Returns the resolved path; throws IoError naming the
/// file and the rule. `what` names the field, e.g. "data file".
std::string resolve_data_file(const std::string& header, const std::string& name,
                              const std::string& what, bool allow_external_data);

}  // namespace ndconv::io
