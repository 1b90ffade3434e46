// Python threads named as Python names them. A thread that `threading` started inherits its OS
// name from the thread that started it (before Python 3.14), so every worker of a pool —
// torch.compile's compile threads among them — would be "python" in the outputs. Internal to
// the module.
#pragma once

namespace gpuprobe::python {

/// Gives the calling thread, for the outputs only, the name `threading` gives it
/// (Thread.name: "ThreadPoolExecutor-0_3", "triton_compile_1"), when `threading` started it and
/// it is not the main thread; a name given with gpuprobe.set_thread_name() still wins. Reads
/// `threading`'s table of threads and changes nothing in it: a thread `threading` did not start
/// gets no dummy Thread object. Call with the GIL held; never leaves a Python error set. Cold:
/// once per thread and session (module.cc).
void name_thread_from_threading() noexcept;

}  // namespace gpuprobe::python
