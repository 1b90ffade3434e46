"""What `gpuprobe run` turns on inside an unmodified Python program (through its sitecustomize):
the GPUPROBE session, started at interpreter start-up by importing gpuprobe, and — only once the
program imports torch — optimizer steps, GC pauses, torch.compile telemetry, DataLoader waits and
module ranges for the top levels of every nn.Module called. Each part is turned off by an
environment variable (below, also listed by `python -m gpuprobe run --help`); nothing here ever
raises into the program or changes what it computes.

    GPUPROBE_RUN_STEPS=0     no step per optimizer.step() (torch's global step post-hook, the
                             first optimizer that steps; its first step() begins step 0)
    GPUPROBE_RUN_GC=0        no GC pauses (gpuprobe.watch_gc)
    GPUPROBE_RUN_COMPILE=0   no torch.compile telemetry (gpuprobe.torch.watch_compile)
    GPUPROBE_RUN_DATA=0      no "dataloader next" range per DataLoader batch
    GPUPROBE_RUN_MODULES=0   no module ranges
    GPUPROBE_RUN_NVTX=0      NVTX ranges (torch.cuda.nvtx, the nvtx package, CUDA libraries) are not
                             recorded: gpuprobe is not named the process's NVTX tool
    GPUPROBE_RUN_CUPTI=0     no CUPTI (kernels, copies, CUDA calls) in processes that use CUDA
                             (read by the runner: no cupti= key, no CUDA_INJECTION64_PATH)
    GPUPROBE_RUN_DEPTH=N     module ranges for the N outermost levels of module calls [2]
"""
import importlib.util
import os
import sys
import weakref

import gpuprobe
from gpuprobe import _core
from gpuprobe._autorun_modules import arm_modules as _arm_modules

# The switches, their environment variables and what each turns off: the one description that
# the runner's --help and the README repeat.
SWITCHES = {
    "steps": "GPUPROBE_RUN_STEPS",
    "gc": "GPUPROBE_RUN_GC",
    "compile": "GPUPROBE_RUN_COMPILE",
    "data": "GPUPROBE_RUN_DATA",
    "modules": "GPUPROBE_RUN_MODULES",
    "nvtx": "GPUPROBE_RUN_NVTX",
    "cupti": "GPUPROBE_RUN_CUPTI",
}
DEPTH_VARIABLE = "GPUPROBE_RUN_DEPTH"
DEFAULT_DEPTH = 2


def _say(message):
    try:
        sys.stderr.write(f"gpuprobe run: {message}\n")
    except Exception:  # noqa: BLE001 - stderr may be closed
        pass


def enabled(part, environ=None):
    """Whether a part (a key of SWITCHES) is on: unless its variable (in ``environ``, else this
    process's environment) is 0, off, no or false."""
    value = (os.environ if environ is None else environ).get(SWITCHES[part], "1").strip().lower()
    return value not in ("0", "off", "no", "false")


def depth():
    """How many outermost levels of module calls get ranges (GPUPROBE_RUN_DEPTH, default 2)."""
    try:
        return max(0, int(os.environ.get(DEPTH_VARIABLE, DEFAULT_DEPTH)))
    except ValueError:
        _say(f"{DEPTH_VARIABLE} is not a number; using {DEFAULT_DEPTH}")
        return DEFAULT_DEPTH


class _ImportWatcher:
    """A sys.meta_path entry that waits for the import of one module: it lets the other finders
    find it, and wraps the loader so that ``callback(module)`` runs once the module's code ran.
    Removed at its first use; any failure leaves the import as it was."""

    def __init__(self, name, callback):
        self._name = name
        self._callback = callback
        self._busy = False

    def find_spec(self, name, path=None, target=None):
        if name != self._name or self._busy:
            return None
        self._busy = True
        try:
            _remove_finder(self)
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            spec.loader = _CallingLoader(spec.loader, self._callback)
            return spec
        except Exception:  # noqa: BLE001 - let the normal import machinery decide
            return None
        finally:
            self._busy = False


class _CallingLoader:
    """A module's loader, which calls back once the module ran."""

    def __init__(self, loader, callback):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._callback(module)
        except Exception:  # noqa: BLE001 - the import succeeded; it stays a success
            pass

    def __getattr__(self, name):
        return getattr(self._loader, name)


