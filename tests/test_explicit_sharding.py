"""Explicit sharding (sharding in types) against real JAX on 8 CPU devices:
set_mesh, device_put(x, P(...)), typeof printing ``float32[8@x]``, the
propagation rules and their errors, reshard, auto_axes, PartitionSpec's
unreduced axes.  Each case runs in a subprocess (the device count is read
at start-up) under purejax and under JAX; their printed lines must agree."""
import os
import subprocess
import sys

import pytest

from jax_devices_oracle import jax_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PRELUDE = """
import {mod} as jax
import {mod}.numpy as jnp
from {mod}.sharding import PartitionSpec as P, AxisType, NamedSharding, AbstractMesh
mesh = jax.make_mesh((2, 4), ('x', 'y'))
def show(name, f):
  try:
    print(name, jax.typeof(f()))
  except Exception as e:
    print(name, type(e).__name__, str(e).splitlines()[0])
"""

CASES = {
  "mesh": """
print(repr(mesh)); print(mesh); print(mesh.abstract_mesh)
print(repr(AbstractMesh((2, 4), ('x', 'y'))))
print(AbstractMesh((2, 4), ('x', 'y')).axis_types)
print(jax.sharding.get_abstract_mesh())
with jax.set_mesh(mesh) as m:
  print(m, jax.sharding.get_abstract_mesh())
  print(jax.sharding.get_mesh())
print(jax.sharding.get_abstract_mesh())
try:
  jax.set_mesh(mesh.abstract_mesh)
except ValueError as e:
  print('ValueError', str(e).split('Got')[0])
""",
  "device_put_typeof": """
jax.set_mesh(mesh)
a = jax.device_put(jnp.arange(32.).reshape(8, 4), P('x'))
print(jax.typeof(a)); print(repr(jax.typeof(a))); print(a.sharding)
print(jax.typeof(a).shape, jax.typeof(a).dtype)
print(jax.typeof(jax.device_put(jnp.ones((8, 4)), P(('x', 'y')))))
print(jax.typeof(jax.device_put(jnp.ones((8, 4)), P('y', 'x'))))
print(jnp.sum(a), a.shape)
show('indivisible', lambda: jax.device_put(jnp.ones((3, 4)), P('x')))
show('unknown axis', lambda: jax.device_put(jnp.ones((8, 4)), P('z')))
""",
  "auto_mesh_untyped": """
m = jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,))
with jax.set_mesh(m):
  c = jax.device_put(jnp.ones(8), P('i'))
  print(jax.typeof(c)); print(c.sharding)
""",
  "elementwise": """
with jax.set_mesh(mesh):
  a = jax.device_put(jnp.ones((8, 4)), P('x'))
  b = jax.device_put(jnp.ones((8, 4)), P(None, 'y'))
  show('scale', lambda: a * 2)
  show('merge', lambda: a + b)
  show('with unsharded', lambda: a + jnp.ones((8, 4)))
  show('broadcast row', lambda: a + jnp.ones(4))
  show('broadcast sharded row', lambda: jax.device_put(jnp.ones(4), P('y')) + a)
  show('sin', lambda: jnp.sin(a))
  show('astype', lambda: a.astype(jnp.int32))
  show('where', lambda: jnp.where(a > 0, a, b))
  show('conflict', lambda: a + jax.device_put(jnp.ones((8, 4)), P('y')))
  show('same axis twice', lambda: a + jax.device_put(jnp.ones((8, 4)), P(None, 'x')))
""",
  "reductions_and_layout": """
with jax.set_mesh(mesh):
  a = jax.device_put(jnp.ones((8, 4)), P('x', 'y'))
  show('sum0', lambda: a.sum(0))
  show('sum1', lambda: a.sum(1))
  show('sum', lambda: a.sum())
  show('max0', lambda: a.max(0))
  show('argmax1', lambda: jnp.argmax(a, axis=1))
  show('mean1', lambda: a.mean(1))
  show('T', lambda: a.T)
  show('reshape split', lambda: a.reshape(8, 2, 2))
  b = jax.device_put(jnp.ones((8, 4)), P('x'))
  show('reshape merge', lambda: b.reshape(32))
  show('expand', lambda: b[None])
  show('column', lambda: b[:, 0])
  show('cumsum', lambda: jnp.cumsum(b, axis=1))
""",
  "dot_general": """
with jax.set_mesh(mesh):
  a = jax.device_put(jnp.ones((8, 4)), P('x'))
  show('free dims', lambda: a @ jax.device_put(jnp.ones((4, 4)), P(None, 'y')))
  show('one side contracting', lambda: a @ jax.device_put(jnp.ones((4, 4)), P('y')))
  show('both contracting', lambda: jax.device_put(jnp.ones((8, 4)), P('x', 'y'))
       @ jax.device_put(jnp.ones((4, 4)), P('y')))
  show('illegal result', lambda: a @ jax.device_put(jnp.ones((4, 8)), P(None, 'x')))
  show('batch', lambda: jnp.einsum('bij,bjk->bik', jax.device_put(jnp.ones((2, 4, 4)), P('x')),
                                   jax.device_put(jnp.ones((2, 4, 4)), P('x', None, 'y'))))
  show('batch one side', lambda: jnp.einsum('bij,bjk->bik',
       jax.device_put(jnp.ones((2, 4, 4)), P('x')), jnp.ones((2, 4, 4))))
  print((a @ jnp.ones((4, 4))).sum())
""",
  "jit": """
with jax.set_mesh(mesh):
  a = jax.device_put(jnp.arange(32.).reshape(8, 4), P('x'))
  @jax.jit
  def f(x):
    print('in jit', jax.typeof(x))
    y = jnp.sin(x) * 2
    print('in jit', jax.typeof(y))
    return y.sum(0), y.sum(1)
  s0, s1 = f(a)
  print(jax.typeof(s0), jax.typeof(s1))
  print(jnp.allclose(s1, jnp.sin(jnp.arange(32.).reshape(8, 4)).sum(1) * 2))
  f(a)   # no retrace
  f(jax.device_put(a, P(None, 'y')))   # a new type: retraced
  g = jax.jit(lambda z: jax.sharding.reshard(z, P(None, 'y')))
  print(jax.typeof(g(a)))
""",
  "reshard_auto_axes": """
with jax.set_mesh(mesh):
  a = jax.device_put(jnp.ones((8, 4)), P('x'))
  show('reshard', lambda: jax.sharding.reshard(a, P('y')))
  show('reshard replicate', lambda: jax.sharding.reshard(a, P()))
  show('auto_axes', lambda: jax.sharding.auto_axes(lambda z: z * 2, out_sharding=P('y'))(a))
  @jax.sharding.auto_axes(out_sharding=P(None, 'y'))
  def inside(z):
    print('auto inside', jax.typeof(z))
    return z + 1
  show('auto decorator', lambda: inside(a))
""",
  "partition_spec": """
print(repr(P('x', None, unreduced={'y'}))); print(P('x', reduced={'y'}))
print(repr(P(unreduced={'y'}))); print(P('x'), P(), P(None, 'x'))
print(P('x', unreduced={'y'}) == P('x'), P('x', unreduced={'y'}).unreduced, P('x').unreduced)
try:
  P('x', unreduced={'x'})
except ValueError as e:
  print('ValueError', e)
""",
  "out_sharding": """
with jax.set_mesh(mesh):
  a = jax.device_put(jnp.ones((8, 4)), P('x'))
  b = jax.device_put(jnp.ones((4, 8)), P(None, 'x'))
  c = jax.device_put(jnp.ones((8, 4)), P('x', 'y'))
  d = jax.device_put(jnp.ones((4, 4)), P('y'))
  show('dot illegal resolved', lambda: jnp.dot(a, b, out_sharding=P('x')))
  show('dot contracting', lambda: jnp.dot(c, d, out_sharding=P('x', 'y')))
  show('dot contracting unreduced', lambda: jnp.dot(c, d, out_sharding=P('x', unreduced={'y'})))
  show('matmul', lambda: jnp.matmul(c, d, out_sharding=P(None, 'y')))
  show('matmul NS', lambda: jnp.matmul(c, d, out_sharding=NamedSharding(mesh, P('y'))))
  show('einsum', lambda: jnp.einsum('ij,jk->ik', c, d, out_sharding=P('x')))
  show('dot_general', lambda: jax.lax.dot_general(c, d, (((1,), (0,)), ((), ())), out_sharding=P('y', 'x')))
  show('dot bad axis', lambda: jnp.dot(c, d, out_sharding=P('z')))
  show('dot too long', lambda: jnp.dot(c, d, out_sharding=P('x', 'y', None)))
  show('dot same axis', lambda: jnp.dot(c, d, out_sharding=P('x', 'x')))
  show('dot indivisible', lambda: jnp.dot(jnp.ones((3, 4)), jnp.ones((4, 4)), out_sharding=P('x')))
  show('reshape', lambda: jnp.reshape(a, (32,), out_sharding=P('x')))
  show('reshape2', lambda: jnp.reshape(c, (2, 16), out_sharding=P(None, 'y')))
  show('lax.reshape', lambda: jax.lax.reshape(c, (32,), out_sharding=P('x')))
  show('method reshape', lambda: a.reshape((32,), out_sharding=P('y')))
  show('zeros', lambda: jnp.zeros((8, 4), out_sharding=P('x')))
  show('ones', lambda: jnp.ones((8, 4), jnp.int32, out_sharding=P(None, 'y')))
  show('full', lambda: jnp.full((8, 4), 3., out_sharding=P('y', 'x')))
  show('full NS', lambda: jnp.full((8, 4), 3., out_sharding=NamedSharding(mesh, P('y'))))
  show('zeros bad', lambda: jnp.zeros((3, 4), out_sharding=P('x')))
  show('empty', lambda: jnp.empty((8, 4), out_sharding=P('x')))
  show('zeros_like', lambda: jnp.zeros_like(a, out_sharding=P(None, 'y')))
  show('at get', lambda: c.at[jnp.array([0, 1, 2, 3])].get(out_sharding=P('x')))
  show('at get slice', lambda: c.at[:, 1:3].get(out_sharding=P('x')))
  show('jit dot', lambda: jax.jit(lambda c, d: jnp.dot(c, d, out_sharding=P('x', 'y')))(c, d))
  print(jnp.dot(c, d, out_sharding=P('x', 'y')).sum())
  print(jnp.dot(a, b, out_sharding=P('x')).sharding)
  print(jnp.zeros((8, 4), out_sharding=P('x')).sharding)
show('no mesh zeros', lambda: jnp.zeros((8, 4), out_sharding=P('x')))
""",
  "placed_on_mesh": """
import numpy as np
outside = jnp.ones(8)
def where(n, a):
  print(n, a.sharding, a.committed, jax.typeof(a))
with jax.set_mesh(mesh):
  z = jnp.arange(4.)
  for name, a in [('ones', jnp.ones(8)), ('arange', z), ('z*2', z * 2), ('outside', outside),
                  ('outside*2', outside * 2), ('jit', jax.jit(lambda a: a + 1)(z)),
                  ('array', jnp.array([1, 2])), ('asarray np', jnp.asarray(np.ones(3))),
                  ('scalar', jnp.float32(3)), ('put no target', jax.device_put(np.ones(3))),
                  ('sum', jnp.ones((8, 4)).sum(0)), ('zeros2', jnp.zeros((2, 3))),
                  ('zeros0', jnp.zeros(())), ('array of outside', jnp.array(outside)),
                  ('astype outside', outside.astype(jnp.int32)), ('astype in', z.astype(jnp.int32)),
                  ('copy outside', outside.copy()), ('grad', jax.grad(lambda x: (x**2).sum())(z)),
                  ('vmap', jax.vmap(lambda x: x * 2)(z)), ('row', jnp.ones((2, 3))[0]),
                  ('normal', jax.random.normal(jax.random.key(0), (3,)))]:
    where(name, a)
where('after', z)
where('after new', jnp.ones(2))
with jax.set_mesh(jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,))):
  where('auto ones', jnp.ones(8)); where('auto array', jnp.array([1., 2.]))
  where('auto outside*2', outside * 2); where('auto sum', jnp.ones((8, 2)).sum(0))
""",
  "jit_ctx_mesh": """
f = jax.jit(lambda a: a * 2)
print(jax.make_jaxpr(lambda a: f(a) + 1)(jnp.ones(8)))
with jax.set_mesh(mesh):
  print(jax.make_jaxpr(lambda a: f(a) + 1)(jax.device_put(jnp.ones(8), P('x'))))
  print(jax.make_jaxpr(lambda a: f(a) + 1)(jnp.ones(8)))
with jax.set_mesh(jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,))):
  print(jax.make_jaxpr(lambda a: f(a) + 1)(jnp.ones(8)))
print(jax.make_jaxpr(lambda a: f(a) + 1)(jnp.ones(8)))
print(f(jnp.ones(2)).sharding)
""",
  "visualize_sharding": """
import sys
if NO_RICH:
  sys.modules['rich'] = None   # as if rich were not installed
for x in [jnp.ones(8), jnp.ones((2, 2, 2)), jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P('x'))),
          jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', 'y'))),
          jax.device_put(jnp.ones((16, 16)), NamedSharding(mesh, P(None, 'y'))),
          jax.device_put(jnp.ones(8), NamedSharding(mesh, P(('x', 'y'))))]:
  try:
    jax.debug.visualize_array_sharding(x, use_color=False)
  except ValueError as e:
    print('ValueError', e)
for shape, spec, kw in [((8,), P(), {}), ((8, 4), P('y', 'x'), {}), ((4, 8), P('x'), {'scale': 2}),
                        ((8, 32), P(None, 'y'), {}), ((8, 16), P(), {'max_width': 40}),
                        ((8, 16), P(None, 'y'), {'min_width': 15}), ((8,), P('x'), {'scale': 10})]:
  try:
    jax.debug.visualize_sharding(shape, NamedSharding(mesh, spec), use_color=False, **kw)
  except ValueError as e:
    print('ValueError', e)
""",
  "concatenate_pad": """
with jax.set_mesh(mesh):
  a = jax.device_put(jnp.ones((8, 4)), P('x'))
  b = jax.device_put(jnp.ones((8, 4)), P(None, 'y'))
  show('cat0', lambda: jnp.concatenate([a, a], 0))
  show('cat1', lambda: jnp.concatenate([a, a], 1))
  show('cat mixed', lambda: jnp.concatenate([a, jnp.ones((8, 4))], 1))
  show('cat conflict', lambda: jnp.concatenate([a, b], 1))
  show('pad0', lambda: jnp.pad(a, ((1, 1), (0, 0))))
  show('pad1', lambda: jnp.pad(a, ((0, 0), (1, 1))))
  print(jnp.concatenate([a, a], 0).sum(), jnp.pad(a, ((1, 1), (0, 0))).sum())
""",
  "indexing_conv_iota": """
with jax.set_mesh(mesh):
  a = jax.device_put(jnp.arange(32.).reshape(8, 4), P('x'))
  b = jax.device_put(jnp.arange(32.).reshape(8, 4), P(None, 'y'))
  idx = jnp.array([0, 2, 5])
  show('gather split', lambda: a[idx])
  show('gather unsplit', lambda: a[:, jnp.array([0, 2])])
  show('gather b split', lambda: b[:, jnp.array([0, 2])])
  show('gather b rows', lambda: b[idx])
  show('take', lambda: jnp.take(a, idx, axis=0))
  show('ds split', lambda: jax.lax.dynamic_slice(a, (1, 0), (4, 4)))
  show('ds unsplit', lambda: jax.lax.dynamic_slice(a, (0, 1), (8, 2)))
  show('ds full', lambda: jax.lax.dynamic_slice(a, (0, 0), (8, 4)))
  show('dus split', lambda: jax.lax.dynamic_update_slice(a, jnp.ones((2, 4)), (1, 0)))
  show('dus unsplit', lambda: jax.lax.dynamic_update_slice(a, jnp.ones((8, 2)), (0, 1)))
  show('dus upd sharded', lambda: jax.lax.dynamic_update_slice(a, jax.device_put(jnp.ones((8, 2)), P('x')), (0, 1)))
  show('dus upd other', lambda: jax.lax.dynamic_update_slice(a, jax.device_put(jnp.ones((8, 4)), P(None, 'y')), (0, 0)))
  show('dus operand unsharded upd sharded', lambda: jax.lax.dynamic_update_slice(jnp.ones((8,4)), jax.device_put(jnp.ones((8, 4)), P('x')), (0, 0)))
  show('scatter set', lambda: a.at[idx].set(1.))
  show('scatter add col', lambda: a.at[:, 1].add(1.))
  show('scatter set upd sharded', lambda: a.at[0].set(jax.device_put(jnp.ones(4), P('y'))))
  show('scatter b', lambda: b.at[idx].add(1.))
  show('scatter b col', lambda: b.at[:, jnp.array([0,1])].add(1.))
  show('iota', lambda: jax.lax.iota(jnp.int32, 8, sharding=P('x')))
  show('iota ns', lambda: jax.lax.iota(jnp.int32, 8, sharding=NamedSharding(mesh, P('y'))))
  show('iota plain', lambda: jax.lax.iota(jnp.int32, 8))
  show('biota', lambda: jax.lax.broadcasted_iota(jnp.int32, (8, 4), 1, out_sharding=P('x', 'y')))
  show('biota bad', lambda: jax.lax.broadcasted_iota(jnp.int32, (3, 4), 1, out_sharding=P('x')))
  show('arange', lambda: jnp.arange(8, out_sharding=P('x')))
  x4 = jax.device_put(jnp.ones((2, 3, 8, 8)), P('x'))
  w = jnp.ones((4, 3, 3, 3))
  show('conv batch', lambda: jax.lax.conv_general_dilated(x4, w, (1, 1), 'SAME'))
  show('conv spatial', lambda: jax.lax.conv_general_dilated(jax.device_put(jnp.ones((2, 3, 8, 8)), P(None, None, 'x')), w, (1, 1), 'SAME'))
  show('conv feature', lambda: jax.lax.conv_general_dilated(jax.device_put(jnp.ones((2, 4, 8, 8)), P(None, 'y')), jnp.ones((4,4,3,3)), (1, 1), 'SAME'))
  show('conv rhs out', lambda: jax.lax.conv_general_dilated(jnp.ones((2, 3, 8, 8)), jax.device_put(jnp.ones((4,3,3,3)), P('y')), (1, 1), 'SAME'))
  show('conv both', lambda: jax.lax.conv_general_dilated(x4, jax.device_put(jnp.ones((4,3,3,3)), P('y')), (1, 1), 'SAME'))
  show('conv rhs in', lambda: jax.lax.conv_general_dilated(jnp.ones((2, 4, 8, 8)), jax.device_put(jnp.ones((4,4,3,3)), P(None, 'y')), (1, 1), 'SAME'))
  show('conv spatial valid', lambda: jax.lax.conv_general_dilated(jax.device_put(jnp.ones((2, 3, 8, 8)), P(None, None, 'x')), w, (1, 1), 'VALID'))
  show('conv1d nwc', lambda: jax.lax.conv_general_dilated(jax.device_put(jnp.ones((2, 8, 3)), P('x')), jnp.ones((3, 3, 4)), (1,), 'SAME', dimension_numbers=('NWC','WIO','NWC')))
  # (under jit: JAX's eager indexing of a committed array takes other paths)
  show('slice split', lambda: jax.jit(lambda a: a[2:6])(a))
  show('slice split odd', lambda: jax.jit(lambda a: a[1:2])(a))
  show('row', lambda: jax.jit(lambda a: a[0])(a))
  show('slice unsplit', lambda: jax.jit(lambda a: a[:, 1:3])(a))
  show('ds odd', lambda: jax.jit(lambda a: jax.lax.dynamic_slice(a, (1, 0), (1, 4)))(a))
  print(a[:, jnp.array([0, 2])].sum(), a.at[:, 1].add(1.).sum(), jnp.arange(8, out_sharding=P('x')).sum())
""",
  "key_sharding": """
k = jax.random.key(0)
print(k.sharding, jax.typeof(k))
print(jax.random.split(k).sharding)
with jax.set_mesh(mesh):
  k = jax.random.key(0)
  print(k.sharding, jax.typeof(k))
  ks = jax.random.split(k, 8)
  print(ks.sharding, jax.typeof(ks))
  print(jax.random.key_data(ks).sharding)
  kp = jax.device_put(ks, P('x'))
  print(kp.sharding, jax.typeof(kp))
  print(jax.random.key_data(kp).sharding, jax.typeof(jax.random.key_data(kp)))
  print(jax.typeof(jax.vmap(lambda k: jax.random.normal(k, (3,)))(kp)))
  print(jax.random.wrap_key_data(jax.device_put(jnp.zeros((8,2), jnp.uint32), P('x'))).sharding)
""",
  "vmap": """
with jax.set_mesh(mesh):
  a = jax.device_put(jnp.ones((8, 4)), P('x'))
  b = jax.device_put(jnp.ones((8, 4)), P(None, 'y'))
  def f(r):
    print('inside', jax.typeof(r))
    return r * 2
  show('vmap0', lambda: jax.vmap(f)(a))
  show('vmap1', lambda: jax.vmap(f, in_axes=1)(a))
  show('vmap out1', lambda: jax.vmap(f, out_axes=1)(a))
  show('vmap b', lambda: jax.vmap(f)(b))
  show('vmap b1', lambda: jax.vmap(f, in_axes=1)(b))
  show('vmap sum', lambda: jax.vmap(lambda r: r.sum())(a))
  show('vmap mixed', lambda: jax.vmap(lambda r, s: r + s)(a, jnp.ones((8, 4))))
  show('vmap conflict', lambda: jax.vmap(lambda r, s: r + s)(a, jax.device_put(jnp.ones((8, 4)), P('y'))))
  show('vmap unmapped', lambda: jax.vmap(lambda r, s: r + s, in_axes=(0, None))(a, jnp.ones(4)))
  show('vmap dot', lambda: jax.vmap(lambda r: r @ jnp.ones((4, 4)))(a))
  show('spmd', lambda: jax.vmap(f, spmd_axis_name='x')(jnp.ones((8, 4))))
  show('spmd sharded', lambda: jax.vmap(f, spmd_axis_name='x')(a))
  show('spmd b', lambda: jax.vmap(f, spmd_axis_name='x')(b))
  show('spmd y', lambda: jax.vmap(f, spmd_axis_name='y')(a))
  show('spmd tuple', lambda: jax.vmap(f, spmd_axis_name=('x', 'y'))(jnp.ones((8, 4))))
  show('spmd jit', lambda: jax.jit(jax.vmap(f, spmd_axis_name='x'))(jnp.ones((8, 4))))
  show('spmd indiv', lambda: jax.vmap(f, spmd_axis_name='x')(jnp.ones((3, 4))))
  show('vmap jit', lambda: jax.jit(jax.vmap(f))(a))
  show('vmap jit b', lambda: jax.vmap(jax.jit(f))(b))
  print(jnp.allclose(jax.vmap(lambda r: r @ jnp.arange(16.).reshape(4, 4))(a), a @ jnp.arange(16.).reshape(4, 4)))
""",
  "shard_map_explicit_inputs": """
jax.set_mesh(mesh)
def t(name, x, spec):
  try:
    print(name, jax.typeof(jax.shard_map(lambda b: b * 2, in_specs=spec, out_specs=spec)(x)))
  except ValueError as e:
    print(name, 'ValueError', str(e).split('. `in_specs`')[0])
t('unsharded', jnp.arange(8.), P('x'))
t('more', jax.device_put(jnp.ones((8, 4)), P('x', 'y')), P('x'))
t('same', jax.device_put(jnp.ones((8, 4)), P('x')), P('x'))
t('none', jax.device_put(jnp.ones((8, 4)), P('x')), P())
t('replicated', jnp.ones((8, 4)), P())
t('replicated none', jnp.ones((8, 4)), P(None, None))
t('mesh x', jnp.ones((8, 4)), P(('x', 'y')))
""",
  "shard_map_eager": """
jax.set_mesh(mesh)
say = print
def body(b):
  print = say
  print(b)
  print(jax.typeof(b), repr(jax.typeof(b)))
  s = jax.lax.psum(b, 'y')
  print(s); print(jax.typeof(s))
  i = jax.lax.axis_index('x')
  print(i); print(jax.typeof(i))
  g = jax.lax.all_gather(b, 'x')
  print(g); print(jax.typeof(g))
  c = jnp.ones(2)
  print(c, jax.typeof(c))
  print(b.shape, b.dtype, b.ndim)
  return s, {'g': g, 'i': i.reshape(1, 1) * 10 + jax.lax.axis_index('y')}
x = jax.device_put(jnp.arange(16.).reshape(2, 8), P('x', 'y'))
out = jax.shard_map(body, in_specs=P('x', 'y'), out_specs=(P('x'), {'g': P(None, 'x', 'y'), 'i': P('x', 'y')}))(x)
print(out); print(jax.tree.map(jax.typeof, out))
say = lambda *a: None
print(jax.jit(jax.shard_map(body, in_specs=P('x', 'y'), out_specs=(P('x'), {'g': P(None, 'x', 'y'), 'i': P('x', 'y')})))(x)[1]['i'])
m1 = jax.make_mesh((4,), ('i',), devices=jax.devices()[:4])
with jax.set_mesh(m1):
  def f(b):
    print(b, jax.typeof(b))
    print(jax.lax.psum(b.sum(), 'i'))
    return b + 1
  print(jax.shard_map(f, in_specs=P('i'), out_specs=P('i'), check_vma=False)(jax.device_put(jnp.arange(4), P('i'))))
  try:
    jax.shard_map(lambda b: b, in_specs=P('i'), out_specs=P())(jax.device_put(jnp.arange(8.), P('i')))
  except ValueError as e:
    print('ValueError', str(e).splitlines()[0].split("' was given")[1])
""",
  "forwarded_inputs": """
import numpy as np
with jax.set_mesh(mesh):
  a = np.arange(8.0, dtype=np.float32)
  j = jnp.asarray(a)
  print(j.sharding.spec, jax.jit(lambda x: x)(a).sharding.spec)
  print(jax.jit(lambda x: x)(j).sharding.spec)
  print([r.sharding.spec for r in jax.jit(lambda x, y: (y, x, x + 1))(a, j)])
  print(jax.jit(lambda x: x)(np.float32(3)).sharding.spec)
  print(jax.jit(lambda x: x)(jax.device_put(a, P('x'))).sharding.spec)
""",
}


