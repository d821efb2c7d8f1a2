#include "io/dicom_pixel_check.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>

#include "io/image.h"

#include "gdcmAttribute.h"
#include "gdcmReader.h"
#include "gdcmTransferSyntax.h"

namespace ndconv::io {

namespace {

template <uint16_t Group, uint16_t Element>
double attribute_or(const gdcm::DataSet& ds, double fallback) {
  const gdcm::Tag tag(Group, Element);
  if (!ds.FindDataElement(tag) || ds.GetDataElement(tag).IsEmpty())
    return fallback;
  gdcm::Attribute<Group, Element> a;
  a.SetFromDataElement(ds.GetDataElement(tag));
  return static_cast<double>(a.GetValue());
}

}  // namespace

void check_dicom_pixel_data(const std::string& path) {
  gdcm::Reader reader;
  reader.SetFileName(path.c_str());
  const gdcm::Tag pixel_data(0x7fe0, 0x0010);
  // Pixel Data skipped, not read: the stream stops where its value starts.
  if (!reader.ReadUpToTag(pixel_data, {pixel_data}))
    return;  // GDCM's own reading reports it
  const gdcm::TransferSyntax ts = reader.GetFile().GetHeader().GetDataSetTransferSyntax();
  if (ts.IsEncapsulated() || ts.GetSwapCode() != gdcm::SwapCode::LittleEndian)
    return;
  const auto value_at = static_cast<std::streamoff>(reader.GetStreamCurrentPosition());
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || value_at < 12)
    return;
  // The element's header before it: tag, (VR and 2 reserved bytes when explicit), 4-byte length.
  std::ifstream f(path, std::ios::binary);
  unsigned char h[12] = {};
  f.seekg(value_at - 12);
  f.read(reinterpret_cast<char*>(h), sizeof h);
  if (f.gcount() != 12)
    return;
  auto u16 = [&](int o) { return static_cast<uint32_t>(h[o] | (h[o + 1] << 8)); };
  const int tag_at = ts.IsExplicit() ? 0 : 4;
  if (u16(tag_at) != 0x7fe0 || u16(tag_at + 2) != 0x0010)
    return;  // no Pixel Data element: nothing to read
  const uint64_t length = u16(8) | (u16(10) << 16);
  if (length == 0xffffffffu)
    return;  // undefined length: encapsulated fragments, checked by their decoder
  const double in_file = static_cast<double>(st.st_size) - static_cast<double>(value_at);
  if (static_cast<double>(length) > in_file) {
    char text[200];
    std::snprintf(text, sizeof text,
                  ": its pixel data is declared as %llu bytes but the file holds only %.0f after "
                  "the header (truncated file)",
                  static_cast<unsigned long long>(length), in_file < 0 ? 0.0 : in_file);
    throw IoError(path + text);
  }
  const gdcm::DataSet& ds = reader.GetFile().GetDataSet();
  const double rows = attribute_or<0x0028, 0x0010>(ds, 0);
  const double columns = attribute_or<0x0028, 0x0011>(ds, 0);
  const double frames = attribute_or<0x0028, 0x0008>(ds, 1);
  const double samples = attribute_or<0x0028, 0x0002>(ds, 1);
  const double bits = attribute_or<0x0028, 0x0100>(ds, 0);
  // Bits Allocated 1: packed bits, rounded up to whole bytes over the whole frame set.
  const double needed = std::ceil(rows * columns * std::max(frames, 1.0) * samples * bits / 8.0);
  if (static_cast<double>(length) < needed) {
    char text[240];
    std::snprintf(text, sizeof text,
                  ": its header describes %.0f x %.0f pixels x %.0f frames x %.0f samples of %.0f "
                  "bits (%.4g bytes) but its pixel data holds only %llu bytes (corrupt header or "
                  "truncated file)",
                  columns, rows, std::max(frames, 1.0), samples, bits, needed,
                  static_cast<unsigned long long>(length));
    throw IoError(path + text);
  }
}

}  // namespace ndconv::io
