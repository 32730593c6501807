"""Running JAX programs unedited on purejax: ``python -m purejax script.py``
and ``purejax.install_as_jax()``. Each case runs in a subprocess, so this
process's real JAX (the oracle) is untouched."""
import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_python(args, cwd=None):
  env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
  done = subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True,
                        text=True, timeout=300)
  return done


def run_ok(args, cwd=None):
  done = run_python(args, cwd)
  assert done.returncode == 0, done.stderr[-3000:]
  return done.stdout


def write(path, source):
  path.write_text(textwrap.dedent(source))
  return str(path)


def test_python_m_purejax_runs_a_script_as_main_with_its_arguments(tmp_path):
  write(tmp_path / "helper_mod.py", "VALUE = 7\n")   # the script's own folder is on sys.path
  script = write(tmp_path / "prog.py", """
    import sys
    import jax, jax.numpy as jnp
    import helper_mod
    import purejax
    assert jax is purejax and jnp is purejax.numpy
    y = jax.jit(lambda x: jnp.sum(x * helper_mod.VALUE))(jnp.arange(4.0))
    print(__name__, sys.argv[1:], float(y))
  """)
  out = run_ok(["-m", "purejax", script, "--flag", "v"])
  assert out.split("\n")[0] == "__main__ ['--flag', 'v'] 42.0"


def test_python_m_purejax_runs_a_module(tmp_path):
  write(tmp_path / "progmod.py", """
    import sys, jax
    print(__name__, jax.__name__, sys.argv[1:])
  """)
  out = run_ok(["-m", "purejax", "-m", "progmod", "a"], cwd=str(tmp_path))
  assert out.strip() == "__main__ purejax ['a']"


@pytest.mark.parametrize("args", [[], ["-m"], ["-c", "print(1)"]])
def test_python_m_purejax_without_a_program_prints_usage(args):
  done = run_python(["-m", "purejax", *args])
  assert done.returncode == 2 and "usage: python -m purejax script.py" in done.stderr


def installed(body):
  """A program that installs the alias first, then runs ``body``."""
  return textwrap.dedent("""
    import importlib, sys
    import purejax
    purejax.install_as_jax()
    purejax.install_as_jax()      # idempotent
  """) + textwrap.dedent(body)


def test_install_as_jax_aliases_the_public_modules_to_the_same_objects(tmp_path):
  script = write(tmp_path / "p.py", installed("""
    import jax, jax.numpy as jnp, jax.scipy.special
    from jax import lax, random
    from jax.numpy import linalg
    import jax.tree_util as tu
    assert jax is purejax and jnp is purejax.numpy and lax is purejax.lax
    assert jax.scipy.special is purejax.scipy.special and tu is purejax.tree_util
    assert linalg is purejax.numpy.linalg and random is purejax.random
    # aliasing leaves the modules' own identity alone
    assert jnp.__name__ == jnp.__spec__.name == "purejax.numpy"
    importlib.reload(purejax.scipy.special)
    # every public purejax module is reachable under its jax name
    import pkgutil
    names = [m.name for m in pkgutil.walk_packages(purejax.__path__, "purejax.")
             if "._" not in m.name and not m.name.startswith("purejax._")]
    assert len(names) > 30, names
    for name in names:
      if name == "purejax.config":
        continue
      assert importlib.import_module("jax" + name[7:]) is importlib.import_module(name), name
    assert "jax.numpy" in sys.modules and sys.modules["jax.numpy"] is jnp
    assert jax.__version_info__ == (0, 10, 2)
    print(jax.__version__, jax.version.__version__, jnp.add(1, 2))
  """))
  assert run_ok([script]).split() == ["0.10.2", "0.10.2", "3"]


def test_install_as_jax_refuses_what_jax_refuses(tmp_path):
  script = write(tmp_path / "p.py", installed("""
    import jax
    for name in ["jax.config", "jax.no_such_module", "jax._src.pjit", "jax.numpy.nope"]:
      try:
        importlib.import_module(name)
      except ModuleNotFoundError as err:
        assert err.name == name, (err.name, name)
        print(name, "->", err)
      else:
        raise AssertionError(name + " imported")
    assert isinstance(jax.config, type(purejax.config)) and hasattr(jax.config, "update")
  """))
  out = run_ok([script])
  assert "jax._src.pjit -> No module named 'jax._src.pjit' (JAX's internals" in out


def test_the_documented_jax_private_stand_ins(tmp_path):
  from purejax._src.jax_alias import JAX_PRIVATE_STAND_INS
  script = write(tmp_path / "p.py", installed(f"""
    for name in {sorted(JAX_PRIVATE_STAND_INS)!r}:
      mod = importlib.import_module("jax._src." + name)
      assert mod.__name__ == "purejax._src.jax_private." + name and mod.__doc__
    from jax._src import compiler       # what chex does when it loads
    # purejax does not compile through XLA: chex's restrict_backends patches nothing
    assert not hasattr(compiler, "backend_compile")
    assert not hasattr(compiler, "backend_compile_and_load")
    # chex.set_n_cpu_devices: no CPU backend until the devices are listed
    import jax
    assert jax._src.xla_bridge._backends == {{}}
    assert len(jax.devices()) == 1
    backend = jax._src.xla_bridge._backends["cpu"]
    assert backend.platform == "cpu" and backend.devices() == jax.devices("cpu")
    # equinox: traceback_util.include_frame, dispatch.wait_for_tokens
    from jax._src import dispatch, traceback_util as tu
    tu.register_exclusion("/x/y")
    assert tu.include_filename("/a/b.py") and not tu.include_filename("/x/y/z.py")
    assert tu.include_filename("/x/yz.py") and tu.include_frame(sys._getframe())
    # purejax's own frames are left out of user-facing stacks, as JAX's are
    assert not tu.include_filename(jax.vmap.__code__.co_filename)
    dispatch.wait_for_tokens()
    print("ok")
  """))
  assert run_ok([script]).strip() == "ok"


def test_install_as_jax_after_the_real_jax_was_imported_says_so(tmp_path):
  if importlib.util.find_spec("jax") is None:
    pytest.skip("real JAX is not installed")
  script = write(tmp_path / "p.py", """
    import jax          # the real one
    import purejax
    try:
      purejax.install_as_jax()
    except RuntimeError as err:
      print(err)
  """)
  assert "the real `jax` is already imported" in run_ok([script])
