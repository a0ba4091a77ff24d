// SPDX-License-Identifier: Apache-2.0
// Every numeric setting of every probe kind, as its module declares it
// (config/kind_setting.h), held against the three places that state it: the
// configuration reader (probes.<kind>.<key>), `numaprobe probe`'s flags and
// the docs (the manual page's item for the flag, the reference file's comment
// above the key). A kind that reads a key or adds a flag around its
// declaration, or docs left behind by a changed range, fail here by name.
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "daemon/cli/cli_flag_registry.h"
#include "daemon/config/config.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"

namespace numaprobe::daemon {
namespace {

struct Declared {
  const ProbeKind* kind;
  KindSetting setting;
  std::string Name() const {
    return std::string(kind->name()) + " " + std::string(setting.key.empty() ? setting.flag : setting.key);
  }
};

std::vector<Declared> AllSettings() {
  std::vector<Declared> all;
  for (const ProbeKind* kind : ProbeTable()) {
    for (const KindSetting& setting : kind->Settings()) all.push_back({kind, setting});
  }
  return all;
}

// The errors the configuration reader gives for probes.<kind>.<key>: <value>.
std::vector<std::string> ConfigProblems(const Declared& d, const std::string& value) {
  const std::string yaml =
      "probes:\n  " + std::string(d.kind->name()) + ":\n    " + std::string(d.setting.key) + ": " + value + "\n";
  const ConfigResult result = ParseConfig(yaml, ProbeTableSections());
  std::vector<std::string> problems;
  if (const auto* errors = std::get_if<std::vector<ConfigError>>(&result)) {
    const std::string key = "probes." + std::string(d.kind->name()) + "." + std::string(d.setting.key);
    for (const ConfigError& e : *errors) {
      if (e.key == key) problems.push_back(e.message);
    }
  }
  return problems;
}

// What `numaprobe probe <flag>=<value>` says, "" if it parses: the options
// registered exactly as cmd_probe.cc registers them.
std::string FlagProblem(const Declared& d, const std::string& value) {
  CLI::App app("probe");
  ProbeSettings settings = ProbeSettingsFrom(Config{});
  CliFlagRegistry flags(app);
  for (const ProbeKind* kind : ProbeTable()) kind->command_line().RegisterFlags(flags, settings);
  try {
    app.parse(std::string(d.setting.flag) + "=" + value, false);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

bool AnyContains(const std::vector<std::string>& texts, const std::string& part) {
  for (const std::string& text : texts) {
    if (text.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(KindSettings, EachIsDeclaredOnceWithARange) {
  std::set<std::string> flags;
  const std::vector<Declared> all = AllSettings();
  ASSERT_GE(all.size(), 12u) << "the probe table's kinds declare fewer settings than they have";
  for (const Declared& d : all) {
    SCOPED_TRACE(d.Name());
    EXPECT_FALSE(d.setting.key.empty() && d.setting.flag.empty()) << "neither a key nor a flag";
    EXPECT_LE(d.setting.min, d.setting.max);
    EXPECT_FALSE(d.setting.help.empty());
    if (!d.setting.flag.empty()) {
      EXPECT_TRUE(flags.insert(std::string(d.setting.flag)).second) << "flag twice";
    }
    if (!d.setting.key.empty()) {
      const auto keys = d.kind->ConfigKeys();
      EXPECT_NE(std::find(keys.begin(), keys.end(), d.setting.key), keys.end()) << "not among ConfigKeys()";
    }
  }
}

// The bounds are accepted and one past them refused, with the same words, by
// both readers.
TEST(KindSettings, ConfigurationAndFlagAcceptTheSameRange) {
  for (const Declared& d : AllSettings()) {
    SCOPED_TRACE(d.Name());
    const std::string out_of_range = "is out of range " + d.setting.RangeText();
    for (std::int64_t inside : {d.setting.min, d.setting.max}) {
      const std::string value = std::to_string(inside);
      if (!d.setting.key.empty()) {
        EXPECT_FALSE(AnyContains(ConfigProblems(d, value), out_of_range)) << value;
      }
      if (!d.setting.flag.empty() && d.setting.Problem(inside, value).empty()) {
        EXPECT_EQ(FlagProblem(d, value), "") << value;
      }
    }
    std::vector<std::int64_t> outside{d.setting.max + 1};
    if (d.setting.min > 0) outside.push_back(d.setting.min - 1);
    for (std::int64_t v : outside) {
      const std::string value = std::to_string(v);
      if (!d.setting.key.empty()) {
        const auto problems = ConfigProblems(d, value);
        EXPECT_TRUE(AnyContains(problems, out_of_range))
            << "the configuration does not refuse " << value << " as out of range " << d.setting.RangeText()
            << (problems.empty() ? "" : ": " + problems.front());
      }
      if (!d.setting.flag.empty()) {
        EXPECT_NE(FlagProblem(d, value).find(out_of_range), std::string::npos)
            << d.setting.flag << "=" << value << ": " << FlagProblem(d, value);
      }
    }
  }
}

// A value in range that breaks the setting's rule (a stride that is not a
// power of two, a burst of part of a line) is refused by both, naming the rule.
TEST(KindSettings, ConfigurationAndFlagKeepTheSameRule) {
  int rules = 0;
  for (const Declared& d : AllSettings()) {
    if (d.setting.rule == nullptr) continue;
    SCOPED_TRACE(d.Name());
    ++rules;
    std::int64_t broken = std::max<std::int64_t>(d.setting.min, 1);
    while (broken < d.setting.max && d.setting.rule(static_cast<std::uint64_t>(broken)).empty()) ++broken;
    const std::string why = d.setting.rule(static_cast<std::uint64_t>(broken));
    ASSERT_FALSE(why.empty()) << "no value in range breaks the rule";
    const std::string value = std::to_string(broken);
    if (!d.setting.key.empty()) {
      EXPECT_TRUE(AnyContains(ConfigProblems(d, value), why)) << value;
    }
    if (!d.setting.flag.empty()) {
      EXPECT_NE(FlagProblem(d, value).find(why), std::string::npos) << value;
    }
  }
  EXPECT_GE(rules, 3) << "stride, latency buffer and burst have rules";
}

// ---- the docs ----

std::filesystem::path RepositoryRoot() { return std::filesystem::path(NUMAPROBE_FIXTURES).parent_path().parent_path(); }

std::vector<std::string> Lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The text of every manual page item whose tag names `flag` (".BI \-\-samples= n"
// up to the next item or heading), with roff's \- read as -.
std::string ManualItems(const std::vector<std::string>& page, std::string_view flag) {
  std::string roff_flag;
  for (char c : flag) roff_flag += c == '-' ? std::string("\\-") : std::string(1, c);
  std::string text;
  for (std::size_t i = 0; i < page.size(); ++i) {
    const std::string& tag = page[i];
    if (!(tag.starts_with(".B ") || tag.starts_with(".BI ")) || tag.find(roff_flag + "=") == std::string::npos) {
      continue;
    }
    for (std::size_t j = i + 1; j < page.size() && page[j].rfind(".TP", 0) != 0 && page[j].rfind(".S", 0) != 0; ++j)
      text += page[j] + " ";
  }
  std::string plain;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '-') continue;
    plain += text[i];
  }
  return plain;
}

// The words after `key` in the CONFIGURATION entry of `kind` (".B latency",
// then ".B samples" and "(7, 1 to 1000),"), up to the next key.
std::string ManualKeyText(const std::vector<std::string>& page, std::string_view kind, std::string_view key) {
  bool in_configuration = false;
  bool in_kind = false;
  for (std::size_t i = 0; i < page.size(); ++i) {
    const std::string& l = page[i];
    if (l.starts_with(".SH")) in_configuration = l == ".SH CONFIGURATION";
    if (!in_configuration) continue;
    if (l == ".TP" && i + 1 < page.size()) in_kind = page[i + 1] == ".B " + std::string(kind);
    if (!in_kind || l != ".B " + std::string(key)) continue;
    std::string text;
    for (std::size_t j = i + 1; j < page.size() && !page[j].starts_with(".B ") && !page[j].starts_with(".TP"); ++j)
      text += page[j] + " ";
    return text;
  }
  return "";
}

// The comment lines right above probes.<kind>.<key> in the reference file.
std::string ReferenceComment(const std::vector<std::string>& reference, std::string_view kind, std::string_view key) {
  const std::string section = "  " + std::string(kind) + ":";
  const std::string line = "    " + std::string(key) + ":";
  bool in_probes = false;
  bool in_kind = false;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const std::string& l = reference[i];
    if (!l.empty() && l[0] != ' ' && l[0] != '#') in_probes = l == "probes:";
    if (in_probes && l.starts_with("  ") && !l.starts_with("   ") && l[2] != '#') in_kind = l == section;
    if (!in_kind || !l.starts_with(line)) continue;
    std::string comment;
    for (std::size_t j = i; j > 0 && reference[j - 1].starts_with("    #"); --j)
      comment = reference[j - 1] + " " + comment;
    return comment;
  }
  return "";
}

// Counts are stated as numbers ("1 to 1000" on the page, under the flag and
// under the key; "1..1000" in the file); sizes in words with their rules,
// which this does not read.
TEST(KindSettings, ManualPageAndReferenceStateEachRange) {
  const auto page = Lines(RepositoryRoot() / "docs" / "numaprobe.8");
  const auto reference = Lines(RepositoryRoot() / "docs" / "numaprobe.reference.yaml");
  ASSERT_FALSE(page.empty());
  ASSERT_FALSE(reference.empty());
  for (const Declared& d : AllSettings()) {
    if (d.setting.bytes) continue;
    SCOPED_TRACE(d.Name());
    const std::string min = std::to_string(d.setting.min);
    const std::string max = std::to_string(d.setting.max);
    if (!d.setting.flag.empty()) {
      const std::string item = ManualItems(page, d.setting.flag);
      EXPECT_NE(item.find(min + " to " + max), std::string::npos)
          << "docs/numaprobe.8: the item of " << d.setting.flag << " does not say \"" << min << " to " << max
          << "\": " << item;
    }
    if (!d.setting.key.empty()) {
      const std::string entry = ManualKeyText(page, d.kind->name(), d.setting.key);
      EXPECT_NE(entry.find(min + " to " + max), std::string::npos)
          << "docs/numaprobe.8, CONFIGURATION: " << d.kind->name() << " " << d.setting.key << " does not say \"" << min
          << " to " << max << "\": " << entry;
    }
    if (!d.setting.key.empty()) {
      const std::string comment = ReferenceComment(reference, d.kind->name(), d.setting.key);
      EXPECT_NE(comment.find(min + ".." + max), std::string::npos)
          << "docs/numaprobe.reference.yaml: the comment above probes." << d.kind->name() << "." << d.setting.key
          << " does not say \"" << min << ".." << max << "\": " << comment;
    }
  }
}

}  // namespace
}  // namespace numaprobe::daemon
