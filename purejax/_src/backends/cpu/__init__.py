"""The C compiler backend: jaxprs compiled to native code through the system C compiler."""
import os

# libgomp's default spin-wait makes short parallel loops on few cores up to
# 30x slower (a 1M-element selu: 8 ms instead of 0.25 ms on 2 cores).  It is
# read when libgomp loads, so it is set before any kernel is loaded; a value
# the user set wins.
os.environ.setdefault("GOMP_SPINCOUNT", "10000")
# Once two threads have run parallel kernels (the main thread, and the worker
# of asynchronous dispatch), libgomp manages more threads than there are
# cores and cuts every barrier's spin to 100 iterations: the threads then
# sleep and wake through the kernel at each of a scan body's many short
# parallel regions (an LSTM step ran 4x slower).  The "active" policy keeps
# that spin at 1000 (GOMP_SPINCOUNT still bounds the usual one).
os.environ.setdefault("OMP_WAIT_POLICY", "active")

# lax's LAPACK calls loop over a batch in compiled code, on all the cores.
from purejax._src.backends.cpu import lapack_loop as _lapack_loop  # noqa: E402

_lapack_loop.install()
