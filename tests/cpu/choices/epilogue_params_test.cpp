// epilogue_params_test.cpp — the host side of the epilogue stage: which EpilogueSpec a problem compiles with (beta = 0
// never reads bias; mm is the identity), its rendering and names, and the per-launch bias strides.
#include <gtest/gtest.h>

#include "choices/epilogue_params.hpp"

namespace tmagemm::choices {
namespace {

GemmProblem addmm_problem(BiasKind kind, DType bias_dtype, float alpha, float beta, Activation act) {
  GemmProblem p;
  p.op = Op::addmm;
  p.m = 64;
  p.n = 96;
  p.k = 32;
  p.out.dtype = DType::bf16;
  p.bias_kind = kind;
  p.bias.dtype = bias_dtype;
  p.bias.data = reinterpret_cast<const void*>(0x1000);
  p.bias.rows = kind == BiasKind::row_vector ? 1 : 64;
  p.bias.cols = kind == BiasKind::col_vector ? 1 : 96;
  p.bias.row_stride = kind == BiasKind::row_vector ? 0 : kind == BiasKind::col_vector ? 1 : 96;
  p.bias.col_stride = kind == BiasKind::col_vector ? 0 : 1;
  p.alpha = alpha;
  p.beta = beta;
  p.act = act;
  return p;
}

TEST(EpilogueSpec, MmIsTheIdentityAndKeepsItsKernelNames) {
  GemmProblem mm;
  const EpilogueSpec e = epilogue_spec(mm);
  EXPECT_TRUE(e.identity());
  EXPECT_EQ(e.suffix(), "");
  EXPECT_EQ(e.render(), "  using Epi = tmagemm::kernels::Epilogue<-1, 0, false>;\n");
}

TEST(EpilogueSpec, FromAnAddmmProblem) {
  const EpilogueSpec e = epilogue_spec(addmm_problem(BiasKind::row_vector, DType::f32, 2.0f, 1.0f, Activation::gelu_tanh));
  EXPECT_EQ(e.bias, 2);
  EXPECT_EQ(e.act, static_cast<int>(Activation::gelu_tanh));
  EXPECT_TRUE(e.alpha);
  EXPECT_EQ(e.bcast, 1);  // a row vector: one bias value per column
  EXPECT_EQ(e.suffix(), "_e331r");
  EXPECT_EQ(e.render(), "  using Epi = tmagemm::kernels::Epilogue<2, 3, true, 1>;\n");
  const EpilogueSpec col = epilogue_spec(addmm_problem(BiasKind::col_vector, DType::bf16, 1.0f, 1.0f, Activation::none));
  EXPECT_EQ(col.bcast, 2);
  EXPECT_EQ(col.suffix(), "_e100c");
  EXPECT_NE(col.code(), epilogue_spec(addmm_problem(BiasKind::full, DType::bf16, 1.0f, 1.0f, Activation::none)).code());
  // A full bias keeps the three-argument form (the template's default broadcast).
  EXPECT_EQ(epilogue_spec(addmm_problem(BiasKind::full, DType::bf16, 1.0f, 1.0f, Activation::none)).render(),
            "  using Epi = tmagemm::kernels::Epilogue<0, 0, false>;\n");
  // beta = 0: the kernel never reads bias (NaN there must not reach out).
  const EpilogueSpec z = epilogue_spec(addmm_problem(BiasKind::full, DType::bf16, 1.0f, 0.0f, Activation::relu));
  EXPECT_EQ(z.bias, -1);
  EXPECT_FALSE(z.identity());
  EXPECT_NE(z.code(), e.code());
}

TEST(EpilogueSpec, LaunchParametersCarryTheBroadcastStrides) {
  const EpilogueParamsHost row = epilogue_params(addmm_problem(BiasKind::row_vector, DType::bf16, 1, 1, Activation::none));
  EXPECT_EQ(row.bias_rs, 0);
  EXPECT_EQ(row.bias_cs, 1);
  EXPECT_EQ(row.bias_vec2, 1);  // packed and 4-byte aligned: column pairs read as one access
  GemmProblem odd = addmm_problem(BiasKind::row_vector, DType::bf16, 1, 1, Activation::none);
  odd.bias.data = reinterpret_cast<const void*>(0x1002);
  EXPECT_EQ(epilogue_params(odd).bias_vec2, 0);
  odd.bias.data = reinterpret_cast<const void*>(0x1000);
  odd.bias.col_stride = 3;
  EXPECT_EQ(epilogue_params(odd).bias_vec2, 0);
  const EpilogueParamsHost col = epilogue_params(addmm_problem(BiasKind::col_vector, DType::bf16, 1, 1, Activation::none));
  EXPECT_EQ(col.bias_rs, 1);
  EXPECT_EQ(col.bias_cs, 0);
  EXPECT_EQ(col.bias_vec2, 0);
  const EpilogueParamsHost full = epilogue_params(addmm_problem(BiasKind::full, DType::bf16, 0.5f, 2, Activation::none));
  EXPECT_EQ(full.bias_rs, 96);
  EXPECT_EQ(full.alpha, 0.5f);
  EXPECT_EQ(full.beta, 2.0f);
  EXPECT_EQ(full.bias, reinterpret_cast<const void*>(0x1000));
  GemmProblem mm;
  EXPECT_EQ(epilogue_params(mm).bias, nullptr);
}

}  // namespace
}  // namespace tmagemm::choices
