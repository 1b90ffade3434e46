"""gpuprobe.torch.instrument on third-party models (torchvision, timm, transformers from PyPI,
random weights, CPU): the failures a new user met (issue 40) — training that raised under full
backward hooks with in-place ReLUs, graph breaks and recompiles added under torch.compile,
gradients that changed in their last bits — each checked against the same program without
gpuprobe, bit for bit."""
# Every module, leaves included, gets its backward range (backward="all"): the most hooks on
# autograd's nodes instrument() can place, so that the identity checks hold for any setting.
import copy
import gc
import os
import subprocess
import sys
import textwrap
import weakref
from typing import Tuple

import pytest

torch = pytest.importorskip("torch")

import gpuprobe  # noqa: E402
import gpuprobe.torch as gt  # noqa: E402
from trace_util import load_events, named  # noqa: E402


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same reduction order in both runs, and a fair share of 2 cores
    yield
    torch.set_num_threads(threads)


def train_step(model, inputs, target):
    """One SGD step: the output, the loss, every parameter's gradient (dropout's draws seeded
    alike in each run)."""
    torch.manual_seed(1234)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    out = model(**inputs) if isinstance(inputs, dict) else model(inputs)
    logits = out if isinstance(out, torch.Tensor) else out.logits
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target)
    loss.backward()
    grads = [p.grad.clone() if p.grad is not None else None for p in model.parameters()]
    opt.step()
    return logits.detach(), loss.detach(), grads


def assert_identical(a, b):
    assert torch.equal(a[0], b[0]), "outputs differ"
    assert torch.equal(a[1], b[1]), "losses differ"
    assert len(a[2]) == len(b[2])
    for i, (x, y) in enumerate(zip(a[2], b[2])):
        assert (x is None) == (y is None), f"gradient {i}: present in one run only"
        if x is not None:
            assert torch.equal(x, y), f"gradient {i} differs (max {(x - y).abs().max().item()})"


def with_gpuprobe(tmp_path, model, fn):
    path = tmp_path / "trace.json"
    with gpuprobe.Session(f"chrome={path}"):
        handle = gt.instrument(model, backward="all")
        try:
            result = fn(model)
        finally:
            handle.remove()
    return result, load_events(path)


def torchvision_model(name):
    tv = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    return tv.models.get_model(name, num_classes=10)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v3_small"])
def test_torchvision_training_with_inplace_relu_is_unchanged(tmp_path, name):
    # Full backward hooks raised here: "Output 0 of BackwardHookFunction is a view and is being
    # modified inplace" (a ReLU(inplace=True) after a hooked module).
    base = torchvision_model(name)
    x = torch.randn(2, 3, 64, 64)
    y = torch.tensor([1, 7])
    want = train_step(copy.deepcopy(base), x, y)
    got, events = with_gpuprobe(tmp_path, copy.deepcopy(base), lambda m: train_step(m, x, y))
    assert_identical(want, got)
    root = type(base).__name__
    assert len(named(events, root)) == 1
    assert len(named(events, root + " backward")) == 1
    backward = [e for e in events if e.get("ph") == "X" and e["name"].endswith(" backward")]
    assert len(backward) > 20  # a range per module backward, not just the root's
    # Ranges of one thread nest: none overlaps another partly.
    spans = sorted(((e["tid"], e["ts"], e["ts"] + e["dur"]) for e in events
                    if e.get("ph") == "X" and e.get("cat") == "torch"), key=lambda s: (s[0], s[1], -s[2]))
    for (t0, b0, e0), (t1, b1, e1) in zip(spans, spans[1:]):
        if t0 == t1 and b1 < e0:
            assert e1 <= e0 + 1e-3, "partly overlapping module ranges"


def test_timm_resnet_training_is_unchanged(tmp_path):
    timm = pytest.importorskip("timm")
    torch.manual_seed(0)
    base = timm.create_model("resnet18", pretrained=False, num_classes=10)
    x = torch.randn(2, 3, 64, 64)
    y = torch.tensor([0, 9])
    want = train_step(copy.deepcopy(base), x, y)
    got, events = with_gpuprobe(tmp_path, copy.deepcopy(base), lambda m: train_step(m, x, y))
    assert_identical(want, got)
    assert named(events, "ResNet.layer1.0.conv1 backward")


