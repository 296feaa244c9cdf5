// fault.hpp — fault injection for tests: make chosen kernels fail to compile, or chosen choices fail to launch,
// so that the tests can show that a failing choice is skipped (never returned) and the call still succeeds.
// Off unless TMAGEMM_FAULT_INJECT is set or a test installs faults; when off, each check is one relaxed load.
//   TMAGEMM_FAULT_INJECT="compile=REGEX;launch=REGEX;oom=REGEX"   (any part may be left out)
// compile: jit::compile throws Error(compile_error) for kernels whose KernelSpec name matches REGEX;
// launch:  the tuner and the dispatcher throw Error(cuda_error) instead of launching a choice whose name matches;
// oom:     they throw Error(out_of_memory) instead (device memory ran out: a failure of the moment), and the tuner's
//          scratch allocation does where REGEX matches "tuner:scratch".
#pragma once
#include <string>

namespace tmagemm::runtime {

struct Faults {
  std::string compile_regex;  // empty: no compile faults
  std::string launch_regex;   // empty: no launch faults
  std::string oom_regex;      // empty: no out-of-memory faults
};

// Replaces the faults read from the environment (tests). Faults{} turns injection off.
void set_faults_for_testing(const Faults& faults);

// Throw the injected error when `kernel_name` / `choice_name` matches; do nothing otherwise.
void inject_compile_fault(const std::string& kernel_name);
void inject_launch_fault(const std::string& choice_name);  // a launch or an out-of-memory fault
void inject_allocation_fault(const std::string& what);      // an out-of-memory fault ("tuner:scratch")

}  // namespace tmagemm::runtime
