"""A small PyTorch training loop for scripts/gpu-check.sh: a CNN on synthetic data with pageable and
pinned host-to-device copies, a zero_grad that fills gradients, NVTX step ranges and a final .item()."""
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
    torch.nn.Flatten(), torch.nn.Linear(16 * 32 * 32, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
pageable = torch.randn(32, 3, 32, 32)
pinned = torch.randn(32, 3, 32, 32).pin_memory() if device == "cuda" else pageable
labels = torch.randint(0, 10, (32,))
for step in range(steps):
    if device == "cuda":
        torch.cuda.nvtx.range_push("step")
    x = (pinned if step % 2 else pageable).to(device, non_blocking=bool(step % 2))
    y = labels.to(device)
    optimizer.zero_grad(set_to_none=False)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    if device == "cuda":
        torch.cuda.nvtx.range_pop()
print(f"torch_train: {steps} steps on {device}, loss {loss.item():.4f}")