def test_bert_gradients_are_bit_identical(tmp_path):
    # With full backward hooks, a BERT's gradients differed by up to 6e-8 from the same step
    # without gpuprobe (and were identical twice without it).
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64,
                                     max_position_embeddings=32, num_labels=3)
    torch.manual_seed(0)
    base = transformers.BertForSequenceClassification(config).eval()  # no dropout
    inputs = {"input_ids": torch.randint(0, 128, (2, 12)),
              "attention_mask": torch.ones(2, 12, dtype=torch.long)}
    y = torch.tensor([0, 2])
    want = train_step(copy.deepcopy(base), inputs, y)
    again = train_step(copy.deepcopy(base), inputs, y)
    assert_identical(want, again)  # the baseline itself is deterministic
    got, events = with_gpuprobe(tmp_path, copy.deepcopy(base),
                                lambda m: train_step(m, inputs, y))
    assert_identical(want, got)
    assert named(events, "BertForSequenceClassification.bert.encoder.layer.1.attention backward")


def dynamo_counts(fn):
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    result = fn()
    stats = dict(counters["stats"])
    return result, {"unique_graphs": stats.get("unique_graphs", 0),
                    "graph_breaks": sum(counters["graph_break"].values()),
                    "recompiles": sum(counters["recompiles"].values()),
                    # A compiled module's own hooks run from its eager __call__: Dynamo compiled
                    # each as a frame of its own (and again at each grad-mode change).
                    "frames": dict(counters["frames"])}


def test_instrument_adds_no_graph_break_to_a_sequential(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(5)])
    x = torch.randn(2, 8)
    torch._dynamo.reset()
    plain = torch._dynamo.explain(model)(x)
    handle = gt.instrument(model, backward="all")
    with gpuprobe.Session(f"chrome={tmp_path / 't.json'}"):
        torch._dynamo.reset()
        hooked = torch._dynamo.explain(model)(x)
    handle.remove()
    assert (plain.graph_count, plain.graph_break_count) == (1, 0)
    assert (hooked.graph_count, hooked.graph_break_count) == (1, 0)


def test_gpt2_serving_loop_compiles_the_same(tmp_path):
    # A GPT-2 serving loop padded to 3 lengths compiled 3 times without gpuprobe and 92 times
    # with instrument (a guard on gpuprobe's hook state), falling back to eager 6 times.
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(vocab_size=256, n_positions=64, n_embd=32, n_layer=2,
                                     n_head=2)
    torch.manual_seed(0)
    base = transformers.GPT2LMHeadModel(config).eval()
    lengths = [8, 16, 32, 8, 16, 32, 16, 8]
    prompts = [torch.randint(0, 256, (1, n), generator=torch.Generator().manual_seed(i))
               for i, n in enumerate(lengths)]

    def serve(model):
        compiled = torch.compile(model, backend="aot_eager", dynamic=False)
        with torch.no_grad():
            return [compiled(p).logits for p in prompts]

    want, want_counts = dynamo_counts(lambda: serve(copy.deepcopy(base)))
    model = copy.deepcopy(base)
    handle = gt.instrument(model, backward="all")
    watcher = gt.watch_compile()
    try:
        with gpuprobe.Session(f"chrome={tmp_path / 't.json'}"):
            got, got_counts = dynamo_counts(lambda: serve(model))
    finally:
        watcher.close()
        handle.remove()
    assert got_counts == want_counts
    assert want_counts["unique_graphs"] == 3 and want_counts["graph_breaks"] == 0
    for a, b in zip(want, got):
        assert torch.equal(a, b)


def test_compiled_model_says_once_that_module_ranges_compile_away(tmp_path):
    script = textwrap.dedent("""
        import torch, gpuprobe, gpuprobe.torch as gt
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        gt.instrument(model, backward="all")
        with gpuprobe.Session("chrome=%s"):
            compiled = torch.compile(model, backend="eager")
            for n in (2, 3, 4):
                compiled(torch.randn(n, 4))
            model(torch.randn(2, 4))
    """ % (tmp_path / "t.json"))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=300,
                       env={k: v for k, v in os.environ.items() if k != "TORCH_LOGS"})
    assert r.returncode == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if "module ranges are not recorded" in line]
    assert len(said) == 1, r.stderr
    events = load_events(tmp_path / "t.json")
    assert len(named(events, "Sequential")) == 1  # the eager call only


