// tmagemm/tmagemm.hpp — the whole public API in one include.
#pragma once
#include "tmagemm/error.hpp"
#include "tmagemm/options.hpp"
#include "tmagemm/ops.hpp"
#include "tmagemm/tuning.hpp"
#include "tmagemm/types.hpp"
#include "tmagemm/version.hpp"
