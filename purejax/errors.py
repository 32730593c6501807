"""Exception classes raised by purejax, with JAX's names."""
from purejax._src.errors import (
    ConcretizationTypeError, InconclusiveDimensionOperation, JAXIndexError,
    JAXTypeError, JaxprTypeError, JaxRuntimeError, KeyReuseError,
    NonConcreteBooleanIndexError, TracerArrayConversionError,
    TracerBoolConversionError, TracerIntegerConversionError, UnexpectedTracerError)
