"""Labels for probe96 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"

IMPORT_NOTE = "torch.npu.* / the hccl backend / .npu() need torch_npu loaded (explicit import recommended even with autoload)"
GPU_CKPT = ("checkpoint was saved from GPU tensors: torch.load without map_location tries to restore CUDA storages and "
            "raises when CUDA is unavailable (PyTorch behaviour; transfer_to_npu only rewrites an explicit map_location)")
NOOP_EMPTY = "torch.cuda.empty_cache() is a silent no-op without CUDA; only memory housekeeping is lost"
ZERO_STATS = "torch.cuda memory statistics return 0 without CUDA: logging only"

# ---------------------------------------------------------------- TransFuser (autonomousvision/transfuser, 2022)
E("tf_train", "team_code_transfuser/train.py", "explicit_replacement",
  "autonomousvision/transfuser team_code_transfuser/train.py (torchrun DDP, NCCL, ZeroRedundancyOptimizer)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", NOOP_EMPTY),
    C("device = torch.device('cuda:{}'.format(local_rank))", "device_type", R, True,
      "device = torch.device('npu:{}'.format(local_rank))", "per-rank device used for every .to(self.device) in the Engine"),
    C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank,",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "torch.cuda.set_device needs a CUDA build"),
    C("device = torch.device('cuda:0')", "device_type", R, True, "device = torch.device('npu:0')",
      "single-process path"),
    C("model = DDP(model.cuda(local_rank)", "tensor_to_device", R, True,
      "model = DDP(model.npu(local_rank), device_ids=None, output_device=None, broadcast_buffers=False, find_unused_parameters=False)",
      "Module.cuda() fails without CUDA"),
    C("model.cuda(device=device)", "tensor_to_device", R, True, "model.npu(device=device)", "single-process path"),
    C("optimizer = optim.AdamW(model.parameters(), lr=args.lr) # For single GPU training", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr)",
      "performance only: tensor-fused AdamW from torch_npu.optim (the ZeRO path keeps optim.AdamW)"),
    C("peak_mb = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", R, False,
      "peak_mb = torch.npu.max_memory_allocated(self.device) / 1024 ** 2", ZERO_STATS),
])

E("tf_submission_agent", "team_code_transfuser/submission_agent.py", "explicit_replacement",
  "autonomousvision/transfuser submission_agent.py (leaderboard SENSORS agent, model ensemble, UKF on GNSS)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("net = LidarCenterNet(self.config, 'cuda',", "device_type", R, True,
      "net = LidarCenterNet(self.config, 'npu', self.backbone, image_architecture, lidar_architecture, use_velocity)",
      "the model builds its internal tensors on this device string"),
    C("map_location='cuda:0')", "device_type", R, True,
      "state_dict = torch.load(os.path.join(path_to_conf_file, file), map_location='npu:0')",
      "map_location='cuda:0' raises without CUDA"),
    C("=net.cuda()", "tensor_to_device", R, True, "net.npu()", "Module.cuda() fails without CUDA"),
    C("gt_velocity = torch.FloatTensor([tick_data['speed']]).to('cuda'", "tensor_to_device", R, True,
      "gt_velocity = torch.FloatTensor([tick_data['speed']]).to('npu', dtype=torch.float32) # used by controller", ""),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "only with TIME_INFERENCE=1, then raises without CUDA"),
    C("torch.cuda.synchronize()  # wait for the last ensemble member", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the last ensemble member", "only with TIME_INFERENCE=1"),
    C("image = image.to('cuda:0', dtype=torch.float32)", "tensor_to_device", R, True,
      "image = image.to('npu:0', dtype=torch.float32)", ""),
    C("lidar_bev = lidar_bev.cuda().float()", "tensor_to_device", R, True, "lidar_bev = lidar_bev.npu().float()", ""),
    C("target_point = target_point.to('cuda', dtype=torch.float32)", "tensor_to_device", R, True,
      "target_point = target_point.to('npu', dtype=torch.float32)", ""),
    C("[None].to('cuda', dtype=torch.float32)", "tensor_to_device", R, True,
      "target_point_image = torch.from_numpy(target_point_image)[None].to('npu', dtype=torch.float32)", ""),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", NOOP_EMPTY),
])

E("tf_environment_yml", "environment.yml", "explicit_replacement",
  "autonomousvision/transfuser environment.yml (conda pytorch+cudatoolkit, mmcv-full / torch-scatter CUDA wheel indexes)", [
    C("=- nvidia", "torch_cuda_api", X, False, None,
      "channel only serves CUDA packages; harmless once cudatoolkit is gone"),
    C("cudatoolkit=11.3", "torch_cuda_api", X, True, None, "no CUDA toolkit on an Ascend host (and no aarch64 build)"),
    C("pytorch=1.12.0", "torch_cuda_api", R, True, "# torch==2.1.0 from PyPI (pip section), paired with torch-npu",
      "torch 1.12 has no torch_npu release in the compatibility matrix; the conda build is the CUDA variant"),
    C("torchvision=0.13.0", "torch_cuda_api", R, True, "# torchvision==0.16.0 from PyPI (pip section)",
      "must follow the torch version"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post12",
      "torch_npu wheel (plus CANN on the host) is what makes the npu device exist"),
    C("cu113/torch1.12.0/index.html", "custom_cuda_extension", R, True,
      "# build mmcv-full from source on the NPU host (MMCV_WITH_OPS=1 FORCE_NPU=1)",
      "on x86 hosts pip would pick the cu113/torch1.12 prebuilt wheel, whose mmcv._ext links libcudart"),
    C("mmcv-full==1.5.3", "custom_cuda_extension", R, False, "- mmcv-full==1.7.2",
      "unconfirmed: TransFuser only uses mmcv/mmdet utilities; an NPU-enabled mmcv build is needed only for mmcv.ops"),
    C("torch-1.12.0+cu113.html", "custom_cuda_extension", R, True, "# torch-scatter replaced by native index ops",
      "CUDA wheel index for torch-scatter"),
    C("torch-scatter==2.0.9", "custom_cuda_extension", X, True, None,
      "nvcc-built extension used by the point-pillar encoder; no NPU kernels (call sites are ported to native ops)"),
    C("pynvml==11.4.1", "torch_cuda_api", X, False, None, "NVML does not exist on Ascend (npu-smi instead); monitoring only"),
    C("gpustat==1.0.0", "torch_cuda_api", X, False, None, "nvidia-smi wrapper; monitoring only"),
])

E("tf_train_sh", "team_code_transfuser/shell_train.sh", "explicit_replacement",
  "TransFuser-style SLURM training launcher (torchrun on all GPUs of one node)", [
    C("#SBATCH --gres=gpu:4", "device_type", R, False, "#SBATCH --gres=npu:8",
      "unconfirmed: the generic-resource name for NPUs is site-specific"),
    C("=nvidia-smi", "torch_cuda_api", R, True, "npu-smi info",
      "script runs under set -e: a missing nvidia-smi aborts the job"),
    C("module load cuda/11.3", "env_var", R, True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced for torch_npu (libascendcl/libhccl); a missing module aborts under set -e"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL_* variables are ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL_* variables are ignored by HCCL"),
    C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", R, True,
      "NUM_GPUS=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "count is 0 on an NPU host, torchrun --nproc_per_node=0 fails"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 torchrun --nnodes=1 --nproc_per_node=${NUM_GPUS} --max_restarts=0 \\",
      "the Ascend runtime selects devices with ASCEND_RT_VISIBLE_DEVICES"),
])

# ---------------------------------------------------------------- carla_garage / TransFuser++
E("garage_train", "team_code/train.py", "explicit_replacement",
  "autonomousvision/carla_garage team_code/train.py (TransFuser++: DDP, AMP, ZeRO, optional torch.compile)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", NOOP_EMPTY),
    C("device = torch.device(f'cuda:{local_rank}')", "device_type", R, True,
      "device = torch.device(f'npu:{local_rank}')", ""),
    C("torch.distributed.init_process_group(backend='nccl',", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend='hccl',", "NCCL is not available on Ascend"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "ngpus_per_node = torch.npu.device_count()", "0 without CUDA -> ZeroDivisionError in num_workers"),
    C("=torch.cuda.device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "torch.cuda.device() rejects an npu device once `device` is ported (and never selected anything)"),
    C("torch.cuda.is_bf16_supported()", "device_capability_check", R, True,
      "config.amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "with --use_amp 1 the CUDA query initialises CUDA and raises on an NPU host"),
    C("model.cuda(device=device)", "tensor_to_device", R, True, "model.npu(device=device)", ""),
    C("model = torch.compile(model, mode='max-autotune')", "compile_mode", R, False,
      "model = torch.compile(model, backend='npugraphs')",
      "unconfirmed: only with --compile 1; Inductor max-autotune targets Triton/CUDA, npugraphs is the documented NPU backend"),
    C("optimizer = optim.AdamW(model.parameters(), lr=args.lr, amsgrad=True)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr, amsgrad=True)", "performance only"),
    C("scaler = torch.cuda.amp.GradScaler(", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=bool(args.use_amp) and config.amp_dtype == torch.float16)",
      "the CUDA GradScaler disables itself without CUDA: fp16 training without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=bool(self.args.use_amp)", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=bool(self.args.use_amp), dtype=self.config.amp_dtype):",
      "CUDA autocast is inactive for NPU tensors"),
    C("with torch.autocast(device_type='cuda', dtype=self.config.amp_dtype", "amp", R, True,
      "with torch.autocast(device_type='npu', dtype=self.config.amp_dtype, enabled=bool(self.args.use_amp)):",
      "device_type='cuda' autocast is inactive for NPU tensors"),
    C("torch.cuda.empty_cache()  # release the activation cache before validation", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # release the activation cache before validation", NOOP_EMPTY),
])

E("garage_sensor_agent", "team_code/sensor_agent.py", "explicit_replacement",
  "autonomousvision/carla_garage team_code/sensor_agent.py (TF++ leaderboard agent, fp16 inference, CUDA-event timing)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", NOOP_EMPTY),
    C("self.device = torch.device('cuda:0')", "device_type", R, True, "self.device = torch.device('npu:0')",
      "used for map_location and every input tensor"),
    C("net.cuda(device=self.device)", "tensor_to_device", R, True, "net.npu(device=self.device)", ""),
    C("self.start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "self.start_event = torch.npu.Event(enable_timing=True)", "only with TIME_INFERENCE=1"),
    C("self.end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "self.end_event = torch.npu.Event(enable_timing=True)", "only with TIME_INFERENCE=1"),
    C("lidar_bev = torch.from_numpy(lidar_bev).unsqueeze(0).cuda(non_blocking=True)", "tensor_to_device", R, True,
      "lidar_bev = torch.from_numpy(lidar_bev).unsqueeze(0).npu(non_blocking=True)", ""),
    C("gt_velocity = torch.FloatTensor([tick_data['speed']]).cuda()", "tensor_to_device", R, True,
      "gt_velocity = torch.FloatTensor([tick_data['speed']]).npu()", ""),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16", "amp", R, True,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=bool(self.use_amp)):",
      "AGENT_AMP defaults to 1: CUDA autocast is inactive for NPU tensors, the ensemble silently runs in fp32"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", R, True,
      "torch.npu.current_stream().synchronize()", "only with TIME_INFERENCE=1"),
    C("'max_alloc_mb': torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "'max_alloc_mb': torch.npu.max_memory_allocated() / 2 ** 20}", ZERO_STATS),
])

E("garage_model", "team_code/model.py", "device_branch_or_abstraction",
  "autonomousvision/carla_garage team_code/model.py (TF++ LidarCenterNet, nn.TransformerDecoder query decoder, GRU heads)", [
    C("decoder_layer = nn.TransformerDecoderLayer(", "unsupported_op_workaround", R, True,
      "decoder_layer = DecoderLayer(self.config.gru_input_size, self.config.num_decoder_heads, activation=nn.GELU())",
      "torch.nn.TransformerDecoderLayer is marked unsupported (✘) on Atlas A2/A3 in Ascend's 2.7.1 API list and "
      "UNSUPPORTED by msFmkTransplt; rebuild from nn.MultiheadAttention (✔) + Linear + LayerNorm"),
    C("self.join = torch.nn.TransformerDecoder(decoder_layer,", "unsupported_op_workaround", R, True,
      "self.join = Decoder(decoder_layer,", "torch.nn.TransformerDecoder is ✘ in Ascend's 2.7.1 API list"),
    C("self.target_speed_bins = torch.tensor(self.config.target_speeds, dtype=torch.float32).cuda()", "tensor_to_device", R, True,
      "self.register_buffer('target_speed_bins', torch.tensor(self.config.target_speeds, dtype=torch.float32), persistent=False)",
      "tensor created on CUDA in __init__: fails without CUDA; a buffer follows model.to(device)"),
])

E("garage_eval_jobs", "evaluate_routes_local.py", "explicit_replacement",
  "carla_garage evaluate_routes_slurm.py-style local job launcher (one CARLA server + agent per GPU, NVML free-memory probe)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=import pynvml", "torch_cuda_api", X, False, None, "NVML has no Ascend counterpart; import itself succeeds"),
    C("pynvml.nvmlInit()", "torch_cuda_api", R, True,
      "# NVML is NVIDIA-only: probe free memory with torch.npu.mem_get_info", "raises NVMLError_LibraryNotFound on an NPU host"),
    C("for idx in range(pynvml.nvmlDeviceGetCount()):", "torch_cuda_api", R, True,
      "for idx in range(torch.npu.device_count()):", ""),
    C("info = pynvml.nvmlDeviceGetMemoryInfo(handle)", "torch_cuda_api", R, True,
      "free_bytes, _ = torch.npu.mem_get_info(idx)", ""),
    C("out = subprocess.check_output(['nvidia-smi', '--query-gpu=index,memory.used,memory.total',", "torch_cuda_api", R, True,
      "out = subprocess.check_output(['npu-smi', 'info'], encoding='utf-8')",
      "fallback path runs after NVMLError: nvidia-smi is absent (npu-smi output needs its own parser)"),
    C("CUDA_VISIBLE_DEVICES={gpu} python -u", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES={gpu} python -u ${{LEADERBOARD_ROOT}}/leaderboard/leaderboard_evaluator_local.py",
      "agent process; the CARLA server line above keeps its render-GPU flags (simulator is not part of the port)"),
    C("gpus = list(range(torch.cuda.device_count()))", "torch_cuda_api", R, True,
      "gpus = list(range(torch.npu.device_count()))", "0 without CUDA -> 'No GPU available, aborting.'"),
])

E("garage_dockerfile", "Dockerfile", "explicit_replacement",
  "CARLA leaderboard submission Dockerfile (nvidia/cuda base, conda pytorch+cudatoolkit, mmcv-full cu113, team ops build)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "base image must carry CANN instead of CUDA/cuDNN"),
    C("=ENV PATH /opt/conda/bin:$PATH", "env_var", A, False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> ~/.bashrc",
      "needed only when the base image does not already export the CANN paths"),
    C("conda install -y pytorch==1.12.1 torchvision==0.13.1 cudatoolkit=11.3 -c pytorch", "torch_cuda_api", R, True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 && \\",
      "CUDA build of torch; torch_npu needs the matching plain torch wheel"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES 0",
      "Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES; devices can also be mounted at docker run"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", X, False, None, "NVIDIA container runtime only"),
    C("ENV TORCH_CUDA_ARCH_LIST", "env_var", X, False, None, "only read by nvcc builds"),
    C("=ENV FORCE_CUDA 1", "env_var", R, True, "ENV FORCE_NPU 1",
      "forces the CUDA branch of mmcv / team ops setup.py, which then needs nvcc"),
    C("pip install --no-cache-dir mmcv-full==1.6.1 -f https://download.openmmlab.com/mmcv/dist/cu113", "custom_cuda_extension", R, True,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir mmcv-full==1.7.2",
      "prebuilt cu113 wheel: mmcv._ext links the CUDA runtime"),
    C("RUN cd ${TEAM_CODE_ROOT}/ops && python setup.py develop", "custom_cuda_extension", R, True,
      "RUN cd ${TEAM_CODE_ROOT}/ops && FORCE_NPU=1 python setup.py develop",
      "builds the nvcc bev_pool/voxel kernels (see bev_pool_setup)"),
])

# ---------------------------------------------------------------- InterFuser (opendilab/InterFuser)
E("interfuser_train", "interfuser/train.py", "explicit_replacement",
  "opendilab/InterFuser interfuser/train.py (timm train script: apex/native AMP, NativeScaler, launch-util DDP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('args.device = "cuda:0"', "device_type", R, False, 'args.device = "npu:0"',
      "string only ends up in a log message; model/tensors are moved with .cuda()"),
    C('args.device = "cuda:%d" % args.local_rank', "device_type", R, False, 'args.device = "npu:%d" % args.local_rank',
      "log message only"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)", ""),
    C('torch.distributed.init_process_group(backend="nccl"', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://")', ""),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", ""),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", R, False,
      "model = model.contiguous()  # channels_last not supported on NPU",
      "unconfirmed: only with --channels-last; msFmkTransplt's README lists channels_last as unsupported"),
    C("optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)",
      "performance only"),
    C("amp_autocast = torch.cuda.amp.autocast", "amp", R, True, "amp_autocast = torch.npu.amp.autocast",
      "CUDA autocast is inactive for NPU tensors"),
    C("loss_scaler = NativeScaler()", "amp", R, True, "loss_scaler = NpuNativeScaler()  # wraps torch.npu.amp.GradScaler",
      "timm's NativeScaler builds torch.cuda.amp.GradScaler internally, which disables itself without CUDA"),
    C("cls_loss = SoftTargetCrossEntropy().cuda()", "tensor_to_device", R, False, "cls_loss = SoftTargetCrossEntropy().npu()",
      "module has no parameters or buffers: .cuda() is a no-op without CUDA"),
    C("junction_loss = nn.CrossEntropyLoss(weight=torch.tensor(args.junction_weights)).cuda()", "tensor_to_device", R, True,
      "junction_loss = nn.CrossEntropyLoss(weight=torch.tensor(args.junction_weights)).npu()",
      "class-weight buffer must be moved: fails without CUDA"),
    C("sample[key] = sample[key].cuda()", "tensor_to_device", R, True, "sample[key] = sample[key].npu()", ""),
    C("=target = [x.cuda() if isinstance(x, torch.Tensor) else x for x in target]", "tensor_to_device", R, True,
      "target = [x.npu() if isinstance(x, torch.Tensor) else x for x in target]", "train loop"),
    C("else x for x in target]  # noqa: E501 eval copy", "tensor_to_device", R, True,
      "target = [x.npu() if isinstance(x, torch.Tensor) else x for x in target]", "validation loop"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C("mem=torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "mem=torch.npu.max_memory_allocated() / 1024.0 ** 2))", ZERO_STATS),
])

E("interfuser_model", "interfuser/timm/models/interfuser.py", "device_branch_or_abstraction",
  "opendilab/InterFuser timm/models/interfuser.py (DETR-style encoder/decoder copies, GRU waypoint head)", [
    C("self.attn_mask = self.generate_square_subsequent_mask(tgt.shape[0]).cuda()", "tensor_to_device", R, True,
      "self.attn_mask = self.generate_square_subsequent_mask(tgt.shape[0]).to(tgt.device)", ""),
    C(".type(torch.cuda.FloatTensor)", "tensor_to_device", R, True,
      "velocity = measurements[:, 6:7].unsqueeze(-1).float()",
      "casting to the CUDA tensor type needs CUDA; a dtype cast keeps the input's device"),
])

E("interfuser_agent", "leaderboard/team_code/interfuser_agent.py", "explicit_replacement",
  "opendilab/InterFuser leaderboard/team_code/interfuser_agent.py (multi-view + LiDAR agent, tracker, controller)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('self.net.load_state_dict(torch.load(path_to_model_file)["state_dict"])', "device_type", R, True,
      'self.net.load_state_dict(torch.load(path_to_model_file, map_location="cpu")["state_dict"])', GPU_CKPT),
    C("=self.net.cuda()", "tensor_to_device", R, True, "self.net.npu()", ""),
    C("rgb = self.rgb_front_transform(Image", "tensor_to_device", R, True,
      'rgb = self.rgb_front_transform(Image.fromarray(tick_data["rgb"])).unsqueeze(0).npu().float()', ""),
    C("rgb_left = self.rgb_left_transform(Image", "tensor_to_device", R, True,
      'rgb_left = self.rgb_left_transform(Image.fromarray(tick_data["rgb_left"])).unsqueeze(0).npu().float()', ""),
    C("rgb_right = self.rgb_right_transform(Image", "tensor_to_device", R, True,
      'rgb_right = self.rgb_right_transform(Image.fromarray(tick_data["rgb_right"])).unsqueeze(0).npu().float()', ""),
    C("rgb_center = self.rgb_center_transform(Image", "tensor_to_device", R, True,
      'rgb_center = self.rgb_center_transform(Image.fromarray(tick_data["rgb"])).unsqueeze(0).npu().float()', ""),
    C("mes = torch.from_numpy(mes).float().unsqueeze(0).cuda()", "tensor_to_device", R, True,
      "mes = torch.from_numpy(mes).float().unsqueeze(0).npu()", ""),
    C('input_data["target_point"] = torch.from_numpy(tick_data["target_point"]).float().cuda()', "tensor_to_device", R, True,
      'input_data["target_point"] = torch.from_numpy(tick_data["target_point"]).float().npu().view(1, -1)', ""),
    C('input_data["lidar"] = torch.from_numpy(tick_data["lidar"]).float().cuda()', "tensor_to_device", R, True,
      'input_data["lidar"] = torch.from_numpy(tick_data["lidar"]).float().npu().unsqueeze(0)', ""),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", NOOP_EMPTY),
])

E("interfuser_export", "interfuser/tools/export_and_benchmark.py", "explicit_replacement",
  "InterFuser-style deployment script: ONNX export, TensorRT engine, onnxruntime CUDA EP, NVTX ranges and CUDA-event latency", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=import tensorrt as trt", "custom_cuda_extension", R, True,
      "# TensorRT has no Ascend build: convert the ONNX file offline (ATC) or time torch_npu graph mode instead",
      "TensorRT is CUDA-only; the import fails on an NPU host"),
    C("model = model.cuda().eval()", "tensor_to_device", R, True, "model = model.npu().eval()", ""),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", ""),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True, "end = torch.npu.Event(enable_timing=True)", ""),
    C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", R, True, "range_id = torch_npu.npu.mstx.range_start(name)",
      "torch.cuda.nvtx is not redirected by transfer_to_npu and needs a CUDA build; torch_npu.npu.mstx is the NPU "
      "counterpart (exact method names unconfirmed)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "see range_push (method names unconfirmed)"),
    C("inputs = {k: v.cuda() for k, v in inputs.items()}", "tensor_to_device", R, True,
      "inputs = {k: v.npu() for k, v in inputs.items()}", ""),
    C("with torch.autocast('cuda', dtype=torch.float16, enabled=fp16):", "amp", R, True,
      "with torch.autocast('npu', dtype=torch.float16, enabled=fp16):",
      "the fp16 benchmark would silently measure fp32 on NPU"),
    C("providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])", "device_type", R, False,
      "providers=['CANNExecutionProvider', 'CPUExecutionProvider'])",
      "unconfirmed: onnxruntime silently falls back to the CPU provider; the CANN execution provider is not covered by "
      "the knowledge base"),
    C("device_inputs = {k: v.cuda().contiguous() for k, v in inputs.items()}", "tensor_to_device", R, True,
      "device_inputs = {k: v.npu().contiguous() for k, v in inputs.items()}", "TensorRT path (replaced as a whole)"),
    C("out = torch.empty(shape, dtype=torch.float32, device='cuda')", "device_type", R, True,
      "out = torch.empty(shape, dtype=torch.float32, device='npu')", "TensorRT path (replaced as a whole)"),
    C("stream_handle=torch.cuda.current_stream().cuda_stream", "torch_cuda_api", R, True,
      "# no TensorRT on NPU: run the om model / torch_npu graph on torch.npu.current_stream()",
      "raw CUDA stream handle for TensorRT"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "major, minor = 8, 0  # NPU: fp16/bf16 always available; get_device_capability() returns None",
      "torch_npu's get_device_capability returns None (configurable via TORCH_NPU_DEVICE_CAPABILITY): unpacking fails"),
    C("=model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", "after the CPU ONNX export"),
    C("report = {'device': torch.cuda.get_device_name(0),", "torch_cuda_api", R, True,
      "report = {'device': torch.npu.get_device_name(0),", ""),
    C("'total_mem_gb': torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", R, True,
      "'total_mem_gb': torch.npu.get_device_properties(0).total_memory / 2 ** 30}",
      "total_memory is one of the properties torch_npu reports"),
])

# ---------------------------------------------------------------- LAV (dotchen/LAV)
E("lav_agent", "team_code/lav_agent.py", "explicit_replacement",
  "dotchen/LAV team_code/lav_agent.py (traced TorchScript segmentation/brake models, point painting, uniplanner)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.device = torch.device('cuda')", "device_type", R, True, "self.device = torch.device('npu')", ""),
    C("self.bra_model = torch.jit.load(self.bra_model_trace_dir)", "device_type", R, True,
      "self.bra_model = torch.jit.load(self.bra_model_trace_dir, map_location='cpu').to(self.device)",
      "module traced on the GPU: loading restores CUDA parameters (and traced device constants need a re-trace on NPU)"),
    C("self.seg_model = torch.jit.load(self.seg_model_trace_dir)", "device_type", R, True,
      "self.seg_model = torch.jit.load(self.seg_model_trace_dir, map_location='cpu').to(self.device)",
      "traced on the GPU, see bra_model"),
    C("lidar_model_dict.update(torch.load(self.lidar_model_dir))", "device_type", R, True,
      "lidar_model_dict.update(torch.load(self.lidar_model_dir, map_location='cpu'))", GPU_CKPT),
    C("uniplanner_dict.update(torch.load(self.uniplanner_dir))", "device_type", R, True,
      "uniplanner_dict.update(torch.load(self.uniplanner_dir, map_location='cpu'))", GPU_CKPT),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", NOOP_EMPTY),
    C("lidar_t = torch.tensor(lidar_xyz, dtype=torch.float32, device='cuda')", "device_type", R, True,
      "lidar_t = torch.tensor(lidar_xyz, dtype=torch.float32, device=self.device)", ""),
])

E("lav_point_pillar", "lav/models/point_pillar.py", "explicit_replacement",
  "dotchen/LAV lav/models/point_pillar.py (dynamic PointPillars with torch_scatter)", [
    C("from torch_scatter import scatter_mean, scatter_max", "custom_cuda_extension", R, True,
      "# torch_scatter replaced by native index_add_/index_reduce_ (no NPU build of torch_scatter)",
      "nvcc-built extension; its CPU build does not accept NPU tensors (exact failure mode unconfirmed)"),
    C("feat_max = scatter_max(feat, inverse_indices, dim=0)[0]", "custom_cuda_extension", R, True,
      "feat_max = feat.new_full((int(inverse_indices.max()) + 1, feat.shape[1]), float('-inf')).index_reduce_(0, inverse_indices, feat, 'amax')",
      "torch.index_reduce is ✔ on A2 but 'may fall back to CPU'; scatter_reduce is ✘"),
    C("points_cluster = xyz - scatter_mean(xyz, inverse_indices, dim=0)[inverse_indices]", "custom_cuda_extension", R, True,
      "points_cluster = xyz - (torch.zeros(n, 3, device=xyz.device).index_add_(0, inverse_indices, xyz) / torch.bincount(inverse_indices)[:, None])[inverse_indices]",
      "scatter_mean from the CUDA extension"),
])

E("lav_train", "lav/train_bev.py", "explicit_replacement",
  "dotchen/LAV lav/train_bev.py (privileged BEV planner, --device cuda, DataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.bev_planner = nn.DataParallel(self.bev_planner)", "distributed_framework", R, True,
      "self.bev_planner = torch.nn.parallel.DistributedDataParallel(self.bev_planner, device_ids=[local_rank])",
      "torch.nn.DataParallel is unsupported on Ascend (✘); multi-device training needs DDP"),
    C("self.bev_optim = optim.Adam(self.bev_planner.parameters(), lr=args.lr)", "fused_optimizer", R, False,
      "self.bev_optim = torch_npu.optim.NpuFusedAdam(self.bev_planner.parameters(), lr=args.lr)", "performance only"),
    C("torch.tensor(idxs, dtype=torch.long).cuda())", "tensor_to_device", R, True,
      "bev, ego_locs[:, 0], flat_locs[:, 0], flat_oris, nxp, torch.tensor(idxs, dtype=torch.long).to(self.device))",
      "hard-coded .cuda() next to otherwise device-agnostic code"),
    C("opt_info['gpu_mem_mb'] = torch.cuda.memory_allocated()", "torch_cuda_api", R, False,
      "opt_info['gpu_mem_mb'] = torch.npu.memory_allocated() / 2 ** 20", ZERO_STATS),
    C("parser.add_argument('--device', default='cuda', choices=['cuda', 'cpu'])", "device_type", R, True,
      "parser.add_argument('--device', default='npu', choices=['npu', 'cpu'])", ""),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "False on an NPU host: training silently falls back to the CPU"),
])

E("lav_requirements", "requirements.txt", "explicit_replacement",
  "dotchen/LAV-style requirements.txt (torch +cu113 local versions, torch-scatter from the PyG CUDA wheel index)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", A, True,
      "torch-npu==2.1.0.post12", "torch_npu wheel matching the torch pin"),
    C("torch==1.10.0+cu113", "torch_cuda_api", R, True, "torch==2.1.0",
      "CUDA local version; 1.10 has no torch_npu release"),
    C("torchvision==0.11.1+cu113", "torch_cuda_api", R, True, "torchvision==0.16.0", "follows torch"),
    C("--find-links https://data.pyg.org/whl/torch-1.10.0+cu113.html", "custom_cuda_extension", X, True, None,
      "CUDA wheel index (x86 would install a CUDA build of torch-scatter)"),
    C("torch-scatter==2.0.9", "custom_cuda_extension", X, False, None,
      "no longer imported once point_pillar.py uses native index ops"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", X, False, None, "NVML is NVIDIA-only; monitoring"),
])

# ---------------------------------------------------------------- TCP (OpenDriveLab/TCP)
E("tcp_train", "TCP/train.py", "explicit_replacement",
  "OpenDriveLab/TCP TCP/train.py (pytorch-lightning 1.x Trainer with gpus=, accelerator='ddp', DDPPlugin)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("optimizer = optim.Adam(self.parameters(), lr=self.lr, weight_decay=1e-7)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(self.parameters(), lr=self.lr, weight_decay=1e-7)", "performance only"),
    C("gpus=args.gpus,", "device_type", R, True, "accelerator=NPUAccelerator(), devices=args.gpus,",
      "lightning raises MisconfigurationException for gpus>0 without CUDA; the NPU accelerator class is project code "
      "(lightning ships none; unconfirmed)"),
    C("accelerator='ddp',", "distributed_framework", R, True, "strategy=DDPStrategy(process_group_backend='hccl', find_unused_parameters=False),",
      "the 'ddp' accelerator string assumes CUDA devices"),
    C("plugins=DDPPlugin(find_unused_parameters=False),", "dist_backend", R, True, "# (folded into the DDPStrategy above)",
      "DDPPlugin chooses nccl on GPUs and gloo otherwise; neither works for NPU tensors"),
])

E("tcp_agent", "team_code/tcp_agent.py", "explicit_replacement",
  "OpenDriveLab/TCP team_code/tcp_agent.py (loads the lightning .ckpt directly, trajectory/control blending)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("ckpt = torch.load(path_to_conf_file)", "device_type", R, True,
      "ckpt = torch.load(path_to_conf_file, map_location='cpu')", GPU_CKPT),
    C("=self.net.cuda()", "tensor_to_device", R, True, "self.net.npu()", ""),
    C("gt_velocity = torch.FloatTensor([tick_data['speed']]).to('cuda'", "tensor_to_device", R, True,
      "gt_velocity = torch.FloatTensor([tick_data['speed']]).to('npu', dtype=torch.float32)", ""),
    C("cmd_one_hot = torch.tensor(cmd_one_hot).view(1, 6).to('cuda'", "tensor_to_device", R, True,
      "cmd_one_hot = torch.tensor(cmd_one_hot).view(1, 6).to('npu', dtype=torch.float32)", ""),
    C("speed = torch.FloatTensor([float(tick_data['speed'])]).view(1, 1).cuda()", "tensor_to_device", R, True,
      "speed = torch.FloatTensor([float(tick_data['speed'])]).view(1, 1).npu()", ""),
    C("rgb = self._im_transform(tick_data['rgb']).unsqueeze(0).cuda().float()", "tensor_to_device", R, True,
      "rgb = self._im_transform(tick_data['rgb']).unsqueeze(0).npu().float()", ""),
    C("target_point = torch.stack(tick_data['target_point'], dim=1).to('cuda'", "tensor_to_device", R, True,
      "target_point = torch.stack(tick_data['target_point'], dim=1).to('npu', dtype=torch.float32)", ""),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", NOOP_EMPTY),
])

E("tcp_eval_sh", "leaderboard/scripts/run_evaluation.sh", "explicit_replacement",
  "OpenDriveLab/TCP leaderboard/scripts/run_evaluation.sh (starts CARLA, then the leaderboard evaluator)", [
    C("export LEADERBOARD_ROOT=leaderboard", "env_var", A, True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for the agent process (torch_npu fails to load libascendcl/libhccl otherwise)"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=${NPU_ID}",
      "agent process; the CARLA server line keeps its own GPU flags"),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:128", "allocator tuning only; ignored by the NPU allocator"),
])

# ---------------------------------------------------------------- CARLA leaderboard
E("lb_evaluator", "leaderboard/leaderboard/leaderboard_evaluator_local.py", "explicit_replacement",
  "carla-simulator/leaderboard leaderboard_evaluator.py, local fork with --gpu pinning and per-route memory cleanup", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", NOOP_EMPTY),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(arguments.gpu)", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(arguments.gpu)",
      "ignored by the Ascend runtime: every evaluator process would share NPU 0"),
])

# ---------------------------------------------------------------- nuPlan
E("nuplan_utils_config", "nuplan/planning/script/builders/utils/utils_config.py", "device_branch_or_abstraction",
  "motional/nuplan-devkit script/builders/utils/utils_config.py (gpus=-1 only when CUDA is available, DDP lr scaling)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if cfg.gpu and torch.cuda.is_available():", "torch_cuda_api", B, True,
      "if cfg.gpu and (torch.cuda.is_available() or torch.npu.is_available()):",
      "False on an NPU host: the else branch silently trains on the CPU in fp32"),
    C("cfg.lightning.trainer.params.gpus = -1", "device_type", R, True,
      "cfg.lightning.trainer.params.devices = -1  # accelerator: npu", "lightning gpus=-1 requires CUDA"),
    C("if cfg.get('ml_planner_gpu_fraction', None) is not None and not torch.cuda.is_available():", "torch_cuda_api", B, True,
      "if cfg.get('ml_planner_gpu_fraction', None) is not None and not (torch.cuda.is_available() or torch.npu.is_available()):",
      "drops the accelerator share of ML planners on an NPU host"),
    C("num_gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "num_gpus_per_node = torch.npu.device_count()", "0 on an NPU host: lr scaled by 0"),
])

E("nuplan_lightning_yaml", "nuplan/planning/script/config/training/lightning/default_lightning.yaml", "explicit_replacement",
  "motional/nuplan-devkit config/training/lightning/default_lightning.yaml (pl.Trainer params)", [
    C("gpus: -1  # number of GPUs", "device_type", R, True, "devices: -1  # number of NPUs (accelerator: npu)",
      "lightning gpus=-1 requires CUDA"),
    C("accelerator: ddp  # distribution method", "distributed_framework", R, True,
      "accelerator: npu  # with strategy: ddp", "the ddp accelerator string assumes CUDA devices"),
    C("precision: 16  # floating point precision", "amp", R, False, "precision: 16  # needs an NPU precision plugin",
      "unconfirmed: lightning 1.x native AMP is torch.cuda.amp; on NPU it trains in fp32 (speed only)"),
    C("_target_: pytorch_lightning.plugins.DDPPlugin", "dist_backend", R, True,
      "- _target_: pytorch_lightning.strategies.DDPStrategy  # process_group_backend: hccl",
      "DDPPlugin picks nccl (GPU) or gloo; NPU needs hccl"),
])

E("nuplan_model_loader", "nuplan/planning/simulation/planner/ml_planner/model_loader.py", "device_branch_or_abstraction",
  "motional/nuplan-devkit simulation/planner/ml_planner/model_loader.py (ML planner device selection)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self._device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", B, True,
      "self._device = torch.device('npu' if torch.npu.is_available() else 'cuda' if torch.cuda.is_available() else 'cpu')",
      "silently runs the planner on the CPU on an NPU host"),
])

E("nuplan_worker_ray", "nuplan/planning/utils/multithreading/worker_ray.py", "device_branch_or_abstraction",
  "motional/nuplan-devkit utils/multithreading/worker_ray.py (Ray worker pool with per-task num_gpus)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("return torch.cuda.device_count() if torch.cuda.is_available() else 0", "torch_cuda_api", B, True,
      "return torch.npu.device_count() if torch.npu.is_available() else torch.cuda.device_count()",
      "reports 0 accelerators on an NPU host"),
    C("num_gpus=number_of_gpus_per_node,", "device_type", R, False,
      "resources={'NPU': number_of_gpus_per_node},",
      "unconfirmed: Ray's NPU resource handling is not covered by the knowledge base"),
    C("=remote_fn = ray.remote(task.fn).options(num_gpus=task.num_gpus, num_cpus=task.num_cpus)", "device_type", R, False,
      "remote_fn = ray.remote(task.fn).options(resources={'NPU': task.num_gpus} if task.num_gpus else None, num_cpus=task.num_cpus)",
      "unconfirmed: tasks asking for GPU shares never schedule on a GPU-less Ray cluster"),
    C("num_cpus=task.num_cpus)  # type: ignore", "device_type", R, False,
      "remote_fn = ray.remote(task.fn).options(resources={'NPU': task.num_gpus} if task.num_gpus else None, num_cpus=task.num_cpus)  # type: ignore",
      "unconfirmed, see ray_map"),
])

E("nuplan_requirements", "requirements.txt", "explicit_replacement",
  "jchengai/planTF-style requirements.txt on top of nuplan-devkit (torch 2.0 +cu117, NATTEN CUDA wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==2.0.1+cu117", "torch_cuda_api", R, True, "torch==2.1.0", "+cu117 local version is a CUDA build"),
    C("torchvision==0.15.2+cu117", "torch_cuda_api", R, True, "torchvision==0.16.0", "follows torch"),
    C("pytorch-lightning==2.0.1", "import_torch_npu", A, True, "torch-npu==2.1.0.post12", "torch_npu wheel"),
    C("-f https://shi-labs.com/natten/wheels", "custom_cuda_extension", X, True, None, "NATTEN CUDA wheel index"),
    C("natten==0.14.6+torch200cu117", "custom_cuda_extension", X, True, None,
      "CUDA-only wheel (torch200cu117); the agent encoder's neighbourhood attention is rewritten"),
    C("nvidia-ml-py==11.525.112", "torch_cuda_api", X, False, None, "NVML is NVIDIA-only; monitoring"),
])

E("plantf_embedding", "src/models/planTF/layers/embedding.py", "explicit_replacement",
  "jchengai/planTF src/models/planTF/layers/embedding.py (NATTEN NeighborhoodAttention1D history encoder)", [
    C("from natten import NeighborhoodAttention1D", "custom_cuda_extension", R, True,
      "from .local_attention import NeighborhoodAttention1D  # windowed attention from torch ops",
      "NATTEN ships CUDA kernels only (no NPU build); a drop-in module with the same constructor keeps NATLayer unchanged"),
    C("self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()", "npu_fused_op", R, False,
      "self.drop_path = NpuDropPath(drop_path) if drop_path > 0.0 else nn.Identity()",
      "performance only: torch_npu.contrib.module.NpuDropPath (msFmkTransplt affinity list)"),
])

E("diffusion_planner_train", "diffusion_planner/train_predictor.py", "explicit_replacement",
  "ZhengYinan-AIR/Diffusion-Planner train_predictor.py + utils/ddp.py (torchrun/SLURM DDP, bf16 autocast, EMA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued without CUDA; NPU generators are seeded by torch.manual_seed"),
    C("gpu = rank % torch.cuda.device_count()", "torch_cuda_api", R, True, "gpu = rank % torch.npu.device_count()",
      "SLURM path: ZeroDivisionError on an NPU host"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(gpu)", ""),
    C("dist_backend = 'nccl'", "dist_backend", R, True, "dist_backend = 'hccl'", "backend chosen through a variable"),
    C("std, mean = torch.std_mean(data, dim=0)", "unsupported_op_workaround", R, True,
      "std, mean = data.std(dim=0), data.mean(dim=0)",
      "torch.std_mean is ✘ in Ascend's 2.7.1 API list and UNSUPPORTED in msFmkTransplt"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C("with torch.autocast(device_type='cuda', dtype=torch.bfloat16", "amp", R, True,
      "with torch.autocast(device_type='npu', dtype=torch.bfloat16, enabled=args.bf16):",
      "CUDA autocast is inactive for NPU tensors: silently trains in fp32"),
    C("torch.cuda.synchronize()  # make the epoch time comparable across ranks", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # make the epoch time comparable across ranks", ""),
    C("args.device = f'{args.device}:{rank}' if args.device == 'cuda' else args.device", "device_type", R, False,
      "args.device = f'{args.device}:{rank}' if args.device in ('cuda', 'npu') else args.device",
      "with --device npu the bare 'npu' string already resolves to the device set by set_device"),
    C("diffusion_planner = diffusion_planner.to(rank if args.device.startswith('cuda') else args.device)", "device_type", R, False,
      "diffusion_planner = diffusion_planner.to(args.device)",
      "an int would mean a CUDA index; with an npu device string the else branch is already right"),
    C("optimizer = optim.AdamW(diffusion_planner.parameters(), lr=args.learning_rate)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(diffusion_planner.parameters(), lr=args.learning_rate)", "performance only"),
    C("'max_mem_gb': torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "'max_mem_gb': torch.npu.max_memory_allocated() / 2 ** 30}, epoch)", ZERO_STATS),
    C("parser.add_argument('--device', type=str, help='run on which device', default='cuda')", "device_type", R, True,
      "parser.add_argument('--device', type=str, help='run on which device', default='npu')", ""),
])

# ---------------------------------------------------------------- Roach (zhejz/carla-roach)
E("roach_ppo", "agents/rl_birdview/models/ppo_policy.py", "device_branch_or_abstraction",
  "zhejz/carla-roach agents/rl_birdview/models/ppo_policy.py (RL expert policy, device picked by is_available)", [
    C("=import torch as th", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=if th.cuda.is_available():", "torch_cuda_api", B, True,
      "if th.npu.is_available():\n            self.device = 'npu'\n        elif th.cuda.is_available():",
      "False on an NPU host: PPO training silently runs on the CPU"),
    C("if th.cuda.is_available():  # load straight onto the GPU", "torch_cuda_api", B, True,
      "if th.npu.is_available():\n            device = th.device('npu')\n        elif th.cuda.is_available():",
      "checkpoints load to the CPU and the expert runs there"),
    C("self.optimizer_class = th.optim.Adam", "fused_optimizer", R, False,
      "self.optimizer_class = torch_npu.optim.NpuFusedAdam", "performance only"),
])

# ---------------------------------------------------------------- BEV pooling CUDA extension (LSS / BEVFusion-style camera branch)
E("bev_pool_setup", "team_code/ops/setup.py", "device_branch_or_abstraction",
  "mmdet3d/BEVFusion-style make_cuda_ext setup.py for the agent's bev_pool + voxelization ops (ThinkTwice/DriveAdapter-style CARLA agents)", [
    C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension", "custom_cuda_extension", A, True,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "NpuExtension adds the torch_npu/CANN include and library paths for the Ascend C kernels"),
    C("os.environ.setdefault('TORCH_CUDA_ARCH_LIST'", "env_var", X, False, None, "only read by nvcc"),
    C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", B, True,
      "elif os.getenv('FORCE_NPU', '0') == '1':  extension = NpuExtension; sources += sources_npu",
      "on an NPU host the CPU-only fallback builds no bev_pool kernel"),
    C("sources=['src/bev_pool.cpp', 'src/bev_pool_cuda.cu'],", "custom_cuda_extension", R, True,
      "sources=['src/bev_pool.cpp'], sources_cuda=['src/bev_pool_cuda.cu'], sources_npu=['src/bev_pool_npu.cpp'],",
      ".cu listed as a plain source: every non-CUDA build tries to compile it"),
])

E("bev_pool_op", "team_code/ops/bev_pool/bev_pool.py", "device_branch_or_abstraction",
  "mit-han-lab/bevfusion mmdet3d/ops/bev_pool/bev_pool.py + Lift-Splat view transformer", [
    C("from . import bev_pool_ext", "custom_cuda_extension", R, True,
      "try:\n    from . import bev_pool_ext\nexcept ImportError:\n    bev_pool_ext = None",
      "nvcc-built extension: no NPU build"),
    C("out = bev_pool_ext.bev_pool_forward(", "custom_cuda_extension", R, True,
      "out = bev_pool_ext.bev_pool_forward(  # CUDA only; NPU goes through QuickCumsum", "CUDA kernel call site"),
    C("x_grad = bev_pool_ext.bev_pool_backward(", "custom_cuda_extension", R, True,
      "x_grad = bev_pool_ext.bev_pool_backward(  # CUDA only", "CUDA kernel call site"),
    C("x = QuickCumsumCuda.apply(feats, coords, ranks, B, D, H, W)", "custom_cuda_extension", B, True,
      "x = QuickCumsumCuda.apply(feats, coords, ranks, B, D, H, W) if feats.is_cuda else _bev_pool_torch(feats, coords, ranks, B, D, H, W)",
      "pure-torch cumsum path (QuickCumsum + index_put into the BEV canvas) for NPU tensors"),
])
