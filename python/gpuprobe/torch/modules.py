"""Module ranges (a range per forward and backward) and steps (one per optimizer step, with the
CUDA allocator's statistics)."""
import sys
import threading

import gpuprobe
from gpuprobe import _core
from gpuprobe.torch._common import FeatureUnavailable, _torch
from gpuprobe.torch.allocator import record_allocator_stats
from gpuprobe.torch.compile import _watchers


def _range_hooks(name):
    """A (begin, end) pair of hook functions recording a range named ``name`` (category torch)
    from one to the other; per thread, so that concurrent forwards do not mix."""
    tokens = threading.local()

    def begin(*args):
        stack = getattr(tokens, "stack", None)
        if stack is None:
            stack = tokens.stack = []
        stack.append(_core._begin(name, "torch"))

    def end(*args):
        stack = getattr(tokens, "stack", None)
        if stack:
            _core._end(stack.pop())

    return begin, end


def instrument(model, *, backward=True, prefix=None):
    """Records a range per module forward (category "torch"), named by the module's path in
    ``model`` ("encoder.layers.0.attn"), and, where torch offers full backward hooks, one per
    module backward ("<path> backward"). Returns a handle whose ``remove()`` undoes it."""
    _torch()
    handles = []
    root = prefix or type(model).__name__
    for path, module in model.named_modules():
        name = f"{root}.{path}" if path else root
        begin, end = _range_hooks(name)
        handles.append(module.register_forward_pre_hook(begin))
        handles.append(module.register_forward_hook(end))
        if backward and hasattr(module, "register_full_backward_pre_hook"):
            begin, end = _range_hooks(name + " backward")
            handles.append(module.register_full_backward_pre_hook(begin))
            handles.append(module.register_full_backward_hook(end))
    return _Handles(handles)


class _Handles:
    def __init__(self, handles):
        self._handles = handles

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []


def step(number=None, *, allocator_stats=True):
    """Ends a step: ``gpuprobe.step()``, and the CUDA allocator's statistics as counters when
    CUDA is in use."""
    gpuprobe.step() if number is None else gpuprobe.step(number)
    for watcher in list(_watchers):
        watcher._collect_metrics()
    if allocator_stats:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            record_allocator_stats()


def instrument_optimizer(optimizer, *, allocator_stats=True):
    """Ends a gpuprobe step after each ``optimizer.step()`` (torch >= 2.0's step hooks)."""
    if not hasattr(optimizer, "register_step_post_hook"):
        raise FeatureUnavailable("this torch's optimizers have no register_step_post_hook")
    return optimizer.register_step_post_hook(lambda *a, **k: step(allocator_stats=allocator_stats))
