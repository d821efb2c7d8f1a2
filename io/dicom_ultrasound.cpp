#include "io/dicom_ultrasound.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "gdcmAttribute.h"
#include "gdcmMediaStorage.h"
#include "gdcmReader.h"
#include "gdcmSequenceOfItems.h"

namespace ndconv::io {

namespace {

using Vector = std::vector<double>;

const gdcm::Tag kSharedGroups(0x5200, 0x9229), kPerFrameGroups(0x5200, 0x9230);
const gdcm::Tag kPixelMeasures(0x0028, 0x9110), kPixelSpacing(0x0028, 0x0030);
const gdcm::Tag kSpacingBetweenSlices(0x0018, 0x0088);
const gdcm::Tag kPlanePositionVolume(0x0020, 0x930e), kImagePositionVolume(0x0020, 0x9301);
const gdcm::Tag kPlanePosition(0x0020, 0x9113), kImagePositionPatient(0x0020, 0x0032);
const gdcm::Tag kUltrasoundRegions(0x0018, 0x6011);

// Two voxel sizes (or steps) that are the same but for the decimal digits a file keeps.
bool same_size(double a, double b) {
  return std::fabs(a - b) <= 1e-4 * std::max(std::fabs(a), std::fabs(b)) + 1e-6;
}

bool same_sizes(const Vector& a, const Vector& b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_size(a[i], b[i]))
      return false;
  return true;
}

std::string text_of(const Vector& v) {
  std::string s;
  char value[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(value, sizeof value, "%s%g", i ? "\\" : "", v[i]);
    s += value;
  }
  return s;
}

// The nested data sets of the sequence `tag` in `ds` (none where it is absent or not a sequence).
std::vector<const gdcm::DataSet*> items_of(const gdcm::DataSet& ds, const gdcm::Tag& tag) {
  std::vector<const gdcm::DataSet*> items;
  if (!ds.FindDataElement(tag))
    return items;
  const gdcm::SmartPointer<gdcm::SequenceOfItems> sq = ds.GetDataElement(tag).GetValueAsSQ();
  if (!sq)
    return items;
  for (gdcm::SequenceOfItems::SizeType i = 1; i <= sq->GetNumberOfItems(); ++i)
    items.push_back(&sq->GetItem(i).GetNestedDataSet());
  return items;
}

// The first item of the sequence `tag` in `ds`, or null.
const gdcm::DataSet* first_item(const gdcm::DataSet& ds, const gdcm::Tag& tag) {
  const std::vector<const gdcm::DataSet*> items = items_of(ds, tag);
  return items.empty() ? nullptr : items.front();
}

// A decimal string (DS) element's values, read here (not by GDCM's stream reading, which takes a
// damaged value as 0): each a whole number text, finite. Empty where the element is absent or
// empty; IoError naming the attribute where a value is not a number.
Vector decimal_values(const gdcm::DataSet& ds, const gdcm::Tag& tag, const std::string& path,
                      const char* name) {
  Vector values;
  if (!ds.FindDataElement(tag))
    return values;
  const gdcm::ByteValue* bytes = ds.GetDataElement(tag).GetByteValue();
  if (bytes == nullptr || bytes->GetLength() == 0)
    return values;
  const std::string text(bytes->GetPointer(), bytes->GetLength());
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\\', start);
    if (end == std::string::npos)
      end = text.size();
    std::string value = text.substr(start, end - start);
    value.erase(0, value.find_first_not_of(" \0", 0, 2));
    value.erase(value.find_last_not_of(" \0", std::string::npos, 2) + 1);
    char* stop = nullptr;
    const double v = std::strtod(value.c_str(), &stop);
    if (value.empty() || stop != value.c_str() + value.size() || !std::isfinite(v))
      throw IoError(path + ": its " + name + " holds \"" + text + "\", not a list of numbers");
    values.push_back(v);
    start = end + 1;
  }
  return values;
}

// A binary element's single value (US or FD), or nothing where it is absent or of another size.
template <uint16_t Group, uint16_t Element>
std::optional<double> binary_value(const gdcm::DataSet& ds) {
  gdcm::Attribute<Group, Element> a;
  const gdcm::Tag tag(Group, Element);
  if (!ds.FindDataElement(tag))
    return std::nullopt;
  const gdcm::ByteValue* bytes = ds.GetDataElement(tag).GetByteValue();
  if (bytes == nullptr || bytes->GetLength() != sizeof(a.GetValue()))
    return std::nullopt;
  a.SetFromDataElement(ds.GetDataElement(tag));
  return static_cast<double>(a.GetValue());
}

