"""A per-parameter optimizer step: Adam(foreach=False) updates each parameter with its own handful of
elementwise kernels, so a model of many small layers launches hundreds of tiny kernels per step. --fixed
updates them all at once: fused=True (one fused Adam kernel, PyTorch 2.x on CUDA), else foreach=True
(multi-tensor kernels; what PyTorch 2.x picks by itself on CUDA when foreach is left unset)."""

import torch

import sample


def fused_available(device):
    major = int(torch.__version__.split(".")[0])
    return device.type == "cuda" and major >= 2


args = sample.parse(__doc__, layers=24, width=128, batch=64)
torch.manual_seed(0)
device = sample.device()
layers = []
for _ in range(args.layers):
    layers += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(args.width, 10)).to(device)
if not args.fixed:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
elif fused_available(device):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
else:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
inputs = torch.randn(args.batch, args.width, device=device)
targets = torch.randint(0, 10, (args.batch,), device=device)
sample.train("unfused_optimizer", args, lambda _: sample.sgd_step(model, optimizer, inputs, targets))
