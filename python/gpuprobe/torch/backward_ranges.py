"""Module backward ranges from autograd's own graph, without wrapping any tensor.

Full backward hooks (``register_full_backward_hook``) pass a module's inputs and outputs through
an identity autograd function, which changes the graph the program runs: an in-place op on such
an output (torchvision's and timm's ``ReLU(inplace=True)`` after a convolution) raises "Output 0
of BackwardHookFunction is a view and is being modified inplace", and the extra nodes can change
the order in which gradients are summed (the last bits of a BERT's gradients). This module only
observes: during a forward that records, it notes the autograd nodes that made the module's
outputs and those that made its inputs, and hangs a pre-hook on each node (``Node.register_prehook``,
which sees the gradients and returns None, so changes nothing):

- a module's backward begins when the node that made one of its outputs is about to run;
- it ends when a node that made one of its inputs is about to run: the gradients with respect to
  its inputs are then complete (for an input also used elsewhere — a residual — once those other
  uses' gradients are in too);
- a module none of whose inputs came out of autograd (the first layer, given data; the whole
  model) ends at the end of the backward pass (the engine's final callback), on the thread that
  began it.

A node shared by several modules (one module's output is the next one's input) runs its ends
first, innermost first, then its begins, outermost first, so the ranges nest as the modules do.
Ranges are the thread's own (a node's hooks run on the thread that runs the node); an end that
comes on another thread than its begin is dropped, and the entry is ended at its module's next
backward.
"""
import functools
import threading

_KEY = "gpuprobe"  # in Node.metadata: the node's (ends, begins) lists
_enter = None
_exit = None


class _State(threading.local):
    """Per thread: the backward ranges open, {range: its forward's token}, and those to end at
    the end of the backward pass, [(range, token)]."""

    def __init__(self):
        self.open = {}
        self.final = []


_state = _State()


_Tensor = None


def _bind(range_type, tensor_type):
    global _enter, _exit, _Tensor
    _enter, _exit = range_type.__enter__, range_type.__exit__
    _Tensor = tensor_type


def _run_node(actions, _grad_outputs):
    ends, begins = actions
    opened = _state.open
    for r, token in ends:
        if opened.get(r) is token:
            del opened[r]
            _exit(r, None, None, None)
    for r, token, at_end in begins:
        current = opened.get(r)
        if current is token:
            continue  # begun already, at another of the module's outputs
        if current is not None:
            _exit(r, None, None, None)  # a stale entry: its end came on another thread
        _enter(r)
        opened[r] = token
        if at_end:
            _end_at_backward_end(r, token)


def _end_at_backward_end(r, token):
    pending = _state.final
    if not pending:
        import torch  # imported: this runs inside a backward pass

        torch.autograd.Variable._execution_engine.queue_callback(
            functools.partial(_end_pending, threading.get_ident(), pending))
    pending.append((r, token))


def _end_pending(thread, pending):
    if threading.get_ident() == thread:
        opened = _state.open
        for r, token in reversed(pending):
            if opened.get(r) is token:
                del opened[r]
                _exit(r, None, None, None)
    pending.clear()


def _actions(node):
    meta = node.metadata
    actions = meta.get(_KEY)
    if actions is None:
        actions = meta[_KEY] = ([], [])
        node.register_prehook(functools.partial(_run_node, actions))
    return actions


def grad_nodes(values, out):
    """Appends to ``out`` the autograd nodes (grad_fn) of the tensors in ``values`` (a tensor, or
    a tuple, list or dict of them, one level deep, as modules take and return), each once."""
    Tensor = _Tensor
    if isinstance(values, Tensor):
        values = (values,)
    elif isinstance(values, dict):
        values = values.values()
    elif not isinstance(values, (tuple, list)):
        return out
    for v in values:
        if isinstance(v, Tensor):
            node = v.grad_fn
            if node is not None and node not in out:
                out.append(node)
    return out


def attach(backward_range, input_nodes, output):
    """Hangs the backward range of a module that just ran forward on the nodes that made its
    outputs (begin) and its inputs (end)."""
    outputs = grad_nodes(output, [])
    if not outputs:
        return
    token = object()  # this forward's: a backward range begins and ends once per forward
    at_end = not input_nodes
    for node in outputs:
        # Later attachments on one node are outer modules (forward hooks run innermost first):
        # their begins go first.
        _actions(node)[1].insert(0, (backward_range, token, at_end))
    for node in input_nodes:
        _actions(node)[0].append((backward_range, token))
