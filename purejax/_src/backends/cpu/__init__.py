"""The C compiler backend: jaxprs compiled to native code through the system C compiler."""
import os

# libgomp's default spin-wait makes short parallel loops on few cores up to
# 30x slower (a 1M-element selu: 8 ms instead of 0.25 ms on 2 cores).  It is
# read when libgomp loads, so it is set before any kernel is loaded; a value
# the user set wins.
os.environ.setdefault("GOMP_SPINCOUNT", "10000")

# lax's LAPACK calls loop over a batch in compiled code, on all the cores.
from purejax._src.backends.cpu import lapack_loop as _lapack_loop  # noqa: E402

_lapack_loop.install()
