// Unit tests for kernels/c2c.cc
