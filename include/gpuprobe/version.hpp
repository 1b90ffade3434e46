/// @file version.hpp
/// @brief gpuprobe's version, for code that must adapt to it.
#pragma once

/// Major version: bumped when the public API or an output format changes incompatibly.
#define GPUPROBE_VERSION_MAJOR 0
/// Minor version: bumped when something is added.
#define GPUPROBE_VERSION_MINOR 1
/// Patch version: bumped for fixes.
#define GPUPROBE_VERSION_PATCH 0
/// The version as a string literal, e.g. "0.1.0".
#define GPUPROBE_VERSION_STRING "0.1.0"
