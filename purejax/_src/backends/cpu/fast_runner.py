"""The call of a one-kernel executable in C: a small CPython extension,
compiled on first use, that checks the inputs, allocates the outputs (read
only, as an Array's value is), calls the kernel and returns the results.

Done in Python (executable._single_segment_runner) the same steps cost
about a microsecond, most of a trivial jitted call: the data addresses, the
ctypes argument array, ``setflags``.  Anything unusual (an input that is not
a C-contiguous ndarray of the kernel's dtype) goes to the Python runner, so
both give the same results.  Without Python's or NumPy's headers, or a
compiler, ``make`` returns None and the Python runner is used.
"""
import ctypes
import functools
import importlib.machinery
import importlib.util
import sys
import sysconfig

import numpy as np

_MODULE = "pj_fast_runner"
MAX_ARGS = 64   # PJ_MAX_ARGS
MAX_DIMS = 32   # NumPy 1's NPY_MAXDIMS (2's is 64)

_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#define PJ_MAX_ARGS 64
typedef int (*pj_kernel_t)(void**);

/* run(spec, *args): spec = (kernel address, slow runner, out-of-memory
   callable, input argument positions, input dtypes, output shapes, output
   dtypes, results).  A result r >= 0 is output r; r < 0 is argument -r - 1
   as given.  Returns the list of results. */
static PyObject* pj_run(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1) { PyErr_SetString(PyExc_TypeError, "run(spec, *args)"); return NULL; }
  PyObject* spec = args[0];
  PyObject* const* a = args + 1;
  Py_ssize_t na = nargs - 1;
  PyObject* in_pos = PyTuple_GET_ITEM(spec, 3);
  PyObject* in_dt = PyTuple_GET_ITEM(spec, 4);
  PyObject* out_shapes = PyTuple_GET_ITEM(spec, 5);
  PyObject* out_dt = PyTuple_GET_ITEM(spec, 6);
  PyObject* results = PyTuple_GET_ITEM(spec, 7);
  Py_ssize_t ni = PyTuple_GET_SIZE(in_pos), no = PyTuple_GET_SIZE(out_shapes);
  void* ptrs[PJ_MAX_ARGS];
  if (ni + no > PJ_MAX_ARGS) goto slow;
  for (Py_ssize_t i = 0; i < ni; i++) {
    Py_ssize_t p = PyLong_AsSsize_t(PyTuple_GET_ITEM(in_pos, i));
    if (p < 0 || p >= na) goto slow;
    PyObject* x = a[p];
    if (!PyArray_CheckExact(x)) goto slow;
    PyArrayObject* arr = (PyArrayObject*)x;
    PyArray_Descr* want = (PyArray_Descr*)PyTuple_GET_ITEM(in_dt, i);
    if (!PyArray_IS_C_CONTIGUOUS(arr)) goto slow;
    if (PyArray_DESCR(arr) != want && !PyArray_EquivTypes(PyArray_DESCR(arr), want)) goto slow;
    ptrs[i] = PyArray_DATA(arr);
  }
  PyObject* outs[PJ_MAX_ARGS];
  for (Py_ssize_t j = 0; j < no; j++) {
    PyObject* shape = PyTuple_GET_ITEM(out_shapes, j);
    int nd = (int)PyTuple_GET_SIZE(shape);
    npy_intp dims[NPY_MAXDIMS];
    for (int d = 0; d < nd && d < NPY_MAXDIMS; d++)
      dims[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
    PyArray_Descr* dt = (PyArray_Descr*)PyTuple_GET_ITEM(out_dt, j);
    Py_INCREF(dt);   /* stolen */
    outs[j] = nd > NPY_MAXDIMS ? NULL : PyArray_NewFromDescr(&PyArray_Type, dt, nd, dims,
                                                             NULL, NULL, 0, NULL);
    if (!outs[j]) {
      for (Py_ssize_t k = 0; k < j; k++) Py_DECREF(outs[k]);
      return NULL;
    }
    ptrs[ni + j] = PyArray_DATA((PyArrayObject*)outs[j]);
  }
  pj_kernel_t fn = (pj_kernel_t)PyLong_AsVoidPtr(PyTuple_GET_ITEM(spec, 0));
  int failed;
  Py_BEGIN_ALLOW_THREADS
  failed = fn(ptrs);
  Py_END_ALLOW_THREADS
  if (failed) {
    for (Py_ssize_t k = 0; k < no; k++) Py_DECREF(outs[k]);
    PyObject* r = PyObject_CallNoArgs(PyTuple_GET_ITEM(spec, 2));
    Py_XDECREF(r);
    return NULL;
  }
  Py_ssize_t nr = PyTuple_GET_SIZE(results);
  PyObject* list = PyList_New(nr);
  if (!list) {
    for (Py_ssize_t k = 0; k < no; k++) Py_DECREF(outs[k]);
    return NULL;
  }
  for (Py_ssize_t j = 0; j < no; j++)
    PyArray_CLEARFLAGS((PyArrayObject*)outs[j], NPY_ARRAY_WRITEABLE);
  for (Py_ssize_t r = 0; r < nr; r++) {
    Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(results, r));
    PyObject* v = k >= 0 ? outs[k] : a[-k - 1];
    Py_INCREF(v);
    PyList_SET_ITEM(list, r, v);
  }
  for (Py_ssize_t j = 0; j < no; j++) Py_DECREF(outs[j]);
  return list;