void require_voxel_sizes(const Vector& sizes, const std::string& path, const char* name) {
  for (const double s : sizes)
    if (!(s > 0) || !std::isfinite(s))
      throw IoError(path + ": its " + name + " " + text_of(sizes) + " is not a voxel size");
}

// One value of `name` that every place holding it agrees on (empty where none holds it).
Vector agreed_value(const std::vector<Vector>& found, const std::string& path, const char* name,
                    const char* places) {
  for (const Vector& v : found) {
    if (!same_sizes(v, found.front())) {
      throw IoError(path + ": its " + places + " give different " + name + " (" +
                    text_of(found.front()) + " and " + text_of(v) +
                    "); one voxel size cannot describe the image");
    }
  }
  return found.empty() ? Vector() : found.front();
}

// The frames' positions from the per-frame `plane` sequences' `position`, every frame's, or none.
std::vector<Vector> frame_positions(const std::vector<const gdcm::DataSet*>& frames,
                                    const gdcm::Tag& plane, const gdcm::Tag& position,
                                    const std::string& path, const char* name) {
  std::vector<Vector> positions;
  for (const gdcm::DataSet* frame : frames) {
    const gdcm::DataSet* item = first_item(*frame, plane);
    const Vector p = item ? decimal_values(*item, position, path, name) : Vector();
    if (p.size() != 3)
      return {};
    positions.push_back(p);
  }
  return positions;
}

// The step between consecutive positions where they are evenly spaced along one line; nothing
// otherwise (fewer than two, a repeated position, steps of different lengths or directions).
std::optional<double> even_step(const std::vector<Vector>& positions) {
  if (positions.size() < 2)
    return std::nullopt;
  std::array<double, 3> first{};
  double first_length = 0;
  for (size_t i = 1; i < positions.size(); ++i) {
    std::array<double, 3> step{};
    double length = 0, along = 0;
    for (int a = 0; a < 3; ++a) {
      step[a] = positions[i][a] - positions[i - 1][a];
      length += step[a] * step[a];
    }
    length = std::sqrt(length);
    if (i == 1) {
      first = step;
      first_length = length;
    }
    for (int a = 0; a < 3; ++a)
      along += step[a] * first[a];
    if (!(length > 0) || !same_size(length, first_length) ||
        !same_size(along, length * first_length))
      return std::nullopt;
  }
  return first_length;
}

// Enhanced US Volume: x, y and the step between frames; `unknown` names what the file lacks.
void enhanced_volume_spacing(const gdcm::DataSet& ds, const std::string& path, int64_t frames,
                             Vector& spacing, std::string& unknown) {
  std::vector<Vector> pixel_spacings, slice_spacings;
  const std::vector<const gdcm::DataSet*> per_frame = items_of(ds, kPerFrameGroups);
  std::vector<const gdcm::DataSet*> groups = items_of(ds, kSharedGroups);
  groups.insert(groups.end(), per_frame.begin(), per_frame.end());
  for (const gdcm::DataSet* group : groups) {
    const gdcm::DataSet* measures = first_item(*group, kPixelMeasures);
    if (measures == nullptr)
      continue;
    Vector v = decimal_values(*measures, kPixelSpacing, path, "Pixel Spacing");
    if (!v.empty()) {
      if (v.size() != 2)
        throw IoError(path + ": its Pixel Spacing " + text_of(v) + " is not two numbers");
      require_voxel_sizes(v, path, "Pixel Spacing");
      pixel_spacings.push_back(v);
    }
    v = decimal_values(*measures, kSpacingBetweenSlices, path, "Spacing Between Slices");
    if (!v.empty()) {
      require_voxel_sizes(v, path, "Spacing Between Slices");
      slice_spacings.push_back(v);
    }
  }
  const char* places = "functional groups";
  const Vector pixel = agreed_value(pixel_spacings, path, "Pixel Spacing", places);
  const Vector between = agreed_value(slice_spacings, path, "Spacing Between Slices", places);
  if (pixel.empty())
    unknown = "Enhanced US Volume without Pixel Measures' Pixel Spacing";
  else
    spacing = {pixel[1], pixel[0], 1.0};  // Pixel Spacing is row (y) spacing, then column (x)
  std::vector<Vector> positions;
  if (static_cast<int64_t>(per_frame.size()) == frames) {
    positions = frame_positions(per_frame, kPlanePositionVolume, kImagePositionVolume, path,
                                "Image Position (Volume)");
    if (positions.empty())
      positions = frame_positions(per_frame, kPlanePosition, kImagePositionPatient, path,
                                  "Image Position (Patient)");
  }
  const std::optional<double> step = even_step(positions);
  if (step && !between.empty() && !same_size(*step, between[0])) {
    char text[160];
    std::snprintf(text, sizeof text,
                  ": its Spacing Between Slices (%g) and its frames' positions (%g apart) "
                  "disagree",
                  between[0], *step);
    throw IoError(path + text);
  }
  std::string why;
  if (step)
    spacing[2] = *step;
  else if (!positions.empty())
    why = "frame positions not evenly spaced along one line (3D+t?): the frame axis's spacing 1";
  else if (!between.empty())
    spacing[2] = between[0];
  else
    why = "Enhanced US Volume without Spacing Between Slices or frame positions";
  if (!why.empty())
    unknown += (unknown.empty() ? "" : "; ") + why;
}

