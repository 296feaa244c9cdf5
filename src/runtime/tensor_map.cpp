// tensor_map.cpp — the per-thread memo of encoded CUtensorMaps (see tensor_map.hpp).
#include "runtime/tensor_map.hpp"

#include <xxhash.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"

namespace tmagemm::runtime {

// The key is hashed and compared as bytes, which is exact only while every byte belongs to a field.
static_assert(std::has_unique_object_representations_v<TensorMapKey>, "TensorMapKey must have no padding bytes");

uint64_t hash(const TensorMapKey& k) noexcept { return XXH3_64bits(&k, sizeof k); }

const CUtensorMap* TensorMapCache::find(const TensorMapKey& key) {
  const uint64_t h = hash(key);
  const std::size_t first = (h % kSets) * kWays;
  for (std::size_t i = first; i < first + kWays; ++i) {
    Slot& s = slots_[i];
    if (s.last_use != 0 && s.hash == h && std::memcmp(&s.key, &key, sizeof key) == 0) {
      s.last_use = ++clock_;
      return &maps_[i];
    }
  }
  return nullptr;
}

const CUtensorMap& TensorMapCache::insert(const TensorMapKey& key, const CUtensorMap& map) {
  const uint64_t h = hash(key);
  const std::size_t first = (h % kSets) * kWays;
  std::size_t victim = first;
  for (std::size_t i = first; i < first + kWays; ++i) {
    const Slot& s = slots_[i];
    if (s.last_use != 0 && s.hash == h && std::memcmp(&s.key, &key, sizeof key) == 0) {  // present: overwrite
      victim = i;
      break;
    }
    if (s.last_use < slots_[victim].last_use) victim = i;  // empty slots (0) first, then the least recently used
  }
  slots_[victim].key = key;
  slots_[victim].hash = h;
  slots_[victim].last_use = ++clock_;
  maps_[victim] = map;
  return maps_[victim];
}

std::size_t TensorMapCache::size() const noexcept {
  std::size_t n = 0;
  for (const Slot& s : slots_) n += s.last_use != 0 ? 1 : 0;
  return n;
}

void TensorMapCache::clear() noexcept {
  for (Slot& s : slots_) s = Slot{};
  clock_ = 0;
}

CUtensorMap encode_tiled(const TensorMapKey& key, const char* what) {
  // One table per thread: no lock on the launch path. Allocated on the thread's first encode (~70 KiB).
  thread_local std::unique_ptr<TensorMapCache> cache;
  if (!cache) cache = std::make_unique<TensorMapCache>();
  if (const CUtensorMap* hit = cache->find(key)) return *hit;

  CUtensorMap map{};
  const CUresult r = driver().tensor_map_encode_tiled(
      &map, key.dtype, key.rank, const_cast<void*>(key.address), key.dims, key.strides, key.box,
      key.element_strides, key.interleave, key.swizzle, key.l2_promotion, key.oob_fill);
  check_cu(r, what);
  return cache->insert(key, map);
}

CUtensorMap encode_sw128_3d(const void* base, CUtensorMapDataType type, std::size_t elem, uint64_t inner,
                            uint64_t outer, uint64_t batch, int64_t outer_stride, int64_t batch_stride,
                            uint32_t box_inner, uint32_t box_outer, CUtensorMapL2promotion promotion, const char* what) {
  TensorMapKey key;
  key.address = base;
  key.dtype = type;
  key.rank = 3;
  key.dims[0] = inner;
  key.dims[1] = outer;
  key.dims[2] = batch;
  key.strides[0] = static_cast<uint64_t>(outer_stride) * elem;
  key.strides[1] = batch <= 1 ? 0 : static_cast<uint64_t>(batch_stride) * elem;  // never used; 0 is accepted
  key.box[0] = box_inner;
  key.box[1] = box_outer;
  key.box[2] = 1;
  key.element_strides[0] = key.element_strides[1] = key.element_strides[2] = 1;
  key.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  key.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  key.l2_promotion = promotion;
  key.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  return encode_tiled(key, what);
}

CUtensorMapL2promotion l2_promotion(int row_alignment, CUtensorMapL2promotion aligned) {
  static const int forced = [] {
    const char* v = std::getenv("TMAGEMM_TMA_L2_PROMOTION");
    const std::string s = v ? v : "";
    if (s == "none") return 0;
    if (s == "64") return 1;
    if (s == "128") return 2;
    if (s == "256") return 3;
    return -1;
  }();
  if (forced >= 0) return static_cast<CUtensorMapL2promotion>(forced);
  return row_alignment < 32 ? CU_TENSOR_MAP_L2_PROMOTION_NONE : aligned;
}

int l2_stream_mode() {
  static const int mode = [] {
    const char* v = std::getenv("TMAGEMM_TMA_L2_STREAM");
    const std::string s = v ? v : "";
    return s == "0" ? 0 : s == "nohint" ? 1 : 2;
  }();
  return mode;
}

}  // namespace tmagemm::runtime
