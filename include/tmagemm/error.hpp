// tmagemm/error.hpp — the one exception type the library throws, with a machine-readable code.
#pragma once
#include <stdexcept>
#include <string>

namespace tmagemm {

enum class ErrorCode {
  invalid_argument,  // user input breaks a rule; the message names the argument and the rule
  unsupported,       // valid input that this build/op/device does not handle (yet)
  cuda_error,        // a CUDA runtime/driver call failed
  compile_error,     // NVRTC failed; the message carries the compiler log
  no_valid_choice,   // every backend declined the problem; the message lists each one's reason
  out_of_memory,     // device memory ran out (a CUDA allocation, a module load, cuBLASLt's); nothing was written to
                     // out, and the same call may succeed once memory is freed. A GEMM call falls back to another
                     // choice first (README "Errors") and throws it only when none could run; other work (K = 0's
                     // kernel, preload's scratch, an offline tuning job) throws it at once.
};

const char* to_string(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace tmagemm
