"""``jax.extend.ifrt_programs``: programs for JAX's IFRT runtime (plugin
programs run over Pathways' IFRT proxy).  purejax has no IFRT runtime: the
``ifrt_programs`` namespace exists, so that libraries importing it load,
and each of its functions raises NotImplementedError."""


class _NoIfrt:
  def __getattr__(self, name):
    if name.startswith("__"):
      raise AttributeError(name)

    def unsupported(*args, **kwargs):
      raise NotImplementedError(f"jax.extend.ifrt_programs.ifrt_programs.{name}: purejax has "
                                "no IFRT runtime to build or run IFRT programs")
    return unsupported

  def __repr__(self):
    return "<ifrt_programs (not supported by purejax)>"


ifrt_programs = _NoIfrt()
