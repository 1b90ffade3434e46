"""Module ranges for every nn.Module a program calls, without touching its code (`gpuprobe run`):
torch's global forward hooks count how deep each module call is on its thread, and the calls of
the outermost ``depth`` levels are ranges (category torch), named by the path of the module in
the outermost module called ("ResNet.layer1"), or by its class where it has none.

As gpuprobe.torch.instrument's hooks, these never change what torch.compile makes of a program:
inside code Dynamo traces each hook returns at its first line, which folds away (no graph break,
no guard on gpuprobe's state), and Dynamo is told never to compile the hooks as frames of their
own. The compiled graphs' runs are recorded by watch_compile."""
import threading
import warnings
import weakref

from gpuprobe import _core


class _Calls(threading.local):
    """Per thread: the module calls open, outermost first, as (module, range token or None)."""

    def __init__(self):
        self.stack = []


def _paths_of(root, depth):
    """id(module) -> its path in ``root``, for the modules less than ``depth`` levels down."""
    paths = {}
    inner = getattr(root, "_orig_mod", None)  # torch.compile's OptimizedModule: named as its module
    if inner is not None:
        paths[id(root)] = type(inner).__name__
        root = inner
    name = type(root).__name__

    def walk(module, path, level):
        if id(module) not in paths:
            paths[id(module)] = path
        if level + 1 >= depth:
            return
        for child_name, child in module.named_children():
            walk(child, f"{path}.{child_name}", level + 1)

    walk(root, name, 0)
    return paths


def arm_modules(torch, depth):
    """Registers the global hooks; returns their handles."""
    from torch.nn.modules.module import (register_module_forward_hook,
                                         register_module_forward_pre_hook)

    from gpuprobe.torch.modules import _compiling_check, _not_a_frame_to_compile

    compiling = _compiling_check(torch)
    calls = _Calls()
    paths = weakref.WeakKeyDictionary()  # outermost module -> _paths_of it
    begin, end = _core._begin, _core._end

    def pre(module, args):
        if compiling():
            return
        stack = calls.stack
        level = len(stack)
        token = None
        if level < depth:
            try:
                root = stack[0][0] if stack else module
                names = paths.get(root)
                if names is None:
                    names = paths[root] = _paths_of(root, depth)
                token = begin(names.get(id(module)) or type(module).__name__, "torch")
            except Exception:  # noqa: BLE001 - a module that cannot be walked gets no range
                token = None
        stack.append((module, token))

    def post(module, args, output):
        if compiling():
            return
        stack = calls.stack
        # Pops to this module's own call: a call whose post-hook never ran (no always_call in
        # this torch, and a forward that raised) is closed with it.
        while stack:
            entry = stack.pop()
            if entry[1] is not None:
                end(entry[1])
            if entry[0] is module:
                break

    _not_a_frame_to_compile(pre, post)
    # torch.compile(module) warns when global module hooks exist (they also run for the
    # OptimizedModule): a warning the program would not have had, an error under -W error.
    warnings.filterwarnings("ignore", message=r"Using `torch\.compile\(module\)` when there are "
                            r"global hooks on modules")
    handles = [register_module_forward_pre_hook(pre)]
    try:  # torch >= 2.1: the post-hook runs when the forward raises too
        handles.append(register_module_forward_hook(post, always_call=True))
    except TypeError:
        handles.append(register_module_forward_hook(post))
    return handles
