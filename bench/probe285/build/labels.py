# Labels for probe285: 3-D semantic segmentation with sparse convolution (Pointcept / PTv3, MinkowskiEngine +
# SpatioTemporalSegmentation, torchsparse / SPVNAS, KPConv-PyTorch), CUDA -> Ascend NPU (torch_npu).
# One label per line a careful porter would edit. See README.md for the policy and the near-misses left unlabelled.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Notes reused below
LOAD_NOTE = ("checkpoints written by the CUDA run hold cuda tensors; torch.load without map_location tries to restore "
             "them on a CUDA device and fails on an NPU host")
EMPTY_NOTE = "torch.cuda.empty_cache() is a silent no-op on an NPU host (CUDA never initialised); NPU cache is not released"
TORCH_NPU_ENTRY = ("entry script: import torch_npu before using torch.npu / the npu device (mandatory before the "
                   "torch_npu 2.5.1 autoload, still recommended after)")

# ---------------------------------------------------------------------------------------------------------------
# Pointcept
# ---------------------------------------------------------------------------------------------------------------

E("pc-launch", "pointcept/engines/launch.py", "explicit_replacement",
  "Pointcept engines/launch.py (detectron2-style mp.start_processes launcher + torchrun entry)", [
      C("=torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "torch.npu.is_available()",
        "torch.cuda.is_available() is False on an NPU host, so the assert aborts every worker"),
      C('backend="NCCL",', "dist_backend", "replace", True,
        'backend="hccl",',
        "NCCL is not available with torch_npu; collectives go through HCCL"),
      C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "assert num_gpus_per_machine <= torch.npu.device_count()",
        "torch.cuda.device_count() returns 0 on an NPU host, so the assert fails"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)",
        "torch.cuda.set_device initialises CUDA and raises on an NPU host; each rank must bind its NPU"),
      C('torch.cuda.set_device(f"cuda:{local_rank}")', "torch_cuda_api", "replace", True,
        'torch.npu.set_device(f"npu:{local_rank}")',
        "torchrun path: CUDA call plus a cuda device string"),
      C('backend="nccl", init_method="env://", timeout=timeout', "dist_backend", "replace", True,
        'backend="hccl", init_method="env://", timeout=timeout',
        "NCCL backend unavailable on Ascend; use HCCL"),
  ])

E("pc-comm", "pointcept/utils/comm.py", "explicit_replacement",
  "Pointcept utils/comm.py (detectron2 comm primitives: pickled all_gather/gather over a gloo side group)", [
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
        'if dist.get_backend() in ("nccl", "hccl"):',
        "with HCCL the test fails, the WORLD (hccl) group is returned instead of a gloo group, and "
        "_serialize_to_tensor's `assert backend in [gloo, nccl]` then aborts comm.all_gather/gather "
        "(used by the tester and shared_random_seed); backend-string comparisons are not rewritten by any tool"),
      C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", False,
        'assert backend in ["gloo", "nccl", "hccl"]',
        "only reached with an HCCL group if a caller passes one explicitly (none in this codebase once the "
        "gloo-group check above is fixed)"),
      C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", False,
        'device = torch.device("cpu" if backend == "gloo" else "npu")',
        "same branch as the assert above: only used for a non-gloo group passed explicitly"),
  ])

E("pc-defaults", "pointcept/engines/defaults.py", "explicit_replacement",
  "Pointcept engines/defaults.py (argparse with --num-gpus, create_ddp_model, default_setup)", [])

E("pc-env", "pointcept/utils/env.py", "explicit_replacement",
  "Pointcept utils/env.py (set_seed, collect_env_info for the train log)", [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)",
        "lazy-queued no-op without CUDA; torch.manual_seed(seed) on the line above already seeds registered "
        "accelerator backends (unconfirmed in the knowledge notes for PrivateUse1)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "same as above: silent no-op on an NPU host"),
      C("cuda_available = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "cuda_available = torch.npu.is_available()",
        "log only: env report says 'GPU available False' and skips the device list"),
      C("for k in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
        "for k in range(torch.npu.device_count()):",
        "log only, reached once the is_available check is ported"),
      C("devices[torch.cuda.get_device_name(k)].append(str(k))", "torch_cuda_api", "replace", False,
        "devices[torch.npu.get_device_name(k)].append(str(k))",
        "log only"),
      C('env_info["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "")', "env_var", "replace", False,
        'env_info["ASCEND_RT_VISIBLE_DEVICES"] = os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "")',
        "log only: report the Ascend visibility variable"),
  ])

