"""purejax must never import jax or jaxlib (they are only a test oracle)."""
import subprocess
import sys


def test_importing_and_using_purejax_never_imports_jax():
  code = (
      "import sys\n"
      "import purejax as jax, purejax.numpy as jnp\n"
      "f = jax.jit(lambda x: jnp.sin(x) * 2)\n"
      "f(jnp.ones(3)).block_until_ready()\n"
      "print(jax.make_jaxpr(f)(1.0))\n"
      "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib'))\n"
      "assert not bad, bad\n")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
  assert result.returncode == 0, result.stderr
  assert "lambda" in result.stdout
