// Unit tests for daemon/json_report.cc
