// options_test.cpp — CPU tests of Options: defaults, TMAGEMM_* environment parsing (each variable, accepted
// spellings, empty = unset) and the invalid_argument errors that name the variable and the accepted values.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "tmagemm/error.hpp"
#include "tmagemm/options.hpp"

namespace tmagemm {
namespace {

const char* const kVars[] = {"TMAGEMM_TUNING",       "TMAGEMM_PERSISTENT_TMA",
                             "TMAGEMM_FALLBACK",     "TMAGEMM_SKINNY",
                             "TMAGEMM_CUBLASLT",     "TMAGEMM_ALLOW_REDUCED_PRECISION_REDUCTION",
                             "TMAGEMM_CHOICE_REGEX", "TMAGEMM_SM_CARVEOUT",
                             "TMAGEMM_M_BUCKETS",    "TMAGEMM_LIBRARY_RANKS_PER_M",
                             "TMAGEMM_SUSTAINED_TUNING"};

// Clears the TMAGEMM_* variables for each test and puts the caller's values back afterwards.
class OptionsEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVars) {
      if (const char* v = std::getenv(name)) saved_[name] = v;
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : kVars) {
      auto it = saved_.find(name);
      if (it != saved_.end())
        setenv(name, it->second.c_str(), 1);
      else
        unsetenv(name);
    }
  }
  static void set(const char* name, const char* value) { setenv(name, value, 1); }

  // The error Options() throws, or nullopt.
  static std::optional<Error> error() {
    try {
      Options o;
      (void)o;
    } catch (const Error& e) {
      return e;
    }
    return std::nullopt;
  }

 private:
  std::map<std::string, std::string> saved_;
};

void expect_defaults(const Options& o) {
  EXPECT_EQ(o.stream, nullptr);
  EXPECT_EQ(o.tuning, Tuning::benchmark);
  EXPECT_TRUE(o.persistent_tma);
  EXPECT_TRUE(o.fallback);
  EXPECT_TRUE(o.cublaslt);
  EXPECT_TRUE(o.skinny);
  EXPECT_FALSE(o.allow_reduced_precision_reduction);
  EXPECT_EQ(o.choice_regex, "");
  EXPECT_EQ(o.sm_carveout, 0);
  EXPECT_TRUE(o.m_buckets);
  EXPECT_TRUE(o.library_ranks_per_m);
  EXPECT_TRUE(o.sustained_tuning);
}

TEST_F(OptionsEnv, DefaultsWithoutEnvironment) { expect_defaults(Options()); }

TEST_F(OptionsEnv, DefaultsOnlyIgnoresEnvironment) {
  set("TMAGEMM_TUNING", "heuristic");
  set("TMAGEMM_FALLBACK", "0");
  set("TMAGEMM_ALLOW_REDUCED_PRECISION_REDUCTION", "1");
  set("TMAGEMM_SM_CARVEOUT", "not a number");
  set("TMAGEMM_LIBRARY_RANKS_PER_M", "0");
  set("TMAGEMM_SUSTAINED_TUNING", "0");
  expect_defaults(Options::defaults_only());
}

TEST_F(OptionsEnv, Tuning) {
  set("TMAGEMM_TUNING", "heuristic");
  EXPECT_EQ(Options().tuning, Tuning::heuristic);
  set("TMAGEMM_TUNING", "cached_only");
  EXPECT_EQ(Options().tuning, Tuning::cached_only);
  set("TMAGEMM_TUNING", "Benchmark");
  EXPECT_EQ(Options().tuning, Tuning::benchmark);
  set("TMAGEMM_TUNING", "fast");
  auto e = error();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), ErrorCode::invalid_argument);
  EXPECT_NE(std::string(e->what()).find("TMAGEMM_TUNING='fast'"), std::string::npos) << e->what();
  EXPECT_NE(std::string(e->what()).find("benchmark, heuristic or cached_only"), std::string::npos) << e->what();
}

