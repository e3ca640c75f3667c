"""A model made fp16 with .half() and trained directly: the optimizer updates fp16 weights, so an update
smaller than half a unit in the last place of a weight (1/2048 of it) is rounded away, and without loss
scaling small gradients underflow to zero. --fixed keeps the weights in fp32 (the master weights) and runs
the forward pass under fp16 autocast with a GradScaler. The model is a regression over token embeddings,
elementwise only, so that it runs in fp16 on the CPU too (PyTorch 1.x has no fp16 matmul on the CPU)."""

import torch

import sample


class TokenRegression(torch.nn.Module):
    def __init__(self, vocabulary, width):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocabulary, width)
        self.weight = torch.nn.Parameter(torch.randn(width) / width**0.5)

    def forward(self, tokens):
        return (self.embedding(tokens).mean(dim=1) * self.weight).sum(dim=-1)


args = sample.parse(__doc__, vocabulary=1000, width=64, batch=64, tokens=16)
torch.manual_seed(0)
device = sample.device()
model = TokenRegression(args.vocabulary, args.width).to(device)
if not args.fixed:
    model = model.half()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
scaler = sample.grad_scaler(device) if args.fixed else None
tokens = torch.randint(0, args.vocabulary, (args.batch, args.tokens), device=device)
targets = torch.randn(args.batch, device=device)


def step(_):
    optimizer.zero_grad(set_to_none=True)
    if args.fixed:
        with sample.autocast(device):
            out = model(tokens)
        loss = torch.nn.functional.mse_loss(out.float(), targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        diff = model(tokens) - targets.half()
        loss = (diff * diff).mean()
        loss.backward()
        optimizer.step()


sample.train("half_params", args, step)
