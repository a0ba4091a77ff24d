// SPDX-License-Identifier: Apache-2.0
// Builds the ReportSections kinds hand to the terminal table and the landing
// page: a matrix (rows by measuring CPU, columns by memory node) or a list, with
// failed runs shown as "!N" in their cell and explained in the notes.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

// Rows keep the order they were first set in; columns are sorted node ids.
class MatrixSection {
 public:
  MatrixSection(std::string title, std::string corner = "cpu \\ memory")
      : title_(std::move(title)), corner_(std::move(corner)) {}
  void Set(const std::string& row, int mem_node, std::string cell);
  // "cpu   3 (node 1)": one row per node, or per CPU in per-CPU mode.
  static std::string RowLabel(const MemoryPair& pair);
  bool empty() const { return rows_.empty(); }
  ReportSection Build(std::vector<std::string> notes = {}) const;

 private:
  std::string title_;
  std::string corner_;
  std::vector<std::string> rows_;
  std::map<int, bool> columns_;
  std::map<std::pair<std::string, int>, std::string> cells_;
};

// Failures of one kind's records, numbered for their cells: "!2".
class FailureNotes {
 public:
  // `what` names the run ("latency cpu 3 -> node 1"); returns the cell text.
  std::string Add(const std::string& what, const ProbeRecord& record);
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  std::vector<std::string> notes_;
};

}  // namespace numaprobe::daemon