def test_forward_that_raises_leaves_no_range_open(tmp_path):
    class Flaky(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            y = self.lin(x)
            if self.calls == 1:
                raise RuntimeError("out of memory (simulated)")
            return y

    model = torch.nn.Sequential(Flaky())
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        handle = gt.instrument(model, backward="all")
        with pytest.raises(RuntimeError):
            model(torch.randn(2, 4))
        with gpuprobe.range("after"):
            model(torch.randn(2, 4)).sum().backward()
        handle.remove()
    events = load_events(path)
    outer = named(events, "Sequential")
    assert len(outer) == 2
    after = named(events, "after")[0]
    # The failed call's ranges ended with it (the post-hook runs when the forward raises), so
    # none spans into the later call.
    assert outer[0]["ts"] + outer[0]["dur"] <= after["ts"]
    assert named(events, "Sequential.0.lin backward")


class _RaisingTensor(torch.Tensor):
    """A tensor whose grad_fn raises ``error``: what the hooks meet when Python code they run (a
    tensor subclass's attribute, a GC callback, a signal handler) raises."""

    error = ValueError

    @property
    def grad_fn(self):
        raise type(self).error("from inside gpuprobe's hook")


def test_hook_errors_are_reported_and_interrupts_go_on(tmp_path):
    """An Exception inside a hook is reported as unraisable and the forward goes on with its
    result; a KeyboardInterrupt (Ctrl-C landing inside the hook) reaches the program, as it
    would from any Python code the forward ran."""
    model = torch.nn.Linear(3, 2)
    handle = gt.instrument(model, backward="all")
    x = torch.randn(2, 3, requires_grad=True).as_subclass(_RaisingTensor)
    seen = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = lambda u: seen.append(u.exc_type)
    try:
        with gpuprobe.Session(f"chrome={tmp_path / 't.json'}"):
            _RaisingTensor.error = ValueError
            expected = torch.nn.functional.linear(x, model.weight, model.bias)
            assert torch.equal(model(x), expected)
            assert ValueError in seen
            _RaisingTensor.error = KeyboardInterrupt
            with pytest.raises(KeyboardInterrupt):
                model(x)
    finally:
        sys.unraisablehook = old_hook
        _RaisingTensor.error = ValueError
        handle.remove()


def test_a_saved_instrumented_model_loads_without_gpuprobe(tmp_path):
    """torch.save(model) of an instrumented model (its hooks pickled with it) loads in a process
    that has no gpuprobe, and the loaded model computes what the original does; the hooks it
    carries do nothing there. In this process the original still records."""
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    gt.instrument(model)
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        expected = model(x)
    torch.save(model, tmp_path / "model.pt")
    torch.save((x, expected), tmp_path / "io.pt")
    load = textwrap.dedent(f"""
        import sys
        sys.modules["gpuprobe"] = None  # not importable: the pickle must not need it
        import torch
        torch.set_num_threads(1)
        model = torch.load({str(tmp_path / "model.pt")!r}, weights_only=False)
        x, expected = torch.load({str(tmp_path / "io.pt")!r})
        with torch.no_grad():
            print(torch.equal(model(x), expected), len(model._forward_pre_hooks))
    """)
    done = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "1"], done.stdout
    trace = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={trace}"):
        with torch.no_grad():
            model(x)
    assert named(load_events(trace), "ResNet.layer1")


