// The composition root's list of outputs: the sinks gpuprobe itself provides, registered by
// name in core's SinkRegistry. Registered explicitly, on first need, rather than by static
// initializers, which a static library drops when nothing refers to their object file.
#pragma once

namespace gpuprobe::session {

// Registers chrome=, perfetto= and tensorboard=, once per process, ahead of any sink a program
// adds. Everything that reads a config or lists the sinks calls it first. Never throws.
void register_builtin_sinks() noexcept;

}  // namespace gpuprobe::session