slow: {
    /* The Python runner; its fresh outputs made read only like ours. */
    PyObject* list = PyObject_Vectorcall(PyTuple_GET_ITEM(spec, 1), a, na, NULL);
    if (!list || !PyList_CheckExact(list) || PyList_GET_SIZE(list) != PyTuple_GET_SIZE(results))
      return list;
    for (Py_ssize_t r = 0; r < PyList_GET_SIZE(list); r++) {
      PyObject* v = PyList_GET_ITEM(list, r);
      if (PyLong_AsSsize_t(PyTuple_GET_ITEM(results, r)) >= 0 && PyArray_Check(v))
        PyArray_CLEARFLAGS((PyArrayObject*)v, NPY_ARRAY_WRITEABLE);
    }
    return list;
  }
}

static PyMethodDef pj_methods[] = {
  {"run", (PyCFunction)(void(*)(void))pj_run, METH_FASTCALL, "run(spec, *args)"},
  {NULL, NULL, 0, NULL}};
static struct PyModuleDef pj_module = {PyModuleDef_HEAD_INIT, "pj_fast_runner", NULL, -1,
                                       pj_methods};
PyMODINIT_FUNC PyInit_pj_fast_runner(void) {
  import_array();
  return PyModule_Create(&pj_module);
}
"""


@functools.lru_cache(maxsize=None)
def _module():
  """The compiled extension module, or None."""
  from purejax._src.backends.cpu import toolchain
  include = sysconfig.get_paths().get("include")
  # The versions in the source: a cached build is for these headers only.
  source = (f"/* Python {sys.version.split()[0]} ({sys.implementation.cache_tag}), "
            f"NumPy {np.__version__} */\n" + _SOURCE)
  try:
    lib = toolchain.compile_library(
        source, extra_flags=(f"-I{include}", f"-I{np.get_include()}"))
  except (toolchain.CompilerUnavailable, toolchain.CompileError, OSError):
    return None
  try:
    loader = importlib.machinery.ExtensionFileLoader(_MODULE, lib._name)
    spec = importlib.util.spec_from_file_location(_MODULE, lib._name, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
  except (ImportError, OSError):
    return None
  return module


def make(fn, slow, fail, input_positions, input_dtypes, output_shapes, output_dtypes,
         results):
  """A callable running the ctypes kernel ``fn`` like ``slow`` does (with
  its kernel outputs read only), or None.  ``results``: per result, the
  index of a kernel output, or ``-i - 1`` for argument i as given."""
  module = _module()
  if (module is None or len(input_positions) + len(output_shapes) > MAX_ARGS
      or any(len(s) > MAX_DIMS for s in output_shapes)):
    return None
  codes = tuple(int(r) for r in results)
  spec = (ctypes.cast(fn, ctypes.c_void_p).value, slow, fail,
          tuple(input_positions), tuple(np.dtype(d) for d in input_dtypes),
          tuple(tuple(int(n) for n in s) for s in output_shapes),
          tuple(np.dtype(d) for d in output_dtypes), codes)
  return functools.partial(module.run, spec)
