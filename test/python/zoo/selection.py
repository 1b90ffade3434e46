"""Which zoo cases CI runs, and why the others are left out. On a 2-core CPU, eager costs well
under a second per model; torch.compile costs Dynamo's tracing, 1 to 20 s per run and two runs
per case (without and with gpuprobe); Inductor 20 to 40 s per cold compile. So CI runs eager for
every model but those over 100 M parameters (Spec.heavy), Dynamo alone (backend "eager") for 14 models of different kinds
(COMPILE_CI), and Inductor for a few;
GPUPROBE_ZOO=full runs every case. Times measured with torch 2.15 on the 2-core dev VM."""

# (mode, torch.compile backend): eager; Dynamo with the eager backend (graph counts, breaks and
# recompiles are Dynamo's, AOTAutograd and Inductor add minutes); Inductor.
MODES = (("eager", "eager"), ("compile", "eager"), ("compile", "inductor"))

COMPILE_CI = {
    # The cheapest to trace of each kind (both runs of a case, s, on the loaded 2-core VM): a
    # plain CNN, CNNs with in-place activations and residuals, ConvNeXt, MLP-Mixer, Swin, ViT,
    # and encoder and decoder transformers. All 47 of the earlier, wider set (one or two per
    # family) passed there in 23 min (1394 s of runs); GPUPROBE_ZOO=full runs them all.
    "torchvision/alexnet", "torchvision/squeezenet1_1", "torchvision/resnet18",
    "torchvision/mobilenet_v3_small", "torchvision/convnext_tiny", "torchvision/swin_t",
    "torchvision/vit_b_32", "timm/resnet18", "timm/convnext_atto", "timm/mixer_s32_224",
    "transformers/bert", "transformers/gpt2", "transformers/llama", "transformers/vit",
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
