// dispatch.hpp — the one dispatch point: a validated problem -> the chosen backend -> launch.
#pragma once
#include "problem/problem.hpp"
#include "tmagemm/ops.hpp"
#include "tmagemm/options.hpp"

namespace tmagemm::dispatch {

// Runs the problem on options.stream. Empty problems (M or N = 0) do nothing; K = 0 writes zeros (addmm:
// act(beta * bias)).
// Throws Error(no_valid_choice) listing each backend's reason when nothing can run it.
void run(const GemmProblem& problem, const Options& options);

// Every choice for the problem, applicable or not and why; marks the one run() would take.
Explanation explain(const GemmProblem& problem, const Options& options);

}  // namespace tmagemm::dispatch
