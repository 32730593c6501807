"""optimizers (as ``jax.example_libraries.optimizers``): first-order
optimizers on pytrees.

Each optimizer is written for one array (its state a small pytree of
arrays) and lifted to pytrees of parameters by ``@optimizer``, which returns
``Optimizer(init_fn, update_fn, params_fn)``. ``OptimizerState`` is a pytree
whose leaves are the per-array states, so it passes through ``jit``.
Step sizes are numbers or schedules ``step -> size``.
"""
import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import purejax.numpy as jnp
from purejax import tree_util

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
  init_fn: InitFn
  update_fn: UpdateFn
  params_fn: ParamsFn


def _flatten_each(trees):
  """(leaves of each tree, treedef of each tree), as two tuples."""
  return unzip2(tree_util.tree_flatten(t) for t in trees)


def optimizer(opt_maker):
  """Lifts ``opt_maker(*args) -> (init, update, get_params)``, written for
  single arrays, to an ``Optimizer`` over pytrees of arrays."""
  @functools.wraps(opt_maker)
  def tree_opt_maker(*args, **kwargs):
    init, update, get_params = opt_maker(*args, **kwargs)

    @functools.wraps(init)
    def tree_init(x0_tree):
      leaves, tree_def = tree_util.tree_flatten(x0_tree)
      states, subtree_defs = _flatten_each([init(x) for x in leaves])
      return OptimizerState(states, tree_def, subtree_defs)

    @functools.wraps(update)
    def tree_update(i, grad_tree, opt_state):
      states, tree_def, subtree_defs = opt_state
      grads, grad_def = tree_util.tree_flatten(grad_tree)
      if grad_def != tree_def:
        raise TypeError(
            "optimizer update function was passed a gradient tree that did not match "
            "the parameter tree structure with which it was initialized: parameter "
            f"tree {tree_def} and grad tree {grad_def}.")
      old = [tree_util.tree_unflatten(d, s) for d, s in zip(subtree_defs, states)]
      new_states, new_defs = _flatten_each([update(i, g, s) for g, s in zip(grads, old)])
      for before, after in zip(subtree_defs, new_defs):
        if before != after:
          raise TypeError(
              "optimizer update function produced an output structure that did not "
              f"match its input structure: input {before} and output {after}.")
      return OptimizerState(new_states, tree_def, subtree_defs)

    @functools.wraps(get_params)
    def tree_get_params(opt_state):
      states, tree_def, subtree_defs = opt_state
      return tree_util.tree_unflatten(tree_def, [
          get_params(tree_util.tree_unflatten(d, s))
          for d, s in zip(subtree_defs, states)])

    return Optimizer(tree_init, tree_update, tree_get_params)
  return tree_opt_maker


def _first(state):
  return state[0]


def _with_zeros(count):
  """init: the parameters and ``count`` zero accumulators like them."""
  return lambda x0: (x0,) + tuple(jnp.zeros_like(x0) for _ in range(count))


def _bias_correction(beta, m, i):
  return 1 - jnp.asarray(beta, m.dtype) ** (i + 1)


@optimizer
def sgd(step_size):
  """Gradient descent: ``x - step_size(i) * g``."""
  step_size = make_schedule(step_size)
  return Optimizer(lambda x0: x0, lambda i, g, x: x - step_size(i) * g, lambda x: x)


@optimizer
def momentum(step_size, mass):
  """Heavy-ball momentum: ``v = mass * v + g; x -= step_size(i) * v``."""
  step_size = make_schedule(step_size)

  def update(i, g, state):
    x, v = state
    v = mass * v + g
    return x - step_size(i) * v, v
  return _with_zeros(1), update, _first


