// Unit tests for kernels/pin.cc