E("pc-train", "pointcept/engines/train.py", "explicit_replacement",
  "Pointcept engines/train.py (Trainer.run_step with AMP GradScaler, DDP build, dataloaders)", [
      C("auto_cast = torch.cuda.amp.autocast", "amp", "replace", True,
        "auto_cast = torch.npu.amp.autocast",
        "torch.cuda.amp.autocast is disabled (warning only) on an NPU host, so enable_amp silently trains in fp32"),
      C('auto_cast = partial(torch.amp.autocast, device_type="cuda")', "amp", "replace", True,
        'auto_cast = partial(torch.amp.autocast, device_type="npu")',
        "autocast with device_type='cuda' is disabled without CUDA; NPU autocast needs device_type='npu'"),
      C("input_dict[key] = input_dict[key].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input_dict[key] = input_dict[key].npu(non_blocking=True)",
        ".cuda() raises on an NPU host"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", EMPTY_NOTE),
      C("torch.cuda.empty_cache()  # release cached blocks between epochs", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # release cached blocks between epochs", EMPTY_NOTE),
      C("model.cuda(),", "tensor_to_device", "replace", True,
        "model.npu(),",
        "Module.cuda() raises on an NPU host"),
      C("grad_scaler = torch.cuda.amp.GradScaler", "amp", "replace", True,
        "grad_scaler = torch.npu.amp.GradScaler",
        "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 training would run without loss scaling"),
      C('grad_scaler = partial(torch.amp.GradScaler, device="cuda")', "amp", "replace", True,
        'grad_scaler = partial(torch.amp.GradScaler, device="npu")',
        "same: a cuda GradScaler is disabled on an NPU host"),
  ])

E("pc-test", "pointcept/engines/test.py", "explicit_replacement",
  "Pointcept engines/test.py (SemSegTester fragment inference, ClsTester)", [
      C("model.cuda(),", "tensor_to_device", "replace", True,
        "model.npu(),", "Module.cuda() raises on an NPU host"),
      C("checkpoint = torch.load(self.cfg.weight, weights_only=False)", "tensor_to_device", "replace", True,
        'checkpoint = torch.load(self.cfg.weight, map_location="cpu", weights_only=False)', LOAD_NOTE),
      C("pred = torch.zeros((segment.size, self.cfg.data.num_classes)).cuda()", "tensor_to_device", "replace", True,
        "pred = torch.zeros((segment.size, self.cfg.data.num_classes)).npu()", ".cuda() raises on an NPU host"),
      C("input_dict[key] = input_dict[key].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input_dict[key] = input_dict[key].npu(non_blocking=True)", ".cuda() raises on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", EMPTY_NOTE),
      C("k: v.cuda(non_blocking=True) if isinstance(v, torch.Tensor) else v", "tensor_to_device", "replace", True,
        "k: v.npu(non_blocking=True) if isinstance(v, torch.Tensor) else v", ".cuda() raises on an NPU host"),
  ])

E("pc-evaluator", "pointcept/engines/hooks/evaluator.py", "explicit_replacement",
  "Pointcept engines/hooks/evaluator.py (ClsEvaluator / SemSegEvaluator hooks, pointops kNN interpolation)", [
      C("=input_dict[key] = input_dict[key].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input_dict[key] = input_dict[key].npu(non_blocking=True)", ".cuda() raises on an NPU host"),
      C("input_dict[key] = input_dict[key].cuda(non_blocking=True)  # noqa", "tensor_to_device", "replace", True,
        "input_dict[key] = input_dict[key].npu(non_blocking=True)  # noqa", ".cuda() raises on an NPU host"),
  ])

E("pc-misc", "pointcept/utils/misc.py", "explicit_replacement",
  "Pointcept utils/misc.py (AverageMeter, intersection_and_union(_gpu), memory report helper)", [
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "log only: the memory report prints N/A on an NPU host"),
      C("alloc = torch.cuda.memory_allocated(device) / 1024**3", "torch_cuda_api", "replace", False,
        "alloc = torch.npu.memory_allocated(device) / 1024**3", "log only"),
      C("reserved = torch.cuda.memory_reserved(device) / 1024**3", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved(device) / 1024**3", "log only"),
      C("peak = torch.cuda.max_memory_allocated(device) / 1024**3", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated(device) / 1024**3", "log only"),
  ])

E("pc-ptv3", "pointcept/models/point_transformer_v3/point_transformer_v3m1_base.py", "explicit_replacement",
  "Pointcept PT-v3m1 (serialized attention with flash_attn varlen, spconv CPE, torch_scatter pooling)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "the ported flash branch calls torch_npu.npu_fusion_attention, so the module needs the torch_npu name"),
      C("import spconv.pytorch as spconv", "custom_cuda_extension", "replace", True,
        "import mx_driving.spconv as spconv",
        "spconv-cu1xx is a CUDA extension with no NPU kernels; needs an NPU sparse-conv backend (DrivingSDK / "
        "mx_driving is the Ascend candidate, API parity unconfirmed)"),
      C("=import torch_scatter", "custom_cuda_extension", "replace", True,
        "from pointcept.models.utils.segment import segment_csr",
        "torch_scatter is a compiled CPU/CUDA extension with no NPU kernels"),
      C('assert flash_attn is not None, "Make sure flash_attn is installed."', "attention_kernel", "replace", True,
        'assert torch_npu is not None, "NPU fused attention requires torch_npu."',
        "flash-attn cannot be installed on NPU, the guarded import leaves flash_attn=None and this assert fires "
        "for every enable_flash=True config"),
      C("feat = flash_attn.flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", True,
        'feat = torch_npu.npu_fusion_attention(q, k, v, H, "TND", scale=self.scale, keep_prob=1.0 - (self.attn_drop if self.training else 0.0), actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0].reshape(-1, C)',
        "CUDA-only varlen flash attention; npu_fusion_attention with TND layout + cumulative lengths is the NPU "
        "equivalent (q/k/v unpacked from qkv first); the continuation lines of the call go with it"),
      C("feat=torch_scatter.segment_csr(", "unsupported_op_workaround", "replace", True,
        "feat=segment_csr(",
        "segment max-pooling has no NPU kernel via torch_scatter; torch.scatter_reduce is not supported in "
        "Ascend's 2.7.1 list, so a torch-native helper (sort + index_reduce/scatter_add) is needed"),
      C("coord=torch_scatter.segment_csr(", "unsupported_op_workaround", "replace", True,
        "coord=segment_csr(",
        "segment mean: same replacement helper (scatter_add / counts works on NPU)"),
  ])

E("pc-structure", "pointcept/models/utils/structure.py", "explicit_replacement",
  "Pointcept models/utils/structure.py (Point dict: serialization, sparsify to spconv.SparseConvTensor)", [
      C("import spconv.pytorch as spconv", "custom_cuda_extension", "replace", True,
        "import mx_driving.spconv as spconv",
        "SparseConvTensor/indice building comes from the CUDA spconv build; swap to the NPU sparse-conv backend "
        "(DrivingSDK candidate, unconfirmed)"),
  ])

E("pc-spunet", "pointcept/models/sparse_unet/spconv_unet_v1m1_base.py", "explicit_replacement",
  "Pointcept SpUNet-v1m1 (spconv SubMConv3d/SparseConv3d U-Net)", [
      C("import spconv.pytorch as spconv", "custom_cuda_extension", "replace", True,
        "import mx_driving.spconv as spconv",
        "whole network is spconv CUDA kernels; needs the NPU sparse-conv backend (unconfirmed API parity)"),
  ])

E("pc-pointops-setup", "libs/pointops/setup.py", "kernel_rewrite",
  "Pointcept libs/pointops/setup.py (CUDAExtension build of the kNN / ball-query / grouping kernels)", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace",
        True,
        "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "no nvcc on an Ascend host; build the ported kernels with torch_npu's NpuExtension"),
      C('if file.endswith(".cpp") or file.endswith(".cu")', "custom_cuda_extension", "replace", True,
        'if file.endswith(".cpp")  # .cu kernels re-implemented in Ascend C, bound from .cpp',
        ".cu sources cannot be compiled without CUDA"),
      C("=CUDAExtension(", "custom_cuda_extension", "replace", True,
        "NpuExtension(",
        "CUDAExtension requires nvcc / CUDA_HOME"),
      C('extra_compile_args={"cxx": ["-g"], "nvcc": ["-O2"]},', "custom_cuda_extension", "replace", False,
        'extra_compile_args={"cxx": ["-g", "-O2"]},',
        "the nvcc key is ignored once no .cu source is left; cleanup"),
  ])

E("pc-pointops-query", "libs/pointops/functions/query.py", "kernel_rewrite",
  "Pointcept pointops functions/query.py (KNNQuery / BallQuery autograd Functions over pointops._C)", [
      C("from pointops._C import knn_query_cuda, random_ball_query_cuda, ball_query_cuda",
        "custom_cuda_extension", "replace", True,
        "from pointops._C import knn_query_npu, random_ball_query_npu, ball_query_npu",
        "the *_cuda bindings exist only in the nvcc build; bind the Ascend C ports"),
      C("idx = torch.cuda.IntTensor(m, nsample).zero_()", "torch_cuda_api", "replace", True,
        "idx = torch.zeros((m, nsample), dtype=torch.int, device=xyz.device)",
        "legacy torch.cuda.IntTensor constructor needs CUDA"),
      C("dist2 = torch.cuda.FloatTensor(m, nsample).zero_()", "torch_cuda_api", "replace", True,
        "dist2 = torch.zeros((m, nsample), dtype=torch.float, device=xyz.device)",
        "legacy torch.cuda.FloatTensor constructor needs CUDA"),
      C("=knn_query_cuda(", "custom_cuda_extension", "replace", True,
        "knn_query_npu(", "call site of the CUDA kernel"),
      C('idx = torch.zeros((m, nsample), dtype=torch.int, device="cuda")', "device_type", "replace", True,
        "idx = torch.zeros((m, nsample), dtype=torch.int, device=xyz.device)",
        "hard-coded cuda device string"),
      C('dist2 = torch.zeros((m, nsample), dtype=torch.float, device="cuda")', "device_type", "replace", True,
        "dist2 = torch.zeros((m, nsample), dtype=torch.float, device=xyz.device)",
        "hard-coded cuda device string"),
      C("=random_ball_query_cuda(", "custom_cuda_extension", "replace", True,
        "random_ball_query_npu(", "call site of the CUDA kernel"),
      C("=ball_query_cuda(", "custom_cuda_extension", "replace", True,
        "ball_query_npu(", "call site of the CUDA kernel"),
  ])

E("pc-config", "configs/scannet/semseg-pt-v3m1-0-base.py", "explicit_replacement",
  "Pointcept configs/scannet/semseg-pt-v3m1-0-base.py (PTv3 ScanNet config, enable_flash / enable_amp)", [])

E("pc-tools-train", "tools/train.py", "explicit_replacement",
  "Pointcept tools/train.py (entry point calling launch with --num-gpus)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", TORCH_NPU_ENTRY),
      C("if args.num_gpus > torch.cuda.device_count():", "torch_cuda_api", "replace", True,
        "if args.num_gpus > torch.npu.device_count():",
        "device_count() is 0 on an NPU host, so num_gpus is clamped to 0 and nothing is launched"),
      C('f"{torch.cuda.device_count()} visible "', "torch_cuda_api", "replace", False,
        'f"{torch.npu.device_count()} visible "', "log message only"),
      C("f\"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')})\"", "env_var", "replace", False,
        "f\"(ASCEND_RT_VISIBLE_DEVICES={os.environ.get('ASCEND_RT_VISIBLE_DEVICES')})\"", "log message only"),
      C("args.num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.num_gpus = torch.npu.device_count()", "would set the process count to 0"),
  ])

