"""A type checker for jaxprs: every variable is defined once before use, and
every equation's output types are what its primitive's shape rule says.

It runs after each trace when ``jax_enable_checks`` is on (the test suite
turns it on), so a rule that builds an ill-typed jaxpr fails at once.
"""
import contextlib

from purejax._src import core
from purejax._src.errors import JaxprTypeError
from purejax._src.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal


def check_jaxpr(jaxpr):
  if isinstance(jaxpr, ClosedJaxpr):
    jaxpr = jaxpr.jaxpr
  defined = set()

  def define(v, where):
    if v in defined:
      raise JaxprTypeError(f"variable {v} defined twice ({where})")
    defined.add(v)

  def read(v, where):
    if type(v) is Literal:
      return v.aval
    if v not in defined:
      raise JaxprTypeError(f"variable {v} used before it is defined ({where})")
    return v.aval

  for v in jaxpr.constvars + jaxpr.invars:
    define(v, "binder")
  for i, eqn in enumerate(jaxpr.eqns):
    where = f"equation {i}: {eqn.primitive}"
    in_avals = [read(v, where) for v in eqn.invars]
    expected = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
    if not eqn.primitive.multiple_results:
      expected = [expected]
    if len(expected) != len(eqn.outvars):
      raise JaxprTypeError(f"{where} has {len(eqn.outvars)} outputs, its rule gives "
                           f"{len(expected)}")
    for v, aval in zip(eqn.outvars, expected):
      if not _same_type(v.aval, aval):
        raise JaxprTypeError(f"{where} output has type {v.aval}, its rule gives {aval}")
      if not isinstance(v, DropVar):
        define(v, where)
    # A primitive that binds axis names for its sub-jaxprs (shard_map) says so.
    scope = getattr(eqn.primitive, "sub_jaxpr_axes", None)
    for value in eqn.params.values():
      if isinstance(value, (Jaxpr, ClosedJaxpr)):
        with scope(eqn.params) if scope else contextlib.nullcontext():
          check_jaxpr(value)
  for v in jaxpr.outvars:
    read(v, "outputs")


def _same_type(a, b):
  return (a.shape == b.shape and a.dtype == b.dtype and a.weak_type == b.weak_type
          if isinstance(a, core.ShapedArray) and isinstance(b, core.ShapedArray) else a == b)
