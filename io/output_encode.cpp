#include "io/output_encode.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "io/header_text.h"
#include "io/image.h"
#include "io/output_file.h"
#include "io/parallel_deflate.h"

namespace ndconv::io {

namespace {

// The target's name without the extension that picked its format ("scan" for scan.nii.gz).
std::string base_name(const std::string& name, const std::string& extension) {
  return name.substr(0, name.size() - extension.size());
}

uint64_t file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

[[noreturn]] void incomplete(const std::string& folder, const std::string& label,
                             uint64_t expected_bytes) {
  const std::string why = write_failure_reason(folder, expected_bytes);
  throw IoError(label + ": cannot write: " +
                (why.empty() ? std::string("the image writer produced an incomplete file") : why));
}

// Checks that `path` holds `expected` bytes (ITK does not report a short write).
void check_length(const std::string& folder, const std::string& path, uint64_t expected,
                  const std::string& label) {
  if (file_size(path) != expected)
    incomplete(folder, label, expected);
}

void move_within(const std::string& folder, const std::string& from, const std::string& to,
                 const std::string& label) {
  if (from == to)
    return;
  if (::rename(join_path(folder, from).c_str(), join_path(folder, to).c_str()) != 0)
    throw IoError(label + ": cannot name the written file: " + std::strerror(errno));
}

// NIfTI-1's xyzt_units (byte 123): ITK 5.2 writes a 4D image's time step without a unit; ndconv
// keeps it in seconds and says so.
constexpr size_t kNiftiUnitsByte = 123;
constexpr unsigned char kNiftiUnitsSeconds = 8;
unsigned char with_seconds(unsigned char units) {
  return static_cast<unsigned char>((units & 0x07) | kNiftiUnitsSeconds);
}

void mark_seconds_in_place(const std::string& path, const std::string& label) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  unsigned char units = 0;
  if (fd < 0 || ::pread(fd, &units, 1, kNiftiUnitsByte) != 1) {
    if (fd >= 0)
      ::close(fd);
    throw IoError(label + ": cannot reopen the written file: " + std::strerror(errno));
  }
  units = with_seconds(units);
  const bool ok = ::pwrite(fd, &units, 1, kNiftiUnitsByte) == 1;
  const std::string why = std::strerror(errno);
  ::close(fd);
  if (!ok)
    throw IoError(label + ": cannot write: " + why);
}

// The header length of a file that ITK wrote as header + `data_bytes` of pixels.
size_t header_length(const std::string& folder, const MappedFile& file, uint64_t data_bytes,
                     size_t minimum, const std::string& label) {
  if (file.size() < minimum + data_bytes)
    incomplete(folder, label, minimum + data_bytes);
  return file.size() - static_cast<size_t>(data_bytes);
}

using ProgressFn = std::function<void(double)>;

// Appends `bytes` at `data` to `file`, deflated in `container` on all cores while it is written.
uint64_t append_deflated(NewFile& file, const unsigned char* data, uint64_t bytes,
                         DeflateContainer container, int level, int threads,
                         const ProgressFn& progress) {
  return compress_parallel(
      data, bytes, container, level, [&](const unsigned char* p, size_t n) { file.append(p, n); },
      threads, kDeflateChunkBytes, progress);
}

// A .nii.gz: the header as one gzip member, then the pixels as members compressed in parallel.
void write_nifti_gz(const std::string& path, const std::string& target, const unsigned char* header,
                    size_t header_bytes, const unsigned char* data, uint64_t data_bytes, int level,
                    int threads, const ProgressFn& progress) {
  NewFile file(path, target);
  append_deflated(file, header, header_bytes, DeflateContainer::Gzip, level, 1, {});
  append_deflated(file, data, data_bytes, DeflateContainer::Gzip, level, threads, progress);
  file.finish();
}

void finish_nifti(const std::string& folder, const std::string& target, const OutputNames& names,
                  uint64_t data_bytes, int level, int threads, bool time_in_seconds,
                  const ProgressFn& progress) {
  const std::string itk_path = join_path(folder, names.itk_name);
  const std::string final_name = name_of(target);
  if (names.kind == OutputKind::NiftiPair) {
    // ITK wrote image.hdr + image.img; the target is one of the pair, its companion the other.
    const bool target_is_header = ends_with(to_lower(final_name), ".hdr");
    const std::string header_name = target_is_header ? final_name : names.companions.at(0);
    const std::string data_name = target_is_header ? names.companions.at(0) : final_name;
    check_length(folder, join_path(folder, "image.img"), data_bytes, target);
    if (time_in_seconds)
      mark_seconds_in_place(itk_path, target);
    move_within(folder, "image.img", data_name, target);
    move_within(folder, names.itk_name, header_name, target);
    return;
  }
  if (names.kind == OutputKind::Nifti) {
    MappedFile file(itk_path, target);
    const size_t header = header_length(folder, file, data_bytes, 348, target);
    float vox_offset = 0;
    std::memcpy(&vox_offset, file.data() + 108, sizeof vox_offset);
    if (static_cast<double>(vox_offset) != static_cast<double>(header))
      incomplete(folder, target, header + data_bytes);
    if (time_in_seconds)
      mark_seconds_in_place(itk_path, target);
    move_within(folder, names.itk_name, final_name, target);
    return;
  }
  // .nii.gz: the header as one gzip member, the pixels as members compressed in parallel.
  {
    MappedFile file(itk_path, target);
    const size_t header = header_length(folder, file, data_bytes, 348, target);
    std::vector<unsigned char> header_bytes(file.data(), file.data() + header);
    if (time_in_seconds)
      header_bytes[kNiftiUnitsByte] = with_seconds(header_bytes[kNiftiUnitsByte]);
    write_nifti_gz(join_path(folder, final_name), target, header_bytes.data(), header_bytes.size(),
                   file.data() + header, data_bytes, level, threads, progress);
  }
  ::unlink(itk_path.c_str());
}

// MetaImage headers end with the ElementDataFile line; ITK writes "CompressedData = False" for an
// uncompressed file, which becomes "CompressedData = True" plus the compressed length, its
// digits right-aligned in `length_width` characters (MetaIO skips the blanks before a value).
std::string meta_header(const std::string& header, uint64_t compressed_bytes,
                        const std::string& data_file, const std::string& label,
                        size_t length_width = 0) {
  std::string out;
  size_t at = 0;
  bool compressed_line = false, data_line = false;
  while (at < header.size()) {
    size_t end = header.find('\n', at);
    end = end == std::string::npos ? header.size() : end + 1;
    std::string line = header.substr(at, end - at);
    at = end;
    if (line.rfind("CompressedData = ", 0) == 0 && compressed_bytes > 0) {
      const std::string digits = std::to_string(compressed_bytes);
      const std::string pad(length_width > digits.size() ? length_width - digits.size() : 0, ' ');
      line = "CompressedData = True\nCompressedDataSize = " + pad + digits + "\n";
      compressed_line = true;
    } else if (line.rfind("ElementDataFile = ", 0) == 0) {
      line = "ElementDataFile = " + data_file + "\n";
      data_line = true;
    }
    out += line;
  }
  if (!data_line || (compressed_bytes > 0 && !compressed_line))
    throw IoError(label + ": the MetaImage header ITK wrote has an unexpected layout");
  return out;
}

// A compressed .mha: its header names the length of the zlib stream that follows it. The header
// goes first with the length field as wide as the stream's bound, so that the stream is written
// as it is compressed; the field is rewritten in place once the length is known.
void write_meta_single_compressed(const std::string& path, const std::string& target,
                                  const std::string& itk_header, const unsigned char* data,
                                  uint64_t data_bytes, int level, int threads,
                                  const ProgressFn& progress) {
  const uint64_t bound = compressed_bound(data_bytes, DeflateContainer::Zlib, level);
  const size_t width = std::to_string(bound).size();
  NewFile file(path, target);
  const std::string placeholder = meta_header(itk_header, bound, "LOCAL", target, width);
  file.append(placeholder.data(), placeholder.size());
  const uint64_t length =
      append_deflated(file, data, data_bytes, DeflateContainer::Zlib, level, threads, progress);
  const std::string header = meta_header(itk_header, length, "LOCAL", target, width);
  if (header.size() != placeholder.size())
    throw IoError(target + ": the MetaImage header changed length");
  file.overwrite(0, header.data(), header.size());
  file.finish();
}

// A .zraw (or other detached data file): the zlib stream alone; returns its length.
uint64_t write_deflated_file(const std::string& path, const std::string& target,
                             const unsigned char* data, uint64_t data_bytes, int level, int threads,
                             const ProgressFn& progress) {
  NewFile file(path, target);
  const uint64_t length =
      append_deflated(file, data, data_bytes, DeflateContainer::Zlib, level, threads, progress);
  file.finish();
  return length;
}

void finish_meta(const std::string& folder, const std::string& target, const OutputNames& names,
                 uint64_t data_bytes, int level, int threads, const ProgressFn& progress) {
  const std::string itk_path = join_path(folder, names.itk_name);
  const std::string final_name = name_of(target);
  const bool compress = level > 0;
  if (names.kind == OutputKind::MetaSingle) {
    {
      MappedFile file(itk_path, target);
      const size_t length = header_length(folder, file, data_bytes, 16, target);
      const std::string header(reinterpret_cast<const char*>(file.data()), length);
      if (header.size() < 24 || !ends_with(header, "ElementDataFile = LOCAL\n"))
        incomplete(folder, target, length + data_bytes);
      if (compress)
        write_meta_single_compressed(join_path(folder, final_name), target, header,
                                     file.data() + length, data_bytes, level, threads, progress);
    }
    if (compress)
      ::unlink(itk_path.c_str());
    else
      move_within(folder, names.itk_name, final_name, target);
    return;
  }
  // .mhd: ITK wrote image.mhd and image.raw.
  const std::string itk_raw = itk_path.substr(0, itk_path.size() - 4) + ".raw";
  check_length(folder, itk_raw, data_bytes, target);
  std::string header;
  {
    MappedFile file(itk_path, target);
    header.assign(reinterpret_cast<const char*>(file.data()), file.size());
  }
  const std::string data_name = names.companions.at(0);
  uint64_t compressed_bytes = 0;
  if (compress) {
    {
      MappedFile raw(itk_raw, target);
      compressed_bytes = write_deflated_file(join_path(folder, data_name), target, raw.data(),
                                             raw.size(), level, threads, progress);
    }
    ::unlink(itk_raw.c_str());
  } else {
    move_within(folder, name_of(itk_raw), data_name, target);
  }
  header = meta_header(header, compressed_bytes, data_name, target);
  ::unlink(itk_path.c_str());
  write_new_file(join_path(folder, final_name), {{header.data(), header.size()}}, target);
}

// ITK's file without its one voxel of data: the header it wrote for this geometry.
std::string itk_header(const std::string& folder, const std::string& path, uint64_t itk_bytes,
                       const std::string& label) {
  const MappedFile file(path, label);
  if (file.size() < itk_bytes + 16)
    incomplete(folder, label, itk_bytes + 16);
  return std::string(reinterpret_cast<const char*>(file.data()), file.size() - itk_bytes);
}

void finish_nifti_from_memory(const std::string& folder, const std::string& target,
                              const OutputNames& names, const MemoryPixels& px, int level,
                              int threads, bool time_in_seconds, const ProgressFn& progress) {
  const std::string itk_path = join_path(folder, names.itk_name);
  std::string header = itk_header(folder, itk_path, px.itk_bytes, target);
  float vox_offset = 0;
  if (header.size() >= 348)
    std::memcpy(&vox_offset, header.data() + 108, sizeof vox_offset);
  if (header.size() < 348 || static_cast<double>(vox_offset) != static_cast<double>(header.size()))
    throw IoError(target + ": the NIfTI header ITK wrote has an unexpected layout");
  for (int a = 0; a < px.dims; ++a) {  // dim[1..]: int16 from byte 42
    const int16_t d = static_cast<int16_t>(px.extent[a]);
    std::memcpy(&header[42 + 2 * a], &d, sizeof d);
  }
  if (time_in_seconds)
    header[kNiftiUnitsByte] =
        static_cast<char>(with_seconds(static_cast<unsigned char>(header[kNiftiUnitsByte])));
  ::unlink(itk_path.c_str());
  const std::string path = join_path(folder, name_of(target));
  if (names.kind == OutputKind::NiftiGz)
    write_nifti_gz(path, target, reinterpret_cast<const unsigned char*>(header.data()),
                   header.size(), px.data, px.bytes, level, threads, progress);
  else
    write_new_file(path, {{header.data(), header.size()}, {px.data, px.bytes}}, target);
}

void finish_meta_from_memory(const std::string& folder, const std::string& target,
                             const OutputNames& names, const MemoryPixels& px, int level,
                             int threads, const ProgressFn& progress) {
  const std::string itk_path = join_path(folder, names.itk_name);
  const bool single = names.kind == OutputKind::MetaSingle;
  std::string header = itk_header(folder, itk_path, single ? px.itk_bytes : 0, target);
  // The one-voxel image's "DimSize = 1 1 1" becomes the real extents.
  const std::string key = "DimSize = ";
  const auto at = header.find("\n" + key);
  const auto eol = at == std::string::npos ? at : header.find('\n', at + 1);
  if (eol == std::string::npos)
    throw IoError(target + ": the MetaImage header ITK wrote has an unexpected layout");
  std::string dims_line = key;
  for (int a = 0; a < px.dims; ++a)
    dims_line += (a ? " " : "") + std::to_string(px.extent[a]);
  header.replace(at + 1, eol - at - 1, dims_line);
  ::unlink(itk_path.c_str());
  if (single) {
    const std::string path = join_path(folder, name_of(target));
    if (level > 0) {
      write_meta_single_compressed(path, target, header, px.data, px.bytes, level, threads,
                                   progress);
    } else {
      header = meta_header(header, 0, "LOCAL", target);
      write_new_file(path, {{header.data(), header.size()}, {px.data, px.bytes}}, target);
    }
    return;
  }
  ::unlink((itk_path.substr(0, itk_path.size() - 4) + ".raw").c_str());
  const std::string data_name = names.companions.at(0);
  const std::string data_path = join_path(folder, data_name);
  uint64_t compressed = 0;
  if (level > 0)
    compressed =
        write_deflated_file(data_path, target, px.data, px.bytes, level, threads, progress);
  else
    write_new_file(data_path, {{px.data, px.bytes}}, target);
  header = meta_header(header, compressed, data_name, target);
  write_new_file(join_path(folder, name_of(target)), {{header.data(), header.size()}}, target);
}
}  // namespace

