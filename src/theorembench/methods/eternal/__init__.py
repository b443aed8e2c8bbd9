"""EternalMath: verified, parameterised research problems from constructive theorems."""
