// kernel_spec_test.cpp (CPU) — the config struct the kernel backends share (choices/kernel_spec.hpp): its text, and
// that each backend's KernelSpec still renders the text its kernels were compiled (and disk-cached) with.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "choices/fallback.hpp"
#include "choices/kernel_spec.hpp"
#include "choices/persistent_tma.hpp"
#include "choices/skinny.hpp"
#include "cpu/test_support.hpp"

namespace tmagemm::choices {
namespace {


// bf16 mm: row-major A and out, column-major (K-major) B.
GemmProblem problem(int64_t m, int64_t n, int64_t k) { return test_support::fake_mm_problem(m, n, k, true); }

TEST(KernelSpec, RendersOneDeclarationPerLineThenTheEpilogueAndTheCheck) {
  const KernelConfig config{"Cfg", {{int_field("kA", 1), int_field("kB", -2)}, {bool_field("kC", true)}, {}}};
  EXPECT_EQ(render_config(config, EpilogueSpec{}),
            "struct Cfg {\n"
            "  static constexpr int kA = 1, kB = -2;\n"
            "  static constexpr bool kC = true;\n"
            "  using Epi = tmagemm::kernels::Epilogue<-1, 0, false>;\n"
            "};\n");
  const SmemCheck smem{"Host::smem", "dev::smem", 1024};
  const jit::KernelSpec s = config_kernel_spec("name", "h.cuh", "ns::kernel", config, EpilogueSpec{0, 2, true}, &smem);
  EXPECT_EQ(s.name, "name");
  EXPECT_EQ(s.header, "h.cuh");
  EXPECT_EQ(s.kernel, "ns::kernel<Cfg>");
  EXPECT_EQ(s.extra_source,
            "struct Cfg {\n"
            "  static constexpr int kA = 1, kB = -2;\n"
            "  static constexpr bool kC = true;\n"
            "  using Epi = tmagemm::kernels::Epilogue<0, 2, true>;\n"
            "};\n"
            "// The host launches with Host::smem; the kernel's own count must agree.\n"
            "static_assert(dev::smem<Cfg>() == 1024, \"smem size drift\");\n");
}

// The texts below are those the backends rendered before they shared the renderer (plus the fp8 fields, 0 for 16-bit
// inputs, kStreamK, kOutPlain and kClusterK): the kernel cache's keys hash them.
TEST(KernelSpec, PersistentTmaTextIsUnchanged) {
  const TmaConfig& c = persistent_tma_configs().front();  // 128x256x64, 4 stages, 2 consumers, direct stores
  const jit::KernelSpec s = persistent_tma_spec(problem(4096, 4096, 4096), c);
  EXPECT_EQ(s.name, "persistent_tma_128x256x64_s4_c2_g8_bf16_rc_bf16");
  EXPECT_EQ(s.header, "gemm_persistent_tma.cuh");
  EXPECT_EQ(s.kernel, "tmagemm::kernels::gemm_persistent_tma<TmagemmTmaConfig>");
  EXPECT_EQ(s.extra_source,
            "struct TmagemmTmaConfig {\n"
            "  static constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4, kConsumers = 2, kGroupM = 8;\n"
            "  static constexpr bool kSplitN = false;\n"
            "  static constexpr int kStagingChunks = 2;\n"
            "  static constexpr int kClusterM = 1, kClusterN = 1, kClusterK = 1;\n"
            "  static constexpr bool kStoreTma = false, kOutPlain = false;\n"
            "  static constexpr bool kAKMajor = true, kBKMajor = true, kF16 = false;\n"
            "  static constexpr int kFp8A = 0, kFp8B = 0, kPromote = 0, kPromoteCols = 0;\n"
            "  static constexpr int kOut = 0, kProducerRegs = 40, kConsumerRegs = 232;\n"
            "  static constexpr bool kTrace = false, kGrouped = false, kStreamK = false, kPingPong = false;\n"
            "  using Epi = tmagemm::kernels::Epilogue<-1, 0, false>;\n"
            "};\n");
}

TEST(KernelSpec, SkinnyTextIsUnchanged) {
  const SkinnyConfig& c = skinny_configs().front();  // 128x64, 4 stages
  const jit::KernelSpec s = skinny_spec(problem(16, 4096, 4096), c);
  EXPECT_EQ(s.name, "skinny_128x64_st4_m32_bf16_rc_bf16");
  EXPECT_EQ(s.kernel, "tmagemm::kernels::gemm_skinny<TmagemmSkinnyConfig>");
  EXPECT_EQ(s.extra_source,
            fmt::format("struct TmagemmSkinnyConfig {{\n"
                        "  static constexpr int kBN = 128, kBK = 64, kStages = 4, kMP = 32;\n"
                        "  static constexpr bool kF16 = false;\n"
                        "  static constexpr int kFp8A = 0, kFp8B = 0, kPromote = 0;\n"
                        "  static constexpr int kOut = 0;\n"
                        "  static constexpr bool kAKMajor = true, kBKMajor = true;\n"
                        "  static constexpr bool kTrace = false;\n"
                        "  using Epi = tmagemm::kernels::Epilogue<-1, 0, false>;\n"
                        "}};\n"
                        "// The host launches with SkinnyConfig::smem_bytes; the kernel's own count must agree.\n"
                        "static_assert(tmagemm::kernels::skinny_smem_bytes<TmagemmSkinnyConfig>() == {}, \"smem size "
                        "drift\");\n",
                        c.smem_bytes(32, true)));
}

TEST(KernelSpec, FallbackTextIsUnchanged) {
  const FallbackConfig& c = fallback_configs().front();  // 128x128x32, 2x4 warps
  const jit::KernelSpec s = fallback_spec(problem(1000, 1000, 1000), c);
  EXPECT_EQ(s.name, "fallback_128x128x32_w2x4_bf16_a0b0_bf16");
  EXPECT_EQ(s.kernel, "tmagemm::kernels::gemm_fallback<TmagemmFallbackConfig>");
  EXPECT_EQ(s.extra_source,
            fmt::format("struct TmagemmFallbackConfig {{\n"
                        "  static constexpr int kBM = 128, kBN = 128, kBK = 32, kWarpsM = 2, kWarpsN = 4;\n"
                        "  static constexpr bool kF16 = false;\n"
                        "  static constexpr int kOut = 0, kAMode = 0, kBMode = 0;\n"
                        "  using Epi = tmagemm::kernels::Epilogue<-1, 0, false>;\n"
                        "}};\n"
                        "// The host launches with FallbackConfig::smem_bytes; the kernel's own count must agree.\n"
                        "static_assert(tmagemm::kernels::fallback_smem_bytes<TmagemmFallbackConfig>() == {}, \"smem "
                        "size drift\");\n",
                        c.smem_bytes(0, 0)));
}

}  // namespace
}  // namespace tmagemm::choices
