"""Private implementation of ``purejax.scipy.stats``: one module per distribution."""