// Ultrasound images: Physical Delta X and Y of the 2D regions in centimetres, in millimetres.
void ultrasound_region_spacing(const gdcm::DataSet& ds, const std::string& path, Vector& spacing,
                               std::string& unknown) {
  constexpr double kRegion2d = 1, kCentimetres = 3;
  std::vector<Vector> deltas;
  for (const gdcm::DataSet* region : items_of(ds, kUltrasoundRegions)) {
    if (binary_value<0x0018, 0x6012>(*region) != kRegion2d ||
        binary_value<0x0018, 0x6024>(*region) != kCentimetres ||
        binary_value<0x0018, 0x6026>(*region) != kCentimetres)
      continue;
    const std::optional<double> dx = binary_value<0x0018, 0x602c>(*region);
    const std::optional<double> dy = binary_value<0x0018, 0x602e>(*region);
    if (!dx || !dy)
      throw IoError(path + ": a 2D ultrasound region lacks its Physical Delta X or Y");
    const Vector mm = {*dx * 10, *dy * 10};
    require_voxel_sizes(mm, path, "Physical Delta X/Y (in mm)");
    deltas.push_back(mm);
  }
  const Vector delta =
      agreed_value(deltas, path, "Physical Delta X/Y (in mm)", "2D ultrasound regions");
  if (delta.empty())
    unknown =
        "ultrasound image without a 2D region in centimetres (Sequence of Ultrasound Regions)";
  else
    spacing = {delta[0], delta[1], 1.0};
}

}  // namespace

void apply_ultrasound_spacing(const std::string& path, ImageInfo& info) {
  gdcm::Reader reader;
  reader.SetFileName(path.c_str());
  const gdcm::Tag pixel_data(0x7fe0, 0x0010);
  if (!reader.ReadUpToTag(pixel_data, {pixel_data}))
    return;  // GDCM's own reading reports it
  gdcm::MediaStorage ms;
  ms.SetFromFile(reader.GetFile());
  const gdcm::DataSet& ds = reader.GetFile().GetDataSet();
  Geometry& g = info.geometry;
  Vector spacing = {1, 1, 1};
  std::string unknown;
  if (ms == gdcm::MediaStorage::EnhancedUSVolumeStorage)
    enhanced_volume_spacing(ds, path, g.dims > 2 ? g.extent[2] : 1, spacing, unknown);
  else if (ms == gdcm::MediaStorage::UltrasoundMultiFrameImageStorage ||
           ms == gdcm::MediaStorage::UltrasoundImageStorage)
    ultrasound_region_spacing(ds, path, spacing, unknown);
  else
    return;
  for (int a = 0; a < std::min(g.dims, 3); ++a)
    g.spacing[a] = spacing[a];
  info.spatial_unit_unknown = unknown;
}

}  // namespace ndconv::io