OutputNames output_names(const std::string& target, int compression_level) {
  const std::string name = name_of(target);
  const std::string l = to_lower(name);
  OutputNames n;
  if (ends_with(l, ".nii.gz")) {
    n.kind = OutputKind::NiftiGz;
    n.itk_name = "image.nii";
  } else if (ends_with(l, ".nii")) {
    n.kind = OutputKind::Nifti;
    n.itk_name = "image.nii";
  } else if (ends_with(l, ".hdr") || ends_with(l, ".img")) {
    n.kind = OutputKind::NiftiPair;
    n.itk_name = "image.hdr";
    const std::string base = name.substr(0, name.size() - 4);
    n.companions = {base + (ends_with(l, ".hdr") ? ".img" : ".hdr")};
  } else if (ends_with(l, ".mha")) {
    n.kind = OutputKind::MetaSingle;
    n.itk_name = "image.mha";
  } else if (ends_with(l, ".mhd")) {
    n.kind = OutputKind::MetaHeader;
    n.itk_name = "image.mhd";
    n.companions = {base_name(name, ".mhd") + (compression_level > 0 ? ".zraw" : ".raw")};
  } else if (ends_with(l, ".gz") || ends_with(l, ".nrrd")) {
    n.kind = OutputKind::ItkDirect;
    n.itk_name = name;
  } else if (ends_with(l, ".nhdr")) {
    // The header names its data file, so ITK writes both under their final names.
    n.kind = OutputKind::ItkDirect;
    n.itk_name = name;
    n.companions = {base_name(name, ".nhdr") + ".raw.gz"};
  } else {
    n.kind = OutputKind::Other;
    const auto dot = name.rfind('.');
    n.itk_name = "image" + (dot == std::string::npos ? std::string() : name.substr(dot));
  }
  return n;
}

