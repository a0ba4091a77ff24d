#include "daemon/web/pair_medians.h"

#include <algorithm>
#include <utility>

namespace numaprobe::daemon {

double PromQlMedian(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::map<PairKey, double> PairMedians(const std::vector<BaselineValue>& values, const ProbeKind& kind) {
  std::map<PairKey, std::vector<double>> by_pair;
  for (const BaselineValue& v : values) {
    if (v.probe == kind.name()) by_pair[{v.cpu_node, v.mem_node, v.op}].push_back(v.value);
  }
  std::map<PairKey, double> medians;
  for (auto& [key, list] : by_pair) medians[key] = PromQlMedian(std::move(list));
  return medians;
}

}  // namespace numaprobe::daemon
