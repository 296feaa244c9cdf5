// fault_test.cpp — fault injection's parts (src/runtime/fault.cpp): each kind of fault throws its code for the names
// its pattern matches and only for those, and an empty set of faults turns injection off.
#include <gtest/gtest.h>

#include <string>

#include "runtime/fault.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::runtime {
namespace {

ErrorCode code_of(void (*inject)(const std::string&), const std::string& name) {
  try {
    inject(name);
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no fault for " << name;
  return ErrorCode::invalid_argument;
}

class FaultInjection : public ::testing::Test {
 protected:
  void TearDown() override { set_faults_for_testing({}); }
};

TEST_F(FaultInjection, EachKindThrowsItsCodeForMatchingNamesOnly) {
  set_faults_for_testing({"^kernel_a$", "^choice_b$", "^choice_c$|^tuner:scratch$"});
  EXPECT_EQ(code_of(inject_compile_fault, "kernel_a"), ErrorCode::compile_error);
  EXPECT_EQ(code_of(inject_launch_fault, "choice_b"), ErrorCode::cuda_error);
  EXPECT_EQ(code_of(inject_launch_fault, "choice_c"), ErrorCode::out_of_memory);
  EXPECT_EQ(code_of(inject_allocation_fault, "tuner:scratch"), ErrorCode::out_of_memory);
  EXPECT_NO_THROW(inject_compile_fault("kernel_b"));
  EXPECT_NO_THROW(inject_launch_fault("choice_a"));
  EXPECT_NO_THROW(inject_allocation_fault("choice_b"));  // allocation faults come from the oom pattern alone
  set_faults_for_testing({});
  EXPECT_NO_THROW(inject_compile_fault("kernel_a"));
  EXPECT_NO_THROW(inject_launch_fault("choice_b"));
  EXPECT_NO_THROW(inject_launch_fault("choice_c"));
  EXPECT_NO_THROW(inject_allocation_fault("tuner:scratch"));
}

TEST_F(FaultInjection, BadPatternNamesItsPart) {
  try {
    set_faults_for_testing({"", "", "("});
    FAIL() << "expected invalid_argument";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("the oom pattern '('"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tmagemm::runtime
