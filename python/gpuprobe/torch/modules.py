"""Module ranges (a range per forward and backward) and steps (one per optimizer step, with the
CUDA allocator's statistics)."""
import functools
import sys
import threading
import weakref

import gpuprobe
from gpuprobe import _core
from gpuprobe.torch import backward_ranges
from gpuprobe.torch._common import FeatureUnavailable, _torch
from gpuprobe.torch.allocator import record_allocator_stats
from gpuprobe.torch.compile import _watchers


class _InputNodes(threading.local):
    """Inputs' autograd nodes, noted by a module's pre-hook for its post-hook (an in-place module
    has changed its input's grad_fn by then): per thread, (module, nodes), innermost last. An
    attribute set in __init__, as a missing one costs an exception at each look (0.6 us)."""

    def __init__(self):
        self.stack = []


_inputs = _InputNodes()
_told_compiled = False
_watching_compiles = False


def _module_hooks(fwd, bwd, compiling, grad_enabled, recording, gate):
    """The (pre, post) forward hooks of one module: its forward range ``fwd``, and, when ``bwd``
    is a range, the notes its backward range needs (backward_ranges). Inside code that Dynamo
    traces, each hook returns at its first line, which Dynamo folds away: no graph break, no
    guard on gpuprobe's state, nothing recorded (the compiled graphs' runs are, by
    watch_compile). With no session the pre-hook stops at the gate word (``gate[0]``, a read of
    memory, no call); the post-hook's exit of a range never entered is a no-op."""
    enter, exit_ = type(fwd).__enter__, type(fwd).__exit__
    if bwd is None:
        def pre(module, args):
            if compiling() or not gate[0]:
                return
            enter(fwd)

        def post(module, args, output):
            if compiling():
                return
            exit_(fwd, None, None, None)

        return pre, post

    noted = []  # not empty once this module's pre-hook has noted inputs (on any thread)

    def pre(module, args):
        if compiling() or not gate[0]:
            return
        enter(fwd)
        if grad_enabled() and recording():
            noted or noted.append(True)
            _inputs.stack.append((module, backward_ranges.grad_nodes(args, [])))

    def post(module, args, output):
        if compiling():
            return
        exit_(fwd, None, None, None)
        if not noted:
            return
        stack = _inputs.stack
        if stack and stack[-1][0] is module:
            nodes = stack.pop()[1]
            if grad_enabled():
                backward_ranges.attach(bwd, nodes, output)

    return pre, post


def _say_compiled_once(*_args):
    global _told_compiled
    if not _told_compiled:
        _told_compiled = True
        sys.stderr.write(
            "gpuprobe: module ranges are not recorded inside code torch.compile compiles (the "
            "hooks compile away, so the program compiles as without gpuprobe); "
            "gpuprobe.torch.watch_compile() records each compiled graph's runs\n")


def instrument(model, *, backward=True, prefix=None):
    """Records a range per module forward (category "torch"), named by the module's path in
    ``model`` ("encoder.layers.0.attn"), and backward ranges ("<path> backward", from autograd's
    own nodes: see backward_ranges): with ``backward=True`` for ``model`` and every module that
    has children (a block, a layer: the backward no other tool names), with ``"all"`` for the
    leaves too (a Linear's backward is its own autograd node, whose kernels the trace names
    already; noting it costs torch's Node.register_prehook per call, several µs), with False for
    none. Never changes what the
    program computes or compiles: the hooks only observe, and code that torch.compile compiles
    runs none of them (said once on stderr; watch_compile() records the compiled graphs' runs).
    With no session recording, a module call costs its two hook calls, in C, and nothing more.
    A module instrumented already keeps its first name; a copy of an instrumented module
    (``copy.deepcopy``, DataParallel's replicas) records under its original's names from its
    first call while a session records. A model saved whole while instrumented
    (``torch.save(model)``) loads without gpuprobe: its hooks pickle as no-ops (C hooks, torch
    >= 2.5); ``torch.jit.script(model)`` compiles it without gpuprobe's hooks (the scripted
    module records no module ranges; said once). Returns a handle whose ``remove()`` undoes it."""
    torch = _torch()
    if backward not in (True, False, "all"):
        raise ValueError(f"backward must be True, False or 'all', not {backward!r}")
    leaves = backward == "all"
    backward = bool(backward) and hasattr(torch.autograd.graph, "Node") and hasattr(
        torch.autograd.graph.Node, "register_prehook")
    if backward:
        backward_ranges._bind(_core.range, torch.Tensor)
    in_c = _c_hooks_usable(torch)
    if not in_c:
        compiling = _compiling_check(torch)
        gate = _core._gate_view().cast("Q")
    handles = []
    owned = []  # the table's entries this call made
    root = prefix or type(model).__name__
    for path, module in model.named_modules():
        key = id(module)
        if key in _direct:  # instrumented already, by a handle not removed: keeps its name
            continue
        # A copy of an instrumented module carries gpuprobe's hooks already. The C ones look
        # the module up by id: it gets its own names and no second pair of hooks. Python ones
        # are bound to the original's names: it keeps those.
        inherited = any(_is_ours(h) for h in module._forward_pre_hooks.values())
        if inherited and not in_c:
            continue
        name = f"{root}.{path}" if path else root
        wants_backward = backward and (leaves or not path or next(module.children(), None)
                                       is not None)
        entry = (_core.range(name, "torch"),
                 _core.range(name + " backward", "torch") if wants_backward else None)
        # A module dropped without remove() leaves the table before its id can name another.
        dropped = weakref.finalize(module, _forget, key)
        dropped.atexit = False
        _instrumented[key] = _direct[key] = entry
        owned.append((key, entry, dropped, inherited))
        if inherited:
            continue
        if in_c:
            pre, post = _core.module_pre_hook, _core.module_post_hook
        else:
            pre, post = _module_hooks(*entry, compiling, torch.is_grad_enabled,
                                      _core._torch_recording, gate)
            pre._gpuprobe_hook = post._gpuprobe_hook = True
            _not_a_frame_to_compile(pre, post)
        handles.append(module.register_forward_pre_hook(pre))
        if in_c:  # a copy of the module carries this hook under this id: _adopt
            _by_handle[handles[-1].id] = entry
        try:  # torch >= 2.1: the post-hook runs when the forward raises too
            handles.append(module.register_forward_hook(post, always_call=True))
        except TypeError:
            handles.append(module.register_forward_hook(post))
    _watch_for_compiles()
    _script_without_hooks(torch)
    return _Handles(handles, owned)


