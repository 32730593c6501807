"""checkify: functionalized runtime checks (``purejax.experimental.checkify``)."""
