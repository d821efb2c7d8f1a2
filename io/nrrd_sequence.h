// 3D Slicer volume sequences (.seq.nrrd, SlicerHeart's usual export of 4D echo): a NRRD of kinds
// "domain domain domain list" whose list axis has no space direction ("none") and whose items'
// positions are the key/value pair "axis 3 index values:=t0 t1 ..."; older files put the list
// axis first (kinds "list domain domain domain", "axis 0 index values:=..."). ndconv reads the
// list axis as the time axis of a 4D image, its index values as the time positions where they are
// evenly spaced, and writes 4D images named .seq.nrrd the same way, keeping the input's other
// key/value pairs. ITK-free.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/image.h"

namespace ndconv::io {

/// NRRD key/value pairs ("key:=value") as read, in order.
using NrrdKeyValues = std::vector<std::pair<std::string, std::string>>;

/// The list axis (0 or 3) of a 4D NRRD with kinds `kinds` when it is a volume sequence: the axis
/// of kind "list" first or last, the three others domain axes, and the file a sequence (`path`
/// ends with .seq.nrrd, or an "axis N index ..." key names that axis). -1 otherwise.
int sequence_list_axis(const std::string& path, const std::vector<std::string>& kinds,
                       const NrrdKeyValues& key_values);

/// The time axis of a sequence of `items` items on list axis `axis`: origin and step from the
/// "axis N index values" key (evenly spaced, increasing numbers), or 0 and 1 without that key.
/// Throws IoError naming `path` and the problem (not numbers, a count other than `items`,
/// uneven or not increasing).
void sequence_time_axis(const std::string& path, int axis, int64_t items,
                        const NrrdKeyValues& key_values, double& origin, double& step);

/// The fields ITK's NRRD reader reads for a sequence whose list axis is last (each value a whole
/// header line, "" to leave the field out; keys as nrrd_header.cpp's field keys): a 4D image in a
/// 4D space, as ITK writes 4D NRRD, the space's directions and origin turned into LPS as ITK's
/// reader would, the time axis from `time_origin` and `time_step`. Throws IoError naming `path`
/// for a space other than LPS, RAS or LAS, or space directions that are not (x,y,z).
std::map<std::string, std::string> sequence_in_4d_space(
    const std::string& path, const std::string& space,
    const std::vector<std::vector<double>>& directions,
    const std::vector<std::vector<double>>& origin, double time_origin, double time_step);

/// True for an output that is written as a volume sequence: a 4D image named *.seq.nrrd.
bool is_sequence_output(const std::string& path, int dims);

/// The NRRD header of `image` as a Slicer volume sequence of `type` values (list axis last,
/// "axis 3 index values" from the time axis, the image's NRRD key/value pairs kept; `gzip`: the
/// encoding). Throws RequestError for what a sequence cannot hold (more than one component).
std::string sequence_header(const Image& image, ComponentType type, bool gzip);

/// Writes the 4D scalar `image` to `path` (*.seq.nrrd) as a volume sequence of `type` values,
/// gzip-compressed unless settings.compression is 0, through a staging folder like write_image.
WriteReport write_sequence_nrrd(const std::string& path, const Image& image, ComponentType type,
                                bool overwrite, const WriteSettings& settings);

}  // namespace ndconv::io
