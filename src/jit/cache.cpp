// cache.cpp — the on-disk cubin record: encoding, checksum-verified decoding, and atomic (temp + rename)
// writes, so that concurrent processes and threads sharing a cache directory never see a partial file; and the
// listing and clearing of the cache's cubins.
#include <xxhash.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <system_error>
#include <thread>

#include "jit/jit.hpp"

namespace tmagemm::jit::detail {

namespace {

constexpr char kMagic[8] = {'T', 'M', 'G', 'M', 'C', 'U', 'B', '1'};

template <typename T>
void put_le(std::string& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

template <typename T>
bool get_le(const std::string& in, std::size_t& pos, T& value) {
  if (in.size() - pos < sizeof(T)) return false;
  value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    value |= static_cast<T>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += sizeof(T);
  return true;
}

std::uint64_t checksum(const char* name, std::size_t name_size, const char* image, std::size_t image_size) {
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  XXH64_update(&state, name, name_size);
  XXH64_update(&state, image, image_size);
  return XXH64_digest(&state);
}

// Unique within the host (pid, thread, per-process counter) and, via the random salt, across hosts that
// share a network cache directory.
std::string temp_suffix() {
  static const std::uint32_t salt = [] {
    std::random_device rd;
    return static_cast<std::uint32_t>(rd());
  }();
  static std::atomic<std::uint64_t> counter{0};
  char buf[96];
  std::snprintf(buf, sizeof buf, ".tmp.%ld.%zx.%llu.%08x", static_cast<long>(::getpid()),
                std::hash<std::thread::id>{}(std::this_thread::get_id()),
                static_cast<unsigned long long>(counter.fetch_add(1)), salt);
  return buf;
}

}  // namespace

std::string encode_cache_file(const Cubin& cubin) {
  std::string out;
  out.reserve(sizeof kMagic + 4 + cubin.lowered_name.size() + 8 + cubin.image.size() + 8);
  out.append(kMagic, sizeof kMagic);
  put_le<std::uint32_t>(out, static_cast<std::uint32_t>(cubin.lowered_name.size()));
  out += cubin.lowered_name;
  put_le<std::uint64_t>(out, cubin.image.size());
  out.append(cubin.image.data(), cubin.image.size());
  put_le<std::uint64_t>(out, checksum(cubin.lowered_name.data(), cubin.lowered_name.size(), cubin.image.data(),
                                      cubin.image.size()));
  return out;
}

bool decode_cache_file(const std::string& bytes, Cubin& out) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return false;
  std::size_t pos = sizeof kMagic;
  std::uint32_t name_size = 0;
  if (!get_le(bytes, pos, name_size) || bytes.size() - pos < name_size) return false;
  const std::size_t name_pos = pos;
  pos += name_size;
  std::uint64_t image_size = 0;
  if (!get_le(bytes, pos, image_size) || bytes.size() - pos < image_size) return false;
  const std::size_t image_pos = pos;
  pos += static_cast<std::size_t>(image_size);
  std::uint64_t stored = 0;
  if (!get_le(bytes, pos, stored) || pos != bytes.size()) return false;  // short, or trailing bytes
  if (name_size == 0 || image_size == 0) return false;
  if (checksum(bytes.data() + name_pos, name_size, bytes.data() + image_pos, image_size) != stored) return false;
  out.lowered_name.assign(bytes.data() + name_pos, name_size);
  out.image.assign(bytes.data() + image_pos, bytes.data() + image_pos + image_size);
  return true;
}

bool read_cache_file(const std::string& path, Cubin& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return false;
  return decode_cache_file(bytes, out);
}

bool write_cache_file(const std::string& path, const Cubin& cubin) {
  namespace fs = std::filesystem;
  const std::string tmp = path + temp_suffix();
  const std::string bytes = encode_cache_file(cubin);
  bool ok = false;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (f) {
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      f.flush();
      ok = f.good();
    }
  }
  std::error_code ec;
  if (ok) {
    fs::rename(tmp, path, ec);  // atomic replace: readers see the old file or the new one, never a mix
    ok = !ec;
  }
  if (!ok) fs::remove(tmp, ec);
  return ok;
}

}  // namespace tmagemm::jit::detail

namespace tmagemm::jit {

KernelCacheFiles kernel_cache_files() {
  namespace fs = std::filesystem;
  KernelCacheFiles found;
  found.dir = (fs::path(cache_dir()) / "kernels").string();
  std::error_code ec;
  for (fs::directory_iterator it(found.dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".cubin" || !it->is_regular_file(ec)) continue;
    found.files.push_back(it->path().string());
    const std::uintmax_t size = it->file_size(ec);
    if (!ec) found.bytes += size;
  }
  return found;
}

std::vector<std::string> clear_kernel_cache(KernelCacheFiles& removed) {
  namespace fs = std::filesystem;
  const KernelCacheFiles found = kernel_cache_files();
  removed = KernelCacheFiles{found.dir, {}, 0};
  std::vector<std::string> failures;
  for (const std::string& f : found.files) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(f, ec);
    if (fs::remove(f, ec) || !fs::exists(f)) {
      removed.files.push_back(f);
      removed.bytes += size == static_cast<std::uintmax_t>(-1) ? 0 : size;
    } else {
      failures.push_back(f + ": " + ec.message());
    }
  }
  return failures;
}

}  // namespace tmagemm::jit
