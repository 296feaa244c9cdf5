// tensor_map_test.cpp (CPU) — the per-thread tensor-map memo's key and table: equal keys hit, a key that differs
// in any encode argument misses, the table stays bounded and keeps recently used maps. No driver needed: maps
// are stored and found, never encoded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/tensor_map.hpp"

namespace tmagemm::runtime {
namespace {

// A rank-3 key as persistent_tma encodes it (bf16 A, 4096 x 4096, row-major, 64 x 128 box).
TensorMapKey base_key() {
  TensorMapKey k;
  k.address = reinterpret_cast<const void*>(0x7f0000000000);
  k.dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  k.rank = 3;
  k.dims[0] = 4096;
  k.dims[1] = 4096;
  k.dims[2] = 1;
  k.strides[0] = 4096 * 2;
  k.box[0] = 64;
  k.box[1] = 128;
  k.box[2] = 1;
  k.element_strides[0] = k.element_strides[1] = k.element_strides[2] = 1;
  k.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  k.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  return k;
}

// A map whose bytes name `tag`, to tell stored maps apart.
CUtensorMap map_with(uint64_t tag) {
  CUtensorMap m{};
  for (auto& q : m.opaque) q = tag;
  return m;
}

bool same_bytes(const CUtensorMap& x, const CUtensorMap& y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// One edit per encode argument (every field of the key, every dim slot).
std::vector<std::pair<std::string, std::function<void(TensorMapKey&)>>> single_field_edits() {
  std::vector<std::pair<std::string, std::function<void(TensorMapKey&)>>> edits = {
      {"address", [](TensorMapKey& k) { k.address = static_cast<const char*>(k.address) + 16; }},
      {"dtype", [](TensorMapKey& k) { k.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; }},
      {"rank", [](TensorMapKey& k) { k.rank = 2; }},
      {"interleave", [](TensorMapKey& k) { k.interleave = CU_TENSOR_MAP_INTERLEAVE_16B; }},
      {"swizzle", [](TensorMapKey& k) { k.swizzle = CU_TENSOR_MAP_SWIZZLE_64B; }},
      {"l2_promotion", [](TensorMapKey& k) { k.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B; }},
      {"oob_fill", [](TensorMapKey& k) { k.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; }},
  };
  for (uint32_t i = 0; i < kTensorMapMaxRank; ++i) {
    edits.push_back({"dims[" + std::to_string(i) + "]", [i](TensorMapKey& k) { k.dims[i] += 1; }});
    edits.push_back({"box[" + std::to_string(i) + "]", [i](TensorMapKey& k) { k.box[i] += 1; }});
    edits.push_back(
        {"element_strides[" + std::to_string(i) + "]", [i](TensorMapKey& k) { k.element_strides[i] += 1; }});
    if (i + 1 < kTensorMapMaxRank)
      edits.push_back({"strides[" + std::to_string(i) + "]", [i](TensorMapKey& k) { k.strides[i] += 16; }});
  }
  return edits;
}

TEST(TensorMapKey, EqualKeysCompareAndHashEqual) {
  const TensorMapKey a = base_key(), b = base_key();
  EXPECT_TRUE(a == b);
  EXPECT_EQ(hash(a), hash(b));
}

TEST(TensorMapKey, EveryFieldTakesPart) {
  const TensorMapKey base = base_key();
  for (const auto& [name, edit] : single_field_edits()) {
    TensorMapKey k = base;
    edit(k);
    EXPECT_FALSE(k == base) << name;
    // Not needed for correctness (the cache compares whole keys); catches a field left out of the hash.
    EXPECT_NE(hash(k), hash(base)) << name;
  }
}

TEST(TensorMapCache, HitReturnsTheStoredMap) {
  auto cache = std::make_unique<TensorMapCache>();
  const TensorMapKey k = base_key();
  EXPECT_EQ(cache->find(k), nullptr);
  cache->insert(k, map_with(7));
  const CUtensorMap* hit = cache->find(k);
  ASSERT_NE(hit, nullptr);
  EXPECT_TRUE(same_bytes(*hit, map_with(7)));
  EXPECT_EQ(cache->size(), 1u);
}

TEST(TensorMapCache, AnyDifferentArgumentMisses) {
  auto cache = std::make_unique<TensorMapCache>();
  const TensorMapKey base = base_key();
  cache->insert(base, map_with(1));
  for (const auto& [name, edit] : single_field_edits()) {
    TensorMapKey k = base;
    edit(k);
    EXPECT_EQ(cache->find(k), nullptr) << name << " reused a map encoded for other arguments";
  }
  // Each edited key gets its own map; none disturbs another or the base.
  uint64_t tag = 100;
  for (const auto& [name, edit] : single_field_edits()) {
    TensorMapKey k = base;
    edit(k);
    cache->insert(k, map_with(tag++));
  }
  tag = 100;
  for (const auto& [name, edit] : single_field_edits()) {
    TensorMapKey k = base;
    edit(k);
    const CUtensorMap* hit = cache->find(k);
    if (hit) EXPECT_TRUE(same_bytes(*hit, map_with(tag))) << name;  // may have been evicted, never confused
    ++tag;
  }
  if (const CUtensorMap* hit = cache->find(base)) EXPECT_TRUE(same_bytes(*hit, map_with(1)));
}

TEST(TensorMapCache, InsertingAPresentKeyOverwritesIt) {
  auto cache = std::make_unique<TensorMapCache>();
  const TensorMapKey k = base_key();
  cache->insert(k, map_with(1));
  cache->insert(k, map_with(2));
  EXPECT_EQ(cache->size(), 1u);
  ASSERT_NE(cache->find(k), nullptr);
  EXPECT_TRUE(same_bytes(*cache->find(k), map_with(2)));
}

TEST(TensorMapCache, BoundedAndKeepsRecentlyUsedMaps) {
  auto cache = std::make_unique<TensorMapCache>();
  const TensorMapKey hot = base_key();
  cache->insert(hot, map_with(1));
  for (uint64_t i = 1; i <= 10 * TensorMapCache::kCapacity; ++i) {
    TensorMapKey k = base_key();
    k.address = reinterpret_cast<const void*>(0x7e0000000000 + i * 256);  // distinct tensors
    cache->insert(k, map_with(1000 + i));
    ASSERT_NE(cache->find(hot), nullptr) << "evicted after " << i << " inserts although used after each";
    EXPECT_LE(cache->size(), TensorMapCache::kCapacity);
  }
  EXPECT_EQ(cache->size(), TensorMapCache::kCapacity);
  EXPECT_TRUE(same_bytes(*cache->find(hot), map_with(1)));
  cache->clear();
  EXPECT_EQ(cache->size(), 0u);
  EXPECT_EQ(cache->find(hot), nullptr);
}

// The promotion rule both TMA backends encode with (unless TMAGEMM_TMA_L2_PROMOTION overrides it for an experiment).
TEST(L2Promotion, NoneOffThirtyTwoBytesElseTheCallersChoice) {
  if (std::getenv("TMAGEMM_TMA_L2_PROMOTION") != nullptr) GTEST_SKIP() << "TMAGEMM_TMA_L2_PROMOTION overrides the rule";
  EXPECT_EQ(l2_promotion(2), CU_TENSOR_MAP_L2_PROMOTION_NONE);
  EXPECT_EQ(l2_promotion(16), CU_TENSOR_MAP_L2_PROMOTION_NONE);
  EXPECT_EQ(l2_promotion(32), CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(l2_promotion(256), CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(l2_promotion(256, CU_TENSOR_MAP_L2_PROMOTION_NONE), CU_TENSOR_MAP_L2_PROMOTION_NONE);  // skinny
  EXPECT_EQ(l2_promotion(16, CU_TENSOR_MAP_L2_PROMOTION_L2_128B), CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

}  // namespace
}  // namespace tmagemm::runtime
