// cache_dir_test.cpp — jit::cache_dir_refusal (src/jit/spec.cpp): a cache dir, or its kernels/, that another user owns
// or that its group or every user may write is refused (as ssh refuses such key files), and compile() then neither
// reads nor writes cubins there; a private directory is used as before. CPU test (NVRTC compiles the probe kernel).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "jit/jit.hpp"
#include "cpu/test_support.hpp"

namespace {

using namespace tmagemm;
using tmagemm::test_support::EnvGuard;
using tmagemm::test_support::TempDir;
namespace fs = std::filesystem;

std::size_t cubins_in(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir / "kernels", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".cubin") ++n;
  return n;
}

TEST(JitCacheDir, WritableByOthersIsRefusedAndNotUsed) {
  for (const mode_t mode : {mode_t{0777}, mode_t{0770}, mode_t{0722}}) {
    TempDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), mode), 0);
    EnvGuard cache("TMAGEMM_CACHE_DIR", dir.path().string());
    const std::string why = jit::cache_dir_refusal(dir.path().string());
    EXPECT_NE(why.find("writable by"), std::string::npos) << why;
    EXPECT_NE(why.find(dir.path().string()), std::string::npos) << why;
    EXPECT_FALSE(jit::compile(jit::probe_spec(), "sm_90a").from_cache);
    EXPECT_FALSE(jit::compile(jit::probe_spec(), "sm_90a").from_cache) << "nothing was stored";
    EXPECT_EQ(cubins_in(dir.path()), 0u);
  }
}

TEST(JitCacheDir, WritableKernelsSubdirIsRefused) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);
  fs::create_directories(dir.path() / "kernels");
  ASSERT_EQ(::chmod((dir.path() / "kernels").c_str(), 0777), 0);
  const std::string why = jit::cache_dir_refusal(dir.path().string());
  EXPECT_NE(why.find("kernels is writable by every user"), std::string::npos) << why;
}

TEST(JitCacheDir, PrivateDirIsUsed) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);
  EnvGuard cache("TMAGEMM_CACHE_DIR", dir.path().string());
  EXPECT_EQ(jit::cache_dir_refusal(dir.path().string()), "");
  jit::compile(jit::probe_spec(), "sm_90a");
  EXPECT_TRUE(jit::compile(jit::probe_spec(), "sm_90a").from_cache);
  EXPECT_EQ(cubins_in(dir.path()), 1u);
  EXPECT_EQ(jit::cache_dir_refusal((dir.path() / "missing").string()), "") << "a dir not made yet is not refused";
}

TEST(JitCacheDir, OwnedByAnotherUserIsRefused) {
  // As root: hand a fresh directory to 'nobody'. Otherwise: "/" is root's.
  TempDir dir;
  fs::path other = "/";
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(dir.path().c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);
    other = dir.path();
  }
  const std::string why = jit::cache_dir_refusal(other.string());
  EXPECT_NE(why.find("is owned by uid"), std::string::npos) << why;
  EXPECT_NE(why.find("not by this process's user"), std::string::npos) << why;
}

}  // namespace
