"""``linear_util``: functions wrapped with a stack of transformations.

JAX's extension API (and libraries such as flax) describe a transformation
of a Python function as a generator or function that runs around the inner
function; a ``WrappedFun`` holds the base function, its fixed keyword
params and the stack of transformations applied so far.  It is hashable by
those parts, so ``cache`` can memoize a call keyed on them.  purejax's own
transformations do not use it: it is here for code written against JAX's.

A transformation may store an auxiliary output (``transformation_with_aux``):
the thunk returned beside the wrapped function reads it once the function
has run (``StoreException`` before).
"""
import functools
import weakref


class StoreException(Exception):
  pass


_EMPTY = object()


class Store:
  """One auxiliary output, written once."""
  __slots__ = ("_val",)

  def __init__(self):
    self._val = _EMPTY

  def store(self, val):
    if self._val is not _EMPTY:
      raise StoreException("Store occupied")
    self._val = val

  def reset(self):
    self._val = _EMPTY

  @property
  def val(self):
    if self._val is _EMPTY:
      raise StoreException("Store empty")
    return self._val

  def __bool__(self):
    return self._val is not _EMPTY


class EqualStore(Store):
  """A store that may be written again with an equal value."""
  __slots__ = ()

  def store(self, val):
    if self._val is not _EMPTY and self._val == val:
      return
    super().store(val)


def _name(f):
  return getattr(f, "__name__", type(f).__name__)


class WrappedFun:
  """``f`` with params ``params`` (sorted (name, value) pairs) under
  ``transforms`` (outermost first); ``call_wrapped`` runs the whole stack."""
  __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type",
               "debug_info", "__weakref__")

  def __init__(self, f, f_transformed, transforms, stores, params, in_type=None,
               debug_info=None):
    self.f, self.f_transformed = f, f_transformed
    self.transforms, self.stores = tuple(transforms), tuple(stores)
    self.params, self.in_type, self.debug_info = tuple(params), in_type, debug_info

  @property
  def __name__(self):
    return _name(self.f)

  def wrap(self, gen, gen_static_args, out_store):
    """This function with one more transformation ``gen`` around it.
    ``gen(inner, [out_store,] *gen_static_args, *args, **kwargs)``."""
    prefix = (self.f_transformed,) if out_store is None else (self.f_transformed, out_store)
    return WrappedFun(self.f, functools.partial(gen, *prefix, *gen_static_args),
                      ((gen, tuple(gen_static_args)),) + self.transforms,
                      (out_store,) + self.stores, self.params, None, self.debug_info)

  def call_wrapped(self, *args, **kwargs):
    return self.f_transformed(*args, **kwargs)

  def populate_stores(self, stores):
    for mine, theirs in zip(self.stores, stores):
      if mine is not None:
        mine.store(theirs.val)

  def with_unknown_names(self):
    return self

  def replace_debug_info(self, debug_info):
    return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores,
                      self.params, self.in_type, debug_info)

  def _key(self):
    return (self.f, self.transforms, self.params, self.in_type, self.debug_info)

  def __eq__(self, other):
    return type(other) is WrappedFun and self._key() == other._key()

  def __hash__(self):
    return hash(self._key())

  def __repr__(self):
    stack = "".join(f"{i}   : {_name(gen)}   {args}\n"
                    for i, (gen, args) in enumerate(self.transforms))
    return f"Wrapped function:\n{stack}Core: {_name(self.f)}\n"


def wrap_init(f, params=None, *, debug_info=None):
  """``f`` as a ``WrappedFun`` with no transformations (``params``: keyword
  arguments it is always called with)."""
  params = {} if params is None else dict(params)
  return WrappedFun(f, functools.partial(f, **params), (), (),
                    tuple(sorted(params.items())), None, debug_info)


def _curried(transform):
  # As JAX's: ``transform(gen)(fun, *static_args)``; given more arguments at
  # once it still returns a function, to be called with the rest (or none).
  return functools.partial(functools.partial, transform)


@_curried
def transformation2(gen, fun, *gen_static_args):
  """``gen(inner, *static_args, *args, **kwargs)`` around ``fun``."""
  return fun.wrap(gen, gen_static_args, None)


@_curried
def transformation_with_aux2(gen, fun, *gen_static_args, use_eq_store=False,
                             unk_names=False):
  """``gen(inner, store, *static_args, *args, **kwargs)`` around ``fun``;
  returns the wrapped function and a thunk reading what ``gen`` stored."""
  store = EqualStore() if use_eq_store else Store()
  return fun.wrap(gen, gen_static_args, store), lambda: store.val


def _run_generator(gen_fn, inner, args, kwargs):
  # A generator transformation yields the inner call's (args, kwargs), is
  # sent its result, and yields its own result.
  gen = gen_fn(*args, **kwargs)
  inner_args, inner_kwargs = next(gen)
  return gen.send(inner(*inner_args, **inner_kwargs))


@_curried
def transformation(gen, fun, *gen_static_args):
  """Generator style: ``gen(*static_args, *args, **kwargs)`` yields the inner
  call's ``(args, kwargs)`` and then the result."""
  def run(inner, *args, **kwargs):
    return _run_generator(gen, inner, args, kwargs)
  run.__name__ = _name(gen)
  return fun.wrap(run, gen_static_args, None)


@_curried
def transformation_with_aux(gen, fun, *gen_static_args):
  """Generator style with an auxiliary output: ``gen`` finally yields
  ``(result, aux)``; returns the wrapped function and a thunk for ``aux``."""
  def run(inner, store, *args, **kwargs):
    out, aux = _run_generator(gen, inner, args, kwargs)
    store.store(aux)
    return out
  run.__name__ = _name(gen)
  return transformation_with_aux2(run)(fun, *gen_static_args)


def merge_linear_aux(aux1, aux2):
  """Of two aux thunks exactly one of which was stored: ``(True, aux1())``
  or ``(False, aux2())``."""
  try:
    out1 = aux1()
  except StoreException:
    try:
      return False, aux2()
    except StoreException:
      raise StoreException("neither store occupied") from None
  try:
    aux2()
  except StoreException:
    return True, out1
  raise StoreException("both stores occupied")


def cache(call, *, explain=None):
  """Memoizes ``call(fun, *args)`` on fun's base function, transformations,
  params and ``args``; a hit refills fun's stores from the first call's."""
  per_function = weakref.WeakKeyDictionary()

  def memoized(fun, *args):
    table = per_function.setdefault(fun.f, {})
    key = (fun.transforms, fun.params, fun.in_type, args)
    hit = table.get(key)
    if hit is not None:
      ans, stores = hit
      fun.populate_stores(stores)
      return ans
    ans = call(fun, *args)
    table[key] = (ans, fun.stores)
    return ans

  memoized.cache_clear = per_function.clear
  memoized.evict_function = lambda f: per_function.pop(f, None)
  return memoized