E("pc-train-sh", "scripts/train.sh", "explicit_replacement",
  "Pointcept scripts/train.sh (getopts launcher, GPU count via python one-liner, SLURM dist url)", [
      C("=#!/bin/sh", "env_var", "npu_only_addition", True,
        ". /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be sourced before torch_npu can load"),
      C("NUM_GPU=`$PYTHON -c 'import torch; print(torch.cuda.device_count())'`", "torch_cuda_api", "replace", True,
        "NUM_GPU=`$PYTHON -c 'import torch, torch_npu; print(torch.npu.device_count())'`",
        "prints 0 on an NPU host, so --num-gpus 0 is passed"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
        "NCCL-only knob, ignored by HCCL"),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "ignored by HCCL; HCCL_SOCKET_IFNAME is the equivalent NIC selector (HCCL otherwise picks a NIC itself, "
        "which usually works on one node)"),
  ])

E("pc-docker", "docker/Dockerfile", "explicit_replacement",
  "Pointcept docker/Dockerfile (pytorch CUDA devel image, spconv-cu118, MinkowskiEngine, pointops, flash-attn)", [
      C("FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-devel", "device_type", "replace", True,
        "FROM quay.io/ascend/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA image has no CANN toolkit / driver libraries for torch_npu"),
      C("RUN conda install pytorch-cluster pytorch-scatter pytorch-sparse -c pyg -y", "custom_cuda_extension",
        "replace", True,
        "RUN pip install torch-scatter torch-cluster torch-sparse -f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
        "PyG extension builds tied to the CUDA torch of the base image; only CPU builds exist for an NPU stack"),
      C("RUN pip install --upgrade pip", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch==2.1.0 torch-npu==2.1.0.post10 torchvision==0.16.0",
        "CPU torch + matching torch-npu wheel (2.1.0.post10 pairs with CANN 8.0.0)"),
      C("RUN pip install spconv-cu118", "custom_cuda_extension", "removal", True, None,
        "CUDA-only spconv wheel; the NPU sparse-conv backend is installed separately"),
      C("python setup.py install --blas=openblas --force_cuda", "custom_cuda_extension", "replace", True,
        "RUN python setup.py install --blas=openblas --cpu_only",
        "--force_cuda needs nvcc and fails on the CANN image; ME has no NPU backend, CPU-only build at most"),
      C("pip install Pointcept/libs/pointops -v", "env_var", "replace", False,
        "RUN pip install Pointcept/libs/pointops -v",
        "TORCH_CUDA_ARCH_LIST is meaningless without nvcc; the build itself works once setup.py is ported"),
      C("pip install Pointcept/libs/pointgroup_ops -v", "custom_cuda_extension", "removal", True, None,
        "CUDA-only instance-segmentation ops, not ported; the build fails without nvcc"),
      C("git+https://github.com/microsoft/Swin3D.git", "custom_cuda_extension", "removal", True, None,
        "Swin3D builds CUDA kernels; fails without nvcc"),
      C("RUN MAX_JOBS=4 pip install flash-attn --no-build-isolation", "attention_kernel", "removal", True, None,
        "flash-attn cannot be built/installed on NPU; PTv3 uses npu_fusion_attention instead"),
  ])

