// Unit tests for kernels/placement.cc
