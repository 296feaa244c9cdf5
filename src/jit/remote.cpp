// remote.cpp — cubins in the fleet-wide cache (runtime/remote_store.hpp): the tuner publishes its winner's cubins,
// and compile() fetches one on a local miss instead of running NVRTC. A cubin is code that runs on the GPU, so it is
// shared only with TMAGEMM_REMOTE_CACHE_KEY set: published signed, and used from the server only when its signature
// verifies (the store checks it) and it decodes as the disk cache's record with a matching checksum and an ELF
// image. Without a key kernels always compile locally.
#include <cstring>
#include <exception>
#include <string>

#include "jit/jit.hpp"
#include "runtime/remote_store.hpp"

namespace tmagemm::jit {

namespace {

// Far above any kernel's cubin (the largest persistent-TMA ones are a few hundred KiB; -lineinfo ~13x that).
constexpr std::size_t kMaxCubinBytes = std::size_t{64} << 20;

}  // namespace

std::string remote_cubin_key(const std::string& key) { return "tmagemm:v1:cubin:" + key; }

bool publish_cubin(const KernelSpec& spec, const std::string& arch) {
  namespace remote = runtime::remote;
  if (!remote::signing()) return false;
  try {
    const Cubin cubin = compile(spec, arch);  // after a tuning: the disk cache's copy
    return remote::publish(remote_cubin_key(cache_key(spec, arch)), detail::encode_cache_file(cubin));
  } catch (const std::exception&) {
    return false;  // it compiled for the tuning but not now (e.g. a fault injected by a test): nothing to share
  }
}

namespace detail {

bool fetch_remote_cubin(const std::string& key, Cubin& out) {
  namespace remote = runtime::remote;
  if (!remote::signing()) return false;
  const std::string rkey = remote_cubin_key(key);
  const std::optional<std::string> body = remote::fetch(rkey, kMaxCubinBytes);
  if (!body) return false;
  Cubin cubin;
  if (!decode_cache_file(*body, cubin)) {
    remote::reject(rkey, "not a cubin record (bad header, length or checksum)");
    return false;
  }
  if (cubin.image.size() < 4 || std::memcmp(cubin.image.data(), "\x7f" "ELF", 4) != 0) {
    remote::reject(rkey, "the image is not an ELF file");
    return false;
  }
  cubin.from_cache = true;
  cubin.from_remote = true;
  out = std::move(cubin);
  return true;
}

}  // namespace detail

}  // namespace tmagemm::jit