E("pc-envyml", "environment.yml", "explicit_replacement",
  "Pointcept environment.yml (conda env with pytorch-cuda 12.4, cudnn, spconv-cu124, flash-attention)", [
      C("- nvidia/label/cuda-12.4.1", "device_type", "removal", False, None,
        "CUDA toolkit channel, not needed on Ascend"),
      C("=- cuda", "device_type", "removal", False, None,
        "CUDA toolkit package: unnecessary on Ascend (harmless if it resolves)"),
      C("- conda-forge::cudnn", "device_type", "removal", False, None, "cuDNN is unused on Ascend"),
      C("- pytorch=2.5.0", "import_torch_npu", "replace", True,
        "- pytorch=2.5.1",
        "there is no torch_npu wheel for torch 2.5.0 (2.5.1 is the nearest), and the torch_npu version must equal torch's"),
      C("- torchvision=0.20.0", "import_torch_npu", "replace", True,
        "- torchvision=0.20.1",
        "must follow the torch bump above or the solve conflicts"),
      C("- pytorch-cuda=12.4", "device_type", "replace", True,
        "- cpuonly",
        "torch_npu runs on the CPU build of torch; pytorch-cuda pulls the CUDA build"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "- torch-npu==2.5.1", "torch-npu pin matching torch 2.5.1"),
      C("- spconv-cu124", "custom_cuda_extension", "removal", True, None,
        "CUDA-only spconv wheel"),
      C("git+https://github.com/Dao-AILab/flash-attention.git", "attention_kernel", "removal", True, None,
        "flash-attention cannot be built without CUDA"),
      C("- ./libs/pointgroup_ops", "custom_cuda_extension", "removal", True, None,
        "CUDA-only extension that is not ported; pip build fails without nvcc"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# MinkowskiEngine / SpatioTemporalSegmentation
# ---------------------------------------------------------------------------------------------------------------

E("sts-main", "main.py", "device_branch_or_abstraction",
  "chrischoy/SpatioTemporalSegmentation main.py (config.is_cuda, get_torch_device, weight loading)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", TORCH_NPU_ENTRY),
      C("if config.is_cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if config.is_cuda and not torch.npu.is_available():",
        "raises 'No GPU found' on an NPU host"),
      C("state = torch.load(config.weights)", "tensor_to_device", "replace", True,
        "state = torch.load(config.weights, map_location=device)", LOAD_NOTE),
  ])

E("sts-train", "lib/train.py", "device_branch_or_abstraction",
  "chrischoy/SpatioTemporalSegmentation lib/train.py (iter_size loop, ME.SparseTensor input, empty_cache_freq)", [
      C("from MinkowskiEngine import SparseTensor", "custom_cuda_extension", "replace", True,
        "from mx_driving.spconv import SparseConvTensor as SparseTensor",
        "MinkowskiEngine has no NPU backend (CUDA or CPU-only builds); the sparse tensor/conv backend must be "
        "swapped (candidate and API parity unconfirmed)"),
      C("state = torch.load(checkpoint_fn)", "tensor_to_device", "replace", True,
        "state = torch.load(checkpoint_fn, map_location=device)", LOAD_NOTE),
      C("torch.cuda.max_memory_allocated() / 1024**3)", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1024**3)", "log only: reports 0 GB on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", EMPTY_NOTE),
  ])

E("sts-utils", "lib/utils.py", "device_branch_or_abstraction",
  "chrischoy/SpatioTemporalSegmentation lib/utils.py (checkpoint, metrics, get_torch_device helper)", [
      C("return torch.device('cuda' if is_cuda else 'cpu')", "device_type", "replace", True,
        "return torch.device('npu' if is_cuda else 'cpu')",
        "the one device helper every STS script goes through; 'cuda' fails on an NPU host"),
  ])

E("me-minkunet", "examples/minkunet.py", "device_branch_or_abstraction",
  "NVIDIA/MinkowskiEngine examples/minkunet.py (MinkUNet family + __main__ smoke training)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "runnable example (__main__) that selects the device"),
      C("import MinkowskiEngine as ME", "custom_cuda_extension", "replace", True,
        "import mx_driving.spconv as spconv",
        "all layers are MinkowskiEngine CUDA/CPU kernels with no NPU backend; layers must be re-expressed on an "
        "NPU sparse-conv backend (unconfirmed)"),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "silently falls back to CPU on an NPU host"),
  ])

