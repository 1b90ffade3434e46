"""Put first on a child's PYTHONPATH by `gpuprobe run`: imports gpuprobe (which starts the
GPUPROBE session), runs the sitecustomize the program would otherwise have loaded, then arms the
PyTorch hooks (gpuprobe._autorun). Never raises: a failure here is one line on stderr and the
program runs as without gpuprobe."""


def _import_autorun():
    import os
    import sys

    # NVTX_INJECTION64_PATH stays the runner's libgpuprobe_nvtx.so: NVTX loads it here too, at
    # the session's start, and it hands every module's NVTX calls to _core, whose session records
    # (session/cuda_injection.h); the program's native children find it there for their own.
    try:
        try:
            from gpuprobe import _autorun
        except ImportError:
            # This Python does not see gpuprobe by itself: the runner's copy, at the end of the
            # path so that nothing else the program imports changes.
            package = os.environ.get("GPUPROBE_RUN_PACKAGE")
            if not package:
                raise
            sys.path.append(package)
            from gpuprobe import _autorun
        return _autorun
    except BaseException as e:  # noqa: BLE001 - the host program must start whatever happens
        sys.stderr.write(f"gpuprobe run: gpuprobe could not be imported ({e!r}); not tracing\n")
        return None


def _chain():
    """Runs the `sitecustomize` the interpreter would have imported without this one first on
    the path; as site.py does, its errors are printed, never raised."""
    import importlib.machinery
    import importlib.util
    import os
    import sys

    own_dir = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != own_dir]
    try:
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - as site.py: say it, go on
        sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                         f"{type(e).__name__}: {e}\n")


_autorun = _import_autorun()
_chain()
if _autorun is not None:
    try:
        _autorun.start()
    except BaseException:  # noqa: BLE001 - start() guards each part; this is the last net
        pass
del _import_autorun, _chain, _autorun
