// Builds without ITK (the GPU machine's engine-only build): the package has no file I/O and says
// so.
#include <nanobind/nanobind.h>

namespace ndconv::python {

void bind_volume_io(nanobind::module_& m) {
  m.attr("has_io") = false;
}

}  // namespace ndconv::python
