// compile_test.cpp — NVRTC compiles through jit::compile (no GPU needed): the probe for sm_90a, compile
// errors, the disk cache (hit, corrupt file, two processes racing, unwritable directory), verbose resource
// reports, and load() on machines with or without a GPU. Every test uses its own TMAGEMM_CACHE_DIR.
// Heavy compiles (the ones that include <cuda/ptx>) are kept to about seven.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "jit/jit.hpp"
#include "runtime/device.hpp"
#include "tmagemm/error.hpp"
#include "cpu/test_support.hpp"


extern char** environ;

namespace fs = std::filesystem;
using namespace tmagemm;

using tmagemm::test_support::EnvGuard;
using tmagemm::test_support::TempDir;
using tmagemm::test_support::read_all;
using tmagemm::test_support::write_all;

namespace {

constexpr const char* kArch = "sm_90a";
constexpr const char* kHelperEnv = "TMAGEMM_JIT_TEST_HELPER";

bool is_elf(const std::vector<char>& image) {
  return image.size() > 4 && image[0] == 0x7f && image[1] == 'E' && image[2] == 'L' && image[3] == 'F';
}

// The sections of a cubin (ELF64) by name, their bytes, leaving out the symbol and string tables: with NVRTC's
// automatic precompiled headers, the names of internal-linkage entities from the headers carry an id of the
// compile that built the PCH, so two compiles of one kernel may differ there and nowhere else.
std::vector<std::pair<std::string, std::string>> code_sections(const std::vector<char>& image) {
  auto read = [&](std::size_t off, std::size_t n) -> std::uint64_t {
    std::uint64_t v = 0;
    if (off + n > image.size()) throw std::runtime_error("cubin: ELF read out of bounds");
    std::memcpy(&v, image.data() + off, n);  // little-endian, as the ELF says (EI_DATA checked below)
    return v;
  };
  if (!is_elf(image) || image.size() < 64 || image[4] != 2 || image[5] != 1)
    throw std::runtime_error("cubin: not a little-endian ELF64");
  const std::uint64_t shoff = read(0x28, 8), shentsize = read(0x3a, 2), shnum = read(0x3c, 2),
                      shstrndx = read(0x3e, 2);
  auto header = [&](std::uint64_t i) { return shoff + i * shentsize; };
  const std::uint64_t names = read(header(shstrndx) + 0x18, 8);
  std::vector<std::pair<std::string, std::string>> out;
  for (std::uint64_t i = 1; i < shnum; ++i) {
    const std::uint64_t h = header(i), type = read(h + 4, 4), off = read(h + 0x18, 8), size = read(h + 0x20, 8);
    if (type == 2 /* SHT_SYMTAB */ || type == 3 /* SHT_STRTAB */) continue;
    const std::uint64_t name_at = names + read(h, 4);
    if (name_at >= image.size()) throw std::runtime_error("cubin: section name out of bounds");
    const std::string name(image.data() + name_at, strnlen(image.data() + name_at, image.size() - name_at));
    const bool nobits = type == 8;
    if (!nobits && off + size > image.size()) throw std::runtime_error("cubin: section out of bounds");
    out.emplace_back(name, nobits ? std::to_string(size) : std::string(image.data() + off, size));
  }
  return out;
}

// The probe compiled once per process into its own cache directory: the first real compile of the run.
struct Seed {
  TempDir dir;
  jit::Cubin first;   // compile() on the empty directory
  double seconds = 0;
  std::string key;
  fs::path file;
};
const Seed& seed() {
  static const std::unique_ptr<Seed> s = [] {  // destroyed at exit, which removes its directory
    auto seed = std::make_unique<Seed>();
    EnvGuard cache("TMAGEMM_CACHE_DIR", seed->dir.path().string());
    const auto t0 = std::chrono::steady_clock::now();
    seed->first = jit::compile(jit::probe_spec(), kArch);
    seed->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    seed->key = jit::cache_key(jit::probe_spec(), kArch);
    seed->file = jit::cache_file(seed->key);
    std::cout << "[ jit      ] probe compile for " << kArch << ": " << seed->seconds << " s, "
              << seed->first.image.size() << " byte cubin\n";
    return seed;
  }();
  return *s;
}

// Copies the seeded probe cubin into `dir` (as TMAGEMM_CACHE_DIR) and returns the file's path there.
fs::path plant_seed(const fs::path& dir) {
  const fs::path target = dir / "kernels" / seed().file.filename();
  fs::create_directories(target.parent_path());
  fs::copy_file(seed().file, target, fs::copy_options::overwrite_existing);
  return target;
}

jit::KernelSpec tiny_spec(const std::string& name, const std::string& body) {
  jit::KernelSpec spec;  // no header: nothing from libcu++, so NVRTC takes a fraction of a second
  spec.name = name;
  spec.kernel = name;
  spec.extra_source = "__global__ void " + name + "(int* out) { " + body + " }\n";
  return spec;
}

}  // namespace

