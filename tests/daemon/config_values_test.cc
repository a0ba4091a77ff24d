// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/config_values.cc
#include "daemon/config/config_values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

template <class T>
T ValueOf(const ParsedValue<T>& parsed) {
  EXPECT_TRUE(std::holds_alternative<T>(parsed)) << std::get<std::string>(parsed);
  return std::holds_alternative<T>(parsed) ? std::get<T>(parsed) : T{};
}

template <class T>
std::string ErrorOf(const ParsedValue<T>& parsed) {
  EXPECT_TRUE(std::holds_alternative<std::string>(parsed));
  return std::holds_alternative<std::string>(parsed) ? std::get<std::string>(parsed) : "";
}

TEST(ParseSize, PlainBytesAndBinaryAndDecimalUnits) {
  EXPECT_EQ(ValueOf(ParseSize("0")), 0u);
  EXPECT_EQ(ValueOf(ParseSize("1073741824")), 1u << 30);
  EXPECT_EQ(ValueOf(ParseSize("512B")), 512u);
  EXPECT_EQ(ValueOf(ParseSize("512KiB")), 512u << 10);
  EXPECT_EQ(ValueOf(ParseSize("256MiB")), 256u << 20);
  EXPECT_EQ(ValueOf(ParseSize("256 MiB")), 256u << 20);
  EXPECT_EQ(ValueOf(ParseSize("1GiB")), 1u << 30);
  EXPECT_EQ(ValueOf(ParseSize("2TiB")), 2ull << 40);
  EXPECT_EQ(ValueOf(ParseSize("64KB")), 64'000u);
  EXPECT_EQ(ValueOf(ParseSize("64MB")), 64'000'000u);
  EXPECT_EQ(ValueOf(ParseSize("3GB")), 3'000'000'000u);
}

TEST(ParseSize, RefusesFractionsAmbiguousUnitsAndGarbage) {
  EXPECT_THAT(ErrorOf(ParseSize("1.5GiB")), HasSubstr("expected a size"));
  EXPECT_THAT(ErrorOf(ParseSize("256M")), HasSubstr("'256M'"));
  EXPECT_THAT(ErrorOf(ParseSize("256mib")), HasSubstr("units: B, KiB"));
  EXPECT_THAT(ErrorOf(ParseSize("MiB")), HasSubstr("expected a size"));
  EXPECT_THAT(ErrorOf(ParseSize("-1")), HasSubstr("expected a size"));
  EXPECT_THAT(ErrorOf(ParseSize("")), HasSubstr("expected a size"));
  EXPECT_THAT(ErrorOf(ParseSize("99999999999TiB")), HasSubstr("too large"));
  EXPECT_THAT(ErrorOf(ParseSize("99999999999999999999")), HasSubstr("expected a size"));
}

TEST(ParseDuration, PrometheusStyleTerms) {
  EXPECT_EQ(ValueOf(ParseDuration("0")), milliseconds(0));
  EXPECT_EQ(ValueOf(ParseDuration("300ms")), milliseconds(300));
  EXPECT_EQ(ValueOf(ParseDuration("30s")), milliseconds(30'000));
  EXPECT_EQ(ValueOf(ParseDuration("5m")), milliseconds(300'000));
  EXPECT_EQ(ValueOf(ParseDuration("1h")), milliseconds(3'600'000));
  EXPECT_EQ(ValueOf(ParseDuration("1h30m")), milliseconds(5'400'000));
  EXPECT_EQ(ValueOf(ParseDuration("1m30s500ms")), milliseconds(90'500));
  EXPECT_EQ(ValueOf(ParseDuration("1d")), milliseconds(86'400'000));
  EXPECT_EQ(ValueOf(ParseDuration("1w")), milliseconds(7 * 86'400'000LL));
}

TEST(ParseDuration, RefusesBareNumbersDisorderAndGarbage) {
  EXPECT_THAT(ErrorOf(ParseDuration("300")), HasSubstr("expected a duration"));
  EXPECT_THAT(ErrorOf(ParseDuration("30m1h")), HasSubstr("units must decrease"));
  EXPECT_THAT(ErrorOf(ParseDuration("5m5m")), HasSubstr("units must decrease"));
  EXPECT_THAT(ErrorOf(ParseDuration("1.5h")), HasSubstr("'1.5h'"));
  EXPECT_THAT(ErrorOf(ParseDuration("5 m")), HasSubstr("expected a duration"));
  EXPECT_THAT(ErrorOf(ParseDuration("5mins")), HasSubstr("expected a duration"));
  EXPECT_THAT(ErrorOf(ParseDuration("")), HasSubstr("expected a duration"));
  EXPECT_THAT(ErrorOf(ParseDuration("99999999999999y")), HasSubstr("too long"));
}

TEST(FormatSizeAndDuration, ShortestExactSpelling) {
  EXPECT_EQ(FormatSize(16u << 20), "16MiB");
  EXPECT_EQ(FormatSize(1u << 30), "1GiB");
  EXPECT_EQ(FormatSize(64u << 10), "64KiB");
  EXPECT_EQ(FormatSize(1000), "1000");
  EXPECT_EQ(FormatSize(0), "0");
  EXPECT_EQ(FormatDuration(milliseconds(90'000)), "1m30s");
  EXPECT_EQ(FormatDuration(milliseconds(86'400'000)), "24h");
  EXPECT_EQ(FormatDuration(milliseconds(1'500)), "1s500ms");
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0s");
  // What FormatDuration writes, ParseDuration reads back.
  EXPECT_EQ(ValueOf(ParseDuration(FormatDuration(milliseconds(5'430'250)))), milliseconds(5'430'250));
}

TEST(ParseScalars, IntegersNumbersAndBooleans) {
  EXPECT_EQ(ValueOf(ParseInteger("42")), 42);
  EXPECT_EQ(ValueOf(ParseInteger("+42")), 42);
  EXPECT_EQ(ValueOf(ParseInteger("-3")), -3);
  EXPECT_THAT(ErrorOf(ParseInteger("7.5")), HasSubstr("expected an integer, got '7.5'"));
  EXPECT_THAT(ErrorOf(ParseInteger("1e3")), HasSubstr("expected an integer"));
  EXPECT_THAT(ErrorOf(ParseInteger("")), HasSubstr("expected an integer"));
  EXPECT_THAT(ErrorOf(ParseInteger("99999999999999999999")), HasSubstr("too large"));

  EXPECT_DOUBLE_EQ(ValueOf(ParseNumber("0.002")), 0.002);
  EXPECT_DOUBLE_EQ(ValueOf(ParseNumber("2e-3")), 0.002);
  EXPECT_DOUBLE_EQ(ValueOf(ParseNumber("1")), 1.0);
  EXPECT_THAT(ErrorOf(ParseNumber("lots")), HasSubstr("expected a number, got 'lots'"));
  EXPECT_THAT(ErrorOf(ParseNumber("nan")), HasSubstr("expected a number"));
  EXPECT_THAT(ErrorOf(ParseNumber("inf")), HasSubstr("expected a number"));
  EXPECT_THAT(ErrorOf(ParseNumber("0.2%")), HasSubstr("expected a number"));

  EXPECT_TRUE(ValueOf(ParseBool("true")));
  EXPECT_TRUE(ValueOf(ParseBool("True")));
  EXPECT_FALSE(ValueOf(ParseBool("FALSE")));
  EXPECT_THAT(ErrorOf(ParseBool("yes")), HasSubstr("expected true or false, got 'yes'"));
  EXPECT_THAT(ErrorOf(ParseBool("1")), HasSubstr("expected true or false"));
}

TEST(ClosestName, SuggestsTyposPrefixesAndNearNames) {
  const std::vector<std::string_view> latency = {"enabled", "stride_bytes", "buffer_size", "samples",
                                                 "loads_per_sample"};
  EXPECT_EQ(ClosestName("strid", latency), "stride_bytes");
  EXPECT_EQ(ClosestName("strde_bytes", latency), "stride_bytes");
  EXPECT_EQ(ClosestName("stride-bytes", latency), "stride_bytes");
  EXPECT_EQ(ClosestName("Samples", latency), "samples");
  EXPECT_EQ(ClosestName("buffer_bytes", latency), "buffer_size");
  EXPECT_EQ(ClosestName("sample", latency), "samples");
  EXPECT_EQ(ClosestName("colour", latency), std::nullopt);
  EXPECT_EQ(ClosestName("x", latency), std::nullopt);
  EXPECT_EQ(ClosestName("schedul", {"probes", "targets", "schedule", "memory"}), "schedule");
}

}  // namespace
}  // namespace numaprobe::daemon
