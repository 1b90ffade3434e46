"""Where a compile's time goes, from the structured trace's `chromium_event` records: Dynamo's
`dynamo_timed` spans (the same spans torch.profiler shows), begun and ended on the compiling
thread with their own timestamps. The phases the issue's question needs are recorded as ranges
"compile phase: <span name>" inside the compile's range, and each span's own time (its length
less the recorded spans inside it) is summed into one of five groups:

    Dynamo            entire_frame_compile, bytecode_tracing, build_guards: tracing the bytecode
    AOTAutograd       create_aot_dispatcher_function: functionalization, the joint graph
    Inductor          backend_compile, the pre/post-grad passes, inductor_compile, lowering,
                      scheduling (fusion)
    code generation   code_gen, Scheduler.codegen, loading the generated module
    kernel compile    compile_file, async_compile.wait: compiling the generated kernels (C++ on
                      the CPU, Triton on the GPU)

Per compile id in ``phases``; totals as counters "compile phase seconds: <group>".

A span with no compile id on a thread other than the main one is a compile worker's (Inductor's
thread pools compile kernels outside the compile's context): the outputs name that thread
"compile worker <N>" (gpuprobe.set_thread_name: the thread itself is not renamed)."""
import json
import threading

from gpuprobe import _core
from gpuprobe.torch._common import EVENTS
from gpuprobe.torch.structured_trace import Reader, compile_id

_workers = threading.local()  # .number: this thread's, once named a compile worker
_worker_count = [0]
_worker_lock = threading.Lock()


def _name_compile_worker():
    """Names the calling thread "compile worker <N>" in gpuprobe's outputs, once."""
    if getattr(_workers, "number", None) is not None:
        return
    with _worker_lock:
        _worker_count[0] += 1
        _workers.number = _worker_count[0]
    _core.set_thread_name(f"compile worker {_workers.number}")


GROUPS = {
    "entire_frame_compile": "Dynamo",
    "bytecode_tracing": "Dynamo",
    "build_guards": "Dynamo",
    "create_aot_dispatcher_function": "AOTAutograd",
    "backend_compile": "Inductor",
    "_recursive_pre_grad_passes": "Inductor",
    "inductor_compile": "Inductor",
    "_recursive_post_grad_passes": "Inductor",
    "GraphLowering.run": "Inductor",
    "Scheduler.__init__": "Inductor",
    "code_gen": "code generation",
    "Scheduler.codegen": "code generation",
    "PyCodeCache.load_by_key_path": "code generation",
    "compile_file": "kernel compile",
    "async_compile.wait": "kernel compile",
}
ORDER = ["Dynamo", "AOTAutograd", "Inductor", "code generation", "kernel compile"]


class CompilePhases(Reader):
    def __init__(self, log):
        self._open = threading.local()  # per thread: [name, begin_ns, compile id, inner_ns]
        self._lock = threading.Lock()
        self.phases = {}  # compile id -> {group: seconds}
        self._totals = dict.fromkeys(ORDER, 0.0)
        super().__init__(log)

    def record(self, metadata, payload):
        if "chromium_event" not in metadata or not payload:
            return
        event = json.loads(payload)
        name = event.get("name")
        if name not in GROUPS or event.get("ph") not in ("B", "E"):
            return
        ns = int(float(event.get("ts", 0)) * 1000)
        stack = getattr(self._open, "stack", None)
        if stack is None:
            stack = self._open.stack = []
        if event["ph"] == "B":
            stack.append([name, ns, compile_id(metadata), 0])
            return
        # The span that ends, and any left open inside it (an exception skipped their ends).
        while stack and stack[-1][0] != name:
            stack.pop()
        if not stack:
            return
        _, begin, cid, inner = stack.pop()
        length = max(ns - begin, 0)
        if stack:
            stack[-1][3] += length
        key = cid or (stack[0][2] if stack else "")
        if (not key and self._log is not None
                and threading.current_thread() is not threading.main_thread()):
            _name_compile_worker()  # before its first event, so that every output has the name
        self.out._range_at(EVENTS["compile_phase"] + name, "compile", begin, begin + length)
        group = GROUPS[name]
        own = max(length - inner, 0) / 1e9
        if not key:
            return  # a worker thread's span, inside the compiling thread's async_compile.wait
        with self._lock:
            by_group = self.phases.setdefault(key, {})
            by_group[group] = by_group.get(group, 0.0) + own
            self._totals[group] += own
            totals = dict(self._totals) if name == "entire_frame_compile" else None
        if totals is not None:  # a frame's compile is over: the totals so far
            for g, seconds in totals.items():
                self.out.counter(EVENTS["compile_phase_seconds"] + g, seconds, "compile")