E("me-ddp", "examples/multigpu_ddp.py", "explicit_replacement",
  "NVIDIA/MinkowskiEngine examples/multigpu_ddp.py (mp.spawn + NCCL DDP with MinkowskiSyncBatchNorm)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", TORCH_NPU_ENTRY),
      C("import MinkowskiEngine as ME", "custom_cuda_extension", "replace", True,
        "import mx_driving.spconv as spconv",
        "MinkowskiEngine has no NPU backend (unconfirmed replacement)"),
      C("num_devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_devices = torch.npu.device_count()", "0 on an NPU host, so no worker is spawned"),
      C('backend="nccl",', "dist_backend", "replace", True,
        'backend="hccl",', "NCCL unavailable on Ascend"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", "raises on an NPU host"),
      C("model.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "model.npu(args.gpu)", "raises on an NPU host"),
      C("criterion = nn.CrossEntropyLoss().cuda(args.gpu)", "tensor_to_device", "replace", True,
        "criterion = nn.CrossEntropyLoss().npu(args.gpu)", "raises on an NPU host"),
      C("inputs = ME.SparseTensor(features, coordinates, device=args.gpu)", "device_type", "replace", True,
        'inputs = ME.SparseTensor(features, coordinates, device=f"npu:{args.gpu}")',
        "a bare int device means cuda:<int>"),
      C("labels = torch.cat(random_labels).long().to(args.gpu)", "tensor_to_device", "replace", True,
        'labels = torch.cat(random_labels).long().to(f"npu:{args.gpu}")',
        "Tensor.to(<int>) targets cuda:<int>"),
      C("t = torch.tensor(time() - st, dtype=torch.float).cuda(args.gpu)", "tensor_to_device", "replace", True,
        "t = torch.tensor(time() - st, dtype=torch.float).npu(args.gpu)",
        "all_reduce input must live on the NPU for HCCL"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", EMPTY_NOTE),
  ])

E("me-docker", "docker/Dockerfile", "explicit_replacement",
  "NVIDIA/MinkowskiEngine docker/Dockerfile (pytorch CUDA devel base, TORCH_CUDA_ARCH_LIST, --force_cuda build)", [
      C('ARG PYTORCH="1.9.0"', "import_torch_npu", "replace", True,
        'ARG PYTORCH="2.1.0"',
        "torch_npu starts at torch 1.5/1.8/1.11/2.x lines; there is no 1.9 build, pick a paired version"),
      C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "device_type", "replace", True,
        "FROM quay.io/ascend/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA image lacks CANN for torch_npu"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6"', "env_var", "removal", False, None,
        "nvcc arch list, meaningless on Ascend"),
      C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "env_var", "removal", False, None,
        "nvcc flags, meaningless on Ascend"),
      C("RUN rm -rf /var/lib/apt/lists/*", "import_torch_npu", "npu_only_addition", True,
        'RUN pip install torch==2.1.0 torch-npu==2.1.0.post10',
        "CPU torch + torch-npu wheel pinned to the same torch version"),
      C("RUN cd MinkowskiEngine; python setup.py install --force_cuda --blas=openblas", "custom_cuda_extension",
        "replace", True,
        "RUN cd MinkowskiEngine; python setup.py install --cpu_only --blas=openblas",
        "--force_cuda needs nvcc; only a CPU build of ME is possible on an Ascend image"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# torchsparse / SPVNAS
# ---------------------------------------------------------------------------------------------------------------

E("spvnas-train", "train.py", "explicit_replacement",
  "mit-han-lab/spvnas train.py (torchpack dist.init, DDP, SemanticKITTITrainer)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", TORCH_NPU_ENTRY),
      C("dist.init()", "distributed_framework", "replace", False,
        "dist.init()  # patched: torchpack's init_process_group backend -> 'hccl'",
        "unconfirmed: torchpack.distributed.init() is believed to call init_process_group with a hard-coded "
        "'nccl' backend, which would fail on Ascend"),
      C("torch.cuda.set_device(dist.local_rank())", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(dist.local_rank())", "raises on an NPU host"),
      C("model.cuda(),", "tensor_to_device", "replace", True,
        "model.npu(),", "Module.cuda() raises on an NPU host"),
  ])

E("spvnas-trainers", "core/trainers.py", "explicit_replacement",
  "mit-han-lab/spvnas core/trainers.py (torchpack Trainer with torch.cuda.amp GradScaler/autocast)", [
      C("from torch.cuda import amp", "amp", "replace", True,
        "from torch_npu.npu import amp",
        "cuda amp GradScaler/autocast disable themselves on an NPU host; the alias is the only edit needed for "
        "the amp.GradScaler / amp.autocast uses below"),
      C("_inputs[key] = value.cuda()", "tensor_to_device", "replace", True,
        "_inputs[key] = value.to('npu')",
        "torchsparse SparseTensor only defines cuda()/cpu()/to(), so use .to('npu') rather than .npu()"),
      C("targets = feed_dict['targets'].F.long().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "targets = feed_dict['targets'].F.long().npu(non_blocking=True)", ".cuda() raises on an NPU host"),
  ])

E("spvnas-utils", "core/models/utils.py", "explicit_replacement",
  "mit-han-lab/spvnas core/models/utils.py (initial_voxelize / point_to_voxel / voxel_to_point on torchsparse F)", [
      C("import torchsparse.nn.functional as F", "custom_cuda_extension", "replace", True,
        "import core.models.npu_sparse.functional as F",
        "sphash / sphashquery / spcount / spvoxelize / spdevoxelize are torchsparse CUDA (or CPU) kernels with no "
        "NPU implementation; a torch-native re-implementation behind the same names is needed"),
  ])

E("spvnas-modelzoo", "model_zoo.py", "device_branch_or_abstraction",
  "mit-han-lab/spvnas model_zoo.py (pretrained SPVNAS / MinkUNet / SPVCNN, device chosen per local rank)", [
      C("'cuda:%d' % dist.local_rank() if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "'npu:%d' % dist.local_rank() if torch.npu.is_available() else 'cpu')",
        "silently places the model on CPU on an NPU host"),
      C("model = model.to(torch.device('cuda', dist.local_rank())", "device_type", "replace", True,
        "model = model.to(torch.device('npu', dist.local_rank())", "cuda device"),
      C("if torch.cuda.is_available() else torch.device('cpu'))", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available() else torch.device('cpu'))",
        "False on an NPU host, so the model silently stays on CPU"),
      C("map_location='cuda:%d' % dist.local_rank()", "device_type", "replace", True,
        "map_location='npu:%d' % dist.local_rank()", "cuda map_location"),
      C("if torch.cuda.is_available() else 'cpu')['model']", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available() else 'cpu')['model']",
        "False on an NPU host (weights land on CPU; harmless alone but must agree with the model device)"),
      C("device = 'cuda:%d' % dist.local_rank() if torch.cuda.is_available() else 'cpu'", "device_type", "replace",
        True,
        "device = 'npu:%d' % dist.local_rank() if torch.npu.is_available() else 'cpu'",
        "silently selects CPU on an NPU host"),
  ])

