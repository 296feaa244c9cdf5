// cache_dir_test.cpp — jit::cache_dir_refusal (src/jit/spec.cpp): a cache dir, or its kernels/, that another user owns
// or that its group or every user may write is refused (as ssh refuses such key files), and compile() then neither
// reads nor writes cubins there; a private directory is used as before; the cache tools (`tmagemm cache`, and through
// jit::check_cache_dir_for_tools the Python package's tmagemm.cache) refuse what the library refuses. CPU test (NVRTC
// compiles the probe kernel).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "jit/jit.hpp"
#include "tmagemm/error.hpp"
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

TEST(JitCacheDir, CacheToolsRefuseWhatTheLibraryRefuses) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);
  EXPECT_NO_THROW(jit::check_cache_dir_for_tools(dir.path().string()));
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  try {
    jit::check_cache_dir_for_tools(dir.path().string());
    ADD_FAILURE() << "a world-writable cache dir was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("cache dir refused: " + dir.path().string() + " is writable by every user"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("TMAGEMM_CACHE_DIR"), std::string::npos) << e.what();
  }
}

#ifdef TMAGEMM_CLI
// `tmagemm cache ls|export|clear` on a refused dir: exit 1 with the reason, nothing read or removed.
TEST(JitCacheDir, CacheCommandRefusesAWorldWritableDir) {
  TempDir dir;
  fs::create_directories(dir.path() / "kernels");
  std::ofstream(dir.path() / "kernels" / "0123456789abcdef.cubin") << "x";
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  for (const char* command : {"ls", "export -", "clear"}) {
    const std::string line = "TMAGEMM_CACHE_DIR='" + dir.path().string() + "' '" + TMAGEMM_CLI + "' cache " + command +
                             " 2>&1";
    FILE* pipe = ::popen(line.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, pipe)) out += buf;
    const int status = ::pclose(pipe);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << command << ": " << out;
    EXPECT_NE(out.find("cache dir refused: " + dir.path().string() + " is writable by every user"), std::string::npos)
        << command << ": " << out;
  }
  EXPECT_TRUE(fs::exists(dir.path() / "kernels" / "0123456789abcdef.cubin")) << "clear removed a file";
  EXPECT_FALSE(fs::exists(dir.path() / "tuning.sqlite"));
  ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);  // private: the same commands work
  const std::string line = "TMAGEMM_CACHE_DIR='" + dir.path().string() + "' '" + TMAGEMM_CLI + "' cache ls 2>&1";
  FILE* pipe = ::popen(line.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  EXPECT_EQ(::pclose(pipe), 0) << out;
  EXPECT_NE(out.find("1 cubin"), std::string::npos) << out;
}
#endif

}  // namespace
