// jit.hpp — run-time compilation of kernel templates (kernels/*.cuh, embedded in the library) with NVRTC,
// an on-disk cubin cache keyed by content hash, and module loading through driver entry points.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "jit/modules.hpp"

namespace tmagemm::jit {

// What to compile: one instantiation of one kernel template.
struct KernelSpec {
  std::string name;                  // printable, e.g. "persistent_tma_128x256x64_s4_c2_bf16_rc"
  std::string header;                // embedded kernels/ header to include, e.g. "gemm_persistent_tma.cuh"
  std::string kernel;                // name expression of the __global__ template instance,
                                     // e.g. "tmagemm::kernels::gemm_persistent_tma<Cfg>"
  std::string extra_source;          // inserted after the include (e.g. a config struct or epilogue functor)
  std::vector<std::string> options;  // extra NVRTC options (e.g. "-DTMAGEMM_X=1")

  std::string render() const;        // the whole translation unit handed to NVRTC
};

struct Cubin {
  std::vector<char> image;     // the sm_XX cubin
  std::string lowered_name;    // mangled name of `kernel` (from nvrtcGetLoweredName)
  std::string log;             // NVRTC log (warnings, -Xptxas -v resource report when asked)
  bool from_cache = false;     // from the disk cache, or from the remote cache (then from_remote too)
  bool from_remote = false;    // fetched from the remote cache on a local miss (jit/remote.cpp)
};

// Embedded kernel headers: (path relative to kernels/, text). Generated at build time.
const std::vector<std::pair<std::string, std::string>>& embedded_headers();

// Directory of the cubin cache and tuning DB: $TMAGEMM_CACHE_DIR, else $HOME/.cache/tmagemm. Created on demand.
std::string cache_dir();
// Why the cache dir must not be used, or "" when it may: like ssh with its keys, a cache directory (or its kernels/)
// that another user owns, or that its group or every user may write, is refused — a cubin is code that runs on the
// GPU. A refusal is reported on stderr once per directory; the callers then compile without the disk cache and keep
// tuning results in memory. A directory that does not exist (yet) is not refused here.
std::string cache_dir_refusal(const std::string& dir);
// cache_dir_refusal's reason, without the report on stderr.
std::string cache_dir_untrusted(const std::string& dir);
// For the tools that read and change the caches (`tmagemm cache`, the Python package's tmagemm.cache): throws
// Error(invalid_argument) with the reason when the library refuses `dir`, so that they refuse what it refuses.
void check_cache_dir_for_tools(const std::string& dir);

// Root of the CUDA toolkit used for libcu++ headers: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda (first that has
// include/cccl/cuda/ptx). Throws Error(compile_error) saying what was searched when none is found.
std::string cuda_home();

// Content hash of (rendered source, arch, options, NVRTC version) as 16 hex digits.
std::string cache_key(const KernelSpec& spec, const std::string& arch);

// Compile for `arch` (e.g. "sm_90a"), going through the disk cache, then (on a local miss, with
// TMAGEMM_REMOTE_CACHE and its key set) the remote cache's signed cubins. Throws Error(compile_error) with the
// NVRTC log. A truncated or corrupt cache file is detected (checksum) and rebuilt.
// verbose_resources adds --ptxas-options=-v and bypasses nothing else (log carries the report).
Cubin compile(const KernelSpec& spec, const std::string& arch, bool verbose_resources = false);

// Compile (or fetch) and load on `device`; memoised per (key, device) in the module registry (modules.hpp), and kept
// there for the life of the process. The returned function has max dynamic shared memory set to
// `dynamic_smem_bytes` when > 48 KiB.
CUfunction load(const KernelSpec& spec, int device, std::size_t dynamic_smem_bytes);
// The same, as a LoadedFunction whose module is kept only once it is used outside a tuning (modules.hpp): a tuning
// pins it, and once idle the registry may unload it. Holders ask jit::use() before each launch.
LoadedFunction acquire(const KernelSpec& spec, int device, std::size_t dynamic_smem_bytes);

// A few loaded support kernels by a cheap key of their own (element size, device, ...), so that a repeated launch
// renders and hashes no KernelSpec: the first get() for a key calls make_spec() and load(); later ones return the
// same function. Thread-safe; entries are never dropped (load() keeps their modules).
template <class Key>
class LoadedKernels {
 public:
  template <class MakeSpec>
  CUfunction get(const Key& key, int device, std::size_t dynamic_smem_bytes, MakeSpec&& make_spec) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
    }
    CUfunction fn = load(make_spec(), device, dynamic_smem_bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    loaded_.emplace(key, fn);
    return fn;
  }

