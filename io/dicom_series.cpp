#include "io/dicom_series.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "io/dicom_sandbox.h"
#include "io/header_text.h"
#include "io/itk_read.h"
#include "io/nrrd_header.h"
#include "io/regular_file.h"

#include "gdcmTrace.h"
#include "itkGDCMSeriesFileNames.h"

namespace ndconv::io {

namespace {

// A list longer than this is not a list of slices (a series of 100 000 slices would be odd too).
constexpr size_t kMaxListBytes = 16 << 20;

bool is_folder(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// GDCM opens every file of the folder to sort them into series: refuse, before it starts, what
// could block it (a FIFO, a device) or lead it outside the folder (a symbolic link out of it).
// Sub-folders are not searched.
std::vector<std::string> check_folder_entries(const std::string& folder) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(folder.c_str()), ::closedir);
  if (!dir)
    throw IoError(folder + ": cannot read the folder: " + std::strerror(errno));
  std::vector<std::string> files;
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..")
      continue;
    struct stat st;
    if (::lstat((folder + "/" + name).c_str(), &st) != 0)
      throw IoError(folder + "/" + name + ": cannot read: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode))
      continue;
    if (S_ISLNK(st.st_mode))
      resolve_data_file(folder + "/", name, "file", false);
    else if (!S_ISREG(st.st_mode))
      throw IoError(folder + ": holds \"" + name +
                    "\", which is not a regular file (a FIFO, device or socket); ndconv reads a "
                    "DICOM series from a folder of regular files only");
    files.push_back(name);
  }
  return files;
}

std::string file_name(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

std::vector<std::string> folder_series(const std::string& folder) {
  const std::vector<std::string> entries = check_folder_entries(folder);
  report_dicom_progress("while sorting its files into series");
  // GDCM and ITK print their warnings about each file on stderr; ndconv reports what matters
  // itself, on one line.
  itk::Object::GlobalWarningDisplayOff();
  gdcm::Trace::WarningOff();
  gdcm::Trace::DebugOff();
  gdcm::Trace::ErrorOff();
  itk::GDCMSeriesFileNames::Pointer names = itk::GDCMSeriesFileNames::New();
  // Series details split one series UID by orientation, size and echo, so that a localizer
  // stored in the same series does not end up among the slices.
  names->SetUseSeriesDetails(true);
  names->SetRecursive(false);
  std::vector<std::string> uids;
  try {
    names->SetDirectory(folder);
    uids = names->GetSeriesUIDs();
  } catch (const itk::ExceptionObject& e) {
    throw IoError(folder + ": cannot sort the DICOM files into series: " + e.GetDescription());
  }
  if (uids.empty())
    throw IoError(folder +
                  ": is a folder, and holds no DICOM series (ndconv reads a folder as one DICOM "
                  "series; no file in it is a DICOM image)");
  if (uids.size() > 1) {
    std::string list;
    for (const std::string& uid : uids)
      list += (list.empty() ? "" : ", ") + uid + " (" +
              std::to_string(names->GetFileNames(uid).size()) + " files)";
    throw IoError(folder + ": holds " + std::to_string(uids.size()) + " DICOM series: " + list +
                  "; ndconv reads one: move its files to a folder of their own, or list them in a "
                  "text file and give @FILE as the input");
  }
  std::vector<std::string> files = names->GetFileNames(uids[0]);
  // GDCM leaves out a file it cannot read; a file marked as DICOM must not go missing quietly.
  std::set<std::string> in_series;
  for (const std::string& f : files)
    in_series.insert(file_name(f));
  for (const std::string& name : entries) {
    if (!in_series.count(name) && is_dicom_file(folder + "/" + name))
      throw IoError(folder + ": " + name +
                    " is marked as DICOM but GDCM cannot read it (truncated or corrupt file?); "
                    "remove it from the folder or repair it");
  }
  return files;
}

std::vector<std::string> listed_files(const std::string& list) {
  struct stat st;
  if (::stat(list.c_str(), &st) != 0)
    throw IoError(list + ": cannot read the slice list: " + std::strerror(errno));
  std::istringstream in(read_regular_file(list, "slice lists", kMaxListBytes));
  std::vector<std::string> files;
  std::string line;
  while (std::getline(in, line)) {
    line = trim_blanks(line);
    if (!line.empty() && line[0] != '#')
      files.push_back(resolve_data_file(list, line, "slice file", false));
  }
  if (files.empty())
    throw IoError(list + ": the slice list names no file");
  return files;
}

struct Slice {
  std::string path;
  ImageInfo info;
  double position = 0;  ///< along the first slice's normal
};

struct Series {
  std::vector<Slice> slices;  ///< sorted by position
  ImageInfo info;             ///< of the stacked image
};

double column_distance(const Geometry& a, const Geometry& b, int column) {
  double d = 0;
  for (int r = 0; r < 3; ++r)
    d = std::max(d,
                 std::abs(a.direction[r * kMaxDims + column] - b.direction[r * kMaxDims + column]));
  return d;
}

void check_like_first(const std::string& input, const Slice& first, const Slice& s) {
  const Geometry &a = first.info.geometry, &b = s.info.geometry;
  auto refuse = [&](const std::string& why) {
    throw IoError(input + ": the slice " + s.path + " " + why + " than " + first.path);
  };
  if (b.extent[0] != a.extent[0] || b.extent[1] != a.extent[1])
    refuse("has another size (" + std::to_string(b.extent[0]) + " x " +
           std::to_string(b.extent[1]) + ")");
  if (s.info.component_type != first.info.component_type ||
      s.info.components != first.info.components)
    refuse(std::string("has another pixel type (") + to_string(s.info.component_type) + ")");
  for (int axis = 0; axis < 2; ++axis) {
    if (std::abs(b.spacing[axis] - a.spacing[axis]) > 1e-6 * std::abs(a.spacing[axis]))
      refuse("has another pixel spacing");
  }
  for (int axis = 0; axis < 3; ++axis) {
    if (column_distance(a, b, axis) > 1e-4)
      refuse("has another orientation");
  }
}

Series plan_series(const std::string& input) {
  const std::vector<std::string> files = dicom_series_files(input);
  Series series;
  for (const std::string& file : files) {
    report_dicom_progress(file);
    Slice s;
    s.path = file;
    s.info = read_file_info(file);
    if (s.info.format != "GDCMImageIO")
      throw IoError(input + ": " + file + " is not a DICOM file (" + s.info.format + ")");
    series.slices.push_back(s);
  }
  series.info = series.slices[0].info;
  series.info.path = input;
  if (series.slices.size() == 1)
    return series;

  Slice& first = series.slices[0];
  for (const Slice& s : series.slices) {
    const Geometry& g = s.info.geometry;
    if (g.dims != 3 || g.extent[2] != 1)
      throw IoError(input + ": " + s.path +
                    " holds several frames; a series is stacked from single-frame slices (give "
                    "a multi-frame file as the input by itself)");
    check_like_first(input, first, s);
  }
  const Geometry& g0 = first.info.geometry;
  double normal[3];
  for (int r = 0; r < 3; ++r)
    normal[r] = g0.direction[r * kMaxDims + 2];
  for (Slice& s : series.slices) {
    s.position = 0;
    for (int r = 0; r < 3; ++r)
      s.position += s.info.geometry.origin[r] * normal[r];
  }
  std::stable_sort(series.slices.begin(), series.slices.end(),
                   [](const Slice& a, const Slice& b) { return a.position < b.position; });

  // The stack is a volume only when its slices are evenly spaced along their normal.
  const size_t n = series.slices.size();
  const Slice& lowest = series.slices.front();
  const double step =
      (series.slices.back().position - lowest.position) / static_cast<double>(n - 1);
  for (size_t i = 1; i < n; ++i) {
    const Slice &prev = series.slices[i - 1], &s = series.slices[i];
    if (!(s.position - prev.position > 1e-6 * std::max(1.0, step)))
      throw IoError(input + ": the slices " + prev.path + " and " + s.path +
                    " lie at the same position (two series mixed, or a duplicate slice)");
  }
  for (size_t i = 1; i < n; ++i) {
    const Slice &prev = series.slices[i - 1], &s = series.slices[i];
    const double gap = s.position - prev.position;
    if (std::abs(gap - step) > 1e-3 * step + 1e-4) {
      char text[160];
      std::snprintf(text, sizeof text,
                    " are %.6g mm apart where the series' slices are %.6g mm apart on average "
                    "(a missing slice?)",
                    gap, step);
      throw IoError(input + ": the slices " + prev.path + " and " + s.path + text);
    }
    double off = 0;
    for (int r = 0; r < 3; ++r) {
      const double d = s.info.geometry.origin[r] - lowest.info.geometry.origin[r] -
                       (s.position - lowest.position) * normal[r];
      off = std::max(off, std::abs(d));
    }
    if (off > 1e-3 * std::max(1.0, s.position - lowest.position))
      throw IoError(input + ": the slice " + s.path +
                    " is shifted sideways from the others (not stacked along their normal, e.g. "
                    "a tilted gantry); ndconv stacks only slices along their normal");
  }
  Geometry& g = series.info.geometry;
  g.extent[2] = static_cast<int64_t>(n);
  g.spacing[2] = step;
  g.origin = lowest.info.geometry.origin;
  return series;
}

}  // namespace

namespace {

// Bytes of the files a series input names, for check_dicom_survives' time bound.
double series_bytes(const std::string& input) {
  double total = 0;
  auto add = [&](const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0)
      total += static_cast<double>(st.st_size);
  };
  if (is_folder(input)) {
    for (const std::string& name : check_folder_entries(input))
      add(input + "/" + name);
  } else {
    for (const std::string& path : listed_files(input.substr(1)))
      add(path);
  }
  return total;
}

}  // namespace

