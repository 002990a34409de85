#include "graph/graph_options.h"

#include <gtest/gtest.h>

namespace strata::graph {
namespace {

TEST(VamanaBuildOptions, DefaultsAreDiskAnnAndValid) {
  const VamanaBuildOptions o;
  EXPECT_TRUE(o.Validate().ok());
  EXPECT_EQ(o.max_degree, 64u);
  EXPECT_EQ(o.search_list_size, 125u);
  EXPECT_FLOAT_EQ(o.alpha, 1.2f);
  EXPECT_FLOAT_EQ(o.slack_factor, 1.3f);
  EXPECT_EQ(o.max_occlusion_size, 750u);
  EXPECT_EQ(o.num_passes, 1u);
  EXPECT_EQ(o.alpha_schedule, AlphaSchedule::kRising);
  EXPECT_FALSE(o.saturate_graph);
}

TEST(VamanaBuildOptions, SlackDegreeIsFloorOfSlackTimesR) {
  EXPECT_EQ(VamanaBuildOptions{}.SlackDegree(), 83u);  // floor(1.3 * 64)
  EXPECT_EQ((VamanaBuildOptions{.max_degree = 32, .slack_factor = 1.0f}).SlackDegree(), 32u);
  EXPECT_EQ((VamanaBuildOptions{.max_degree = 10, .slack_factor = 1.5f}).SlackDegree(), 15u);
  EXPECT_EQ((VamanaBuildOptions{.max_degree = 1, .slack_factor = 1.3f}).SlackDegree(), 1u);
}

TEST(VamanaBuildOptions, RejectsEachBadField) {
  auto bad = [](VamanaBuildOptions o) {
    const Status s = o.Validate();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  };
  bad({.max_degree = 0});
  bad({.max_degree = 5000});
  bad({.search_list_size = 0});
  bad({.alpha = 0.9f});
  bad({.alpha = std::numeric_limits<float>::quiet_NaN()});
  bad({.slack_factor = 0.5f});
  bad({.slack_factor = 5.0f});
  bad({.max_degree = 64, .max_occlusion_size = 32});
  bad({.num_passes = 0});
  bad({.num_passes = 3});
  bad({.metric = static_cast<Metric>(9)});
  bad({.alpha_schedule = static_cast<AlphaSchedule>(7)});
  bad({.num_threads = 100000});
  EXPECT_TRUE((VamanaBuildOptions{.metric = Metric::kCosine, .max_degree = 1,
                                  .search_list_size = 1, .alpha = 1.0f, .slack_factor = 1.0f,
                                  .max_occlusion_size = 1, .num_passes = 2})
                  .Validate()
                  .ok());
}

}  // namespace
}  // namespace strata::graph