# {id(module): (forward range, backward range or None)}: every module instrument() has hooked
# and not yet unhooked, which the C hooks (_core.module_pre_hook) look their module up in.
_instrumented = {}
# {pre-hook handle id: the entry}: an instrumented module's copy (copy.deepcopy, DataParallel's
# replicas) holds the same hook under the same handle id, by which _adopt finds its names; and
# {handle id: ids of the copies adopted}, for remove().
_by_handle = {}
_adopted = {}
# {id(module): entry}: the modules instrument() itself hooked (or named, for a copy), which a
# later instrument() leaves as they are.
_direct = {}
_c_hooks = None


def _forget(key):
    """A module is gone: its id leaves the tables before it can name another."""
    _instrumented.pop(key, None)
    _direct.pop(key, None)  # whether the C hooks are in use: decided at the first instrument()


def _compiling_check(torch):
    compiler = getattr(torch, "compiler", None)
    compiling = getattr(compiler, "is_dynamo_compiling", None) or getattr(
        compiler, "is_compiling", None)
    if compiling is None:
        raise FeatureUnavailable("this torch has no torch.compiler.is_compiling (torch >= 2.1)")
    return compiling


def _c_hooks_usable(torch):
    """Whether the hooks can be _core's C functions: torch >= 2.5 lets Dynamo inline a Python
    stand-in in their place (torch.compiler.substitute_in_graph), so that traced code neither
    breaks on them nor reads gpuprobe's state. Older torch gets the Python hooks."""
    global _c_hooks
    if _c_hooks is None:
        substitute = getattr(getattr(torch, "compiler", None), "substitute_in_graph", None)
        _c_hooks = False
        if substitute is not None:
            try:
                substitute(_core.module_pre_hook)(_traced_pre_hook)
                substitute(_core.module_post_hook)(_traced_post_hook)
                _c_hooks = True
            except (TypeError, ValueError, ImportError, AttributeError) as e:
                sys.stderr.write(f"gpuprobe: module hooks in Python ({e})\n")
        _core._module_hooks_bind(_instrumented, torch.is_grad_enabled, torch.Tensor,
                                 backward_ranges._run_node, functools.partial, _adopt)
    return _c_hooks


def _adopt(module):
    """The entry of a module _core's hooks met while recording but do not know: a copy of an
    instrumented module (``copy.deepcopy(model)``, DataParallel's replicas, which share or copy
    the hook dicts, handle ids and all) records under the original's names from now on;
    anything else is noted as not recorded (``(None, None)``), so that it is asked about once.
    The hooks call it only while a session records, once per module: never raises."""
    entry = None
    try:
        key = id(module)
        dropped = weakref.finalize(module, _forget, key)  # first: no entry outlives its module
        dropped.atexit = False
        hooks = getattr(module, "_forward_pre_hooks", None) or {}
        for handle_id, hook in list(hooks.items()):
            if hook is _core.module_pre_hook and handle_id in _by_handle:
                entry = _by_handle[handle_id]
                _adopted.setdefault(handle_id, weakref.WeakSet()).add(module)
                break
        _instrumented[key] = entry or (None, None)
    except Exception:  # noqa: BLE001 - a hook never raises into the program
        return None
    return entry


def _traced_pre_hook(module, args, /):
    """What Dynamo runs for _core.module_pre_hook in code it traces: nothing."""
    return None


def _traced_post_hook(module, args, output, /):
    """What Dynamo runs for _core.module_post_hook in code it traces: nothing."""
    return None


_skipped_codes = set()


