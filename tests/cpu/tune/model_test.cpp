// model_test.cpp — the model file of offline tuning without a GPU: a valid file and its defaults, every kind of bad
// input named by field and rule (before any GPU work), the jobs (one per weight and shape bucket of the M range,
// identical weights once; grouped_mm's experts by token class), and that a job's problem has the tuning key of a real call of its shape (the validator's
// problem for contiguous tensors; device memory faked with set_pointer_query).
#include <gtest/gtest.h>

#include <string>

#include "cpu/test_support.hpp"
#include "tmagemm/error.hpp"
#include "tune/model.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::tune {
namespace {

const char* kLlm = R"({
  "m": [1, 8192],
  "weights": [
    {"name": "mlp.up", "n": 14336, "k": 4096},
    {"name": "mlp.down", "op": "mm", "n": 4096, "k": 14336, "dtype": "bf16", "layout": "rc"},
    {"name": "qkv", "op": "addmm", "n": 6144, "k": 4096, "activation": "gelu_tanh", "layout": "rr"},
    {"name": "up.fp8", "op": "scaled_mm", "n": 14336, "k": 4096, "scale": "tensorwise", "fast_accum": false},
    {"name": "mlp.up again", "n": 14336, "k": 4096}
  ]
})";

TEST(ModelFile, ParsesWeightsWithTheirDefaults) {
  const Model m = parse_model(kLlm, "llm.json");
  EXPECT_EQ(m.m_min, 1);
  EXPECT_EQ(m.m_max, 8192);
  ASSERT_EQ(m.weights.size(), 5u);
  const ModelWeight& up = m.weights[0];
  EXPECT_EQ(up.name, "mlp.up");
  EXPECT_EQ(up.op, Op::mm);
  EXPECT_EQ(up.dtype, DType::bf16);
  EXPECT_EQ(up.out_dtype, DType::bf16);
  EXPECT_TRUE(up.b_col_major);  // rc: b = W^T of a row-major (N, K) weight
  EXPECT_EQ(up.describe(), "mm 14336x4096 bf16 rc");
  const ModelWeight& qkv = m.weights[2];
  EXPECT_EQ(qkv.op, Op::addmm);
  EXPECT_TRUE(qkv.bias);
  EXPECT_EQ(qkv.activation, Activation::gelu_tanh);
  EXPECT_FALSE(qkv.b_col_major);
  const ModelWeight& fp8 = m.weights[3];
  EXPECT_EQ(fp8.op, Op::scaled_mm);
  EXPECT_EQ(fp8.dtype, DType::e4m3);
  EXPECT_EQ(fp8.out_dtype, DType::bf16);
  EXPECT_EQ(fp8.scale, ScaleKind::tensorwise);
  EXPECT_FALSE(fp8.fast_accum);
}

