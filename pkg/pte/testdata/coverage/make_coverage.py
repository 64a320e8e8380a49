"""Makes the delegate-coverage fixtures with the real ExecuTorch 1.4.0 toolchain.

Run from this folder with the locked python (python/export.lock):

    /opt/exe-expo/python/72cd6a02154767e3/bin/python make_coverage.py

Every file is the same tiny module, two linears around a ReLU and a multiply, lowered
differently, so the coverage figures differ only by what the lowering left on the CPU:

  linear-portable.pte      no partitioner: every operator a portable kernel
  linear-xnnpack.pte       XnnpackPartitioner: fp32, everything in XNNPACK
  linear-xnnpack-8da4w.pte torchao 8da4w (int4 weights in groups of 32, as export_llm
                           quantizes), XnnpackPartitioner: weights in named data
  linear-xnnpack-cpu.pte   XnnpackPartitioner without its linear/addmm/mm/bmm configs:
                           the ReLU and the multiply run in XNNPACK, the linears fall back
                           to portable kernels (what the structural check must refuse)
  linear-vulkan.pte        VulkanPartitioner: everything in a Vulkan delegate

The weights are seeded random numbers; nothing here comes from a third party.
"""

import torch
from torch import nn

from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
from executorch.backends.xnnpack.partition.config import ALL_PARTITIONER_CONFIGS
from executorch.backends.xnnpack.partition.config.gemm_configs import (
    AddmmConfig,
    LinearConfig,
    MMConfig,
)
from executorch.backends.xnnpack.partition.config.generic_node_configs import BMMConfig
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 16, bias=False)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)) * 2.0)


def tiny():
    torch.manual_seed(0)
    return Tiny().eval()


def save(name, model, partitioners):
    example = (torch.randn(1, 32),)
    ep = torch.export.export(model, example, strict=True)
    prog = to_edge_transform_and_lower(ep, partitioner=partitioners).to_executorch()
    with open(name, "wb") as f:
        prog.write_to_file(f)
    print(name, len(prog.buffer), "bytes")


def quantized():
    from torchao.quantization import quantize_
    from torchao.quantization.granularity import PerGroup
    from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig

    m = tiny()
    quantize_(m, Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(32)))
    return m


no_gemm = [c for c in ALL_PARTITIONER_CONFIGS if c not in (LinearConfig, AddmmConfig, MMConfig, BMMConfig)]

save("linear-portable.pte", tiny(), [])
save("linear-xnnpack.pte", tiny(), [XnnpackPartitioner()])
save("linear-xnnpack-8da4w.pte", quantized(), [XnnpackPartitioner()])
save("linear-xnnpack-cpu.pte", tiny(), [XnnpackPartitioner(configs=no_gemm)])
save("linear-vulkan.pte", tiny(), [VulkanPartitioner()])