E("spvnas-eval", "evaluate.py", "explicit_replacement",
  "mit-han-lab/spvnas evaluate.py (SemanticKITTI evaluation with latency timing)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", TORCH_NPU_ENTRY),
      C("dist.init()", "distributed_framework", "replace", False,
        "dist.init()  # patched: torchpack's init_process_group backend -> 'hccl'",
        "unconfirmed: torchpack is believed to hard-code the nccl backend"),
      C("torch.cuda.set_device(dist.local_rank())", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(dist.local_rank())", "raises on an NPU host"),
      C("model.cuda(),", "tensor_to_device", "replace", True,
        "model.npu(),", "Module.cuda() raises on an NPU host"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded on an NPU host"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded on an NPU host"),
      C("_inputs[key] = value.cuda()", "tensor_to_device", "replace", True,
        "_inputs[key] = value.to('npu')", "torchsparse tensors: use .to('npu')"),
      C("targets = feed_dict['targets'].F.long().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "targets = feed_dict['targets'].F.long().npu(non_blocking=True)", ".cuda() raises on an NPU host"),
      C("with torch.autocast('cuda', enabled=args.fp16):", "amp", "replace", True,
        "with torch.autocast('npu', enabled=args.fp16):",
        "autocast('cuda') is disabled on an NPU host, so --fp16 silently measures fp32"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "initialises CUDA and raises on an NPU host"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# KPConv-PyTorch
# ---------------------------------------------------------------------------------------------------------------

E("kp-train-s3dis", "train_S3DIS.py", "explicit_replacement",
  "HuguesTHOMAS/KPConv-PyTorch train_S3DIS.py (config class, GPU_ID + CUDA_VISIBLE_DEVICES, ModelTrainer)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", TORCH_NPU_ENTRY),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = GPU_ID", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = GPU_ID",
        "ignored on Ascend: the GPU_ID argument would silently be dropped and every run lands on NPU 0"),
  ])