bool is_dicom_series(const std::string& input) {
  struct stat st;
  const bool listed = input.size() > 1 && input[0] == '@' && ::stat(input.c_str(), &st) != 0;
  return listed || is_folder(input);
}

std::vector<std::string> dicom_series_files(const std::string& input) {
  if (is_folder(input))
    return folder_series(input);
  return listed_files(input.substr(1));
}

ImageInfo read_dicom_series_info(const std::string& input) {
  check_dicom_survives(input, series_bytes(input), [&] { read_dicom_series(input); });
  DicomSandboxPassed passed;
  return plan_series(input).info;
}

Image read_dicom_series(const std::string& input) {
  check_dicom_survives(input, series_bytes(input), [&] { read_dicom_series(input); });
  DicomSandboxPassed passed;
  const Series series = plan_series(input);
  if (series.slices.size() == 1) {
    Image image = read_file_image(series.slices[0].path);
    image.info.path = input;
    return image;
  }
  Image image;
  image.info = series.info;
  const int64_t slice_voxels = image.info.geometry.extent[0] * image.info.geometry.extent[1];
  const double values = static_cast<double>(slice_voxels) *
                        static_cast<double>(series.slices.size()) * image.info.components;
  const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                          static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  if (physical > 0 && values * 4.0 > physical)
    throw IoError(input + ": the series' " + std::to_string(series.slices.size()) +
                  " slices do not fit in this machine's memory as float32");
  image.planes.assign(static_cast<size_t>(image.info.components),
                      std::vector<float>(static_cast<size_t>(values) / image.info.components));
  for (size_t z = 0; z < series.slices.size(); ++z) {
    const Image slice = read_file_image(series.slices[z].path);
    for (int c = 0; c < image.info.components; ++c) {
      if (static_cast<int64_t>(slice.planes.at(c).size()) != slice_voxels)
        throw IoError(input + ": the slice " + series.slices[z].path +
                      " changed while the series was read");
      std::copy(slice.planes[c].begin(), slice.planes[c].end(),
                image.planes[c].begin() + static_cast<int64_t>(z) * slice_voxels);
    }
  }
  return image;
}

}  // namespace ndconv::io
