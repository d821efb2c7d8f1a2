// ndconv._ndconv: the extension module under the ndconv package (python/ndconv). The package
// turns scipy.ndimage's arguments into these calls; the engine decides everything else.
#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace ndconv::python {
void bind_filters(nb::module_& m);
void bind_bank_adaptive(nb::module_& m);
void bind_volume_io(nb::module_& m);
}  // namespace ndconv::python

NB_MODULE(_ndconv, m) {
  m.doc() = "ndconv's engine (the ndconv package's private module)";
  ndconv::python::bind_filters(m);
  ndconv::python::bind_bank_adaptive(m);
  ndconv::python::bind_volume_io(m);
}
