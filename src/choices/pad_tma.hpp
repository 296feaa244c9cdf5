// pad_tma.hpp — the pad path (src/choices/pad_tma.cpp): persistent TMA on re-pitched copies of the operands that TMA
// refuses only for their alignment.
#pragma once
#include <cstddef>
#include <string>

#include "problem/problem.hpp"

namespace tmagemm::choices {

// Why the pad path cannot take `problem` (empty: it can, given a persistent-TMA config that takes the padded
// problem); *scratch_bytes, when given, receives the scratch its copies need (0 when it cannot).
std::string pad_tma_plan(const GemmProblem& problem, std::size_t* scratch_bytes = nullptr);

}  // namespace tmagemm::choices
