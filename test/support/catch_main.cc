// The test runner's main() for Catch2 v2; v3 brings its own (Catch2::Catch2WithMain).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
