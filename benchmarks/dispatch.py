"""Per-call overhead: eager ops and small jitted functions, side by side with
NumPy and (when installed) JAX.  Prints microseconds per call and ratios.

    python benchmarks/dispatch.py
"""
import timeit

import numpy as np

import purejax
import purejax.numpy as pjnp

try:
  import jax
  import jax.numpy as jjnp
except ImportError:
  jax = None


def per_call_us(fn, number=2000):
  fn()
  best = min(timeit.repeat(fn, number=number, repeat=5))
  return best / number * 1e6


def cases():
  x_np = np.ones((8,), np.float32)
  x_p = pjnp.asarray(x_np)
  f = lambda m, x: m.sin(x) * 2.0 + x
  jit_p = purejax.jit(lambda x: f(pjnp, x))
  rows = [
      ("eager add (8,)", lambda: x_np + x_np, lambda: x_p + x_p, None),
      ("eager sin*2+x (8,)", lambda: f(np, x_np), lambda: f(pjnp, x_p), None),
      ("jit sin*2+x (8,)", lambda: f(np, x_np), lambda: jit_p(x_p), None),
  ]
  if jax is not None:
    x_j = jjnp.asarray(x_np)
    jit_j = jax.jit(lambda x: f(jjnp, x))
    rows = [(name, n, p, j) for (name, n, p, _), j in zip(rows, [
        lambda: (x_j + x_j).block_until_ready(),
        lambda: f(jjnp, x_j).block_until_ready(),
        lambda: jit_j(x_j).block_until_ready()])]
  return rows


def main():
  print(f"{'case':24s} {'numpy us':>9s} {'purejax us':>11s} {'jax us':>8s} "
        f"{'pj/np':>6s} {'pj/jax':>7s}")
  for name, np_fn, pj_fn, jax_fn in cases():
    t_np, t_pj = per_call_us(np_fn), per_call_us(pj_fn)
    t_jax = per_call_us(jax_fn) if jax_fn else float("nan")
    print(f"{name:24s} {t_np:9.2f} {t_pj:11.2f} {t_jax:8.2f} {t_pj / t_np:6.1f} "
          f"{t_pj / t_jax:7.2f}")


if __name__ == "__main__":
  main()
