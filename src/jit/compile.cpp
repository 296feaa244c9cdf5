// compile.cpp — KernelSpec -> cubin with NVRTC (embedded kernels/ headers passed from memory, libcu++ from
// the toolkit), fronted by the content-addressed disk cache. Safe to call from many threads at once.
#include <nvrtc.h>
#include <xxhash.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "jit/jit.hpp"
#include "runtime/fault.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::jit {

namespace {

// Bump when the key recipe or the cache record changes meaning.
constexpr const char* kKeySalt = "tmagemm-jit-cubin-v1";

std::atomic<std::uint64_t> g_nvrtc_compiles{0};

void hash_field(XXH64_state_t& state, const void* data, std::size_t size) {
  const std::uint64_t n = size;  // length prefix: ("ab","c") and ("a","bc") hash differently
  XXH64_update(&state, &n, sizeof n);
  XXH64_update(&state, data, size);
}
void hash_field(XXH64_state_t& state, const std::string& s) { hash_field(state, s.data(), s.size()); }

// Hash of every embedded header (name and text). A spec can only include embedded headers (and libcu++,
// which the NVRTC version stands for), so this covers everything the rendered source can pull in.
std::uint64_t embedded_headers_hash() {
  static const std::uint64_t hash = [] {
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    for (const auto& [name, text] : embedded_headers()) {
      hash_field(state, name);
      hash_field(state, text);
    }
    return XXH64_digest(&state);
  }();
  return hash;
}

void nvrtc_version_numbers(int& major, int& minor) {
  static const std::pair<int, int> version = [] {
    int ma = 0, mi = 0;
    if (nvrtcVersion(&ma, &mi) != NVRTC_SUCCESS) ma = mi = -1;
    return std::pair<int, int>(ma, mi);
  }();
  major = version.first;
  minor = version.second;
}

std::string key_for(const KernelSpec& spec, const std::string& arch, bool verbose,
                    const std::vector<std::string>& options) {
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  hash_field(state, std::string(kKeySalt));
  hash_field(state, spec.render());
  hash_field(state, spec.kernel);  // the name expression decides which instance is emitted
  const std::uint64_t headers = embedded_headers_hash();
  hash_field(state, &headers, sizeof headers);
  hash_field(state, arch);
  const std::uint64_t n_options = options.size();
  XXH64_update(&state, &n_options, sizeof n_options);
  for (const std::string& option : options) hash_field(state, option);
  int major = 0, minor = 0;
  nvrtc_version_numbers(major, minor);
  const std::int32_t numbers[3] = {major, minor, verbose ? 1 : 0};
  hash_field(state, numbers, sizeof numbers);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH64_digest(&state)));
  return hex;
}

[[noreturn]] void fail(const KernelSpec& spec, const std::string& what) {
  throw Error(ErrorCode::compile_error, spec.name + ": " + what);
}

void check_nvrtc(nvrtcResult result, const KernelSpec& spec, const char* call) {
  if (result != NVRTC_SUCCESS) fail(spec, std::string(call) + " failed: " + nvrtcGetErrorString(result));
}

struct Program {
  nvrtcProgram prog = nullptr;
  ~Program() {
    if (prog) nvrtcDestroyProgram(&prog);
  }
};

