# amw distributed stage: the collective's probe, uploaded to every host of the run.
#   detect                 what this host can launch with (no torch import: that is seconds)
#   run --backend B ...    one rank of the all_reduce smoke test, started by torchrun (or msrun):
#                          a correctness all_reduce of ones (sum == world size), then timed
#                          all_reduces per message size. Each rank prints one AMW_COLLECTIVE line
#                          about itself; rank 0 prints the result. Bandwidth is computed by the
#                          workbench from bytes and time, as nccl-tests/hccl_test define it.
import argparse
import importlib.util
import json
import os
import socket
import sys
import time

TAG = 'AMW_COLLECTIVE '


def emit(kind, **fields):
    fields['kind'] = kind
    sys.stdout.write(TAG + json.dumps(fields, sort_keys=True) + '\n')
    sys.stdout.flush()


def read_text(path, limit=65536):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read(limit)
    except OSError:
        return ''


def detect():
    torch = importlib.util.find_spec('torch')
    info = {
        'python': '%d.%d.%d' % sys.version_info[:3],
        'hostname': socket.gethostname(),
        'torch': None,
        'torchLocalAddr': None,
        'torchNpu': importlib.util.find_spec('torch_npu') is not None,
        'mindspore': importlib.util.find_spec('mindspore') is not None,
    }
    if torch is not None and torch.origin:
        root = os.path.dirname(torch.origin)
        version = read_text(os.path.join(root, 'version.py'))
        for line in version.splitlines():
            if line.startswith('__version__'):
                info['torch'] = line.split('=', 1)[1].strip().strip('\'"')
        run = read_text(os.path.join(root, 'distributed', 'run.py'), 200000)
        # newer torchrun takes the address rank 0 is reached on instead of its hostname
        for flag in ('--local_addr', '--local-addr'):
            if flag in run:
                info['torchLocalAddr'] = flag
                break
        if info['torch'] is None:
            info['torch'] = 'unknown'
    emit('detect', **info)


def run(args):
    sizes = [int(s) for s in args.sizes.split(',') if s]
    if args.framework == 'mindspore':
        return run_mindspore(sizes, args)
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    local_rank = int(os.environ.get('LOCAL_RANK', '0'))
    device = 'cpu'
    sync = lambda: None  # noqa: E731
    if args.backend == 'hccl':
        import torch_npu  # noqa: F401  (registers the NPU device and the hccl backend)

        torch.npu.set_device(local_rank)
        device = 'npu:%d' % local_rank
        sync = torch.npu.synchronize
    dist.init_process_group(args.backend, timeout=timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    emit('rank', rank=rank, world=world, localRank=local_rank, host=socket.gethostname(),
         pid=os.getpid(), backend=args.backend)
    ones = torch.ones(1024, dtype=torch.float32, device=device)
    dist.all_reduce(ones)
    sync()
    check = bool(abs(float(ones[0].item()) - world) < 1e-3)
    rows = []
    for size in sizes:
        n = max(1, size // 4)
        buf = torch.ones(n, dtype=torch.float32, device=device)
        iters = args.iters if size <= (1 << 22) else max(2, args.iters // 4)
        for _ in range(args.warmup):
            dist.all_reduce(buf)
        sync()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(buf)
        sync()
        took = torch.tensor([(time.perf_counter() - t0) / iters * 1e6], dtype=torch.float64)
        # the slowest rank's time is the collective's time
        dist.all_reduce(took, op=dist.ReduceOp.MAX)
        rows.append({'bytes': n * 4, 'us': float(took[0].item()), 'iters': iters})
    if rank == 0:
        emit('result', world=world, backend=args.backend, check=check, sizes=rows)
    dist.barrier()
    dist.destroy_process_group()
    return 0 if check else 3


def run_mindspore(sizes, args):
    import numpy as np
    import mindspore as ms
    from mindspore import ops
    from mindspore.communication import get_group_size, get_rank, init

    ms.set_context(mode=ms.PYNATIVE_MODE)
    init()
    rank, world = get_rank(), get_group_size()
    emit('rank', rank=rank, world=world, localRank=int(os.environ.get('RANK_ID', rank)),
         host=socket.gethostname(), pid=os.getpid(), backend='hccl')
    allreduce = ops.AllReduce()
    check = abs(float(allreduce(ms.Tensor(np.ones(1024, np.float32))).asnumpy()[0]) - world) < 1e-3
    rows = []
    for size in sizes:
        buf = ms.Tensor(np.ones(max(1, size // 4), np.float32))
        allreduce(buf).asnumpy()
        t0 = time.perf_counter()
        for _ in range(args.iters):
            out = allreduce(buf)
        out.asnumpy()
        rows.append({'bytes': max(1, size // 4) * 4,
                     'us': (time.perf_counter() - t0) / args.iters * 1e6, 'iters': args.iters})
    if rank == 0:
        emit('result', world=world, backend='hccl', check=bool(check), sizes=rows)
    return 0 if check else 3


def main():
    p = argparse.ArgumentParser()
    p.add_argument('mode', choices=['detect', 'run'])
    p.add_argument('--backend', default='gloo', choices=['gloo', 'hccl'])
    p.add_argument('--framework', default='torch', choices=['torch', 'mindspore'])
    p.add_argument('--sizes', default='65536,1048576,16777216')
    p.add_argument('--iters', type=int, default=10)
    p.add_argument('--warmup', type=int, default=2)
    p.add_argument('--timeout', type=int, default=300)
    args = p.parse_args()
    if args.mode == 'detect':
        detect()
        return 0
    return run(args)


if __name__ == '__main__':
    sys.exit(main())
