"""purejax's PRNG: the threefry2x32 cipher, keys, and the distributions."""
