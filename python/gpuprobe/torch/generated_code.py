"""The code each compile generated, from the structured trace's `inductor_output_code` record:
the path of the Python module Inductor wrote (the wrapper that launches the kernels, the kernels'
source inside it) and the kernels it defines — `triton_poi_fused_add_0` and the like on the GPU,
which are the names CUPTI gives the kernels in the trace, so that a slow kernel leads to its code
and the compile that made it; `cpp_fused_...` on the CPU. One instant per module, "generated code
<id>: <path>: <kernel>, <kernel>, ...", and an entry of ``modules``."""
import re

from gpuprobe.torch._common import EVENTS
from gpuprobe.torch.structured_trace import Reader, compile_id

# In the wrapper: `triton_poi_fused_add_0 = async_compile.triton('triton_poi_fused_add_0', ...`
_KERNEL = re.compile(r"^(\w+) = async_compile\.(\w+)\(", re.M)
_MAX_NAMED = 40  # kernels named in the instant; the entry keeps them all


class GeneratedCode(Reader):
    def __init__(self, log):
        self.modules = []  # {"compile_id", "path", "kernels": [(name, kind)]}
        super().__init__(log)

    def record(self, metadata, payload):
        output = metadata.get("inductor_output_code")
        if not isinstance(output, dict):
            return
        path = str(output.get("file_path") or output.get("filename") or "")
        kernels = [(m.group(1), m.group(2)) for m in _KERNEL.finditer(payload or "")]
        cid = compile_id(metadata)
        self.modules.append({"compile_id": cid, "path": path, "kernels": kernels})
        names = [k for k, _ in kernels]
        listed = ", ".join(names[:_MAX_NAMED]) + (
            f", and {len(names) - _MAX_NAMED} more" if len(names) > _MAX_NAMED else "")
        self.out.instant(f"{EVENTS['generated_code']}{cid}: {path}: {listed}"[:2000], "compile")
