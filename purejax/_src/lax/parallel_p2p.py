"""psend and precv: one-sided sends and receives along a named axis.

JAX implements them on GPUs only: on the CPU, staging them works (psend
gives a token, precv an array of ``out_shape``) and running them raises
JAX's NotImplementedError.  purejax's backends are the CPU's, so it does
the same.
"""
from purejax._src import core
from purejax._src import tree_util
from purejax._src.lax.parallel import _as_names, _check_bound
from purejax._src.lax.tokens import abstract_token


def _only_on_gpu(name):
  def impl(*args, **params):
    raise NotImplementedError(f"{name} is currently only implemented on GPU")
  return impl


def _psend_abstract_eval(x, *, axis_name, perm):
  _check_bound(axis_name, "psend")
  return abstract_token


def _precv_abstract_eval(token, *, out_shape, axis_name, perm):
  _check_bound(axis_name, "precv")
  return out_shape


psend_p = core.Primitive("psend")
psend_p.impl = _only_on_gpu("psend")
psend_p.abstract_eval = _psend_abstract_eval
psend_p.c_code = None

precv_p = core.Primitive("precv")
precv_p.impl = _only_on_gpu("precv")
precv_p.abstract_eval = _precv_abstract_eval
precv_p.c_code = None


def psend(x, axis_name, perm):
  """Sends ``x`` along ``perm`` (pairs (source, destination) of indices
  along ``axis_name``); a token for the matching ``precv``."""
  names = _as_names(axis_name)
  perm = tuple(tuple(int(i) for i in pair) for pair in perm)
  return tree_util.tree_map(lambda leaf: psend_p.bind(leaf, axis_name=names, perm=perm), x)


def precv(token, out_shape, axis_name, perm):
  """Receives an array of ``out_shape`` sent along ``perm`` by ``psend``."""
  return precv_p.bind(token, out_shape=core.ShapedArray(tuple(out_shape.shape), out_shape.dtype),
                      axis_name=_as_names(axis_name),
                      perm=tuple(tuple(int(i) for i in pair) for pair in perm))
