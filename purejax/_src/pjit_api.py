"""``jax.experimental.pjit.pjit``: ``jit`` with the shardings as positional
arguments, read against the ``with mesh:`` context (JAX's resource
environment) instead of ``jax.set_mesh``."""
from purejax._src import core
from purejax._src.mesh import PartitionSpec, _mesh_stack
from purejax._src.sharded_array import ShardedJit, apply_out_shardings


class Pjit(ShardedJit):
  """A pjit-ed function.  A PartitionSpec names axes of the ``with mesh:``
  mesh at each call; under such a mesh, outputs without a sharding come out
  replicated over it, as in JAX."""
  _api = "pjit"

  def __call__(self, *args, **kwargs):
    outs = super().__call__(*args, **kwargs)
    if (self._out_shardings is None and _mesh_stack()
        and core.current_trace() is core.eval_trace):
      outs = apply_out_shardings(PartitionSpec(), outs, self._api)
    return outs


def pjit(fun, in_shardings=None, out_shardings=None, static_argnums=None,
         static_argnames=None, donate_argnums=None, donate_argnames=None,
         keep_unused=False, device=None, backend=None, inline=False, compiler_options=None):
  """`jax.experimental.pjit.pjit` has been deprecated. Please use `jax.jit`.

  ``None`` shardings are unspecified, as in ``jit``."""
  if device is not None or backend is not None:
    from purejax._src.api import jit
    return jit(fun, in_shardings=in_shardings, out_shardings=out_shardings,
               static_argnums=static_argnums, static_argnames=static_argnames,
               donate_argnums=donate_argnums, donate_argnames=donate_argnames,
               keep_unused=keep_unused, device=device, backend=backend, inline=inline,
               compiler_options=compiler_options)
  return Pjit(fun, static_argnums, static_argnames, donate_argnums, donate_argnames, inline,
              keep_unused, in_shardings, out_shardings)
