"""A first tour of purejax: the same code you would write with JAX."""
import numpy as np

import purejax as jax
import purejax.numpy as jnp


def selu(x, alpha=1.67, lmbda=1.05):
  return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def main():
  x = jnp.arange(5.0) - 2.0
  print("x            =", x)
  print("selu(x)      =", selu(x))

  selu_jit = jax.jit(selu)
  print("jit(selu)(x) =", selu_jit(x))
  print()
  print("The jaxpr jit traced:")
  print(jax.make_jaxpr(selu)(x))
  print()

  # Arrays are immutable; functional updates return new arrays.
  y = jnp.zeros((3, 3)).at[1, :].set(1.0)
  print("updated:\n", y)

  # JAX's type promotion, not NumPy's.
  print("int8 + 4 ->", (jnp.int8(32) + 4).dtype)

  # Pytrees go in and out of jitted functions.
  params = {"w": jnp.ones((2, 2)), "b": jnp.zeros(2)}
  apply = jax.jit(lambda p, v: jnp.dot(p["w"], v) + p["b"])
  print("apply ->", apply(params, np.array([1.0, 2.0], np.float32)))


if __name__ == "__main__":
  main()
