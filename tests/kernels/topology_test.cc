// Unit tests for kernels/topology.cc
