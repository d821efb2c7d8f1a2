// Bindings of ndconv's own readers and writers (io/): the same checks as the command line (a
// header names only files in its own folder, damaged data is an error, outputs appear whole or not
// at all, an existing file is replaced only when asked). Geometry comes and goes in Python's axis
// order (slowest first), like the arrays.
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "arrays.h"
#include "core/view_copy.h"
#include "calls.h"
#include "io/image.h"
#include "ndconv/memory.h"

namespace ndconv::python {

namespace {

/// `f()`, with io's errors as Python's: a refused request ValueError, a file OSError.
template <typename F>
auto with_io_errors(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const io::RequestError& e) {
    throw nb::value_error(e.what());
  } catch (const io::IoError& e) {
    PyErr_SetString(PyExc_OSError, e.what());
    throw nb::python_error();
  } catch (const InvalidArgument& e) {
    throw nb::value_error(e.what());
  }
}

nb::dict geometry_dict(const io::ImageInfo& info) {
  const io::Geometry& g = info.geometry;
  const int n = g.dims;
  nb::list shape, spacing, origin, direction;
  for (int axis = n - 1; axis >= 0; --axis) {
    shape.append(g.extent[axis]);
    spacing.append(g.spacing[axis]);
    origin.append(g.origin[axis]);
    nb::list row;
    for (int col = n - 1; col >= 0; --col)
      row.append(g.direction[axis * kMaxDims + col]);
    direction.append(nb::tuple(row));
  }
  nb::dict d;
  d["shape"] = nb::tuple(shape);
  d["spacing"] = nb::tuple(spacing);
  d["origin"] = nb::tuple(origin);
  d["direction"] = nb::tuple(direction);
  d["format"] = info.format;
  d["stored_type"] = io::to_string(info.component_type);
  d["spatial_unit_unknown"] = info.spatial_unit_unknown;
  d["time_unit_unknown"] = info.time_unit_unknown;
  return d;
}

template <typename T>
nb::object numpy_array_owning(std::unique_ptr<T> owner, const void* data, nb::dlpack::dtype dtype,
                              const io::Geometry& g) {
  std::vector<std::size_t> shape;
  for (int axis = g.dims - 1; axis >= 0; --axis)
    shape.push_back(static_cast<std::size_t>(g.extent[axis]));
  T* raw = owner.release();
  nb::capsule deleter(raw, [](void* p) noexcept { delete static_cast<T*>(p); });
  return nb::cast(nb::ndarray<nb::numpy>(const_cast<void*>(data), shape.size(), shape.data(),
                                         deleter, nullptr, dtype));
}

nb::dlpack::dtype dtype_of(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8:
      return nb::dtype<uint8_t>();
    case ScalarType::Int8:
      return nb::dtype<int8_t>();
    case ScalarType::UInt16:
      return nb::dtype<uint16_t>();
    case ScalarType::Int16:
      return nb::dtype<int16_t>();
    case ScalarType::UInt32:
      return nb::dtype<uint32_t>();
    case ScalarType::Int32:
      return nb::dtype<int32_t>();
    case ScalarType::Float64:
      return nb::dtype<double>();
    case ScalarType::Float32:
      break;
  }
  return nb::dtype<float>();
}

nb::tuple read_volume(const std::string& path) {
  return with_io_errors([&] {
    auto stored = std::make_unique<io::StoredImage>();
    bool as_stored = false;
    {
      nb::gil_scoped_release released;
      as_stored = io::read_stored_image(path, *stored, HostMemory::Ordinary);
    }
    if (as_stored && stored->scale == 1.0 && stored->offset == 0.0) {
      const nb::dict geometry = geometry_dict(stored->info);
      const io::Geometry g = stored->info.geometry;
      const void* data = stored->storage.data() + stored->first;
      const nb::dlpack::dtype dtype = dtype_of(stored->type);
      return nb::make_tuple(numpy_array_owning(std::move(stored), data, dtype, g), geometry);
    }
    auto image = std::make_unique<io::Image>();
    {
      nb::gil_scoped_release released;
      *image = io::read_image(path);
    }
    if (image->planes.size() != 1)
      throw nb::value_error((path + ": ndconv.read reads images of one component; this one has " +
                             std::to_string(image->planes.size()))
                                .c_str());
    const nb::dict geometry = geometry_dict(image->info);
    const io::Geometry g = image->info.geometry;
    const void* data = image->planes[0].data();
    return nb::make_tuple(numpy_array_owning(std::move(image), data, nb::dtype<float>(), g),
                          geometry);
  });
}

nb::dict write_volume(const std::string& path, const InArray& array,
                      const std::vector<double>& spacing, const std::vector<double>& origin,
                      const std::vector<std::vector<double>>& direction,
                      const std::string& stored_type, bool overwrite, int compression) {
  if (placement_of(array).on_gpu || scalar_type_of(array) != ScalarType::Float32)
    throw nb::type_error("internal: write takes a float32 host array");
  const ConstVolumeView v = float_view_of(array);
  const int n = static_cast<int>(array.ndim());
  if (n < 2)
    throw nb::value_error("ndconv.write writes 2D, 3D and 4D images");
  if (spacing.size() != std::size_t(n) || origin.size() != std::size_t(n) ||
      direction.size() != std::size_t(n))
    throw nb::value_error("spacing, origin and direction need one entry per axis of the array");
  return with_io_errors([&] {
    io::ComponentType type = io::ComponentType::Float32;
    if (!io::parse_component_type(stored_type, type))
      throw nb::value_error(("unknown stored type '" + stored_type + "'").c_str());
    io::Image image;
    io::Geometry& g = image.info.geometry;
    g.dims = n;
    for (int axis = 0; axis < n; ++axis) {
      const int e = n - 1 - axis;
      g.extent[e] = v.extent[e];
      g.spacing[e] = spacing[axis];
      g.origin[e] = origin[axis];
      if (direction[axis].size() != std::size_t(n))
        throw nb::value_error("direction must be a square matrix of one row per axis");
      for (int col = 0; col < n; ++col)
        g.direction[e * kMaxDims + (n - 1 - col)] = direction[axis][col];
    }
    image.info.component_type = type;
    nb::dict d;
    {
      nb::gil_scoped_release released;
      std::vector<float> plane(static_cast<std::size_t>(v.voxel_count()));
      detail::gather(v, plane.data());
      image.planes.push_back(std::move(plane));
      io::check_output_format(path, n, 1, type, &g);
      io::WriteSettings settings;
      settings.compression = compression;
      const io::WriteReport r = io::write_image(path, image, type, overwrite, settings);
      nb::gil_scoped_acquire gil;
      d["stored_type"] = io::to_string(r.type);
      d["clamped"] = r.clamped;
      d["nan_zeroed"] = r.nan_zeroed;
    }
    return d;
  });
}

}  // namespace

void bind_volume_io(nb::module_& m) {
  m.attr("has_io") = true;
  m.def("read", &read_volume, nb::arg("path"));
  m.def("write", &write_volume, nb::arg("path"), nb::arg("array"), nb::arg("spacing"),
        nb::arg("origin"), nb::arg("direction"), nb::arg("stored_type"), nb::arg("overwrite"),
        nb::arg("compression"));
}

}  // namespace ndconv::python
