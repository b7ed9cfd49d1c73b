# SPDX-License-Identifier: Apache-2.0
import math, torch
print("torch", torch.__version__)
ln2 = math.log(2.0)
for dev in (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]):
    for dt in (torch.float16, torch.bfloat16):
        x = torch.arange(-2**15, 2**15, dtype=torch.int32).to(torch.int16).view(dt).to(dev)
        y = x * ln2
        a = (x.float() * torch.tensor(ln2, dtype=torch.float32, device=dev)).to(dt)
        b = (x.float() * torch.tensor(ln2).to(dt).float().to(dev)).to(dt)
        ok = ~torch.isnan(y)
        print(dev, dt, "vs float32 opmath:", int(((y != a) & ok).sum()), "vs scalar-in-dtype:", int(((y != b) & ok).sum()))
    x = torch.randn(1 << 20, dtype=torch.float32, device=dev) * 100
    print(dev, "f32 vs float32(ln2):", int((x * ln2 != x * torch.tensor(ln2, dtype=torch.float32, device=dev)).sum()))
