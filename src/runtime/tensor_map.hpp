// tensor_map.hpp — CUtensorMap encoding (cuTensorMapEncodeTiled through the driver entry point), memoised per
// thread. A map is a pure function of the encode's arguments (global address, shape, strides, box, modes): it
// holds no reference to the allocation, so a call that repeats every argument can reuse the 128 bytes of an
// earlier encode instead of asking the driver again, and any differing argument encodes afresh.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace tmagemm::runtime {

constexpr uint32_t kTensorMapMaxRank = 5;  // NOTE: cuTensorMapEncodeTiled takes ranks 1 to 5

// Every input of cuTensorMapEncodeTiled. Entries past `rank` (past rank - 1 for strides) must stay zero, as the
// default member initialisers leave them, so that two keys for the same encode compare equal. The fields leave no
// padding (checked at compile time), so the cache hashes and compares keys as bytes.
struct TensorMapKey {
  const void* address = nullptr;
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  uint32_t rank = 0;
  uint64_t dims[kTensorMapMaxRank] = {};             // elements, innermost first
  uint64_t strides[kTensorMapMaxRank - 1] = {};      // bytes, of dims 1 .. rank - 1
  uint32_t box[kTensorMapMaxRank] = {};              // elements
  uint32_t element_strides[kTensorMapMaxRank] = {};  // elements
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;

  bool operator==(const TensorMapKey&) const = default;
};

// XXH3 of the key's bytes (equal keys hash equal). The cache compares whole keys, so a collision costs a miss at
// worst, never a wrong map.
uint64_t hash(const TensorMapKey& key) noexcept;

// A bounded table of encoded maps: kSets sets of kWays entries, a key's set picked by its hash, the set's least
// recently used entry replaced when it is full. Not thread-safe; encode_tiled keeps one per thread.
class TensorMapCache {
 public:
  static constexpr std::size_t kSets = 64;
  static constexpr std::size_t kWays = 4;
  static constexpr std::size_t kCapacity = kSets * kWays;

  // The map stored for exactly `key`, or nullptr. A hit makes the entry the most recently used of its set.
  const CUtensorMap* find(const TensorMapKey& key);
  // Stores `map` for `key` (a key already present is overwritten) and returns the stored copy, valid until the
  // next insert.
  const CUtensorMap& insert(const TensorMapKey& key, const CUtensorMap& map);
  std::size_t size() const noexcept;
  void clear() noexcept;

 private:
  struct Slot {
    TensorMapKey key;
    uint64_t hash = 0;
    uint64_t last_use = 0;  // 0: empty
  };
  Slot slots_[kCapacity];
  CUtensorMap maps_[kCapacity];  // beside the slots, not in them: CUtensorMap is 128-byte aligned
  uint64_t clock_ = 0;
};

// The map for `key`: the calling thread's earlier encode of the same key, else a fresh cuTensorMapEncodeTiled,
// which is then kept. Throws Error(cuda_error) naming `what` when the driver refuses the arguments (nothing is
// kept then).
CUtensorMap encode_tiled(const TensorMapKey& key, const char* what);

// The rank-3 tiled map over (inner, outer, batch) of 16-bit elements the GEMM kernels load with: 128-byte swizzle,
// zero fill past the edges, box {box_inner, box_outer, 1}; strides in elements (`elem` bytes each). Through
// encode_tiled, so a repeated call on the same tensors encodes nothing.
CUtensorMap encode_sw128_3d(const void* base, CUtensorMapDataType type, std::size_t elem, uint64_t inner,
                            uint64_t outer, uint64_t batch, int64_t outer_stride, int64_t batch_stride,
                            uint32_t box_inner, uint32_t box_outer, CUtensorMapL2promotion promotion, const char* what);

// L2 promotion for the TMA loads of an operand whose rows start at multiples of `row_alignment` bytes: none for
// rows off 32 bytes, else `aligned` (256 bytes unless the caller streams the operand). NOTE: measured on H200
// (docs/perf-notes.md): with rows off 32 bytes, 256-byte promotion costs ~12 % on 3000x5000x1000 (0.685 -> 0.765-0.770
// of cuBLASLt without it; none, 64 B and 128 B alike); aligned rows showed no difference on compute-bound shapes;
// on B streamed once by the skinny kernel (128-byte rows of an N-major box) it cost 8-13 % of HBM bandwidth
// (16x28672x8192: 3.9 -> 4.2 TB/s without it). TMAGEMM_TMA_L2_PROMOTION (none, 64, 128, 256) overrides the rule
// for experiments.
CUtensorMapL2promotion l2_promotion(int row_alignment,
                                    CUtensorMapL2promotion aligned = CU_TENSOR_MAP_L2_PROMOTION_L2_256B);

// How persistent TMA treats an operand it reads exactly once (EpilogueParams::l2_stream; the skinny kernel always
// streams B): 2 = no L2 promotion and an L2 evict_first policy (the default), 1 = no promotion only, 0 = as any
// operand. TMAGEMM_TMA_L2_STREAM (0, nohint) picks the others for experiments.
int l2_stream_mode();

}  // namespace tmagemm::runtime