E("kp-trainer", "utils/trainer.py", "device_branch_or_abstraction",
  "HuguesTHOMAS/KPConv-PyTorch utils/trainer.py (ModelTrainer: on_gpu device choice, batch.to, validation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False,
        "import torch_npu",
        "only needed for the optional torch_npu.optim.NpuFusedSGD swap below"),
      C("self.optimizer = torch.optim.SGD([{'params': other_params},", "fused_optimizer", "replace", False,
        "self.optimizer = torch_npu.optim.NpuFusedSGD([{'params': other_params},",
        "performance only: plain SGD runs on NPU; msFmkTransplt advises the tensor-fused NpuFusedSGD "
        "(same momentum/weight_decay/param-group semantics)"),
      C("if on_gpu and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if on_gpu and torch.npu.is_available():", "silently trains on CPU on an NPU host"),
      C('self.device = torch.device("cuda:0")', "device_type", "replace", True,
        'self.device = torch.device("npu:0")', "cuda device"),
      C("=checkpoint = torch.load(chkp_path)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(chkp_path, map_location=self.device)", LOAD_NOTE),
      C("=if 'cuda' in self.device.type:", "device_type", "replace", True,
        "if 'npu' in self.device.type:",
        "with an npu device the batch is never moved and the forward mixes CPU inputs with NPU weights"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", EMPTY_NOTE),
      C("=torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(self.device)", "raises on an NPU host"),
      C("if self.device.type == 'cuda':", "device_type", "replace", True,
        "if self.device.type == 'npu':", "same device-type test in the classification validation"),
      C("torch.cuda.synchronize(self.device)  # wait for the forward pass", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(self.device)  # wait for the forward pass", "raises on an NPU host"),
      C("if 'cuda' in self.device.type:  # move the whole batch", "device_type", "replace", True,
        "if 'npu' in self.device.type:  # move the whole batch", "same device-type test in cloud validation"),
      C("torch.cuda.synchronize(self.device)  # for the timings below", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(self.device)  # for the timings below", "raises on an NPU host"),
  ])

E("kp-wrappers", "cpp_wrappers/compile_wrappers.sh", "explicit_replacement",
  "HuguesTHOMAS/KPConv-PyTorch cpp_wrappers/compile_wrappers.sh (CPU-only C++ grid subsampling / neighbors)", [])
