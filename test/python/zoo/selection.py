"""Which zoo cases CI runs, and why the others are left out. On a 2-core CPU, eager costs well
under a second per model; torch.compile costs Dynamo's tracing, 1 to 20 s per run and two runs
per case (without and with gpuprobe); Inductor 20 to 40 s per cold compile. So CI runs eager for
every model but the giants (Spec.heavy), Dynamo alone (backend "eager") for one model of each
torchvision family and most timm and transformers models, and Inductor for a few;
GPUPROBE_ZOO=full runs every case. Times measured with torch 2.15 on the 2-core dev VM."""

# (mode, torch.compile backend): eager; Dynamo with the eager backend (graph counts, breaks and
# recompiles are Dynamo's, AOTAutograd and Inductor add minutes); Inductor.
MODES = (("eager", "eager"), ("compile", "eager"), ("compile", "inductor"))

COMPILE_CI = {
    # torchvision: the cheapest to trace of each family (baseline run, s: 0.7 to 7)
    "torchvision/alexnet", "torchvision/convnext_tiny", "torchvision/densenet121",
    "torchvision/efficientnet_b0", "torchvision/googlenet", "torchvision/inception_v3",
    "torchvision/maxvit_t",
    "torchvision/mnasnet0_75", "torchvision/mobilenet_v3_small", "torchvision/regnet_x_800mf",
    "torchvision/resnet18", "torchvision/resnext50_32x4d", "torchvision/shufflenet_v2_x0_5",
    "torchvision/squeezenet1_1", "torchvision/swin_t", "torchvision/swin_v2_t",
    "torchvision/vit_b_32", "torchvision/wide_resnet50_2",
    # timm: every family whose baseline run traces in under 7 s
    "timm/resnet18", "timm/efficientnet_b0", "timm/mobilenetv3_small_050",
    "timm/mobilenetv4_conv_small", "timm/convnext_atto", "timm/vit_tiny_patch16_224",
    "timm/deit_tiny_patch16_224", "timm/swin_tiny_patch4_window7_224", "timm/regnetx_002",
    "timm/ghostnet_050", "timm/levit_128s", "timm/mixer_s32_224", "timm/poolformer_s12",
    "timm/coat_lite_tiny", "timm/cait_xxs24_224", "timm/edgenext_xx_small", "timm/rexnet_100",
    "timm/dla46_c", "timm/mobilevit_xxs", "timm/fastvit_t8", "timm/repvgg_a0", "timm/lcnet_050",
    # transformers: all
    "transformers/bert", "transformers/distilbert", "transformers/gpt2", "transformers/t5",
    "transformers/llama", "transformers/qwen2", "transformers/vit",
}
# Inductor's C++ code generation: a CNN and a decoder-only transformer. The run with gpuprobe
# loads the run without's graphs from the FX graph cache (Dynamo's counts are unaffected).
INDUCTOR_CI = {"torchvision/resnet18", "transformers/gpt2"}


def label(mode, backend):
    """A case's mode in test ids and tables: "eager", "compile" (Dynamo alone), "inductor"."""
    return "eager" if mode == "eager" else "compile" if backend == "eager" else backend


def left_out(spec, mode, backend, full=False):
    """Why CI leaves this case out, in words, or None when it runs it (always None when
    ``full``)."""
    if full:
        return None
    if spec.heavy:
        return f"{spec.heavy}; GPUPROBE_ZOO=full runs it"
    if mode == "compile" and backend == "eager" and spec.name not in COMPILE_CI:
        return ("torch.compile: not in CI's set (zoo/selection.py: one model per family, "
                "Dynamo's tracing costs seconds a run on a 2-core CPU); GPUPROBE_ZOO=full runs it")
    if mode == "compile" and backend != "eager" and spec.name not in INDUCTOR_CI:
        return (f"torch.compile with {backend}: not in CI's set (zoo/selection.py: a cold "
                "compile costs 20-40 s on a 2-core CPU); GPUPROBE_ZOO=full runs it")
    return None