def _not_a_frame_to_compile(*hooks):
    """Tells Dynamo never to compile a hook as a frame of its own. A compiled module's own hooks
    run from its eager ``__call__``, where Dynamo would otherwise compile each one as a frame
    (an empty one, and those of the functions it calls: more frames, and a recompile each when grad mode changes, than without
    gpuprobe). Inlined into traced code — a submodule's hooks — they still fold away."""
    try:  # torch >= 2.6; older ones compile the frames (which record nothing)
        from torch._dynamo.eval_frame import (FrameAction, FrameExecStrategy,
                                              set_code_exec_strategy)
    except ImportError:
        return
    for hook in hooks:
        code = hook.__code__
        if code not in _skipped_codes:
            _skipped_codes.add(code)
            # SKIP for the hook and for every frame it calls (backward_ranges' functions).
            set_code_exec_strategy(code, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))


def _is_ours(hook):
    return (hook is _core.module_pre_hook or hook is _core.module_post_hook
            or getattr(hook, "_gpuprobe_hook", None) is True)


def _hide_hooks(model):
    """Takes gpuprobe's hooks out of the hook dicts of ``model`` and its submodules (the
    pre-hooks first, so that no range begins that would not end); returns what _put_back_hooks
    needs to put them back where they were."""
    saved = []
    modules = list(model.modules())
    for attr in ("_forward_pre_hooks", "_forward_hooks"):
        for module in modules:
            hooks = getattr(module, attr)
            order = list(hooks)
            ours = {key: hook for key, hook in list(hooks.items()) if _is_ours(hook)}
            if ours:
                saved.append((hooks, order, ours))
                for key in ours:
                    hooks.pop(key, None)
    return saved


def _put_back_hooks(saved):
    """Each hidden hook back in its dict (the post-hooks first), in the place it had among the
    hooks there before; hooks added or removed meanwhile stay added or removed."""
    for hooks, order, ours in reversed(saved):
        for key, hook in ours.items():
            hooks[key] = hook
        if not hasattr(hooks, "move_to_end"):
            continue
        place = {key: i for i, key in enumerate(order)}
        # Keys of before, in their order, then those added meanwhile, in theirs.
        for key in sorted(hooks, key=lambda k: (k not in place, place.get(k, 0))):
            hooks.move_to_end(key)


_scripting = threading.RLock()  # one torch.jit.script hides and puts back at a time
_told_scripted = False


def _script_without_hooks(torch):
    """torch.jit.script compiles a module's forward hooks with it, and cannot compile
    gpuprobe's (C functions, or Python ones calling into C): scripting an instrumented model
    would raise. While torch.jit.script builds a module from an ``nn.Module``, gpuprobe's hooks
    are out of its hook dicts and put back, in their order, when it returns: the scripted module
    computes what it would without gpuprobe and records no module ranges (said once); the model
    itself keeps them. Hooks of the program's own are compiled as ever. A forward of the same
    model on another thread while it is being scripted may miss its module ranges."""
    recursive = getattr(getattr(torch, "jit", None), "_recursive", None)
    create = getattr(recursive, "create_script_module", None)
    if create is None or getattr(create, "_gpuprobe_wrapped", False):
        return

    @functools.wraps(create)
    def create_script_module(nn_module, *args, **kwargs):
        global _told_scripted
        if not isinstance(nn_module, torch.nn.Module):
            return create(nn_module, *args, **kwargs)
        with _scripting:  # re-entered by TorchScript for submodules: hides nothing more then
            saved = _hide_hooks(nn_module)
            if saved and not _told_scripted:
                _told_scripted = True
                sys.stderr.write("gpuprobe: torch.jit.script compiles the model without "
                                 "gpuprobe's hooks: the scripted module records no module "
                                 "ranges\n")
            try:
                return create(nn_module, *args, **kwargs)
            finally:
                _put_back_hooks(saved)

    create_script_module._gpuprobe_wrapped = True
    recursive.create_script_module = create_script_module


def _watch_for_compiles():
    global _watching_compiles
    if _watching_compiles:
        return
    _watching_compiles = True
    try:
        from torch._dynamo import callback as dynamo_callback
        dynamo_callback.callback_handler.register_start_callback(_say_compiled_once)
    except (ImportError, AttributeError):
        pass


class _Handles:
    def __init__(self, handles, owned):
        self._handles = handles
        self._owned = owned

    def remove(self):
        for h in self._handles:
            entry = _by_handle.pop(h.id, None)
            for module in list(_adopted.pop(h.id, ())):  # copies' hooks stay, recording nothing
                if entry is not None and _instrumented.get(id(module)) is entry:
                    _instrumented[id(module)] = (None, None)
            h.remove()
        self._handles = []
        for key, entry, dropped, inherited in self._owned:
            dropped.detach()
            if _direct.get(key) is entry:  # else its module died and the id moved on
                del _direct[key]
            if _instrumented.get(key) is entry:
                if inherited:  # a copy's hooks stay, recording nothing
                    _instrumented[key] = (None, None)
                else:
                    del _instrumented[key]
        self._owned = []


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
