"""`gpuprobe.torch.compare(model, torch.compile(model), x, per_module=True)`: every module's
outputs, eager against compiled, in execution order, and the first module whose outputs diverge
— on a model where one module, planted, computes differently when compiled (its error measured
independently: the planted offset), and on the same model clean, where nothing diverges."""
import pytest

torch = pytest.importorskip("torch")
import gpuprobe.torch as gt  # noqa: E402

OFFSET = 1e-3  # what the planted module adds when compiled


class Drift(torch.nn.Module):
    """Identity eagerly; adds OFFSET when Dynamo traces it (planted)."""

    def __init__(self, planted):
        super().__init__()
        self.planted = planted

    def forward(self, x):
        if self.planted and torch.compiler.is_compiling():
            return x + OFFSET
        return x * 1.0


class Net(torch.nn.Module):
    def __init__(self, planted):
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Linear(16, 32)
        self.act = torch.nn.GELU()
        self.drift = Drift(planted)
        self.head = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(),
                                        torch.nn.Linear(32, 4))

    def forward(self, x):
        return self.head(self.drift(self.act(self.embed(x))))


ORDER = ["embed", "act", "drift", "head.0", "head.1", "head.2", "head", "Net"]


def compared(planted):
    torch._dynamo.reset()
    model = Net(planted)
    compiled = torch.compile(model)
    x = torch.randn(8, 16)
    compiled(x)  # the user's compiled model, already run
    result = gt.compare(model, compiled, x, rtol=1e-5, atol=1e-6, warmup=1, runs=2,
                        per_module=True)
    return result, model, compiled, x


def test_the_first_divergent_module_is_the_planted_one():
    result, _, _, _ = compared(planted=True)
    assert [m["module"] for m in result.modules] == ORDER  # the order modules returned
    assert all(m["observed"] for m in result.modules)
    assert result.first_divergent == "drift"
    by_name = {m["module"]: m for m in result.modules}
    for before in ("embed", "act"):
        assert by_name[before]["passed"] and by_name[before]["max_abs_error"] < 1e-6
    # The planted module's error is the planted offset, everywhere.
    assert by_name["drift"]["passed"] is False
    assert by_name["drift"]["max_abs_error"] == pytest.approx(OFFSET, rel=0.2)
    for after in ("head.0", "head", "Net"):  # it propagates downstream
        assert by_name[after]["passed"] is False
    assert not result.passed


def test_a_clean_model_diverges_nowhere_and_the_users_compiled_model_is_untouched():
    result, model, compiled, x = compared(planted=False)
    assert result.passed and result.first_divergent is None
    assert all(m["passed"] for m in result.modules)
    # The user's compiled model still runs its own compiled code, without the hooks.
    assert not any(m._forward_hooks for m in model.modules())
    assert torch.allclose(compiled(x), model(x), atol=1e-6)


def test_per_module_needs_a_module_and_its_compiled_form():
    with pytest.raises(ValueError, match="per_module"):
        gt.compare(torch.sin, torch.compile(torch.sin), torch.ones(3), per_module=True)