void check_companions(const std::string& target, const OutputNames& names, bool overwrite) {
  struct stat st;
  const bool target_exists = ::lstat(target.c_str(), &st) == 0;
  for (const std::string& companion : names.companions) {
    const std::string path = join_path(folder_of(target), companion);
    if (::lstat(path.c_str(), &st) != 0)
      continue;
    if (S_ISDIR(st.st_mode))
      throw RequestError(path + ": is a folder; the output " + target + " needs this name");
    if (!overwrite)
      throw RequestError(path + ": exists (written with " + target +
                         "); use --force to overwrite it");
    if (!target_exists) {
      throw RequestError(path + ": exists and is not part of an existing " + name_of(target) +
                         "; writing " + target +
                         " would replace it: remove it or choose "
                         "another output name");
    }
  }
}

void finish_staged_output(const std::string& folder, const std::string& target,
                          const OutputNames& names, uint64_t data_bytes, int level, int threads,
                          bool time_in_seconds, const ProgressFn& progress,
                          const MemoryPixels* pixels) {
  if (pixels != nullptr) {
    if (names.kind == OutputKind::Nifti || names.kind == OutputKind::NiftiGz)
      return finish_nifti_from_memory(folder, target, names, *pixels, level, threads,
                                      time_in_seconds, progress);
    if (names.kind == OutputKind::MetaSingle || names.kind == OutputKind::MetaHeader)
      return finish_meta_from_memory(folder, target, names, *pixels, level, threads, progress);
    throw IoError(target + ": this format cannot be written from memory");
  }
  switch (names.kind) {
    case OutputKind::Nifti:
    case OutputKind::NiftiGz:
    case OutputKind::NiftiPair:
      return finish_nifti(folder, target, names, data_bytes, level, threads, time_in_seconds,
                          progress);
    case OutputKind::MetaSingle:
    case OutputKind::MetaHeader:
      return finish_meta(folder, target, names, data_bytes, level, threads, progress);
    case OutputKind::Other:
      move_within(folder, names.itk_name, name_of(target), target);
      return;
    case OutputKind::ItkDirect:
      return;
  }
}

std::string write_failure_reason(const std::string& folder, uint64_t bytes) {
  std::string templ = join_path(folder, ".probeXXXXXX");
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  const int fd = ::mkstemp(buf.data());
  if (fd < 0)
    return std::strerror(errno);
  std::string why;
  const char byte = 0;
  // One byte where the file would end (a file size limit), then a block at its start (a full
  // file system).
  const off_t last = static_cast<off_t>(bytes > 0 ? bytes - 1 : 0);
  std::vector<char> block(1 << 16, 0);
  if (::pwrite(fd, &byte, 1, last) != 1 ||
      ::pwrite(fd, block.data(), block.size(), 0) != static_cast<ssize_t>(block.size()) ||
      ::fsync(fd) != 0)
    why = std::strerror(errno);
  ::close(fd);
  ::unlink(buf.data());
  return why;
}

}  // namespace ndconv::io
