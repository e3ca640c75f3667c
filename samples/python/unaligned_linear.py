"""GEMM dimensions that are not multiples of 8: Linear layers with in_features 1001 and out_features 30
fed batches of 30, so every GEMM has M, N and K off the multiples Tensor Cores want. --fixed pads to
batch 32, in 1008, out 32. On a GPU the model runs in fp16, where the multiple is 8."""

import torch

import sample

args = sample.parse(__doc__)
torch.manual_seed(0)
device = sample.device()
batch, n_in, n_out = (32, 1008, 32) if args.fixed else (30, 1001, 30)
dtype = torch.float16 if device.type == "cuda" else torch.float32
model = torch.nn.Sequential(torch.nn.Linear(n_in, n_out), torch.nn.ReLU(), torch.nn.Linear(n_out, n_out))
model = model.to(device, dtype)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs = torch.randn(batch, n_in, device=device, dtype=dtype)
targets = torch.randint(0, n_out, (batch,), device=device)


def step(_):
    for _ in range(8):  # a few GEMMs per step, so they dominate it as in a real model
        sample.sgd_step(model, optimizer, inputs, targets)


sample.train("unaligned_linear", args, step)
