// SPDX-License-Identifier: Apache-2.0
#include "kernels/page_sizes.h"

#include <linux/mman.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "kernels/file_read.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kMinBasePage = 4096;
constexpr std::size_t kWindowBasePages = 64;

// A whole line that is one unsigned number.
bool ParseSize(std::string_view text, std::size_t& value) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  return r.ec == std::errc() && r.ptr == text.data() + text.size() && !text.empty();
}

Failure Unreadable(const std::string& path, const std::string& what) {
  return {Outcome::kInvalidSpec, path + ": " + what};
}

// hpage_pmd_size: absent without CONFIG_TRANSPARENT_HUGEPAGE.
Expected<std::size_t> ReadThpSize(const std::string& sysfs_root) {
  const std::string path = sysfs_root + "/kernel/mm/transparent_hugepage/hpage_pmd_size";
  std::string text;
  const int err = ReadWholeFile(path, text);
  if (err == ENOENT || err == ENOTDIR) return std::size_t{0};
  if (err != 0) return Unreadable(path, std::error_code(err, std::generic_category()).message());
  std::size_t bytes = 0;
  if (!ParseSize(text, bytes) || !std::has_single_bit(bytes)) {
    return Unreadable(path, "not a power-of-two size in bytes: \"" + text.substr(0, 40) + "\"");
  }
  return bytes;
}

// One hugepages-<N>kB directory per size the kernel supports, each with its
// persistent pool's nr_hugepages; no directory without CONFIG_HUGETLBFS.
Expected<std::vector<HugetlbSize>> ReadHugetlbSizes(const std::string& sysfs_root) {
  const std::filesystem::path dir = sysfs_root + "/kernel/mm/hugepages";
  std::vector<HugetlbSize> sizes;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    constexpr std::string_view kPrefix = "hugepages-";
    constexpr std::string_view kSuffix = "kB";
    if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) continue;
    std::size_t kib = 0;
    const std::string_view number(name.data() + kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
    if (!ParseSize(number, kib) || !std::has_single_bit(kib)) {
      return Unreadable(it->path().string(), "not a hugepages-<power of two>kB directory");
    }
    HugetlbSize size{kib * 1024, 0};
    const std::string pool = (it->path() / "nr_hugepages").string();
    std::string text;
    if (ReadWholeFile(pool, text) == 0 && !ParseSize(text, size.reserved_pages)) {
      return Unreadable(pool, "not a page count: \"" + text.substr(0, 40) + "\"");
    }
    sizes.push_back(size);
  }
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    return Unreadable(dir.string(), ec.message());
  }
  std::sort(sizes.begin(), sizes.end(), [](const HugetlbSize& a, const HugetlbSize& b) { return a.bytes < b.bytes; });
  return sizes;
}

}  // namespace

Expected<PageSizes> ReadPageSizes(const std::string& sysfs_root, std::size_t base_page) {
  if (base_page < kMinBasePage || !std::has_single_bit(base_page)) {
    return Failure{Outcome::kInvalidSpec,
                   "base page size " + std::to_string(base_page) + ": not a power of two of at least 4096 bytes"};
  }
  PageSizes sizes;
  sizes.base = base_page;
  sizes.sysfs_root = sysfs_root;
  auto thp = ReadThpSize(sysfs_root);
  if (!thp) return thp.failure();
  sizes.thp = thp.value();
  auto hugetlb = ReadHugetlbSizes(sysfs_root);
  if (!hugetlb) return hugetlb.failure();
  sizes.hugetlb = std::move(hugetlb).value();
  return sizes;
}

const Expected<PageSizes>& HostPageSizes() {
  static const Expected<PageSizes> sizes = [] {
    const long page = sysconf(_SC_PAGESIZE);
    return ReadPageSizes("/sys", page > 0 ? static_cast<std::size_t>(page) : 0);
  }();
  return sizes;
}

std::string HugetlbPoolPath(const PageSizes& sizes, int node, std::size_t page_bytes, std::string_view file) {
  return sizes.sysfs_root + "/devices/system/node/node" + std::to_string(node) + "/hugepages/hugepages-" +
         std::to_string(page_bytes / 1024) + "kB/" + std::string(file);
}

std::size_t FreeHugetlbPages(const PageSizes& sizes, int node, std::size_t page_bytes) {
  std::size_t pages = 0;
  return ParseSize(ReadFirstLine(HugetlbPoolPath(sizes, node, page_bytes, "free_hugepages")), pages) ? pages : 0;
}

std::vector<std::size_t> HugetlbCandidates(const PageSizes& sizes, std::size_t bytes) {
  std::vector<std::size_t> out;
  for (const HugetlbSize& s : sizes.hugetlb) {
    if (s.bytes >= kHugeWindowBytes && s.bytes <= std::max(bytes, kHugeWindowBytes)) out.push_back(s.bytes);
  }
  return out;
}

bool ThpFits(const PageSizes& sizes, std::size_t bytes) {
  return sizes.thp != 0 && sizes.thp <= std::max(bytes, kHugeWindowBytes);
}

int HugetlbMmapFlags(std::size_t page_bytes) { return MAP_HUGETLB | (std::countr_zero(page_bytes) << MAP_HUGE_SHIFT); }

std::size_t TlbLocalWindow(PageKind kind, std::size_t page_bytes) {
  const std::size_t span = kind == PageKind::kBase ? kWindowBasePages * page_bytes : page_bytes;
  return std::min(span, kHugeWindowBytes);
}

std::string PageSizeText(std::size_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kUnits[unit];
}

std::string DescribePageSizes(const PageSizes& sizes) {
  std::string text =
      "base " + PageSizeText(sizes.base) + ", THP " + (sizes.thp == 0 ? "none" : PageSizeText(sizes.thp));
  text += ", hugetlb ";
  if (sizes.hugetlb.empty()) text += "none";
  for (std::size_t i = 0; i < sizes.hugetlb.size(); ++i) {
    text += (i == 0 ? "" : ", ") + PageSizeText(sizes.hugetlb[i].bytes) + " (" +
            std::to_string(sizes.hugetlb[i].reserved_pages) + " reserved)";
  }
  return text;
}

}  // namespace numaprobe::kernels
