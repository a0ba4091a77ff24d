// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/file_read.cc
#include "kernels/file_read.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

namespace numaprobe::kernels {
namespace {

class FileRead : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::path(::testing::TempDir()) / "numaprobe_file_read_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string dir_;
};

TEST_F(FileRead, MissingFileIsNulloptAndEnoent) {
  const std::string path = dir_ + "/absent";
  EXPECT_EQ(ReadSmallFile(path), std::nullopt);
  EXPECT_EQ(ReadFirstLine(path), "");
  std::string out = "kept";
  EXPECT_EQ(ReadWholeFile(path, out), ENOENT);
  EXPECT_EQ(out, "kept");
}

TEST_F(FileRead, EmptyFileIsAnEmptyTextNotAFailure) {
  const std::string path = Write("empty", "");
  EXPECT_EQ(ReadSmallFile(path), std::optional<std::string>(""));
  EXPECT_EQ(ReadFirstLine(path), "");
  std::string out;
  EXPECT_EQ(ReadWholeFile(path, out), 0);
  EXPECT_EQ(out, "");
}

TEST_F(FileRead, FileWithoutTrailingNewlineIsReadWhole) {
  const std::string path = Write("no_newline", "0-3,8");
  EXPECT_EQ(ReadSmallFile(path), std::optional<std::string>("0-3,8"));
  EXPECT_EQ(ReadFirstLine(path), "0-3,8");
}

TEST_F(FileRead, FirstLineStopsAtTheNewline) {
  const std::string path = Write("lines", "always [madvise] never\nsecond\n");
  EXPECT_EQ(ReadFirstLine(path), "always [madvise] never");
  EXPECT_EQ(ReadSmallFile(path), std::optional<std::string>("always [madvise] never\nsecond\n"));
}

TEST_F(FileRead, TextLargerThanOneReadArrivesWhole) {
  const std::string text(100'000, 'x');  // several read(2) calls of the 8 KiB buffer
  const std::string path = Write("large", text);
  EXPECT_EQ(ReadSmallFile(path), std::optional<std::string>(text));
}

TEST_F(FileRead, DirectoryIsAFailureNotAnEmptyFile) {
  // ifstream "reads" a directory as an empty file; a state file or a sysfs
  // list that is a directory must not pass for an empty one.
  EXPECT_EQ(ReadSmallFile(dir_), std::nullopt);
  std::string out;
  EXPECT_EQ(ReadWholeFile(dir_, out), EISDIR);
}

TEST_F(FileRead, AppendsToWhatTheCallerHas) {
  const std::string path = Write("tail", "tail");
  std::string out = "head-";
  ASSERT_EQ(ReadWholeFile(path, out), 0);
  EXPECT_EQ(out, "head-tail");
}

}  // namespace
}  // namespace numaprobe::kernels
