// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/common/task_limits.cc on made-up cgroup trees.
#include "daemon/common/task_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace numaprobe::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class DescribeTaskLimitsTest : public testing::Test {
 protected:
  // A directory of each test's own: ctest runs the tests of this fixture as
  // parallel processes, and one's TearDown removed a shared tree under another.
  void SetUp() override {
    root_ = testing::TempDir() + "/task-limits-" + testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
            std::to_string(getpid());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(root_ + path).parent_path());
    std::ofstream(root_ + path) << text;
  }
  std::string root_;
};

TEST_F(DescribeTaskLimitsTest, NamesTheNearestPidsMaxOnCgroupV2) {
  Write("/proc-self-cgroup", "0::/kubepods/pod1/ctr\n");
  Write("/fs/kubepods/pod1/ctr/pids.max", "max\n");  // the container's own: unlimited
  Write("/fs/kubepods/pod1/pids.max", "24\n");       // the pod's limit binds
  Write("/fs/kubepods/pod1/pids.current", "19\n");
  Write("/fs/kubepods/pids.max", "4096\n");
  const std::string text = DescribeTaskLimits(root_ + "/fs", root_ + "/proc-self-cgroup");
  EXPECT_THAT(text, HasSubstr("cgroup pids.max 24 (19 in use, " + root_ + "/fs/kubepods/pod1)"));
  EXPECT_THAT(text, Not(HasSubstr("4096")));
  EXPECT_THAT(text, HasSubstr("; this process has "));
  rlimit nproc{};
  ASSERT_EQ(getrlimit(RLIMIT_NPROC, &nproc), 0);
  if (nproc.rlim_cur != RLIM_INFINITY) {
    EXPECT_THAT(text, HasSubstr("RLIMIT_NPROC " + std::to_string(nproc.rlim_cur) + " (per user)"));
  }
}

TEST_F(DescribeTaskLimitsTest, ReadsTheV1PidsHierarchyOnHybridHosts) {
  Write("/proc-self-cgroup", "8:pids:/test-group\n4:memory:/elsewhere\n0::/\n");
  Write("/fs/pids/test-group/pids.max", "24\n");
  Write("/fs/pids/test-group/pids.current", "24\n");
  EXPECT_THAT(DescribeTaskLimits(root_ + "/fs", root_ + "/proc-self-cgroup"),
              HasSubstr("cgroup pids.max 24 (24 in use, " + root_ + "/fs/pids/test-group)"));
}

// A container with its own cgroup namespace sees its cgroup as "/": its limit
// is the pids.max at the mount's root.
TEST_F(DescribeTaskLimitsTest, ReadsTheRootInAPrivateCgroupNamespace) {
  Write("/proc-self-cgroup", "0::/\n");
  Write("/fs/pids.max", "64\n");
  Write("/fs/pids.current", "63\n");
  EXPECT_THAT(DescribeTaskLimits(root_ + "/fs", root_ + "/proc-self-cgroup"),
              HasSubstr("cgroup pids.max 64 (63 in use, " + root_ + "/fs)"));
}

}  // namespace
}  // namespace numaprobe::daemon
