// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/section_builder.h"

#include <fmt/format.h>

namespace numaprobe::daemon {

void MatrixSection::Set(const std::string& row, int mem_node, std::string cell) {
  if (!cells_.contains({row, mem_node}) && std::find(rows_.begin(), rows_.end(), row) == rows_.end()) {
    rows_.push_back(row);
  }
  columns_[mem_node] = true;
  cells_[{row, mem_node}] = std::move(cell);
}

std::string MatrixSection::RowLabel(const MemoryPair& pair) {
  return fmt::format("cpu {:>3} (node {})", pair.cpu, pair.cpu_node);
}

ReportSection MatrixSection::Build(std::vector<std::string> notes) const {
  ReportSection section{title_, corner_, {}, rows_, {}, std::move(notes)};
  for (const auto& [node, unused] : columns_) section.columns.push_back(fmt::format("node {}", node));
  for (const auto& row : rows_) {
    std::vector<std::string> cells;
    for (const auto& [node, unused] : columns_) {
      const auto it = cells_.find({row, node});
      cells.push_back(it == cells_.end() ? "-" : it->second);
    }
    section.cells.push_back(std::move(cells));
  }
  return section;
}

std::string FailureNotes::Add(const std::string& what, const ProbeRecord& record) {
  notes_.push_back(
      fmt::format("!{} {}: {}: {}", notes_.size() + 1, what, kernels::OutcomeName(record.outcome()), record.reason()));
  return fmt::format("!{}", notes_.size());
}

}  // namespace numaprobe::daemon