def _purejax_stdout(code, path=ROOT):
  env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
             PYTHONPATH=path)
  run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120, cwd=ROOT)
  assert run.returncode == 0, run.stderr
  return run.stdout.strip()


@pytest.mark.parametrize("case", sorted(set(CASES) - {"visualize_sharding"}))
def test_matches_jax(case):
  body = CASES[case]
  expected = jax_stdout(PRELUDE.format(mod="jax") + body, 8)
  got = _purejax_stdout(PRELUDE.format(mod="purejax") + body)
  assert got.splitlines() == expected.splitlines()


def _rich_dir():
  """The folder that holds ``rich`` (for the subprocesses' path), or None."""
  try:
    import rich
  except ImportError:
    return None
  return os.path.dirname(os.path.dirname(os.path.abspath(rich.__file__)))


@pytest.mark.parametrize("no_rich", [True, False], ids=["no_rich", "rich"])
def test_visualize_sharding(no_rich, monkeypatch):
  """The drawings (with rich) or the missing-rich error (without) match JAX's."""
  rich_dir = _rich_dir()
  if not no_rich and rich_dir is None:
    pytest.skip("rich is not installed")
  if rich_dir is not None:
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", rich_dir + (os.pathsep + path if path else ""))
  body = f"NO_RICH = {no_rich}\n" + CASES["visualize_sharding"]
  expected = jax_stdout(PRELUDE.format(mod="jax") + body, 8)
  env_path = ROOT + (os.pathsep + rich_dir if rich_dir else "")
  got = _purejax_stdout(PRELUDE.format(mod="purejax") + body, env_path)
  assert got.splitlines() == expected.splitlines()
  assert ("ValueError `visualize_sharding` requires `rich`" in got) == no_rich
