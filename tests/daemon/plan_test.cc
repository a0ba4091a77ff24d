// Unit tests for daemon/plan.cc
