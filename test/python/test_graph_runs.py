"""`_core.graph_runs`, the C wrapper gpuprobe.torch.watch_compile() puts on Inductor's
CompiledFxGraph.__call__: a graph's first run and graphs next to a graph break go to the Python
wrapper; later runs are a range around torch's call, recorded like any other, whatever the call
returns or raises. (Its use on a real compiled model: test_compile_accounting.py.)"""
import gc

import pytest

import gpuprobe
from gpuprobe import _core
from trace_util import inside, load_events, named

FORWARD = _core.range("graph forward", "torch")
BACKWARD = _core.range("graph backward", "torch")


def make_graph_class(slow_calls):
    class Graph:
        def __init__(self, run=None):
            if run is not None:
                self._gpuprobe_run = run

        def __call__(self, inputs):
            if inputs == "raise":
                raise KeyError("inside the graph")
            with gpuprobe.range("kernel launches"):
                return inputs * 2

    original = Graph.__call__

    def slow(graph, inputs):
        slow_calls.append(inputs)
        return original(graph, inputs)

    Graph.__call__ = _core.graph_runs(original, slow, FORWARD, BACKWARD)
    return Graph


def test_later_runs_are_ranges_and_the_rest_goes_to_python(tmp_path):
    slow_calls = []
    Graph = make_graph_class(slow_calls)
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        assert Graph()(1) == 2  # not run yet: the Python wrapper
        assert Graph((0, False, False, False))(2) == 4  # forward, no break near: the range
        assert Graph((0, False, False, True))(3) == 6  # backward
        assert Graph((0, True, False, False))(4) == 8  # a resume function: Python
        assert Graph((0, False, True, False))(5) == 10  # a frame with a break: Python
        assert Graph((0, False, False, False)).__call__(6) == 12  # bound through the instance
    assert slow_calls == [1, 4, 5]
    events = load_events(path)
    forward, backward = named(events, "graph forward"), named(events, "graph backward")
    launches = named(events, "kernel launches")
    assert len(forward) == 2 and len(backward) == 1 and len(launches) == 6
    assert all(any(inside(k, r) for k in launches) for r in forward + backward)
    assert forward[0]["cat"] == "torch"


def test_an_exception_propagates_and_the_range_still_closes(tmp_path):
    Graph = make_graph_class([])
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        with gpuprobe.range("outer"):
            with pytest.raises(KeyError, match="inside the graph"):
                Graph((0, False, False, False))("raise")
    events = load_events(path)
    (outer,) = named(events, "outer")
    (forward,) = named(events, "graph forward")
    assert inside(forward, outer)


def test_without_a_session_it_only_calls_and_it_is_collected():
    slow_calls = []
    Graph = make_graph_class(slow_calls)
    assert Graph((0, False, False, False))(7) == 14 and slow_calls == []
    assert isinstance(Graph.__dict__["__call__"], _core.graph_runs)
    del Graph
    gc.collect()  # a cycle through the class and its wrapper: collected without a crash


def test_bad_arguments_are_one_type_error():
    with pytest.raises(TypeError, match="two callables, two ranges"):
        _core.graph_runs(len, len, "not a range", BACKWARD)
    with pytest.raises(TypeError):
        _core.graph_runs(len)


def test_a_range_object_reused_across_sessions_keeps_its_name(tmp_path):
    # The object keeps its interned name for one session only: later sessions free names a
    # session before them used, and this one must look its name up again in each.
    reused = gpuprobe.range("reused across sessions")
    for i in range(3):
        path = tmp_path / f"t{i}.json"
        with gpuprobe.Session(f"chrome={path}"):
            for _ in range(2):
                with reused:
                    pass
            with gpuprobe.range(f"other name {i}"):
                pass
        events = load_events(path)
        assert len(named(events, "reused across sessions")) == 2, i
        assert len(named(events, f"other name {i}")) == 1, i


def test_remembered_graphs_stay_right_when_graphs_die_alternate_or_change(tmp_path):
    # graph_runs remembers a few graphs' ranges (by a weak reference): graphs made and freed at
    # one address with other runs, more graphs alternating than it remembers, a graph whose
    # attribute the watcher takes away (it then calls _graph_runs_changed), and a graph class
    # that takes no weak references all take the path their own attribute says.
    slow_calls = []
    Graph = make_graph_class(slow_calls)
    runs = [(0, False, False, False), (0, False, False, True), (0, False, True, False)]
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        for i in range(30):  # each graph freed after its run: addresses come back
            assert Graph(runs[i % 3])(i) == 2 * i
        kept = [Graph(runs[i % 2]) for i in range(6)]  # six alternating, four remembered
        for _ in range(3):
            for i, g in enumerate(kept):
                g(100 + i)
        changed = kept[0]
        changed(198)  # remembered again (six alternating graphs push each other out)
        del changed._gpuprobe_run  # what the watcher's post_compile does...
        changed(199)  # ...remembered: the attribute is not read again
        _core._graph_runs_changed()  # ...and then it says so
        changed(200)  # no attribute: the Python wrapper

        class Slotted:  # no __weakref__: nothing remembered, the attribute read each run
            __slots__ = ("_gpuprobe_run",)

            def __init__(self, run):
                self._gpuprobe_run = run

        Slotted.__call__ = _core.graph_runs(lambda graph, x: x * 2, slow_calls.append, FORWARD,
                                            BACKWARD)
        slotted = Slotted(runs[0])
        with pytest.raises(TypeError):
            __import__("weakref").ref(slotted)
        assert slotted(300) == 600 and slotted(301) == 602
    events = load_events(path)
    assert slow_calls == [i for i in range(30) if i % 3 == 2] + [200]
    forward, backward = named(events, "graph forward"), named(events, "graph backward")
    assert len(forward) == 10 + 9 + 2 + 2 and len(backward) == 10 + 9
