// support_kernels.cpp — KernelSpecs of the non-GEMM kernels (see support_kernels.hpp).
#include "jit/support_kernels.hpp"

#include <fmt/format.h>

#include <string>

namespace tmagemm::jit {

namespace {

// The codes kernels/reference.cuh's load_as_float and kernels/tuner_check.cuh use: 0 bf16, 1 f16, 2 e4m3, 3 e5m2,
// 4 f32.
int code(DType d) {
  switch (d) {
    case DType::bf16: return 0;
    case DType::f16: return 1;
    case DType::e4m3: return 2;
    case DType::e5m2: return 3;
    default: return 4;
  }
}

KernelSpec spec(const std::string& name, const char* header, const std::string& kernel) {
  KernelSpec s;
  s.name = name;
  s.header = header;
  s.kernel = "tmagemm::kernels::" + kernel;
  return s;
}

}  // namespace

KernelSpec fill_random_spec(DType dtype) {
  return spec(fmt::format("fill_random_{}", code(dtype)), "tuner_check.cuh", fmt::format("fill_random<{}>", code(dtype)));
}

KernelSpec reference_samples_spec(DType a_dtype, DType b_dtype, DType out_dtype, const std::string& epilogue_config,
                                  const std::string& epilogue_suffix) {
  const int in_a = code(a_dtype), in_b = code(b_dtype), out = code(out_dtype);
  // (Inputs of one type keep the name they had before mixed fp8 pairs.)
  const std::string in = in_a == in_b ? fmt::format("{}", in_a) : fmt::format("{}{}", in_a, in_b);
  KernelSpec s = spec(fmt::format("reference_samples_{}_{}{}", in, out, epilogue_suffix), "tuner_check.cuh",
                      fmt::format("reference_samples<{}, {}, {}, TmagemmCheckEpilogue::Epi>", in_a, in_b, out));
  s.extra_source = "struct TmagemmCheckEpilogue {\n" +
                   (epilogue_config.empty() ? std::string("  using Epi = tmagemm::kernels::IdentityEpilogue;\n")
                                            : epilogue_config) +
                   "};\n";
  return s;
}

KernelSpec gather_samples_spec(DType out_dtype) {
  const int out = code(out_dtype);
  return spec(fmt::format("gather_samples_{}", out), "tuner_check.cuh", fmt::format("gather_samples<{}>", out));
}

KernelSpec zero_strided_spec(std::size_t element_bytes) {
  return spec(fmt::format("zero_strided_{}", element_bytes), "fill.cuh",
              fmt::format("zero_strided<{}>", element_bytes));
}

KernelSpec l2_flush_read_spec() { return spec("l2_flush_read", "tuner_check.cuh", "l2_flush_read"); }

KernelSpec repitch16_spec() { return spec("repitch16", "repitch.cuh", "repitch16"); }

KernelSpec epilogue_only_spec(int out_code, const std::string& epilogue_config, const std::string& epilogue_suffix) {
  KernelSpec s = spec(fmt::format("epilogue_only_{}{}", out_code, epilogue_suffix), "fill.cuh",
                      fmt::format("epilogue_only<{}, TmagemmEpilogueOnly::Epi>", out_code));
  s.extra_source = "struct TmagemmEpilogueOnly {\n" + epilogue_config + "};\n";
  s.kernel = fmt::format("tmagemm::kernels::epilogue_only<{}, TmagemmEpilogueOnly::Epi>", out_code);
  return s;
}

std::vector<KernelSpec> support_kernel_specs() {
  std::vector<KernelSpec> all;
  all.push_back(fill_random_spec(DType::f32));
  all.push_back(reference_samples_spec(DType::bf16, DType::bf16, DType::bf16,
                                       "  using Epi = tmagemm::kernels::Epilogue<0, 2, true>;\n", "_e1_2_1"));
  all.push_back(reference_samples_spec(DType::e4m3, DType::e5m2, DType::bf16,
                                       "  using Epi = tmagemm::kernels::Epilogue<0, 0, false, 1, 2>;\n", "_e100r_sr"));
  for (DType in : {DType::bf16, DType::f16, DType::e4m3, DType::e5m2}) {
    all.push_back(fill_random_spec(in));
    for (DType out : {DType::bf16, DType::f16, DType::f32}) all.push_back(reference_samples_spec(in, in, out));
  }
  for (DType out : {DType::bf16, DType::f16, DType::f32}) all.push_back(gather_samples_spec(out));
  for (std::size_t bytes : {2u, 4u}) all.push_back(zero_strided_spec(bytes));
  all.push_back(repitch16_spec());
  all.push_back(l2_flush_read_spec());
  for (int out : {0, 2})
    all.push_back(epilogue_only_spec(out, "  using Epi = tmagemm::kernels::Epilogue<0, 3, true>;\n", "_e1_3_1"));
  return all;
}

}  // namespace tmagemm::jit
