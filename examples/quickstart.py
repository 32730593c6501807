"""A first tour of purejax: the same code you would write with JAX.

Arrays and jnp, jit and the jaxpr it traces, immutable updates, type
promotion, pytrees, grad, vmap and random.
"""
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
  print()

  # grad: derivatives of Python functions, to any order, through jit.
  dselu = jax.grad(lambda v: selu(v).sum())
  print("grad of sum(selu) at x =", dselu(x))
  print("d2/dx2 x**3 at 2.0     =", jax.jit(jax.grad(jax.grad(lambda v: v ** 3)))(2.0))

  # Gradients of a pytree of parameters.
  def loss(p, v, target):
    return jnp.sum((apply(p, v) - target) ** 2)
  grads = jax.grad(loss)(params, jnp.array([1.0, 2.0]), jnp.array([0.0, 1.0]))
  print("grad of loss w.r.t. b  =", grads["b"])

  # vmap: a function of one example, mapped over a batch axis.
  batch = jnp.arange(6.0).reshape(3, 2)
  print("vmap(apply) over 3     ->", jax.vmap(apply, in_axes=(None, 0))(params, batch).tolist())
  per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, batch, jnp.ones((3, 2)))
  print("per-example grads of w:", per_example["w"].shape)

  # random: explicit keys, split before use; the same bits as JAX.
  key = jax.random.key(0)
  k1, k2 = jax.random.split(key)
  print("normal(k1, (3,))       =", jax.random.normal(k1, (3,)))
  print("randint(k2, (4,), 0, 100) =", jax.random.randint(k2, (4,), 0, 100))


if __name__ == "__main__":
  main()
