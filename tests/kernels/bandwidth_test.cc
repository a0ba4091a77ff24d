// Unit tests for kernels/bandwidth.cc