std::string program_log(nvrtcProgram prog) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// The NVRTC compile proper (no cache).
Cubin compile_uncached(const KernelSpec& spec, const std::string& arch, const std::vector<std::string>& options) {
  if (spec.kernel.empty()) fail(spec, "KernelSpec.kernel (the name expression to instantiate) is empty");
  if (arch.rfind("sm_", 0) != 0)
    fail(spec, "architecture \"" + arch + "\" is not a real target (sm_XX[a]); a cubin needs one");

  const auto& headers = embedded_headers();
  std::vector<const char*> header_texts, header_names;
  header_texts.reserve(headers.size());
  header_names.reserve(headers.size());
  for (const auto& [name, text] : headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  const std::string source = spec.render();
  const std::string program_name = (spec.name.empty() ? std::string("kernel") : spec.name) + ".cu";

  Program program;
  check_nvrtc(nvrtcCreateProgram(&program.prog, source.c_str(), program_name.c_str(),
                                 static_cast<int>(headers.size()), header_texts.data(), header_names.data()),
              spec, "nvrtcCreateProgram");
  check_nvrtc(nvrtcAddNameExpression(program.prog, spec.kernel.c_str()), spec, "nvrtcAddNameExpression");

  std::vector<const char*> option_ptrs;
  option_ptrs.reserve(options.size());
  for (const std::string& option : options) option_ptrs.push_back(option.c_str());
  g_nvrtc_compiles.fetch_add(1, std::memory_order_relaxed);
  const nvrtcResult result =
      nvrtcCompileProgram(program.prog, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  Cubin cubin;
  cubin.log = program_log(program.prog);
  if (result != NVRTC_SUCCESS) {
    std::string log = cubin.log.empty() ? std::string(nvrtcGetErrorString(result)) : cubin.log;
    fail(spec, "NVRTC failed:\n" + log);
  }

  std::size_t size = 0;
  check_nvrtc(nvrtcGetCUBINSize(program.prog, &size), spec, "nvrtcGetCUBINSize");
  if (size == 0) fail(spec, "NVRTC produced no cubin for " + arch);
  cubin.image.resize(size);
  check_nvrtc(nvrtcGetCUBIN(program.prog, cubin.image.data()), spec, "nvrtcGetCUBIN");

  const char* lowered = nullptr;
  check_nvrtc(nvrtcGetLoweredName(program.prog, spec.kernel.c_str(), &lowered), spec,
              ("nvrtcGetLoweredName(\"" + spec.kernel + "\")").c_str());
  if (!lowered || !*lowered) fail(spec, "NVRTC returned an empty lowered name for \"" + spec.kernel + "\"");
  cubin.lowered_name = lowered;  // copied before the program (which owns the string) is destroyed
  cubin.from_cache = false;
  return cubin;
}

bool log_enabled() {
  const char* v = std::getenv("TMAGEMM_LOG");
  if (!v) return false;
  const std::string s(v);
  return s.find("jit") != std::string::npos || s.find("all") != std::string::npos;
}

}  // namespace

std::uint64_t nvrtc_compile_count() { return g_nvrtc_compiles.load(); }

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtc_version_numbers(major, minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> nvrtc_options(const KernelSpec& spec, const std::string& arch, bool verbose_resources) {
  const std::string cuda = cuda_home();
  std::vector<std::string> options = {
      "--gpu-architecture=" + arch,
      "-std=c++17",
      "-default-device",
      "-I" + cuda + "/include/cccl",
      "-I" + cuda + "/include",
      "-DNDEBUG",
      // Automatic precompiled headers (NVRTC 12.8+, in this process's PCH heap, nothing on disk): the first
      // compile of a process parses the kernel headers (libcu++ included) and keeps them; later compiles skip
      // most of the C++ front end (~0.8 s -> ~0.1 s a kernel). The kernels' SASS is the same as without it; only
      // internal symbol names in the string table differ (docs/perf-notes.md, "Compile time").
      "-pch",
      "--pch-messages=false",
      "--pch-verbose=false",
  };
  // Line info makes cubins ~13x larger; it is only for profilers' source views (TMAGEMM_JIT_LINEINFO=1).
  if (const char* li = std::getenv("TMAGEMM_JIT_LINEINFO"); li && std::string(li) == "1") options.push_back("-lineinfo");
  // NOTE: no --use_fast_math: kernels keep IEEE division/sqrt and denormals (epilogues compare to references).
  if (verbose_resources) options.push_back("--ptxas-options=-v");
  options.insert(options.end(), spec.options.begin(), spec.options.end());
  return options;
}

std::string cache_key(const KernelSpec& spec, const std::string& arch) { return cache_key(spec, arch, false); }

std::string cache_key(const KernelSpec& spec, const std::string& arch, bool verbose_resources) {
  return key_for(spec, arch, verbose_resources, nvrtc_options(spec, arch, verbose_resources));
}

std::string cache_file(const std::string& key) {
  return (std::filesystem::path(cache_dir()) / "kernels" / (key + ".cubin")).string();
}

Cubin compile(const KernelSpec& spec, const std::string& arch, bool verbose_resources) {
  namespace fs = std::filesystem;
  runtime::inject_compile_fault(spec.name);  // tests only (TMAGEMM_FAULT_INJECT); before the cache, as a failed compile
  const std::vector<std::string> options = nvrtc_options(spec, arch, verbose_resources);
  const std::string key = key_for(spec, arch, verbose_resources, options);

  // The cache is best effort: an unusable directory only means every call compiles.
  const std::string root = cache_dir();
  const fs::path dir = fs::path(root) / "kernels";
  std::error_code ec;
  const bool trusted = cache_dir_refusal(root).empty();
  if (trusted) fs::create_directories(dir, ec);
  const bool cache_usable = trusted && !ec && fs::is_directory(dir, ec);
  const std::string path = (dir / (key + ".cubin")).string();

  if (cache_usable) {
    Cubin cached;
    if (detail::read_cache_file(path, cached)) {
      cached.from_cache = true;
      return cached;
    }
    if (log_enabled() && fs::exists(path, ec))
      std::fprintf(stderr, "tmagemm jit: %s: cache file %s is corrupt; recompiling\n", spec.name.c_str(),
                   path.c_str());
  }

  // A local miss: the fleet's signed cubins (remote.cpp; verbose compiles are never published, their log matters).
  if (Cubin fetched; !verbose_resources && detail::fetch_remote_cubin(key, fetched)) {
    if (cache_usable) detail::write_cache_file(path, fetched);
    return fetched;
  }

  Cubin cubin = compile_uncached(spec, arch, options);
  if (cache_usable && !detail::write_cache_file(path, cubin) && log_enabled())
    std::fprintf(stderr, "tmagemm jit: %s: could not write %s; continuing without the cache\n",
                 spec.name.c_str(), path.c_str());
  return cubin;
}

}  // namespace tmagemm::jit
