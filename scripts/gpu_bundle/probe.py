"""What gpu-check needs to know of the Python it runs the workloads with: versions, and the GPU torch sees
(or why none). Prints one JSON line."""

import json
import platform
import sys

info = dict(python=platform.python_version(), executable=sys.executable, torch=None, cuda_available=False,
            torch_cuda=None, cudnn=None, gpu_name=None, gpu_count=0, capability=None, no_gpu_reason=None,
            kineto=None)
try:
    import torch
except Exception as error:  # reported by gpu-check as a failure of this Python
    info["no_gpu_reason"] = "torch cannot be imported: %s" % error
    print(json.dumps(info))
    sys.exit(3)
info["torch"] = torch.__version__
try:
    info["kineto"] = bool(torch.autograd.kineto_available())
except Exception:
    info["kineto"] = False
info["torch_cuda"] = torch.version.cuda
try:
    info["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
except Exception:
    info["cudnn"] = None
if torch.version.cuda is None:
    info["no_gpu_reason"] = "torch %s is a CPU build" % torch.__version__
else:
    try:
        info["cuda_available"] = torch.cuda.is_available()
        if info["cuda_available"]:
            info["gpu_count"] = torch.cuda.device_count()
            info["gpu_name"] = torch.cuda.get_device_name(0)
            info["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
        else:
            info["no_gpu_reason"] = "torch.cuda.is_available() is False (no driver or no device)"
    except Exception as error:
        info["cuda_available"] = False
        info["no_gpu_reason"] = "CUDA failed to start: %s" % error
print(json.dumps(info))