TEST(JitCompile, ProbeForSm90aIsAnElfCubinWithALoweredName) {
  const Seed& s = seed();
  EXPECT_FALSE(s.first.from_cache);
  ASSERT_TRUE(is_elf(s.first.image)) << s.first.image.size() << " bytes";
  EXPECT_FALSE(s.first.lowered_name.empty());
  EXPECT_NE(s.first.lowered_name.find("probe_kernel"), std::string::npos) << s.first.lowered_name;
  EXPECT_TRUE(fs::is_regular_file(s.file)) << s.file;
  EXPECT_EQ(s.file.parent_path().parent_path(), s.dir.path());
}

TEST(JitCompile, SecondCompileIsACacheHitWithTheSameImage) {
  const Seed& s = seed();
  EnvGuard cache("TMAGEMM_CACHE_DIR", s.dir.path().string());
  const jit::Cubin again = jit::compile(jit::probe_spec(), kArch);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.image, s.first.image);
  EXPECT_EQ(again.lowered_name, s.first.lowered_name);
  EXPECT_TRUE(again.log.empty());
}

TEST(JitCompile, SyntaxErrorThrowsCompileErrorWithTheNvrtcLog) {
  TempDir dir;
  EnvGuard cache("TMAGEMM_CACHE_DIR", dir.path().string());
  jit::KernelSpec spec = tiny_spec("broken", "int x = ;");
  try {
    jit::compile(spec, kArch);
    FAIL() << "compile of a syntax error succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::compile_error);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("broken: NVRTC failed:\n"), std::string::npos) << msg;
    EXPECT_NE(msg.find("error: expected an expression"), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(jit::cache_file(jit::cache_key(spec, kArch))));
}

TEST(JitCompile, NonRealArchitectureIsRejected) {
  try {
    jit::compile(jit::probe_spec(), "compute_90a");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::compile_error);
    EXPECT_NE(std::string(e.what()).find("compute_90a"), std::string::npos) << e.what();
  }
}

TEST(JitCompile, UnknownKernelNameIsACompileError) {
  TempDir dir;
  EnvGuard cache("TMAGEMM_CACHE_DIR", dir.path().string());
  jit::KernelSpec spec = tiny_spec("named", "*out = 1;");
  spec.kernel = "no_such_kernel";
  try {
    jit::compile(spec, kArch);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::compile_error);
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
  }
}

TEST(JitCompile, Sm90aKernelFromExtraSourceWithVerboseResourceReport) {
  TempDir dir;
  EnvGuard cache("TMAGEMM_CACHE_DIR", dir.path().string());
  jit::KernelSpec spec;
  spec.name = "extra_sm90a";
  spec.header = "probe.cuh";  // brings <cuda/ptx> and <cuda/std/cstdint>
  spec.kernel = "tmagemm_test::extra_kernel<3>";
  spec.extra_source = R"(
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "sm_90a feature macro missing"
#endif
namespace tmagemm_test {
template <int N>
__global__ void __launch_bounds__(128, 1) extra_kernel(int* out) {
  __shared__ alignas(8) cuda::std::uint64_t bar;
  if (threadIdx.x == 0) cuda::ptx::mbarrier_init(&bar, 1u);
  __syncthreads();
  if (threadIdx.x == 0) (void)cuda::ptx::mbarrier_arrive(&bar);
  while (!cuda::ptx::mbarrier_try_wait_parity(&bar, 0u)) {}
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  if (threadIdx.x == 0) out[0] = N + tmagemm::kernels::kProbeSm90a;
}
}  // namespace tmagemm_test
)";
  const jit::Cubin cubin = jit::compile(spec, kArch, /*verbose_resources=*/true);
  EXPECT_FALSE(cubin.from_cache);
  EXPECT_TRUE(is_elf(cubin.image));
  EXPECT_NE(cubin.lowered_name.find("extra_kernel"), std::string::npos) << cubin.lowered_name;
  EXPECT_NE(cubin.log.find("registers"), std::string::npos) << cubin.log;
  // Cached under the verbose key, not the plain one.
  EXPECT_TRUE(fs::exists(jit::cache_file(jit::cache_key(spec, kArch, true))));
  EXPECT_FALSE(fs::exists(jit::cache_file(jit::cache_key(spec, kArch, false))));
}

TEST(JitCache, CorruptFileIsDetectedRecompiledAndRewritten) {
  TempDir dir;
  EnvGuard cache("TMAGEMM_CACHE_DIR", dir.path().string());
  const fs::path file = plant_seed(dir.path());
  ASSERT_EQ(fs::path(jit::cache_file(seed().key)), file);
  ASSERT_TRUE(jit::compile(jit::probe_spec(), kArch).from_cache);  // the planted copy is valid
  const std::string good = read_all(file);

  // Truncated (a writer that died half way, a full disk).
  fs::resize_file(file, good.size() / 2);
  jit::Cubin rebuilt = jit::compile(jit::probe_spec(), kArch);
  EXPECT_FALSE(rebuilt.from_cache);
  EXPECT_TRUE(is_elf(rebuilt.image));
  jit::Cubin on_disk;
  EXPECT_TRUE(jit::detail::read_cache_file(file.string(), on_disk)) << "file not rewritten";
  EXPECT_EQ(on_disk.image, rebuilt.image);

  // One flipped byte in the middle of the image: the checksum catches it.
  std::string bytes = read_all(file);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
  write_all(file, bytes);
  rebuilt = jit::compile(jit::probe_spec(), kArch);
  EXPECT_FALSE(rebuilt.from_cache);
  EXPECT_TRUE(jit::compile(jit::probe_spec(), kArch).from_cache);  // fixed on disk
}