def when_imported(name, callback):
    """``callback(module)`` now if ``name`` is imported, else right after its import."""
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
    else:
        sys.meta_path.insert(0, _ImportWatcher(name, callback))


def _remove_finder(finder):
    try:
        sys.meta_path.remove(finder)
    except ValueError:
        pass


def start():
    """Starts GC watching now and the torch parts when torch is imported (now, if it is), and
    makes gpuprobe the NVTX tool of the process. Called once, by the sitecustomize."""
    if enabled("nvtx"):
        _guarded("nvtx", _arm_nvtx)
    if enabled("gc"):
        _guarded("gc", gpuprobe.watch_gc)
    when_imported("torch", arm)


def _guarded(part, fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - one part failing never stops the program
        _say(f"{part} not recorded: {e!r} (set {SWITCHES[part]}=0 to silence)")


def arm(torch):
    """Turns on each enabled torch part; never raises."""
    if enabled("steps"):
        _guarded("steps", _arm_steps, torch)
    if enabled("compile"):  # when the program first compiles: torch.compile imports _dynamo
        when_imported("torch._dynamo", lambda _dynamo: _guarded("compile", _arm_compile))
    if enabled("data"):
        _guarded("data", _arm_data, torch)
    if enabled("modules") and depth() > 0:
        _guarded("modules", _arm_modules, torch, depth())


def _arm_nvtx():
    """Names this process's gpuprobe (the _core module, which exports InitializeInjectionNvtx2)
    as its NVTX tool before the program's first NVTX call reads NVTX_INJECTION64_PATH: the NVTX
    ranges the program and its libraries already carry become ranges of this session. Another
    tool named there already (Nsight Systems) keeps NVTX, and that is said once."""
    given = os.environ.get("NVTX_INJECTION64_PATH")
    # The runner's libgpuprobe_nvtx.so: it hands this process's NVTX calls to _core, whose
    # session records, and is there for native children.
    if given and given == os.environ.get("GPUPROBE_RUN_INJECTION"):
        return
    if given:
        if os.path.realpath(given) != os.path.realpath(_core.__file__):
            _say(f"NVTX ranges not recorded: NVTX_INJECTION64_PATH names another tool ({given})")
        return
    if not _core._nvtx_tool:
        raise RuntimeError("this gpuprobe was built without the NVTX3 headers")
    os.environ["NVTX_INJECTION64_PATH"] = _core.__file__


def _arm_steps(torch):
    """A step ends at each step() of the first optimizer that steps (a GAN's second optimizer,
    stepping in the same iteration, would halve every step). Its first step() only marks where
    step 0 begins: before it come the program's imports, its set-up and its first iteration,
    which are no step (the session began at interpreter start). The hook never raises into the
    optimizer."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    from gpuprobe.torch.modules import step

    marker = []  # a weak reference to the optimizer whose steps are the steps

    def after_optimizer_step(optimizer, args, kwargs):
        try:
            if not marker:
                marker.append(weakref.ref(optimizer))
                _core._begin_steps()
            elif marker[0]() is optimizer:
                step()
        except Exception as e:  # noqa: BLE001 - a step not recorded never fails the program
            _say(f"step not recorded: {e!r}")

    register_optimizer_step_post_hook(after_optimizer_step)


_compile_watcher = []


def _arm_compile():
    from gpuprobe.torch import watch_compile

    _compile_watcher.append(watch_compile())


def _arm_data(torch):
    """Each next batch of every DataLoader is a range "dataloader next": the method is wrapped
    on the iterators' base class, so the iterators keep their types (isinstance checks, the
    attributes libraries read) and nothing else about them changes."""
    from torch.utils.data import dataloader

    base = getattr(dataloader, "_BaseDataLoaderIter", None)
    original = base.__dict__.get("__next__") if base is not None else None
    if original is None:
        raise RuntimeError("this torch's DataLoader iterators have no _BaseDataLoaderIter.__next__")
    wait = _core.event_names["data_wait"]
    begin, end = _core._begin, _core._end

    def __next__(self):
        token = begin(wait, "torch")
        try:
            return original(self)
        finally:
            end(token)

    __next__.__wrapped__ = original
    __next__.__name__ = original.__name__
    __next__.__qualname__ = original.__qualname__
    base.__next__ = __next__