// The message of the Error(invalid_argument) that parse_model throws for `text`.
std::string error_of(const std::string& text) {
  try {
    parse_model(text, "model.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    return e.what();
  }
  return "(no error)";
}

TEST(ModelFile, BadInputNamesTheFieldAndTheRule) {
  const std::string w = R"("weights": [{"n": 4096, "k": 4096}])";
  const auto doc = [&](const std::string& m, const std::string& weights) { return "{" + m + ", " + weights + "}"; };
  const struct {
    std::string text, expect;
  } cases[] = {
      {"{\"m\": [1, 8", "not valid JSON"},
      {"[1, 2]", "must be an object"},
      {"{" + w + "}", "m: is missing"},
      {doc("\"m\": 8192", w), "m: must be [min, max]"},
      {doc("\"m\": [0, 8192]", w), "m[0] (min): 0 is out of range: 1 <= m[0] (min) <= 1048576"},
      {doc("\"m\": [1, 2097152]", w), "m[1] (max): 2097152 is out of range"},
      {doc("\"m\": [100, 10]", w), "m: min 100 is above max 10"},
      {doc("\"m\": [1, 1.5]", w), "m[1] (max): must be an integer"},
      {"{\"m\": [1, 64]}", "weights: is missing"},
      {doc("\"m\": [1, 64]", "\"weights\": []"), "weights: must be a non-empty list"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 4096}]"), "weights[0].k: is missing"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": \"4096\", \"k\": 1}]"), "weights[0].n: must be an integer"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 0, \"k\": 1}]"), "weights[0].n: 0 is out of range"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"nn\": 1}]"), "weights[0].nn: unknown field"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"op\": \"bmm\"}]"),
       "weights[0].op: 'bmm' is not accepted (mm, addmm, scaled_mm or grouped_mm)"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"op\": \"grouped_mm\"}]"),
       "weights[0].groups: is missing (grouped_mm's expert count G is required)"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"op\": \"grouped_mm\", \"groups\": 0}]"),
       "weights[0].groups: 0 is out of range: 1 <= weights[0].groups <= 65536"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"groups\": 8}]"),
       "weights[0].groups: only grouped_mm takes groups"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"op\": \"grouped_mm\", \"groups\": 8, \"bias\": true}]"),
       "weights[0].bias: only addmm and scaled_mm take a bias"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"dtype\": \"f32\"}]"),
       "weights[0].dtype: 'f32' is not accepted (bf16 or f16)"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"layout\": \"cr\"}]"),
       "weights[0].layout: 'cr' is not accepted: a must be row-major"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"layout\": \"xx\"}]"),
       "weights[0].layout: 'xx' is not accepted (rr or rc"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 16, \"k\": 16, \"op\": \"scaled_mm\", \"layout\": \"rr\"}]"),
       "scaled_mm takes rc"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 16, \"k\": 24, \"op\": \"scaled_mm\"}]"),
       "weights[0]: scaled_mm needs N and K multiples of 16"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"activation\": \"relu\"}]"),
       "weights[0].activation: only addmm takes an activation"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"op\": \"addmm\", \"activation\": \"tanh\"}]"),
       "weights[0].activation: 'tanh' is not accepted"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"op\": \"addmm\", \"bias\": false}]"),
       "weights[0].bias: addmm always has its (N) bias"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 8, \"k\": 8, \"fast_accum\": true}]"),
       "weights[0].fast_accum: only scaled_mm takes fast_accum"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 16, \"k\": 16, \"op\": \"scaled_mm\", \"scale\": \"blockwise\"}]"),
       "weights[0].scale: 'blockwise' is not accepted (rowwise or tensorwise)"},
      {doc("\"m\": [1, 64]", "\"weights\": [{\"n\": 16, \"k\": 16, \"op\": \"scaled_mm\", \"out_dtype\": \"f32\", \"bias\": true}]"),
       "weights[0].bias: scaled_mm takes no bias with an f32 output"},
      {doc("\"m\": [1, 64], \"extra\": 1", w), "extra: unknown field (accepted: m, weights)"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(c.text);
    EXPECT_NE(msg.find("model file model.json: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << msg;
  }
}

TEST(ModelFile, JobsAreEveryBucketOfTheRangePerWeightOnce) {
  const Model m = parse_model(kLlm, "llm.json");
  const auto jobs = model_jobs(m);
  // 46 buckets in 1..8192 for each of the four distinct weights (the fifth repeats the first).
  EXPECT_EQ(jobs.size(), 4u * 46u);
  for (const auto& j : jobs) EXPECT_NE(j.weight, 4u);
  EXPECT_EQ(jobs.front().bucket, (MBucket{1, 1}));
  EXPECT_EQ(jobs[45].bucket, (MBucket{7169, 8192}));
  // A range that starts and ends inside buckets takes them whole.
  const Model part = parse_model(R"({"m": [100, 300], "weights": [{"n": 4096, "k": 4096}]})", "part.json");
  const auto pj = model_jobs(part);
  ASSERT_EQ(pj.size(), 7u);  // 97..112, 113..128, 129..160, 161..192, 193..224, 225..256, 257..320
  EXPECT_EQ(pj.front().bucket, (MBucket{97, 112}));
  EXPECT_EQ(pj.back().bucket, (MBucket{257, 320}));
}

TEST(ModelFile, GroupedWeightsTuneEveryTokenClassOfTheRange) {
  // A MoE layer's experts: grouped_mm over G matrices; M counts the tokens of a call, bucketed by power of two (the
  // grouped tuning key's class), so 1..8192 tokens are 14 jobs. Another expert count is another shape.
  const Model m = parse_model(R"({"m": [1, 8192], "weights": [
      {"name": "experts.up", "op": "grouped_mm", "groups": 8, "n": 14336, "k": 4096},
      {"name": "experts.down", "op": "grouped_mm", "groups": 8, "n": 4096, "k": 14336, "layout": "rr"},
      {"name": "experts.up.g64", "op": "grouped_mm", "groups": 64, "n": 14336, "k": 4096}]})",
                              "moe.json");
  ASSERT_EQ(m.weights.size(), 3u);
  EXPECT_EQ(m.weights[0].op, Op::grouped_mm);
  EXPECT_EQ(m.weights[0].groups, 8);
  EXPECT_EQ(m.weights[0].describe(), "grouped_mm 8x14336x4096 bf16 rc");
  EXPECT_FALSE(m.weights[1].b_col_major);
  const auto jobs = model_jobs(m);
  EXPECT_EQ(jobs.size(), 3u * 14u);
  EXPECT_EQ(jobs[0].bucket, (MBucket{1, 1}));
  EXPECT_EQ(jobs[2].bucket, (MBucket{3, 4}));
  EXPECT_EQ(jobs[13].bucket, (MBucket{4097, 8192}));
}

