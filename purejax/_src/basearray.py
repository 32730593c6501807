"""The public ``Array`` type, for instance checks and annotations.

``purejax.Array`` (``jax.Array``) is abstract: concrete arrays, tracers (in
``jit``, ``grad``, ``vmap``...) and typed PRNG key arrays are all instances
of it, NumPy arrays and Python scalars are not.  The concrete class holding
a value is ``purejax._src.array.ArrayImpl``; code inside purejax that needs
a concrete value checks for that class.  Another array-like class joins by
``Array.register(cls)``.
"""
import abc

from purejax._src import core


class ArrayMeta(abc.ABCMeta):
  """Makes every tracer of an array value an instance of ``Array`` (a
  tracer's class is not a subclass: its value only stands in for one)."""

  def __instancecheck__(cls, instance):
    if cls is Array and isinstance(instance, core.Tracer):
      return isinstance(getattr(instance, "aval", None), core.ShapedArray)
    return super().__instancecheck__(instance)


class Array(abc.ABC, metaclass=ArrayMeta):
  """The type of purejax arrays and tracers: use it in ``isinstance``
  checks and type annotations.  Arrays are made by ``jnp.array``,
  ``jnp.zeros`` and the like, never by calling ``Array``."""
  __slots__ = ()

  def __init__(self, *args, **kwargs):
    raise TypeError("jax.Array is an abstract class and cannot be instantiated; "
                    "create arrays with jnp.array, jnp.zeros, jax.device_put, ...")


Array.__module__ = "purejax"