def test_a_copy_of_an_instrumented_model_records_under_its_names(tmp_path):
    """copy.deepcopy of an instrumented model (what DataParallel's replicas, EMA copies and
    `best = deepcopy(model)` do) carries the hooks: its calls are recorded under the original's
    names, its results are the original's, and remove() stops the copy's recording too."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    x = torch.randn(3, 4)
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        handle = gt.instrument(model, backward=False)
        twin = copy.deepcopy(model)
        with gpuprobe.range("original"):
            expected = model(x)
        with gpuprobe.range("copy"):
            got = twin(x)
        original = weakref.ref(model)
        del model  # the copy outlives its original
        gc.collect()
        assert original() is None
        with gpuprobe.range("copy again"):
            twin(x)
        handle.remove()
        with gpuprobe.range("removed"):
            twin(x)
    assert torch.equal(expected, got)
    events = load_events(path)
    for outer, calls in (("original", 1), ("copy", 1), ("copy again", 1), ("removed", 0)):
        span = named(events, outer)[0]
        inside = [e for e in events if e.get("ph") == "X" and e["name"].startswith("Sequential")
                  and span["ts"] <= e["ts"] <= span["ts"] + span["dur"]]
        names = sorted(e["name"] for e in inside)
        assert names == sorted(["Sequential", "Sequential.0", "Sequential.1",
                                "Sequential.2"] * calls), (outer, names)


def test_torch_jit_script_of_an_instrumented_model_works_and_records_less(tmp_path):
    """torch.jit.script compiles a module's forward hooks, and cannot compile gpuprobe's: it
    raised on an instrumented model. Now the scripted module is built without them (computing
    what scripting without gpuprobe gives, the program's own hooks kept), and the model keeps its
    ranges, its hooks back in their order."""
    import warnings
    warnings.simplefilter("ignore", FutureWarning)  # TorchScript is deprecated in torch >= 2.10

    def own_hook(module, args: Tuple[torch.Tensor], output: torch.Tensor) -> torch.Tensor:
        return output * 2

    def build():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
        model[2].register_forward_hook(own_hook)
        return model

    x = torch.randn(3, 4)
    expected = torch.jit.script(build())(x)
    model = build()
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        handle = gt.instrument(model, backward=False)
        dicts = lambda: [(list(m._forward_pre_hooks.items()), list(m._forward_hooks.items()))
                         for m in model.modules()]  # noqa: E731
        before = dicts()
        scripted = torch.jit.script(model)
        assert dicts() == before  # every hook back, in its place
        with gpuprobe.range("scripted"):
            got = scripted(x)
        with gpuprobe.range("eager"):
            eager = model(x)
        handle.remove()
    assert torch.equal(got, expected) and torch.equal(eager, expected)
    events = load_events(path)
    for outer, calls in (("scripted", 0), ("eager", 1)):
        span = named(events, outer)[0]
        inside = [e for e in events if e.get("ph") == "X" and e["name"].startswith("Sequential")
                  and span["ts"] <= e["ts"] <= span["ts"] + span["dur"]]
        assert len(inside) == 4 * calls, (outer, [e["name"] for e in inside])


def test_an_instrumented_copy_gets_its_own_names_once_and_replicas_are_not_kept(tmp_path):
    """instrument() of a copy that carries the original's hooks names it anew, without a second
    pair of hooks (each call recorded once); replicas made per forward (as DataParallel makes
    them) are recorded under the original's names and not kept once gone."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    x = torch.randn(2, 4)
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        handle = gt.instrument(model, backward=False)
        ema = copy.deepcopy(model)
        ema_handle = gt.instrument(ema, backward=False, prefix="EMA")
        with gpuprobe.range("ema"):
            ema(x)
        with gpuprobe.range("replicas"):
            for _ in range(50):
                replica = model._replicate_for_data_parallel()
                replica(x)
                del replica
        gc.collect()
        from gpuprobe.torch import modules
        kept = sum(len(s) for s in modules._adopted.values())
        handle.remove()
        with gpuprobe.range("ema after the original's remove"):
            ema(x)
        ema_handle.remove()
    assert kept <= 2  # the replicas alive, not every one made
    events = load_events(path)

    def inside(outer):
        span = named(events, outer)[0]
        return sorted(e["name"] for e in events if e.get("ph") == "X" and e["name"] != outer
                      and span["ts"] <= e["ts"] <= span["ts"] + span["dur"])

    assert inside("ema") == ["EMA", "EMA.0", "EMA.1"]
    assert inside("ema after the original's remove") == ["EMA", "EMA.0", "EMA.1"]
    assert inside("replicas") == sorted(["Sequential", "Sequential.0", "Sequential.1"] * 50)


def test_hooks_added_while_gpuprobes_are_hidden_stay_and_ours_return_in_place():
    """What torch.jit.script's hiding does to hook dicts the program changes meanwhile: a hook
    added then stays (after those that were there), one removed then stays removed, and
    gpuprobe's come back where they were."""
    from gpuprobe.torch import modules
    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    first = model.register_forward_hook(lambda m, a, o: None)
    handle = gt.instrument(model, backward=False)
    last = model.register_forward_hook(lambda m, a, o: None)
    before = list(model._forward_hooks)
    saved = modules._hide_hooks(model)
    assert [k for k in model._forward_hooks] == [first.id, last.id]
    added = model.register_forward_hook(lambda m, a, o: None)
    first.remove()
    modules._put_back_hooks(saved)
    assert list(model._forward_hooks) == [k for k in before if k != first.id] + [added.id]
    handle.remove()
