// trace.cuh — the persistent TMA kernel's timeline in profiling builds (TMAGEMM_TRACE on the host, Cfg::kTrace).
//
// Contract:
//   takes   a slot (TraceSlot) and a value (SM clock64 cycles, %globaltimer ns, or a count) from the one thread per
//           role that traces;
//   gives   per CTA, trace[blockIdx.x * kTraceSlots + slot] for every slot marked (0: never reached), written once
//           at the thread's end (flush), never during the kernel: a global store per mark would make the kernel's
//           memory fences wait for it. src/choices/persistent_tma.cpp write_trace turns the buffer into CSV rows,
//           lab/persistent-trace.py reads them;
//   never   costs a normal build anything: Timeline<false> holds one unused word and its calls compile to nothing
//           (every call site also tests kTrace first, so that the clock is not even read).
#pragma once
#include <cuda/std/cstdint>

namespace tmagemm::kernels {

// Timeline slots written by a kTrace build (per CTA). Cycle counts are the SM's clock64.
enum TraceSlot : int {
  kTrGlobalStart = 0,   // %globaltimer (ns) at entry, thread 0
  kTrClockStart,        // clock64 at entry, thread 0
  kTrInitDone,          // barriers initialised (after __syncthreads, or after arriving on the cluster barrier)
  kTrFirstLoad,         // the producer issued its first stage
  kTrProducerDone,      // the producer issued its last stage
  kTrFirstFull,         // consumer 0 saw its first stage full
  kTrFirstMainDone,     // consumer 0 finished the first tile's MMAs
  kTrFirstEpiDone,      // consumer 0 finished the first tile's epilogue
  kTrLastMainDone,      // ... the last tile's MMAs
  kTrLastEpiDone,       // ... the last tile's epilogue
  kTrStoresRead,        // consumer 0: the TMA stores have read shared memory
  kTrExit,              // consumer 0 at its end
  kTrGlobalExit,        // %globaltimer (ns) then
  kTrSmid,              // the SM this CTA ran on
  kTrTiles,             // tiles this CTA computed
  kTrProdTile,          // producer, first stage (in the prologue): past the cluster wait, tile coordinates computed
  kTrProdEmpty,         // (unused: the prologue's fresh stages need no empty-barrier wait)
  kTrProdExpect,        // ... expect_tx armed
  kTrProdA,             // ... A's loads issued
  kTrConsStart,         // consumer 0 entered its loop
  kTrPacked,            // consumer 0: the first tile's accumulators packed (or stored), before the next unit
  kTrNextFull,          // ... the second tile's first stage seen full
  kTrNextIssued,        // ... the second tile's first K block's wgmmas issued
  kTrUnit0Stored,       // ... the first piece of the first tile stored (deferred TMA stores)
  kTraceSlots = 24
};

__device__ inline cuda::std::uint64_t global_timer_ns() {
  cuda::std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}

__device__ inline unsigned sm_id() {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
  return smid;
}

// One tracing thread's timeline, kept in registers/local memory until flush.
template <bool kOn>
struct Timeline {
  unsigned long long slots[kOn ? kTraceSlots : 1] = {};
  __device__ void mark(int slot, unsigned long long value) {
    if constexpr (kOn) slots[slot] = value;
  }
  __device__ void flush(unsigned long long* trace) const {
    if constexpr (kOn)
      for (int s = 0; s < kTraceSlots; ++s)
        if (slots[s] != 0) trace[blockIdx.x * kTraceSlots + s] = slots[s];
  }
};

}  // namespace tmagemm::kernels
