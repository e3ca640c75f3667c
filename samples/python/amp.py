"""fp32 training on a GPU with Tensor Cores: every GEMM runs in fp32 (TF32 at best). --fixed runs the
forward pass under torch.autocast (fp16 GEMMs) with a GradScaler. Without a GPU the sample trains in
fp32 on the CPU either way."""

import torch

import sample

args = sample.parse(__doc__, hidden=2048)
torch.manual_seed(0)
device = sample.device()
cuda = device.type == "cuda"
model = torch.nn.Sequential(torch.nn.Linear(1024, args.hidden), torch.nn.ReLU(),
                            torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
                            torch.nn.Linear(args.hidden, 16)).to(device)
optimizer = sample.sgd(model)
# torch.amp.GradScaler("cuda") from PyTorch 2.3 (torch.cuda.amp's is deprecated there); before, torch.cuda.amp's.
scaler = (torch.amp.GradScaler("cuda", enabled=args.fixed and cuda) if hasattr(torch.amp, "GradScaler")
          else torch.cuda.amp.GradScaler(enabled=args.fixed and cuda))
inputs = torch.randn(256, 1024, device=device)
targets = torch.randint(0, 16, (256,), device=device)


def step(_):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16, enabled=args.fixed and cuda):
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


sample.train("amp", args, step)
