// cublaslt_search_test.cpp — the cuBLASLt configuration search (src/choices/cublaslt.hpp): its configurations of
// cuBLASLt's own algorithm run and match the reference on a wave-shaped problem in two layouts and with an f32 output,
// every M of one shape bucket gets the bucket's candidates (so a stored winner is found again at any M of it) and the
// ones fitted to its own M after them, decode problems (M <= 64) get none, and TMAGEMM_CUBLASLT_SEARCH=0 turns the
// search off (these tests set it to 1 and restore it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "choices/choice.hpp"
#include "choices/cublaslt.hpp"
#include "gpu/gpu_util.hpp"

namespace tmagemm::testing {
namespace {

class CublasLtSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    const char* v = std::getenv("TMAGEMM_CUBLASLT_SEARCH");
    saved_ = v ? std::optional<std::string>(v) : std::nullopt;
    setenv("TMAGEMM_CUBLASLT_SEARCH", "1", 1);
  }
  void TearDown() override {
    if (saved_) setenv("TMAGEMM_CUBLASLT_SEARCH", saved_->c_str(), 1);
    else unsetenv("TMAGEMM_CUBLASLT_SEARCH");
  }
  std::optional<std::string> saved_;
  std::mt19937 rng{47};

  // The search's choices for mm(M x K, K x N) with B column-major when b_col, out of type `out`.
  std::vector<choices::ChoicePtr> search_choices(int64_t M, int64_t N, int64_t K, bool b_col, DType out,
                                                 Matrix* sa = nullptr, Matrix* sb = nullptr, Matrix* so = nullptr) {
    Matrix a = make_matrix(DType::bf16, M, K, false, 1, rng, true);
    Matrix b = make_matrix(DType::bf16, b_col ? N : K, b_col ? K : N, false, 1, rng, true);
    Matrix o = make_matrix(out, M, N, false, 1, rng, false);
    const TensorView va = view_of(a, 0, M, K, K, 1);
    const TensorView vb = b_col ? view_of(b, 0, K, N, 1, K) : view_of(b, 0, K, N, N, 1);
    const TensorView vo = view_of(o, 0, M, N, N, 1);
    const auto all = choices::cublaslt_backend().enumerate(make_mm_problem(va, vb, vo), runtime::device_info(0),
                                                           Options::defaults_only());
    std::vector<choices::ChoicePtr> found;
    for (const auto& c : all)
      if (c->name().rfind("cublaslt_a", 0) == 0 && c->name().rfind("cublaslt_algo", 0) != 0)  // not a heuristic rank
        found.push_back(c);
    if (sa) *sa = std::move(a);
    if (sb) *sb = std::move(b);
    if (so) *so = std::move(o);
    return found;
  }
};

std::vector<std::string> names_of(const std::vector<choices::ChoicePtr>& cs) {
  std::vector<std::string> n;
  for (const auto& c : cs) n.push_back(c->name());
  return n;
}

// Every configuration the search offers on 2304 x 2304 x 128 runs and matches the reference (values, no NaN,
// nothing outside out written), in the rr and rc layouts and with an f32 output.
TEST_F(CublasLtSearch, ConfigurationsMatchTheReference) {
  const struct {
    bool b_col;
    DType out;
  } cases[] = {{false, DType::bf16}, {true, DType::bf16}, {false, DType::f32}};
  for (const auto& cs : cases) {
    SCOPED_TRACE(cs.b_col ? "rc" : "rr");
    const int64_t M = 2304, N = 2304, K = 128;
    Matrix a, b, o;
    const auto found = search_choices(M, N, K, cs.b_col, cs.out, &a, &b, &o);
    ASSERT_FALSE(found.empty()) << "the search offered no configuration on an sm_90 device";
    EXPECT_LE(found.size(), 28u);
    const TensorView va = view_of(a, 0, M, K, K, 1);
    const TensorView vb = cs.b_col ? view_of(b, 0, K, N, 1, K) : view_of(b, 0, K, N, N, 1);
    EXPECT_EQ(check_choices_on_views(found, va, vb, o, view_of(o, 0, M, N, N, 1), true),
              static_cast<int>(found.size()));
  }
}

// One bucket (2049..2560 rows), one candidate list: the configurations of the bucket (not Choice::m_only) are the
// same at every M of it, first; every further one is fitted to its M; at M = 2304, 128x336 (one round of tiles
// there) is fitted. A ragged M of the bucket runs the configurations too.
TEST_F(CublasLtSearch, SameCandidatesAcrossABucket) {
  std::vector<std::string> bucket;
  for (const auto& c : search_choices(2560, 2304, 256, false, DType::bf16))
    if (!c->m_only()) bucket.push_back(c->name());
  ASSERT_FALSE(bucket.empty());
  const int64_t ragged_m = 2101;
  Matrix a, b, o;
  for (const int64_t m : {int64_t{2049}, int64_t{2304}, ragged_m}) {
    SCOPED_TRACE(m);
    const auto at_m = m == ragged_m ? search_choices(m, 2304, 256, false, DType::bf16, &a, &b, &o)
                                    : search_choices(m, 2304, 256, false, DType::bf16);
    std::vector<std::string> of_bucket;
    for (const auto& c : at_m)
      if (!c->m_only()) of_bucket.push_back(c->name());
      else EXPECT_TRUE(c->fitted_to_m()) << c->name();
    EXPECT_EQ(of_bucket, bucket);
    if (m == 2304)
      EXPECT_TRUE(std::any_of(at_m.begin(), at_m.end(), [](const choices::ChoicePtr& c) {
        return c->fitted_to_m() && c->name().find("_t128x336_") != std::string::npos;
      })) << "no fitted 128x336 configuration at M = 2304";
    if (m == ragged_m)
      check_choices_on_views(at_m, view_of(a, 0, m, 256, 256, 1), view_of(b, 0, 256, 2304, 2304, 1), o,
                             view_of(o, 0, m, 2304, 2304, 1), false);
  }
}

// Decode problems get no configuration; the search is on by default and TMAGEMM_CUBLASLT_SEARCH=0 turns it off.
TEST_F(CublasLtSearch, NoneForDecodeOrWhenOff) {
  EXPECT_TRUE(search_choices(64, 4096, 4096, false, DType::bf16).empty());
  unsetenv("TMAGEMM_CUBLASLT_SEARCH");
  EXPECT_FALSE(search_choices(2304, 2304, 256, false, DType::bf16).empty());
  setenv("TMAGEMM_CUBLASLT_SEARCH", "0", 1);
  EXPECT_TRUE(search_choices(2304, 2304, 256, false, DType::bf16).empty());
}

}  // namespace
}  // namespace tmagemm::testing
