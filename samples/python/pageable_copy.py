"""Host-to-device copies from pageable memory: each batch is copied to the GPU from ordinary host
memory, synchronously, through the driver's staging buffer. --fixed pins the batch and copies it with
non_blocking=True. Without a GPU there is nothing to copy: the sample trains on the CPU."""

import torch

import sample

args = sample.parse(__doc__, batch=256)
torch.manual_seed(0)
device = sample.device()
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(device)
optimizer = sample.sgd(model)
pin = args.fixed and device.type == "cuda"  # pinning needs CUDA
host_inputs = torch.randn(args.batch, 1024)
host_targets = torch.randint(0, 10, (args.batch,))
if pin:
    host_inputs, host_targets = host_inputs.pin_memory(), host_targets.pin_memory()


def step(_):
    inputs = host_inputs.to(device, non_blocking=pin)
    targets = host_targets.to(device, non_blocking=pin)
    sample.sgd_step(model, optimizer, inputs, targets)


sample.train("pageable_copy", args, step)
