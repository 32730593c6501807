"""Exception classes a user sees, with JAX's names and base classes."""

_ERRORS_URL = "https://docs.jax.dev/en/latest/errors.html"


class _JAXErrorMixin:
  """Appends the link to the error's documentation, as JAX does."""
  _error_page = _ERRORS_URL

  def __init__(self, message):
    name = type(self).__name__
    super().__init__(f"{message}\nSee {self._error_page}#jax.errors.{name}")


class JAXTypeError(_JAXErrorMixin, TypeError):
  pass


class JAXIndexError(_JAXErrorMixin, IndexError):
  pass


class ConcretizationTypeError(JAXTypeError):
  """A traced value was used where Python needs a concrete one."""

  def __init__(self, tracer, context=""):
    super().__init__(
        "Abstract tracer value encountered where concrete value is expected: "
        f"{tracer._short_description()}\n{context}\n")


class TracerBoolConversionError(ConcretizationTypeError):
  """``bool()`` (an ``if``, ``while``, ``and``...) of a traced value."""

  def __init__(self, tracer, context=""):
    JAXTypeError.__init__(
        self, "Attempted boolean conversion of traced array with shape "
        f"{tracer.aval.str_short()}.{context}")


class TracerIntegerConversionError(JAXTypeError):
  """``__index__`` of a traced value (``range(x)``, ``lst[x]``)."""

  def __init__(self, tracer, context=""):
    super().__init__("The __index__() method was called on traced array with "
                     f"shape {tracer.aval.str_short()}{context}")


class TracerArrayConversionError(JAXTypeError):
  """``np.asarray`` of a traced value."""

  def __init__(self, tracer, context=""):
    super().__init__("The numpy.ndarray conversion method __array__() was "
                     f"called on traced array with shape "
                     f"{tracer.aval.str_short()}{context}")


class NonConcreteBooleanIndexError(JAXIndexError):
  """Boolean-mask indexing with a traced mask (the result shape is dynamic)."""

  def __init__(self, tracer):
    super().__init__("Array boolean indices must be concrete; got "
                     f"{tracer.aval.str_short()}\n")


class UnexpectedTracerError(JAXTypeError):
  """A tracer escaped the transformation that created it."""

  def __init__(self, message):
    super().__init__(message)


class JaxprTypeError(TypeError):
  """A jaxpr failed the type checker."""


class InconclusiveDimensionOperation(Exception):
  pass


class KeyReuseError(RuntimeError):
  pass


class JaxRuntimeError(RuntimeError):
  pass
