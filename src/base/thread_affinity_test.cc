#include "base/thread_affinity.h"

#include <gtest/gtest.h>

#include <thread>

namespace strata {
namespace {

TEST(ThreadAffinity, CpusAvoidingDropsTheAvoidedAndKeepsOrder) {
  const std::vector<unsigned> all{3, 0, 2, 1};
  EXPECT_EQ(CpusAvoiding(all, std::vector<unsigned>{1}), (std::vector<unsigned>{0, 2, 3}));
  EXPECT_EQ(CpusAvoiding(all, std::vector<unsigned>{}), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_TRUE(CpusAvoiding(std::vector<unsigned>{1}, std::vector<unsigned>{1}).empty());
}

TEST(ThreadAffinity, RestrictsOnlyTheCallingThreadAndItsChildren) {
  const std::vector<unsigned> before = CurrentThreadCpus();
  ASSERT_FALSE(before.empty());
  const unsigned one = before.back();
  std::vector<unsigned> inside, child;
  std::thread t([&] {
    ASSERT_TRUE(SetCurrentThreadCpus(std::vector<unsigned>{one}).ok());
    inside = CurrentThreadCpus();
    std::thread c([&] { child = CurrentThreadCpus(); });
    c.join();
  });
  t.join();
  EXPECT_EQ(inside, std::vector<unsigned>{one});
  EXPECT_EQ(child, std::vector<unsigned>{one});  // inherited
  EXPECT_EQ(CurrentThreadCpus(), before);        // this thread untouched
}

TEST(ThreadAffinity, RejectsNoCpuAndCpusPastTheLimit) {
  EXPECT_TRUE(SetCurrentThreadCpus(std::vector<unsigned>{}).IsInvalidArgument());
  EXPECT_TRUE(SetCurrentThreadCpus(std::vector<unsigned>{1u << 20}).IsInvalidArgument());
}

}  // namespace
}  // namespace strata
