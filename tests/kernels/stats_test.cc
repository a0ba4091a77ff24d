// Unit tests for kernels/stats.cc
