// Unit tests for kernels/latency.cc
