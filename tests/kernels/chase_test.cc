// Unit tests for kernels/chase.cc