// Helper run in child processes by TwoProcessesCompilingOneKeyLeaveOneValidFile; skipped otherwise.
TEST(JitCacheHelper, CompileProbeIntoEnvCacheDir) {
  if (std::getenv(kHelperEnv) == nullptr) GTEST_SKIP() << "helper for JitCache.TwoProcesses* (needs " << kHelperEnv << ")";
  const jit::Cubin cubin = jit::compile(jit::probe_spec(), kArch);
  EXPECT_TRUE(is_elf(cubin.image));
}

TEST(JitCache, TwoProcessesCompilingOneKeyLeaveOneValidFile) {
  TempDir dir;
  const fs::path cache_dir = dir.path() / "cache";
  fs::create_directories(cache_dir);
  EnvGuard cache("TMAGEMM_CACHE_DIR", cache_dir.string());
  EnvGuard helper(kHelperEnv, std::string("1"));

  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    const std::string log = (dir.path() / ("child" + std::to_string(i) + ".log")).string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    std::string binary = TMAGEMM_TEST_HELPER;
    std::string filter = "--gtest_filter=JitCacheHelper.CompileProbeIntoEnvCacheDir";
    char* argv[] = {binary.data(), filter.data(), nullptr};
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_EQ(rc, 0) << "posix_spawn " << binary;
    children.push_back(pid);
  }
  for (std::size_t i = 0; i < children.size(); ++i) {
    int status = 0;
    ASSERT_EQ(::waitpid(children[i], &status, 0), children[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << i << " failed:\n"
        << read_all(dir.path() / ("child" + std::to_string(i) + ".log"));
  }

  int cubins = 0;
  for (const auto& e : fs::directory_iterator(cache_dir / "kernels")) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "leftover " << name;
    if (e.path().extension() == ".cubin") ++cubins;
  }
  EXPECT_EQ(cubins, 1);
  const jit::Cubin hit = jit::compile(jit::probe_spec(), kArch);
  EXPECT_TRUE(hit.from_cache);
  EXPECT_TRUE(is_elf(hit.image));
}

TEST(JitCache, UnwritableCacheDirStillCompiles) {
  TempDir dir;
  std::ofstream(dir.path() / "not_a_dir") << "x";  // a file where a directory should be: even root cannot write
  EnvGuard cache("TMAGEMM_CACHE_DIR", (dir.path() / "not_a_dir" / "cache").string());
  const jit::Cubin cubin = jit::compile(jit::probe_spec(), kArch);
  EXPECT_FALSE(cubin.from_cache);
  EXPECT_TRUE(is_elf(cubin.image));
  EXPECT_EQ(code_sections(cubin.image), code_sections(seed().first.image));  // the same kernel, recompiled
  EXPECT_EQ(cubin.lowered_name, seed().first.lowered_name);
}

TEST(JitCache, ThreadsCompilingAtOnceShareOneDirectory) {
  TempDir dir;
  EnvGuard cache("TMAGEMM_CACHE_DIR", dir.path().string());
  plant_seed(dir.path());
  const std::vector<jit::KernelSpec> specs = {tiny_spec("tiny_a", "*out = 1;"), tiny_spec("tiny_b", "*out = 2;"),
                                              jit::probe_spec()};
  constexpr int kThreads = 6;
  std::vector<jit::Cubin> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        results[t] = jit::compile(specs[t % specs.size()], kArch);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(errors[t].empty()) << errors[t];
    EXPECT_TRUE(is_elf(results[t].image)) << t;
  }
  EXPECT_TRUE(results[2].from_cache);  // the probe was planted
  int cubins = 0;
  for (const auto& e : fs::directory_iterator(dir.path() / "kernels")) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
    ++cubins;
  }
  EXPECT_EQ(cubins, 3);
  for (const auto& spec : specs) EXPECT_TRUE(jit::compile(spec, kArch).from_cache) << spec.name;
}

TEST(JitLoad, LoadsOnAGpuOrThrowsCudaErrorWithout) {
  TempDir dir;
  EnvGuard cache("TMAGEMM_CACHE_DIR", dir.path().string());
  plant_seed(dir.path());
  if (runtime::device_count() == 0) {
    try {
      jit::load(jit::probe_spec(), 0, 0);
      FAIL() << "load without a GPU succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::cuda_error) << e.what();
    }
    return;
  }
  const CUfunction f = jit::load(jit::probe_spec(), 0, 0);
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(jit::load(jit::probe_spec(), 0, 100 * 1024), f);  // memoised; raises the smem limit
  int max_dynamic = 0;
  ASSERT_EQ(runtime::driver().func_get_attribute(&max_dynamic, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f),
            CUDA_SUCCESS);
  EXPECT_EQ(max_dynamic, 100 * 1024);
}
