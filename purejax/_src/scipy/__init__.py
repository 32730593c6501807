"""Private implementation of ``purejax.scipy`` (SciPy's API on lax primitives)."""