 private:
  std::mutex mutex_;
  std::map<Key, CUfunction> loaded_;
};

// A tiny sm_90a kernel (kernels/probe.cuh) that uses wgmma.fence and a cuda::ptx mbarrier: proves that NVRTC,
// libcu++ and the embedded headers work together. compile-check compiles it when no backend has kernels.
KernelSpec probe_spec();

// ---- Additions (declarations only; the ones above are the contract) ----

// cache_key with the verbose flag folded in: verbose compiles (--ptxas-options=-v) are cached under their own
// key. cache_key(spec, arch) == cache_key(spec, arch, false). compile() uses this one.
std::string cache_key(const KernelSpec& spec, const std::string& arch, bool verbose_resources);
// <cache_dir()>/kernels/<key>.cubin — where compile() keeps the cubin of `key`.
std::string cache_file(const std::string& key);
// The full NVRTC option list compile() passes for (spec, arch, verbose): the fixed options, then spec.options.
std::vector<std::string> nvrtc_options(const KernelSpec& spec, const std::string& arch,
                                       bool verbose_resources = false);
// NVRTC version as "major.minor" (from nvrtcVersion).
std::string nvrtc_version();
// How many NVRTC compilations this process has started (tests: proof that a cubin came from a cache).
std::uint64_t nvrtc_compile_count();

// The remote cache's cubins (jit/remote.cpp; the store is runtime/remote_store.hpp). Cubins are shared only when
// TMAGEMM_REMOTE_CACHE_KEY is set: a cubin is code that runs on the GPU, so one from the server is used only when its
// HMAC verifies. Published after tuning by the tuner for the winner's kernels (Choice::kernel_specs): the cubin of
// (spec, arch) from the disk cache (compiled when it is not there) under "tmagemm:v1:cubin:<cache_key>". False
// when nothing was published (no key, no server, any trouble); never throws for the server's sake.
bool publish_cubin(const KernelSpec& spec, const std::string& arch);
// The Redis key of the cubin with content hash `key`.
std::string remote_cubin_key(const std::string& key);

// The cubins of the kernel cache (<cache_dir()>/kernels/*.cubin; writers' temporary files are left alone), for
// `tmagemm cache` and the Python package's tmagemm.cache.
struct KernelCacheFiles {
  std::string dir;                 // <cache_dir()>/kernels
  std::vector<std::string> files;  // full paths
  std::uintmax_t bytes = 0;        // their total size
};
KernelCacheFiles kernel_cache_files();
// Removes every cubin of kernel_cache_files(); what could not be removed is returned as "<path>: <reason>".
// `removed` gets the count and total size of what was removed.
std::vector<std::string> clear_kernel_cache(KernelCacheFiles& removed);

namespace detail {
// Cubin cache file (<key>.cubin), all integers little-endian:
//   "TMGMCUB1" | u32 name length | lowered name | u64 image size | image | u64 XXH64(name bytes + image bytes)
std::string encode_cache_file(const Cubin& cubin);
// False (and `out` untouched) unless `bytes` is exactly one well-formed record with a matching checksum.
bool decode_cache_file(const std::string& bytes, Cubin& out);
// False when the file is missing, unreadable, short, has a bad magic or checksum (all mean "cache miss").
bool read_cache_file(const std::string& path, Cubin& out);
// Writes "<path>.tmp.<pid>.<thread>.<n>" then renames it over `path` (atomic on POSIX). False when the
// directory is not writable; never throws for I/O problems, never leaves the temporary behind.
bool write_cache_file(const std::string& path, const Cubin& cubin);
// compile()'s remote step on a local miss: the signed cubin of `key` from the remote cache, decoded and checked
// (record checksum, an ELF image); false on a miss, without a key, on a rejected value or any trouble.
bool fetch_remote_cubin(const std::string& key, Cubin& out);
}  // namespace detail

}  // namespace tmagemm::jit
