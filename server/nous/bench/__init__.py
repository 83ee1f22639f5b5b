"""`nous bench`: speed, memory and scale on a synthetic, deterministic memory set (design §8)."""