void* at(uintptr_t addr) { return reinterpret_cast<void*>(addr); }

class ModelProblem : public ::testing::Test {
 protected:
  void SetUp() override {
    set_pointer_query([](const void*) { return PointerInfo{true, 0}; });
  }
  void TearDown() override { set_pointer_query({}); }
};

TEST_F(ModelProblem, HasTheTuningKeyOfARealCall) {
  // Contiguous tensors at the job's stand-in addresses, through the validator: the same problem (key) as
  // model_problem, for every op, both layouts and a few M (1 and extents of 1 included: canonical strides).
  const auto dev = test_support::fake_h200();
  const Model m = parse_model(R"({"m": [1, 64], "weights": [
      {"n": 14336, "k": 4096}, {"n": 4096, "k": 4095, "layout": "rr", "dtype": "f16"}, {"n": 1, "k": 1},
      {"op": "addmm", "n": 6144, "k": 4096, "activation": "silu", "out_dtype": "f32"},
      {"op": "scaled_mm", "n": 14336, "k": 4096, "bias": true},
      {"op": "scaled_mm", "n": 4096, "k": 4096, "scale": "tensorwise", "out_dtype": "f32"},
      {"op": "grouped_mm", "groups": 8, "n": 14336, "k": 4096},
      {"op": "grouped_mm", "groups": 1, "n": 2048, "k": 7168, "layout": "rr", "dtype": "f16"}]})",
                              "keys.json");
  for (const ModelWeight& w : m.weights)
    for (int64_t rows : {1, 7, 17, 3000}) {
      const GemmProblem mine = model_problem(w, rows, 0);
      const TensorView a = TensorView::contiguous(at(0x7e0000000000), w.dtype, {rows, w.k});
      const TensorView b = w.b_col_major ? TensorView::contiguous(at(0x7e4000000000), w.dtype, {w.n, w.k}).t()
                                         : TensorView::contiguous(at(0x7e4000000000), w.dtype, {w.k, w.n});
      // grouped_mm: b (G, K, N), the experts' (N, K) weights transposed (rc) or (K, N) ones (rr), one after another
      const TensorView experts = w.b_col_major
                                     ? TensorView::strided(at(0x7e4000000000), w.dtype, {w.groups, w.k, w.n},
                                                           {w.k * w.n, 1, w.k})
                                     : TensorView::contiguous(at(0x7e4000000000), w.dtype, {w.groups, w.k, w.n});
      const TensorView offs = TensorView::contiguous(at(0x7ef000000000), DType::i32, {w.groups});
      const TensorView out = TensorView::contiguous(at(0x7e8000000000), w.out_dtype, {rows, w.n});
      const TensorView bias = TensorView::contiguous(at(0x7ec000000000), w.out_dtype, {w.n});
      GemmProblem real;
      if (w.op == Op::mm) {
        real = make_mm_problem(a, b, out);
      } else if (w.op == Op::grouped_mm) {
        real = make_grouped_mm_problem(a, experts, offs, out);
      } else if (w.op == Op::addmm) {
        real = make_addmm_problem(bias, a, b, out, 1.0f, 1.0f, w.activation);
      } else {
        const bool rowwise = w.scale == ScaleKind::rowwise;
        const TensorView sa = TensorView::contiguous(at(0x7ed000000000), DType::f32,
                                                     {rowwise ? rows : 1, 1});
        const TensorView sb = TensorView::contiguous(at(0x7ee000000000), DType::f32, {1, rowwise ? w.n : 1});
        real = make_scaled_mm_problem(a, b, sa, sb, w.bias ? &bias : nullptr, out, w.fast_accum);
      }
      EXPECT_EQ(tuning_key(mine, dev), tuning_key(real, dev)) << w.describe() << " M " << rows;
      EXPECT_EQ(mine.describe(), real.describe()) << w.describe() << " M " << rows;
      EXPECT_EQ(mine.a.row_stride, real.a.row_stride);
      EXPECT_EQ(mine.b.row_stride, real.b.row_stride);
      EXPECT_EQ(mine.b.col_stride, real.b.col_stride);
      EXPECT_EQ(mine.out.row_stride, real.out.row_stride);
      EXPECT_EQ(mine.bias.col_stride, real.bias.col_stride);
      EXPECT_EQ(mine.scale_kind, real.scale_kind);
      EXPECT_EQ(mine.batch, real.batch);
      EXPECT_EQ(mine.b.batch_stride, real.b.batch_stride);
      EXPECT_EQ(mine.group_ends, real.group_ends);
    }
}

}  // namespace
}  // namespace tmagemm::tune