TEST_F(OptionsEnv, Bools) {
  struct Case {
    const char* name;
    bool Options::*field;
  };
  for (Case c : {Case{"TMAGEMM_PERSISTENT_TMA", &Options::persistent_tma}, Case{"TMAGEMM_FALLBACK", &Options::fallback},
                 Case{"TMAGEMM_CUBLASLT", &Options::cublaslt}, Case{"TMAGEMM_SKINNY", &Options::skinny},
                 Case{"TMAGEMM_ALLOW_REDUCED_PRECISION_REDUCTION", &Options::allow_reduced_precision_reduction},
                 Case{"TMAGEMM_M_BUCKETS", &Options::m_buckets},
                 Case{"TMAGEMM_LIBRARY_RANKS_PER_M", &Options::library_ranks_per_m},
                 Case{"TMAGEMM_SUSTAINED_TUNING", &Options::sustained_tuning}}) {
    for (const char* off : {"0", "false", "off", "FALSE", "Off", " 0 "}) {
      set(c.name, off);
      EXPECT_FALSE(Options().*c.field) << c.name << "=" << off;
    }
    for (const char* on : {"1", "true", "on", "TRUE", "On"}) {
      set(c.name, on);
      EXPECT_TRUE(Options().*c.field) << c.name << "=" << on;
    }
    set(c.name, "yes");
    auto e = error();
    ASSERT_TRUE(e.has_value()) << c.name;
    EXPECT_EQ(e->code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e->what()).find(std::string(c.name) + "='yes'"), std::string::npos) << e->what();
    EXPECT_NE(std::string(e->what()).find("0, 1, true, false, on or off"), std::string::npos) << e->what();
    unsetenv(c.name);
  }
}

TEST_F(OptionsEnv, EmptyValueKeepsDefault) {
  for (const char* name : kVars) set(name, "");
  expect_defaults(Options());
}

TEST_F(OptionsEnv, ChoiceRegex) {
  set("TMAGEMM_CHOICE_REGEX", "persistent_tma_.*_s[34]");
  EXPECT_EQ(Options().choice_regex, "persistent_tma_.*_s[34]");
  EXPECT_EQ(Options().choice_regex, "persistent_tma_.*_s[34]");  // second read (cached compile)
  set("TMAGEMM_CHOICE_REGEX", "(cublaslt");
  auto e = error();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), ErrorCode::invalid_argument);
  EXPECT_NE(std::string(e->what()).find("TMAGEMM_CHOICE_REGEX='(cublaslt'"), std::string::npos) << e->what();
  EXPECT_NE(std::string(e->what()).find("ECMAScript regular expression"), std::string::npos) << e->what();
  EXPECT_TRUE(error().has_value());  // still rejected on the next call
}

TEST_F(OptionsEnv, SmCarveout) {
  set("TMAGEMM_SM_CARVEOUT", "8");
  EXPECT_EQ(Options().sm_carveout, 8);
  set("TMAGEMM_SM_CARVEOUT", " 12 ");
  EXPECT_EQ(Options().sm_carveout, 12);
  for (const char* bad : {"-1", "abc", "3x", "1.5", "99999999999", "+4"}) {
    set("TMAGEMM_SM_CARVEOUT", bad);
    auto e = error();
    ASSERT_TRUE(e.has_value()) << bad;
    EXPECT_EQ(e->code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e->what()).find("TMAGEMM_SM_CARVEOUT='"), std::string::npos) << e->what();
    EXPECT_NE(std::string(e->what()).find("an integer >= 0"), std::string::npos) << e->what();
  }
}

TEST_F(OptionsEnv, AllowReducedPrecisionReduction) {
  EXPECT_FALSE(Options().allow_reduced_precision_reduction);  // the accuracy floor is on unless asked
  set("TMAGEMM_ALLOW_REDUCED_PRECISION_REDUCTION", "1");
  EXPECT_TRUE(Options().allow_reduced_precision_reduction);
  EXPECT_FALSE(Options::defaults_only().allow_reduced_precision_reduction);
  Options o;
  o.allow_reduced_precision_reduction = false;  // code wins over the environment
  EXPECT_FALSE(o.allow_reduced_precision_reduction);
}

TEST_F(OptionsEnv, FieldsAssignedInCodeWin) {
  set("TMAGEMM_FALLBACK", "0");
  Options o;
  EXPECT_FALSE(o.fallback);
  o.fallback = true;
  EXPECT_TRUE(o.fallback);
}

TEST(OptionsNames, Tuning) {
  EXPECT_STREQ(to_string(Tuning::benchmark), "benchmark");
  EXPECT_STREQ(to_string(Tuning::heuristic), "heuristic");
  EXPECT_STREQ(to_string(Tuning::cached_only), "cached_only");
}

}  // namespace
}  // namespace tmagemm
