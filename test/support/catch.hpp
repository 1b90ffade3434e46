// Catch2 v2 (Debian 12) and v3 (newer distributions) spell their headers differently; tests
// include this instead.
#pragma once

#if GPUPROBE_CATCH2_V3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
