"""The printed jaxprs that tests/test_jaxpr_ad_jit.py expects: JAX 0.10.2's
text for each case (made by JAX, checked again there when JAX is installed)."""
EXPECTED = {
    'grad_of_jit': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = mul c a
        in (_, b, c) }
    ] a
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] e:f32[]. let
          f:f32[] = mul c e
          g:f32[] = mul e a
          h:f32[] = mul g b
          d:f32[] = add_any f h
        in (d,) }
    ] b a c 1.0:f32[]
  in (d,) }""",
    'grad_two_argnums': """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          d:f32[] = sin a
          c:f32[] = cos a
          e:f32[] = mul d b
          _:f32[] = add e a
        in (_, c, d) }
    ] a b
    f:f32[] g:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] b:f32[] d:f32[] h:f32[]. let
          g:f32[] = mul d h
          i:f32[] = mul h b
          j:f32[] = mul i c
          f:f32[] = add_any h j
        in (f, g) }
    ] c b d 1.0:f32[]
  in (f, g) }""",
    'grad_second_argnum': """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          c:f32[] = sin a
          _:f32[] = mul c b
        in (_, c) }
    ] a b
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] e:f32[]. let d:f32[] = mul c e in (d,) }
    ] c 1.0:f32[]
  in (d,) }""",
    'several_outputs': """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          b:f32[] = sin a
          d:f32[] = cos a
          c:f32[] = mul a 2.0:f32[]
        in (b, c, d) }
    ] a
    e:f32[] = mul b c
    _:f32[] = add e a
    f:f32[] = mul b 1.0:f32[]
    g:f32[] = mul 1.0:f32[] c
    h:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; d:f32[] g:f32[] f:f32[] i:f32[]. let
          j:f32[] = mul f 2.0:f32[]
          k:f32[] = add_any i j
          l:f32[] = mul g d
          h:f32[] = add_any k l
        in (h,) }
    ] d g f 1.0:f32[]
  in (h,) }""",
    'closure_over_array': """\
{ lambda a:f32[3]; b:f32[3]. let
    _:f32[] c:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda d:f32[3]; b:f32[3]. let
          e:f32[3] = mul b d
          f:f32[3] = sin e
          c:f32[3] = cos e
          _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
        in (_, c) }
    ] b
    g:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3] c:f32[3] h:f32[]. let
          i:f32[3] = broadcast_in_dim h
          j:f32[3] = mul i c
          g:f32[3] = mul j a
        in (g,) }
    ] a c 1.0:f32[]
  in (g,) }""",
    'nested_jit': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          d:f32[] b:f32[] c:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; a:f32[]. let
                c:f32[] = cos a
                b:f32[] = sin a
                d:f32[] = mul c a
              in (d, b, c) }
          ] a
          e:f32[] = mul d 3.0:f32[]
          _:f32[] = add e a
        in (_, b, c) }
    ] a
    f:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] g:f32[]. let
          h:f32[] = mul g 3.0:f32[]
          i:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] h:f32[]. let
                j:f32[] = mul c h
                k:f32[] = mul h a
                l:f32[] = neg k
                m:f32[] = mul l b
                i:f32[] = add_any j m
              in (i,) }
          ] b a c h
          f:f32[] = add_any g i
        in (f,) }
    ] b a c 1.0:f32[]
  in (f,) }""",
    'vjp_of_jit': """\
{ lambda ; a:f32[3]. let
    _:f32[3] b:f32[3] c:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          c:f32[3] = sin a
          b:f32[3] = cos a
          _:f32[3] = mul c a
        in (_, b, c) }
    ] a
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[3] a:f32[3] c:f32[3] d:f32[3]. let
          f:f32[3] = mul c d
          g:f32[3] = mul d a
          h:f32[3] = mul g b
          e:f32[3] = add_any f h
        in (e,) }
    ] b a c d
  in (e,) }""",
    'linearize_of_jit': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = mul c a
        in (_, b, c) }
    ] a
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] e:f32[]. let
          f:f32[] = mul e b
          g:f32[] = mul f a
          h:f32[] = mul c e
          d:f32[] = add_any g h
        in (d,) }
    ] b a c a
  in (d,) }""",
    'value_and_grad_of_jit': """\
{ lambda ; a:f32[3]. let
    b:f32[] c:f32[3] d:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          d:f32[3] = sin a
          c:f32[3] = cos a
          e:f32[3] = mul d a
          b:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
        in (b, c, d) }
    ] a
    f:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[3] a:f32[3] d:f32[3] g:f32[]. let
          h:f32[3] = broadcast_in_dim g
          i:f32[3] = mul d h
          j:f32[3] = mul h a
          k:f32[3] = mul j c
          f:f32[3] = add_any i k
        in (f,) }
    ] c a d 1.0:f32[]
  in (b, f) }""",
    'grad_jit_grad_jit': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] d:f32[] e:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          d:f32[] f:f32[] b:f32[] c:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; a:f32[]. let
                f:f32[] = sin a
                b:f32[] = cos a
                d:f32[] = cos a
                c:f32[] = sin a
              in (d, f, b, c) }
          ] a
          _:f32[] e:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; d:f32[] a:f32[] f:f32[] g:f32[]. let
                h:f32[] = mul f g
                e:f32[] = mul g a
                i:f32[] = mul e d
                _:f32[] = add_any h i
              in (_, e) }
          ] d a f 1.0:f32[]
        in (_, b, c, d, e) }
    ] a
    j:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] c:f32[] d:f32[] e:f32[] k:f32[]. let
          l:f32[] m:f32[] n:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; o:f32[] d:f32[] e:f32[] k:f32[]. let
                l:f32[] = mul e k
                p:f32[] = mul k d
                m:f32[] = mul o p
                n:f32[] = mul k o
              in (l, m, n) }
          ] 1.0:f32[] d e k
          q:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; b:f32[] c:f32[] l:f32[] n:f32[]. let
                r:f32[] = neg l
                s:f32[] = mul r c
                t:f32[] = mul n b
                q:f32[] = add_any s t
              in (q,) }
          ] b c l n
          j:f32[] = add_any m q
        in (j,) }
    ] b c d e 1.0:f32[]
  in (j,) }""",
    'integer_input': """\
{ lambda ; a:f32[] b:i32[]. let
    _:f32[] c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:i32[]. let
          e:f32[] = sin a
          c:f32[] = cos a
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=True] b
          _:f32[] = mul e d
        in (_, c, d) }
    ] a b
    f:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] d:f32[] g:f32[]. let
          h:f32[] = mul g d
          f:f32[] = mul h c
        in (f,) }
    ] c d 1.0:f32[]
  in (f,) }""",
    'unused_input': """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          d:f32[] = sin a
          c:f32[] = cos a
          _:f32[] = mul d 2.0:f32[]
        in (_, c) }
    ] a b
    e:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] f:f32[]. let
          g:f32[] = mul f 2.0:f32[]
          e:f32[] = mul g c
        in (e,) }
    ] c 1.0:f32[]
  in (e, 0.0:f32[]) }""",
    'static_argnums': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = mul c 3.0:f32[]
        in (_, b) }
    ] a
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] e:f32[]. let
          f:f32[] = mul e 3.0:f32[]
          d:f32[] = mul f b
        in (d,) }
    ] b 1.0:f32[]
  in (d,) }""",
    'output_is_input': """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos a in (b, c) }
    ] a
    _:f32[] = mul a b
    d:f32[] = mul a 1.0:f32[]
    e:f32[] = mul 1.0:f32[] b
    f:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] e:f32[] d:f32[]. let
          g:f32[] = mul d c
          f:f32[] = add_any e g
        in (f,) }
    ] c e d
  in (f,) }""",
    'linear_body': """\
{ lambda ; a:f32[]. let
    _:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let _:f32[] = mul a 2.0:f32[] in (_,) }
    ] a
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[]. let b:f32[] = mul c 2.0:f32[] in (b,) }
    ] 1.0:f32[]
  in (b,) }""",
    'input_residual_and_output': """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b in (c,) }
    ] a b
    _:f32[] = mul c b
    d:f32[] = mul c 1.0:f32[]
    e:f32[] = mul 1.0:f32[] b
    f:f32[] g:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] e:f32[] d:f32[]. let
          h:f32[] = mul a e
          g:f32[] = add_any d h
          f:f32[] = mul e b
        in (f, g) }
    ] b a e d
  in (f, g) }""",
    'jit_of_grad_of_jit': """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] d:f32[] e:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; a:f32[]. let
                e:f32[] = sin a
                d:f32[] = cos a
                c:f32[] = mul e a
              in (c, d, e) }
          ] a
          b:f32[] = jit[
            name=<lambda>
            jaxpr={ lambda ; d:f32[] a:f32[] e:f32[] f:f32[]. let
                g:f32[] = mul e f
                h:f32[] = mul f a
                i:f32[] = mul h d
                b:f32[] = add_any g i
              in (b,) }
          ] d a e 1.0:f32[]
        in (b,) }
    ] a
  in (b,) }""",
    'unused_output': """\
{ lambda ; a:f32[]. let
    _:f32[] _:f32[] b:f32[] _:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          _:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = cos a
          _:f32[] = sin a
        in (_, _, b, _) }
    ] a
    c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] d:f32[]. let c:f32[] = mul d b in (c,) }
    ] b 1.0:f32[]
  in (c,) }""",
    'same_jit_twice': """\
