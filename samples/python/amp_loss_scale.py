"""A GradScaler that keeps skipping steps: a regression whose loss is computed in fp16 by hand
((out - target) * (out - target), outside autocast's fp32 ops) on targets with outliers. An outlier batch
overflows fp16, the gradients are inf, the scaler skips the optimizer step and halves its scale: every third
step is wasted and the scale keeps falling. --fixed computes the loss in fp32 with a loss that bounds the
gradient of an outlier (Huber): no step is skipped. On the CPU the model trains in fp32 and only the loss
is fp16; the scaler is torch's (GradScaler's algorithm on the CPU before PyTorch 2.3: cpu_grad_scaler.py)."""

import torch

import sample

args = sample.parse(__doc__, width=256, batch=64, outlier_every=3)
torch.manual_seed(0)
device = sample.device()
model = torch.nn.Sequential(torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
                            torch.nn.Linear(args.width, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
scaler = sample.grad_scaler(device)
inputs = torch.randn(args.batch, args.width, device=device)
targets = torch.randn(args.batch, 1, device=device)


def step(i):
    # Every outlier_every-th batch holds targets a thousand times larger, as raw data does.
    batch_targets = targets * 1000.0 if i % args.outlier_every == args.outlier_every - 1 else targets
    optimizer.zero_grad(set_to_none=True)
    with sample.autocast(device):
        out = model(inputs)
    if args.fixed:
        loss = torch.nn.functional.huber_loss(out.float(), batch_targets)
    else:
        diff = (out - batch_targets).half()
        loss = (diff * diff).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


sample.train("amp_loss_scale", args, step)
