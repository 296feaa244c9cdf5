// error.cpp — tmagemm::Error and error-code names.
#include "tmagemm/error.hpp"

namespace tmagemm {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::cuda_error: return "cuda_error";
    case ErrorCode::compile_error: return "compile_error";
    case ErrorCode::no_valid_choice: return "no_valid_choice";
    case ErrorCode::out_of_memory: return "out_of_memory";
  }
  return "unknown";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(std::string("tmagemm: ") + to_string(code) + ": " + message), code_(code) {}

}  // namespace tmagemm
