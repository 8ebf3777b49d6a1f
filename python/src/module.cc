// kiln._kiln: the compiled half of the Python package (python/kiln/ is the other).
#include <pybind11/pybind11.h>

#include "errors.h"
#include "session.h"

namespace kiln::python {
void register_tools(pybind11::module_& m);
}

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "kiln's engine for Python: see kiln.InferenceSession";
  m.attr("__version__") = KILN_VERSION;
  kiln::python::register_errors(m);
  kiln::python::register_session(m);
  kiln::python::register_tools(m);
}
