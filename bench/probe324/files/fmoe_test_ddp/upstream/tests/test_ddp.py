import json
import os
import sys
from typing import Dict

import pytest
import torch
import torch.distributed as dist

from fmoe.layers import FMoE
from fmoe.transformer import _Expert
from fmoe.distributed import DistributedGroupedDataParallel as LocalDDP
from fmoe.gates import NaiveGate


def _ensure_initialized():
    if 'RANK' not in os.environ:
        os.environ["RANK"] = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
        os.environ["WORLD_SIZE"] = os.environ.get("OMPI_COMM_WORLD_SIZE", "1")
        os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["RANK"]
        os.environ["MASTER_ADDR"] = os.environ.get("MASTER_ADDR", "localhost")
        os.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT", "12211")
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl")


port_count = 0


def _run_distributed(func, world_size, args: Dict, script=__file__, env=dict()):
    device_count = torch.cuda.device_count()
    if device_count < world_size:
        pytest.skip("No enough GPU, only {} found".format(device_count))
    import subprocess

    ps = []
    env["MASTER_ADDR"] = "localhost"
    global port_count
    env["MASTER_PORT"] = str(9010 + port_count)
    port_count += 1
    env["OMPI_COMM_WORLD_SIZE"] = str(world_size)
    env["LD_LIBRARY_PATH"] = os.environ.get("LD_LIBRARY_PATH", "")
    env["NCCL_DEBUG"] = os.environ.get("NCCL_DEBUG", "WARN")

    for i in range(world_size):
        env["OMPI_COMM_WORLD_RANK"] = str(i)
        p = subprocess.Popen(
            [sys.executable, script, func, json.dumps(args)],
            stdout=subprocess.PIPE,
            env=env
        )
        ps.append(p)

    for p in ps:
        p.wait()
        retc = p.poll()
        assert retc == 0


class MyMoE(FMoE):
    def __init__(self, num_expert, d_model, d_hidden, world_size, mp_group,
            top_k, activation):
        super().__init__(
            num_expert=num_expert,
            d_model=d_model,
            gate=NaiveGate,
            world_size=world_size,
            mp_group=mp_group,
            top_k=top_k,
        )
        self.experts = _Expert(num_expert, d_model, d_hidden, activation)

        rng = torch.Generator()
        rng.manual_seed(1234)
        for p in self.experts.parameters():
            with torch.no_grad():
                p.copy_(torch.randn(p.shape, generator=rng) * 0.02)


def _test_fmoe_local_ddp(rank, world_size, mp_group, dp_group, world_group):
    batch_size, dim = 4, 8

    torch.manual_seed(42 + rank)
    torch.cuda.manual_seed(42 + rank)

    model = MyMoE(4, dim, dim, world_size=1, mp_group=None, top_k=2,
            activation=torch.nn.functional.gelu).cuda()
    model_ddp = LocalDDP(model, mp_group=mp_group, dp_group=dp_group,
            world_group=world_group)
    model = model_ddp.module

    inp = torch.rand(batch_size, dim).cuda()
    raw_out = model(inp).mean()
    raw_out.backward()
    model_ddp.allreduce_params()

    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        grads = [torch.empty_like(p.grad) for _ in range(world_size)]
        dist.all_gather(grads, p.grad, group=world_group)
        for g in grads[1:]:
            assert torch.allclose(g, grads[0], atol=1e-5), \
                "gradient of {} differs across ranks".format(name)


def _test_expert_exchange(rank, world_size):
    from fmoe.functions import count_by_gate
    num_expert = 2
    gate = torch.randint(0, num_expert * world_size, (16,),
            device=torch.device("cuda", 0))
    pos, lec, gec = count_by_gate(gate, num_expert, world_size)
    lec_all = [torch.empty_like(lec) for _ in range(world_size)]
    dist.all_gather(lec_all, lec)
    lec_all = torch.stack(lec_all).view(world_size, world_size, num_expert)
    expected = lec_all[:, rank, :].reshape(-1)
    assert torch.equal(gec, expected)
    assert pos.shape[0] == 16


@pytest.mark.parametrize("mp_size", [1, 2])
def test_fmoe_local_ddp(mp_size):
    _run_distributed(
        _test_fmoe_local_ddp.__name__, mp_size * 2, {"mp_size": mp_size},
    )


def test_expert_exchange():
    _run_distributed("_test_expert_exchange", 2, {})


def _wrap(func_name, **kwargs):
    _ensure_initialized()
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    if func_name == "_test_fmoe_local_ddp":
        mp_size = kwargs.pop("mp_size")
        mp_group, dp_group = None, None
        for i in range(0, world_size, mp_size):
            ranks = list(range(i, i + mp_size))
            group = dist.new_group(ranks)
            if rank in ranks:
                mp_group = group
        for i in range(mp_size):
            ranks = list(range(i, world_size, mp_size))
            group = dist.new_group(ranks)
            if rank in ranks:
                dp_group = group
        world_group = dist.new_group(list(range(world_size)))
        _test_fmoe_local_ddp(rank, world_size, mp_group, dp_group, world_group)
    else:
        globals()[func_name](rank, world_size, **kwargs)


if __name__ == "__main__":
    if len(sys.argv) >= 3:
        args = json.loads(sys.argv[2])
        _wrap(sys.argv[1], **args)
    else:
        test_fmoe_local_ddp(mp_size=2)
