"""Training that leaves most of the GPU's memory unused: a batch of 32 takes a sliver of it, where a larger
batch would run fewer, larger kernels and fewer steps per epoch. --fixed measures the memory one step of
that batch takes and picks the batch that fills about 70% of the GPU (torch.cuda.mem_get_info), as
memory-headroom advises (with the learning rate scaled with the batch). The model is elementwise layers
over wide activations: much memory per sample, little arithmetic, so that a full GPU takes seconds, not
minutes. On the CPU there is no GPU memory to fill: both run the batch given."""

import torch

import sample


class WideElementwise(torch.nn.Module):
    def __init__(self, width, layers):
        super().__init__()
        self.scales = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(width)) for _ in range(layers)])
        self.shifts = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(width)) for _ in range(layers)])

    def forward(self, x):
        for scale, shift in zip(self.scales, self.shifts):
            x = torch.relu(x * scale + shift)
        return x


args = sample.parse(__doc__, width=65536, layers=8, batch=32, fill=0.7)
torch.manual_seed(0)
device = sample.device()
model = WideElementwise(args.width, args.layers).to(device)
base_lr = 0.01
optimizer = torch.optim.SGD(model.parameters(), lr=base_lr)


def one_step(batch):
    optimizer.zero_grad(set_to_none=True)
    inputs = torch.randn(batch, args.width, device=device)
    loss = model(inputs).mean()
    loss.backward()
    optimizer.step()


batch = args.batch
if args.fixed and device.type == "cuda":
    # The memory that grows with the batch, from one step at the small batch; the rest (weights, optimizer state,
    # the allocator's own) stays.
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    one_step(batch)
    torch.cuda.synchronize()
    per_sample = max(1, (torch.cuda.max_memory_allocated() - before) // batch)
    free, total = torch.cuda.mem_get_info()
    batch = max(batch, int((args.fill * total - before) // per_sample))
    for group in optimizer.param_groups:  # the linear scaling rule (Goyal et al. 2017)
        group["lr"] = base_lr * batch / args.batch
    torch.cuda.empty_cache()
    print("memory_headroom --fixed: batch %d (%.0f MB per sample of %.0f GB)" % (batch, per_sample / 2**20,
                                                                                 total / 2**30))

sample.train("memory_headroom", args, lambda _: one_step(batch))
