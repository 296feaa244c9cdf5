// tma_desc.cuh — the kernels' view of a CUtensorMap, passed as a __grid_constant__ parameter.
#pragma once

namespace tmagemm::kernels {

// Opaque 128-byte CUtensorMap (cuda.h is not available under NVRTC).
struct alignas(64) TmaDesc {
  char bytes[128];
};

}  // namespace tmagemm::kernels