@optimizer
def nesterov(step_size, mass):
  """Nesterov momentum: the step looks ahead along the new velocity."""
  step_size = make_schedule(step_size)

  def update(i, g, state):
    x, v = state
    v = mass * v + g
    return x - step_size(i) * (mass * v + g), v
  return _with_zeros(1), update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
  """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient."""
  step_size = make_schedule(step_size)

  def update(i, g, state):
    x, g_sq, m = state
    g_sq = g_sq + jnp.square(g)
    inv_root = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
    m = (1. - momentum) * (g * inv_root) + momentum * m
    return x - step_size(i) * m, g_sq, m
  return _with_zeros(2), update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
  """RMSProp: steps scaled by a running root mean square of gradients."""
  step_size = make_schedule(step_size)

  def update(i, g, state):
    x, avg_sq = state
    avg_sq = avg_sq * gamma + jnp.square(g) * (1. - gamma)
    return x - step_size(i) * g / jnp.sqrt(avg_sq + eps), avg_sq
  return _with_zeros(1), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
  """RMSProp whose scaled steps accumulate with momentum."""
  step_size = make_schedule(step_size)

  def update(i, g, state):
    x, avg_sq, mom = state
    avg_sq = avg_sq * gamma + jnp.square(g) * (1. - gamma)
    mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq + eps)
    return x - mom, avg_sq, mom
  return _with_zeros(2), update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """Adam (Kingma and Ba 2014) with bias-corrected moment estimates."""
  step_size = make_schedule(step_size)

  def update(i, g, state):
    x, m, v = state
    m = (1 - b1) * g + b1 * m
    v = (1 - b2) * jnp.square(g) + b2 * v
    m_hat = m / _bias_correction(b1, m, i)
    v_hat = v / _bias_correction(b2, m, i)
    return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v
  return _with_zeros(2), update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """AdaMax: Adam with the infinity norm in place of the second moment."""
  step_size = make_schedule(step_size)

  def update(i, g, state):
    x, m, u = state
    m = (1 - b1) * g + b1 * m
    u = jnp.maximum(b2 * u, jnp.abs(g))
    return x - (step_size(i) / _bias_correction(b1, m, i)) * m / (u + eps), m, u
  return _with_zeros(2), update, _first


@optimizer
def sm3(step_size, momentum=0.9):
  """SM3 (Anil et al. 2019): one accumulator vector per axis, whose
  broadcast minimum bounds each entry's sum of squared gradients."""
  step_size = make_schedule(step_size)

  def along(ndim, v, axis):
    index = [None] * ndim
    index[axis] = slice(None)
    return v[tuple(index)]

  def init(x0):
    shape = x0.shape
    x0 = jnp.atleast_1d(x0)
    return x0, jnp.zeros_like(x0), [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape], shape

  def update(i, g, state):
    x, m, vs, shape = state
    bound = functools.reduce(jnp.minimum, [along(g.ndim, v, a) for a, v in enumerate(vs)])
    accum = bound + jnp.square(g)
    inv_root = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
    m = (1. - momentum) * (g * inv_root) + momentum * m
    x = x - step_size(i) * m
    vs = [accum.max(tuple(a for a in range(x.ndim) if a != j)) for j in range(x.ndim)]
    return x, m, vs, shape

  def get_params(state):
    return state[0].reshape(state[3])
  return init, update, get_params


# -- step-size schedules --------------------------------------------------------------

def constant(step_size):
  return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
  return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
  if staircase:
    return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
  return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
  def schedule(step_num):
    step_num = jnp.minimum(step_num, decay_steps)
    return (1 - step_num / decay_steps) ** power * (step_size - final_step_size) + final_step_size
  return schedule


def piecewise_constant(boundaries, values):
  """``values[k]`` where k is how many boundaries the step has passed."""
  boundaries, values = jnp.array(boundaries), jnp.array(values)
  if not boundaries.ndim == values.ndim == 1:
    raise ValueError("boundaries and values must be sequences")
  if not boundaries.shape[0] == values.shape[0] - 1:
    raise ValueError("boundaries length must be one shorter than values length")
  return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule):
  if callable(scalar_or_schedule):
    return scalar_or_schedule
  if jnp.ndim(scalar_or_schedule) == 0:
    return constant(scalar_or_schedule)
  raise TypeError(type(scalar_or_schedule))


# -- utilities ------------------------------------------------------------------------

def l2_norm(tree):
  """The l2 norm of all leaves together."""
  return jnp.sqrt(sum(jnp.vdot(x, x) for x in tree_util.tree_leaves(tree)))


def clip_grads(grad_tree, max_norm):
  """Scales the whole tree down so that its l2 norm is at most ``max_norm``."""
  norm = l2_norm(grad_tree)
  return tree_util.tree_map(
      lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
  """A leaf of an unpacked state holding one parameter's state subtree."""

  def __init__(self, subtree):
    self.subtree = subtree

  def __iter__(self):
    yield self.subtree


def unpack_optimizer_state(opt_state):
  """An ``OptimizerState`` as a pytree of ``JoinPoint`` leaves (for saving)."""
  states, tree_def, subtree_defs = opt_state
  return tree_util.tree_unflatten(tree_def, [
      JoinPoint(tree_util.tree_unflatten(d, s)) for d, s in zip(subtree_defs, states)])


def pack_optimizer_state(marked_pytree):
  """The inverse of ``unpack_optimizer_state``."""
  joins, tree_def = tree_util.tree_flatten(marked_pytree)
  assert all(isinstance(j, JoinPoint) for j in joins)
  states, subtree_defs = _flatten_each([j.subtree for j in joins])
  return OptimizerState(states, tree_def, subtree_defs)


def unzip2(xys):
  xs, ys = [], []
  for x, y in xys:
    xs.append(x)
    ys.append(y)
  return tuple(xs), tuple(ys)
