// suites_test.cpp — the bench's suite data (tools/tmagemm/suites.cpp): the grouped suite's routings.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

#include "tmagemm/suites.hpp"

namespace tmagemm::cli {
namespace {

int64_t total(const std::vector<int64_t>& rows) { return std::accumulate(rows.begin(), rows.end(), int64_t{0}); }

TEST(GroupedRouting, MoeIsTheSuitesOwnRouting) {
  const auto rows = grouped_routing("moe", 8, 4096);
  EXPECT_EQ(rows, moe_routing(8, 4096));
  EXPECT_EQ(total(rows), 4096);
  // Uneven: not every expert gets the same rows.
  EXPECT_NE(*std::min_element(rows.begin(), rows.end()), *std::max_element(rows.begin(), rows.end()));
}

TEST(GroupedRouting, AlignedRoundsEachGroupAndKeepsTheTotal) {
  for (const int64_t q : {64, 128}) {
    for (const auto& [experts, tokens] : std::vector<std::pair<int64_t, int64_t>>{{8, 4096}, {8, 32768}, {64, 32768}}) {
      const auto moe = moe_routing(experts, tokens);
      const auto rows = grouped_routing("aligned:" + std::to_string(q), experts, tokens);
      ASSERT_EQ(rows.size(), moe.size());
      EXPECT_EQ(total(rows), tokens) << "Q " << q << ", " << experts << " experts";
      for (std::size_t g = 0; g < rows.size(); ++g) {
        EXPECT_GE(rows[g], 0);
        EXPECT_EQ(rows[g] % q, 0) << "group " << g << " of " << experts << " (" << rows[g] << " rows), Q " << q;
        // Each group stays near its routed rows: rounded, and at most one Q of the surplus or shortfall.
        EXPECT_LE(std::abs(rows[g] - moe[g]), q / 2 + q) << "group " << g << ", Q " << q;
      }
      EXPECT_NE(rows, moe);  // the suite's routing is not aligned already
    }
  }
}

TEST(GroupedRouting, TotalsNoMultipleOfQStayExact) {
  // 64 tokens over 64 experts in multiples of 128: every group rounds to 0 and the largest takes all 64 rows.
  const auto rows = grouped_routing("aligned:128", 64, 64);
  EXPECT_EQ(total(rows), 64);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), 64), 1);
}

TEST(GroupedRouting, RefusesOtherValuesNamingTheRule) {
  for (const char* bad : {"", "even", "aligned:", "aligned:0", "aligned:5000", "aligned:-8", "aligned:12x", "MOE"}) {
    try {
      grouped_routing(bad, 8, 4096);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("aligned:Q with Q from 1 to 4096"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tmagemm::cli
