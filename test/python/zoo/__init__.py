"""The model zoo (issue 40): torchvision's classification models, timm models of many families
and transformers architectures from tiny configs, each run (inference step and training step,
eager and torch.compile) without and with gpuprobe, which must change nothing: no new
exception, tensors bit-identical, Dynamo's graph, graph-break and recompile counts equal.

    zoo.models()           every Spec (spec.py), torchvision + timm + transformers
    zoo.run_case(spec, mode, tmpdir, backend)   one Case (case.py)
    python -m zoo --help   the zoo as a table (table.py)
"""
from zoo.case import Case, build, run_case
from zoo.spec import Spec


def models():
    """Every zoo model: torchvision's, then timm's, then transformers'."""
    from zoo import timm_models, torchvision_models, transformers_models

    return (torchvision_models.models() + timm_models.models() +
            transformers_models.models())


__all__ = ["Case", "Spec", "build", "models", "run_case"]