let lambda = { lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = cos a
  in (b, c) } in
let lambda1 = { lambda ; d:f32[] e:f32[]. let f:f32[] = mul e d in (f,) } in
{ lambda ; g:f32[]. let
    h:f32[] i:f32[] = jit[name=<lambda> jaxpr=lambda] g
    j:f32[] k:f32[] = jit[name=<lambda> jaxpr=lambda] g
    _:f32[] = mul h j
    l:f32[] = mul h 1.0:f32[]
    m:f32[] = mul 1.0:f32[] j
    n:f32[] = jit[name=<lambda> jaxpr=lambda1] k l
    o:f32[] = jit[name=<lambda> jaxpr=lambda1] i m
    p:f32[] = add_any n o
  in (p,) }""",
    'residual_is_output': """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let b:f32[] = exp a in (b,) }
    ] a
    c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] d:f32[]. let c:f32[] = mul d b in (c,) }
    ] b 1.0:f32[]
  in (c,) }""",
    'vjp_two_outputs': """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] d:f32[] e:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          c:f32[] = mul a b
          d:f32[] = sin b
          e:f32[] = cos b
        in (c, d, e) }
    ] a b
    f:f32[] g:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] e:f32[] c:f32[] d:f32[]. let
          h:f32[] = mul d e
          i:f32[] = mul a c
          g:f32[] = add_any h i
          f:f32[] = mul c b
        in (f, g) }
    ] b a e c d
  in (f, g) }""",
    'dead_code_in_body': """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = sin a
          b:f32[] = cos a
          _:f32[] = mul c a
        in (_, b, c) }
    ] a
    d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[] a:f32[] c:f32[] e:f32[]. let
          f:f32[] = mul c e
          g:f32[] = mul e a
          h:f32[] = mul g b
          d:f32[] = add_any f h
        in (d,) }
    ] b a c 1.0:f32[]
  in (d,) }""",
    'unused_output_and_input': """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] _:f32[] _:f32[] _:f32[] c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          _:f32[] = sin a
          _:f32[] = cos a
          _:f32[] = mul _ b
          d:f32[] = cos b
          c:f32[] = sin b
          _:f32[] = mul d a
        in (_, _, _, _, c, d) }
    ] a b
    e:f32[] f:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] a:f32[] d:f32[] g:f32[]. let
          e:f32[] = mul d g
          h:f32[] = mul g a
          i:f32[] = neg h
          f:f32[] = mul i c
        in (e, f) }
    ] c a d 1.0:f32[]
  in (e, f) }""",
    'vmap_of_grad': """\
{ lambda ; a:f32[3]. let
    _:f32[3] b:f32[3] c:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          c:f32[3] = sin a
          b:f32[3] = cos a
          _:f32[3] = mul c a
        in (_, b, c) }
    ] a
    d:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[3] a:f32[3] c:f32[3] e:f32[]. let
          f:f32[3] = mul c e
          g:f32[3] = mul e a
          h:f32[3] = mul g b
          d:f32[3] = add_any f h
        in (d,) }
    ] b a c 1.0:f32[]
  in (d,) }""",
    'grad_of_vmap': """\
{ lambda ; a:f32[3]. let
    b:f32[3] c:f32[3] d:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          d:f32[3] = sin a
          c:f32[3] = cos a
          b:f32[3] = mul d a
        in (b, c, d) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[3] a:f32[3] d:f32[3] e:f32[3]. let
          g:f32[3] = mul d e
          h:f32[3] = mul e a
          i:f32[3] = mul h c
          f:f32[3] = add_any g i
        in (f,) }
    ] c a d e
  in (f,) }""",
    'jvp_of_jit': """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] d:f32[]. let
          e:f32[] = sin a
          f:f32[] = cos a
          g:f32[] = mul d f
          b:f32[] = mul e a
          h:f32[] = mul g a
          i:f32[] = mul e d
          c:f32[] = add_any h i
        in (b, c) }
    ] a a
  in (b, c) }""",
    'integer_output': """\
{ lambda ; a:f32[3]. let
    b:f32[3] _:i32[] c:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          b:f32[3] = sin a
          c:f32[3] = cos a
          _:i32[] = argmax[axes=(0,) index_dtype=int32] a
        in (b, _, c) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[3] d:f32[3]. let e:f32[3] = mul d c in (e,) }
    ] c d
  in (e,) }""",
    'jit_in_cond_branch_linear': """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let b:f32[] = mul a 3.0:f32[] in (b,) }
    ] a
    _:f32[] = sin b
    c:f32[] = cos b
    d:f32[] = mul 1.0:f32[] c
    e:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; d:f32[]. let e:f32[] = mul d 3.0:f32[] in (e,) }
    ] d
  in (e,) }""",
    'dict_args': """\
{ lambda ; a:f32[2] b:f32[3,2] c:f32[4,3]. let
    _:f32[] d:f32[4,2] e:f32[1,2] f:f32[4,2] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[2] b:f32[3,2] c:f32[4,3]. let
          g:f32[4,2] = dot_general[
            dimension_numbers=(([1], [0]), ([], []))
            preferred_element_type=float32
          ] c b
          f:f32[4,2] = sin g
          d:f32[4,2] = cos g
          e:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] a
          h:f32[4,2] = mul f e
          _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] h
        in (_, d, e, f) }
    ] a b c
    i:f32[2] j:f32[3,2] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[4,3] d:f32[4,2] e:f32[1,2] f:f32[4,2] k:f32[]. let
          l:f32[4,2] = broadcast_in_dim k
          m:f32[4,2] = mul f l
          n:f32[2] = reduce_sum[axes=(0,) out_sharding=None] m
          o:f32[1,2] = reshape[dimensions=None new_sizes=(1, 2) sharding=None] n
          p:f32[4,2] = mul l e
          i:f32[2] = reduce_sum[axes=(0,) out_sharding=None] o
          q:f32[4,2] = mul p d
          r:f32[2,3] = dot_general[
            dimension_numbers=(([0], [0]), ([], []))
            preferred_element_type=float32
          ] q c
          j:f32[3,2] = transpose[permutation=(1, 0)] r
        in (i, j) }
    ] c d e f 1.0:f32[]
  in (i, j) }""",
}
