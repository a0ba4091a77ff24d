// Unit tests for kernels/arena.cc
