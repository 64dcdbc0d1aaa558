"""Labels for probe325: video action recognition / video SSL (SlowFast, MMAction2 0.x, VideoMAE, TSM).

One C(...) per upstream line a careful porter would edit for Ascend NPU (torch_npu).
`sub` must match exactly one line ("=text" = whole stripped line).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


T, F = True, False

# ---------------------------------------------------------------------------------------------
# PySlowFast
# ---------------------------------------------------------------------------------------------
E("sf_run_net", "tools/run_net.py", "device_branch_or_abstraction",
  "PySlowFast tools/run_net.py (entry point; launch_job -> torch.multiprocessing.spawn)", [
    C("from slowfast.config.defaults import assert_and_infer_cfg", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu  # noqa: F401",
      "Entry script of every train/test/visualize job; spawned children re-import this module, so torch_npu must be "
      "imported here (the script itself never imports torch). Needed before any torch.npu / 'npu' device use."),
])

E("sf_train_net", "tools/train_net.py", "device_branch_or_abstraction",
  "PySlowFast tools/train_net.py (train_epoch / eval_epoch / precise BN, pathway lists moved with .cuda())", [
    C("inputs[i][j] = inputs[i][j].cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "inputs[i][j] = inputs[i][j].npu(non_blocking=True)", "Nested multi-clip pathway tensors; .cuda() fails on an NPU host."),
    C("inputs[i] = inputs[i].cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "inputs[i] = inputs[i].npu(non_blocking=True)", "Slow/fast pathway list moved to the device."),
    C("inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "inputs = inputs.npu(non_blocking=True)", "Single-tensor input path."),
    C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "labels = labels.npu(non_blocking=True)", "Labels must sit with the predictions."),
    C("index = index.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "index = index.npu(non_blocking=True)", "Sample index (used by contrastive memory bank)."),
    C("time = time.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "time = time.npu(non_blocking=True)", "Clip time stamps."),
    C("val[i] = val[i].cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "val[i] = val[i].npu(non_blocking=True)", "Meta (boxes etc.) list entries."),
    C("meta[key] = val.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "meta[key] = val.npu(non_blocking=True)", "Meta tensors."),
    C("with torch.cuda.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):", "amp", "replace", T,
      "with torch.npu.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):",
      "torch.cuda.amp.autocast on a host without CUDA only warns and disables itself, so MIXED_PRECISION would silently "
      "run fp32; torch.npu.amp.autocast (or torch.autocast('npu')) is the NPU form."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize()", "torch.cuda.synchronize() lazily initialises CUDA and raises on an NPU host."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised, so it does not fail; it just stops "
      "releasing the NPU caching allocator's blocks (fragmentation relief only)."),
    C("inputs = [inp.cuda(non_blocking=True) for inp in inputs]", "tensor_to_device", "replace", T,
      "inputs = [inp.npu(non_blocking=True) for inp in inputs]", "Validation pathway list."),
    C("inputs = inputs.cuda()", "tensor_to_device", "replace", T,
      "inputs = inputs.npu()", "Validation single-tensor input."),
    C("labels = labels.cuda()", "tensor_to_device", "replace", T,
      "labels = labels.npu()", "Validation labels."),
    C("meta[k] = [vv.cuda(non_blocking=True) for vv in v]", "tensor_to_device", "replace", T,
      "meta[k] = [vv.npu(non_blocking=True) for vv in v]", "Validation meta lists."),
    C("meta[k] = v.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "meta[k] = v.npu(non_blocking=True)", "Validation meta tensors."),
    C("index = index.cuda()", "tensor_to_device", "replace", T,
      "index = index.npu()", "Validation index."),
    C("time = time.cuda()", "tensor_to_device", "replace", T,
      "time = time.npu()", "Validation time."),
    C("retrieval_one_hot = torch.zeros((batch_size * K, C)).cuda()", "tensor_to_device", "replace", T,
      "retrieval_one_hot = torch.zeros((batch_size * K, C), device=yi.device)",
      "kNN evaluation buffer for SSL runs; create it on the device of the retrieved indices."),
    C("inp = [x.cuda(non_blocking=True) for x in inp]", "tensor_to_device", "replace", T,
      "inp = [x.npu(non_blocking=True) for x in inp]", "Precise-BN loader generator."),
    C("inp = inp.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "inp = inp.npu(non_blocking=True)", "Precise-BN loader generator, single tensor."),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)", "amp", "replace", T,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)",
      "CUDA GradScaler disables itself without CUDA; with NPU autocast active fp16 grads would go unscaled."),
])

E("sf_test_net", "tools/test_net.py", "device_branch_or_abstraction",
  "PySlowFast tools/test_net.py (multi-view testing, AVA detection, SSL kNN)", [
    C("inputs[i] = inputs[i].cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "inputs[i] = inputs[i].npu(non_blocking=True)", "Pathway inputs."),
    C("inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "inputs = inputs.npu(non_blocking=True)", "Single-tensor inputs."),
    C("labels = labels.cuda()", "tensor_to_device", "replace", T,
      "labels = labels.npu()", "Labels gathered with predictions across ranks."),
    C("video_idx = video_idx.cuda()", "tensor_to_device", "replace", T,
      "video_idx = video_idx.npu()", "Needed on device for du.all_gather over HCCL."),
    C("val[i] = val[i].cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "val[i] = val[i].npu(non_blocking=True)", "Meta lists."),
    C("meta[key] = val.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "meta[key] = val.npu(non_blocking=True)", "Meta tensors (boxes for detection)."),
    C("retrieval_one_hot = torch.zeros((batchSize * K, C)).cuda()", "tensor_to_device", "replace", T,
      "retrieval_one_hot = torch.zeros((batchSize * K, C), device=yi.device)", "SSL kNN evaluation buffer."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F,
      "torch.npu.empty_cache()", "No-op without CUDA init (no failure); NPU cache release is memory hygiene only."),
])

E("sf_misc", "slowfast/utils/misc.py", "device_branch_or_abstraction",
  "PySlowFast slowfast/utils/misc.py (gpu_mem_usage, fvcore flop-count inputs, launch_job)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", F,
      "if torch.npu.is_available():",
      "Memory-usage logging only: returns False on NPU, so the log silently reports 0 GB."),
    C("mem_usage_bytes = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", F,
      "mem_usage_bytes = torch.npu.max_memory_allocated()", "Logging only."),
    C("model_inputs[i] = model_inputs[i].cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "model_inputs[i] = model_inputs[i].npu(non_blocking=True)",
      "Dummy input for fvcore flop/activation counting of a model that already lives on the device; runs at startup "
      "when LOG_MODEL_INFO is on (default)."),
    C("bbox = bbox.cuda()", "tensor_to_device", "replace", T,
      "bbox = bbox.npu()", "Dummy RoI for detection flop count."),
    C('os.system("nvidia-smi")', "torch_cuda_api", "replace", F,
      'os.system("npu-smi info")',
      "Only prints device status; on an NPU host the shell reports command-not-found and training continues."),
])

E("sf_distributed", "slowfast/utils/distributed.py", "device_branch_or_abstraction",
  "PySlowFast slowfast/utils/distributed.py (detectron2-style all_gather_unaligned over a gloo side group)", [
    C('dist_backend="nccl",', "dist_backend", "replace", T,
      'dist_backend="hccl",', "Default backend of the init helper; NCCL is not available with torch_npu."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", T,
      "torch.npu.set_device(local_rank)", "Binds the process to its device; the CUDA call fails on NPU."),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", T,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "Backend-string comparison (not rewritten even by transfer_to_npu): on HCCL it returns the WORLD group instead "
      "of a gloo group, so pickled CPU data is sent through the device backend."),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", T,
      'assert backend in ["gloo", "nccl", "hccl"]', "Fails for an HCCL group."),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", T,
      'device = torch.device("cpu" if backend == "gloo" else "npu")', "Device for the serialized byte tensor."),
])

E("sf_multiprocessing", "slowfast/utils/multiprocessing.py", "device_branch_or_abstraction",
  "PySlowFast slowfast/utils/multiprocessing.py (mp.spawn child: init_process_group(tcp://) then set_device)", [
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", T,
      "torch.npu.set_device(local_rank)", "Per-process device binding in every spawned worker."),
])

E("sf_build", "slowfast/models/build.py", "device_branch_or_abstraction",
  "PySlowFast slowfast/models/build.py (device-count assert, model.cuda(device=...), DDP, apex SyncBN)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", T,
      "if torch.npu.is_available():",
      "False on NPU, so the else branch asserts NUM_GPUS == 0 and every NUM_GPUS>0 config aborts."),
    C("cfg.NUM_GPUS <= torch.cuda.device_count()", "torch_cuda_api", "replace", T,
      "cfg.NUM_GPUS <= torch.npu.device_count()", "torch.cuda.device_count() is 0 on an NPU host."),
    C("model = apex.parallel.convert_syncbn_model(", "distributed_framework", "replace", F,
      "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(",
      "Only for BN.NORM_TYPE=sync_batchnorm_apex. nn.SyncBatchNorm is supported on NPU; whether Ascend's apex patch "
      "keeps apex.parallel SyncBN (it has a pure-Python fallback) is unconfirmed."),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", T,
      "cur_device = torch.npu.current_device()", "Raises without CUDA."),
    C("model = model.cuda(device=cur_device)", "tensor_to_device", "replace", T,
      "model = model.npu(cur_device)", "Moves the model to the process's device."),
])

E("sf_defaults", "slowfast/config/defaults.py", "device_branch_or_abstraction",
  "PySlowFast slowfast/config/defaults.py (yacs defaults: NUM_GPUS, DIST_BACKEND, MIXED_PRECISION)", [
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", "replace", T,
      '_C.DIST_BACKEND = "hccl"',
      "Passed straight to torch.distributed.init_process_group by mpu.run; nccl is not available on NPU."),
])

E("sf_contrastive", "slowfast/models/contrastive.py", "device_branch_or_abstraction",
  "PySlowFast slowfast/models/contrastive.py (MoCo/BYOL/SwAV/memory bank video SSL)", [
    C("self.softmax = nn.Softmax(dim=1).cuda()", "tensor_to_device", "replace", F,
      "self.softmax = nn.Softmax(dim=1)",
      "nn.Softmax has no parameters or buffers, so Module.cuda() is a no-op and does not fail; drop it for clarity."),
    C("self.train_labels = torch.LongTensor(self.train_labels).cuda()", "tensor_to_device", "replace", T,
      "self.train_labels = torch.LongTensor(self.train_labels).npu()", "kNN label bank."),
    C("idx_randperm = torch.randperm(x.shape[0]).cuda()", "tensor_to_device", "replace", T,
      "idx_randperm = torch.randperm(x.shape[0], device=x.device)",
      "Shuffle-BN permutation; broadcast over HCCL needs it on the device."),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", T,
      "with torch.npu.amp.autocast(enabled=False):",
      "Meant to force fp32 Sinkhorn-Knopp; the CUDA autocast context does not switch NPU autocast off, so under mixed "
      "precision the iterations run in fp16 (numerically unstable)."),
    C("clip_ind = torch.randint(0, self.length, size=(batch_size, self.k)).cuda()", "tensor_to_device", "replace", T,
      "clip_ind = torch.randint(0, self.length, size=(batch_size, self.k), device=q.device)",
      "Memory-bank negative indices."),
    C("=.cuda()", "tensor_to_device", "replace", T,
      ".to(q.device)", "2-D memory interpolation time indices (method-chain continuation line)."),
    C("=).cuda()", "tensor_to_device", "replace", T,
      ").to(q.device)", "2-D memory integer time indices (closing line of torch.randint(...))."),
])

E("sf_head_helper", "slowfast/models/head_helper.py", "explicit_replacement",
  "PySlowFast slowfast/models/head_helper.py (ResNetBasicHead / X3DHead AvgPool3d, detectron2 ROIAlign)", [
    C("from detectron2.layers import ROIAlign", "unsupported_op_workaround", "npu_only_addition", F,
      "import torchvision_npu  # noqa: F401  (NPU roi_align kernel)",
      "detectron2 ROIAlign calls torchvision roi_align; torchvision_npu provides the NPU kernel. Without it the op may "
      "fall back to CPU or fail - unconfirmed. Detection (AVA) heads only."),
    C("temporal_pool = nn.AvgPool3d(", "unsupported_op_workaround", "replace", F,
      "temporal_pool = nn.AdaptiveAvgPool3d((1, None, None))",
      "nn.AvgPool3d is marked unsupported in Ascend's 2.7.1 API list and msFmkTransplt's list, yet op-plugin registers "
      "avg_pool3d; kernel equals the full temporal extent, so an adaptive pool is equivalent. Unconfirmed whether it fails."),
    C("avg_pool = nn.AvgPool3d(pool_size[pathway], stride=1)", "unsupported_op_workaround", "replace", F,
      "avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))",
      "Head pool_size equals the final feature-map size, so AdaptiveAvgPool3d (supported on A2) is equivalent. "
      "AvgPool3d support is contradictory in the sources (unconfirmed)."),
    C("self.avg_pool = nn.AvgPool3d(self.pool_size, stride=1)", "unsupported_op_workaround", "replace", F,
      "self.avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))", "Same as above for the X3D head (unconfirmed)."),
])

E("sf_predictor", "slowfast/visualization/predictor.py", "device_branch_or_abstraction",
  "PySlowFast slowfast/visualization/predictor.py (demo ActionPredictor + Detectron2 person detector)", [
    C("torch.cuda.current_device() if gpu_id is None else gpu_id", "torch_cuda_api", "replace", T,
      "torch.npu.current_device() if gpu_id is None else gpu_id", "Raises without CUDA."),
    C("inputs[i] = inputs[i].cuda(device=torch.device(self.gpu_id), non_blocking=True)", "tensor_to_device", "replace", T,
      "inputs[i] = inputs[i].npu(self.gpu_id, non_blocking=True)",
      "torch.device(int) means a CUDA device in the torch versions this code targets."),
    C("inputs = inputs.cuda(device=torch.device(self.gpu_id), non_blocking=True)", "tensor_to_device", "replace", T,
      "inputs = inputs.npu(self.gpu_id, non_blocking=True)", "Single-tensor demo input."),
    C("gpu_id = torch.cuda.current_device()", "torch_cuda_api", "replace", T,
      "gpu_id = torch.npu.current_device()", "Detectron2 device selection."),
    C('"cuda:{}".format(gpu_id) if cfg.NUM_GPUS > 0 else "cpu"', "device_type", "replace", T,
      '"npu:{}".format(gpu_id) if cfg.NUM_GPUS > 0 else "cpu"',
      "Detectron2 cfg.MODEL.DEVICE string; 'cuda:N' fails. detectron2 has no official NPU support, so running the "
      "detector on NPU also needs torchvision_npu (or use 'cpu')."),
])

E("sf_loader", "slowfast/datasets/loader.py", "device_branch_or_abstraction",
  "PySlowFast slowfast/datasets/loader.py with a fork-style side-stream GPU prefetcher", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", T,
      "self.stream = torch.npu.Stream()", "Prefetch side stream (only when DATA_LOADER.PREFETCH_TO_GPU); fails on NPU."),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", T,
      "with torch.npu.stream(self.stream):", "Stream context for the async copy."),
    C("inputs = [x.cuda(non_blocking=True) for x in inputs]", "tensor_to_device", "replace", T,
      "inputs = [x.npu(non_blocking=True) for x in inputs]", "Prefetched pathway inputs."),
    C("inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "inputs = inputs.npu(non_blocking=True)", "Prefetched single input."),
    C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "labels = labels.npu(non_blocking=True)", "Prefetched labels."),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", T,
      "torch.npu.current_stream().wait_stream(self.stream)", "Compute stream waits for the copy stream."),
    C("x.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", T,
      "x.record_stream(torch.npu.current_stream())", "Keeps the caching allocator from reusing the block early."),
])

# ---------------------------------------------------------------------------------------------
# MMAction2 0.x
# ---------------------------------------------------------------------------------------------
E("mma_tools_train", "tools/train.py", "device_branch_or_abstraction",
  "MMAction2 0.x tools/train.py (mmcv Config, init_dist, --gpus/--gpu-ids)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu  # noqa: F401", "Entry script; registers the NPU backend before mmcv/mmaction touch devices."),
])

E("mma_apis_train", "mmaction/apis/train.py", "device_branch_or_abstraction",
  "MMAction2 0.x mmaction/apis/train.py (init_random_seed, MMDataParallel / MMDistributedDataParallel)", [
    C("def init_random_seed(seed=None, device='cuda', distributed=True):", "device_type", "replace", T,
      "def init_random_seed(seed=None, device='npu', distributed=True):",
      "tools/train.py calls it without device; in distributed runs the seed tensor is created on 'cuda' and fails."),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", F,
      "model = NPUDistributedDataParallel(",
      "mmcv's MMDDP scatters inputs with CUDA streams/.cuda(); mmcv 1.7 ships an NPU variant (mmcv.device.npu). "
      "Unconfirmed against the knowledge base."),
    C("model.cuda(),", "tensor_to_device", "replace", T,
      "model.npu(),", "Model must be on the device before DDP wrapping."),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", T,
      "device_ids=[torch.npu.current_device()],", "Raises without CUDA."),
    C("model = MMDataParallel(", "distributed_framework", "replace", T,
      "model = NPUDataParallel(",
      "MMDataParallel subclasses nn.DataParallel, which is unsupported on NPU; single-device training needs the NPU "
      "wrapper (mmcv.device.npu) or a plain model.npu()."),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", T,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "Non-distributed model placement."),
])

E("mma_tools_test", "tools/test.py", "device_branch_or_abstraction",
  "MMAction2 0.x tools/test.py (single/multi-GPU test, TensorRT engine path)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu  # noqa: F401", "Entry script."),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", T,
      "model = NPUDataParallel(model.npu(), device_ids=[0])",
      "nn.DataParallel subclass (unsupported on NPU) whose scatter moves inputs to CUDA device 0."),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", F,
      "model = NPUDistributedDataParallel(", "mmcv MMDDP CUDA scatter; NPU variant in mmcv.device.npu (unconfirmed)."),
    C("model.cuda(),", "tensor_to_device", "replace", T,
      "model.npu(),", "Distributed test model placement."),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", T,
      "device_ids=[torch.npu.current_device()],", "Raises without CUDA."),
    C("import tensorrt as trt", "unsupported_op_workaround", "removal", T, None,
      "--tensorrt path cannot run on Ascend (TensorRT is CUDA-only); drop the option (an OM model via ATC would be "
      "the Ascend analogue)."),
    C("engine = runtime.deserialize_cuda_engine(engine_bytes)", "unsupported_op_workaround", "removal", T, None,
      "Part of the TensorRT-only branch removed above."),
    C("torch.cuda.current_stream().cuda_stream)", "torch_cuda_api", "removal", T, None,
      "Raw CUDA stream handle handed to TensorRT; removed with the TensorRT branch."),
])

E("mma_tsm_config", "configs/recognition/tsm/tsm_r50_video_1x1x8_50e_kinetics400_rgb.py",
  "device_branch_or_abstraction",
  "MMAction2 0.x TSM R50 Kinetics-400 video config (decord pipeline, fp16, dist_params)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", T,
      "dist_params = dict(backend='hccl')", "Forwarded by init_dist to init_process_group."),
])

E("mma_dist_train", "tools/dist_train.sh", "device_branch_or_abstraction",
  "MMAction2 0.x tools/dist_train.sh (torch.distributed.launch wrapper)", [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", F,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...); needed unless the shell/container already sources it."),
])

E("mma_slurm_train", "tools/slurm_train.sh", "device_branch_or_abstraction",
  "MMAction2 0.x tools/slurm_train.sh (srun --gres=gpu, NCCL env)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", F,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for the srun tasks (unless preset)."),
    C("export NCCL_IB_HCA=${NCCL_IB_HCA:-mlx5_0}", "env_var", "removal", F, None,
      "NCCL InfiniBand HCA selection; HCCL ignores it (NPU traffic goes over the device RoCE NICs)."),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", F,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL's own host-NIC selector; the NCCL one is silently ignored. Only matters if HCCL's default NIC choice is wrong."),
    C("--gres=gpu:${GPUS_PER_NODE} \\", "device_type", "replace", F,
      "--gres=npu:${GPUS_PER_NODE} \\",
      "Cluster-specific: GRES name for NPUs is whatever the site configured; no Ascend Slurm integration documented "
      "(unconfirmed)."),
])

E("mma_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "MMAction2 0.x docker/Dockerfile (pytorch/pytorch CUDA devel base, mmcv-full cu102 wheel)", [
    C('ARG PYTORCH="1.8.1"', "import_torch_npu", "replace", T,
      'ARG PYTORCH="2.1.0"', "torch must match an available torch_npu release; the port moves to a torch_npu-paired torch."),
    C('ARG CUDA="10.2"', "device_type", "removal", F, None, "Only feeds the CUDA image tag."),
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "import_torch_npu", "replace", T,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA runtime image; an NPU image must bring CANN (driver mounted from host) and then torch + torch_npu."),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0+PTX"', "custom_cuda_extension", "removal", F, None,
      "nvcc arch list; irrelevant without CUDA builds."),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "custom_cuda_extension", "removal", F, None, "nvcc flags."),
    C('ENV CMAKE_PREFIX_PATH="$(dirname $(which conda))/../"', "import_torch_npu", "npu_only_addition", T,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
      "CANN base images carry no torch; install torch with the matching torch_npu wheel."),
    C("RUN pip install mmcv-full==1.5.0 -f https://download.openmmlab.com/mmcv/dist/cu102/torch1.8.0/index.html",
      "custom_cuda_extension", "replace", T,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.2 --no-binary mmcv-full",
      "Prebuilt cu102/torch1.8 wheel: CUDA ops compiled against another torch ABI; mmcv must be built for NPU "
      "(FORCE_NPU build flag is from mmcv docs, not the knowledge base)."),
    C("RUN conda clean --all", "device_type", "removal", F, None,
      "Only valid on the conda-based pytorch image; depends on which NPU base image is chosen."),
    C('ENV FORCE_CUDA="1"', "custom_cuda_extension", "removal", F, None,
      "Forces CUDA builds of extensions; mmaction itself builds none, so harmless but meaningless on NPU."),
])

# ---------------------------------------------------------------------------------------------
# VideoMAE (timm / DeiT-style training code)
# ---------------------------------------------------------------------------------------------
E("vmae_run_finetune", "run_class_finetuning.py", "device_branch_or_abstraction",
  "VideoMAE run_class_finetuning.py (args.device, DeepSpeed flag, NativeScaler, DDP(device_ids=[args.gpu]))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu  # noqa: F401", "Entry script (launched by torch.distributed.launch)."),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", T,
      "parser.add_argument('--device', default='npu',",
      "Default device string feeds torch.device(args.device) and model.to(device)."),
])

E("vmae_engine_finetune", "engine_for_finetuning.py", "device_branch_or_abstraction",
  "VideoMAE engine_for_finetuning.py (autocast train/val/test loops, synchronize)", [
    C("=with torch.cuda.amp.autocast():", "amp", "replace", T,
      "with torch.npu.amp.autocast():", "CUDA autocast silently disables itself on NPU (fp32 training, scaler mismatch)."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize()", "Raises without CUDA."),
    C("with torch.cuda.amp.autocast():  # val", "amp", "replace", T,
      "with torch.npu.amp.autocast():  # val", "Validation autocast."),
    C("with torch.cuda.amp.autocast():  # test", "amp", "replace", T,
      "with torch.npu.amp.autocast():  # test", "Test autocast."),
])

E("vmae_engine_pretrain", "engine_for_pretraining.py", "device_branch_or_abstraction",
  "VideoMAE engine_for_pretraining.py (tube-masked pixel regression step)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", T,
      "with torch.npu.amp.autocast():", "Mixed precision for the MAE forward."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize()", "Raises without CUDA."),
])

E("vmae_utils", "utils.py", "device_branch_or_abstraction",
  "VideoMAE utils.py (DeiT MetricLogger, init_distributed_mode, NativeScalerWithGradNormCount, ds config)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", T,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "Cross-rank meter reduction. Note fp64 is cast to fp32 on NPU with a warning (precision of large running totals)."),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", F,
      "use_cuda = torch.npu.is_available()", "Only decides whether 'max mem' is logged."),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", F,
      "memory=torch.npu.max_memory_allocated() / MB))", "Logging only."),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", T,
      "x_reduce = torch.tensor(x).npu()", "HCCL all_reduce needs a device tensor."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", T,
      "torch.npu.set_device(args.gpu)", "Per-rank device binding."),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", T,
      "args.dist_backend = 'hccl'", "Hard-coded backend."),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", T,
      "self._scaler = torch.npu.amp.GradScaler()", "Loss scaler paired with NPU autocast."),
])

E("vmae_modeling_finetune", "modeling_finetune.py", "explicit_replacement",
  "VideoMAE modeling_finetune.py (ViT with optional SDPA fast path gated on x.is_cuda)", [
    C("if self.use_flash_attn and x.is_cuda:", "device_type", "replace", F,
      "if self.use_flash_attn and x.device.type in ('cuda', 'npu'):",
      "On NPU is_cuda is False, so the eager attention path runs: correct but loses the fused kernel (SDPA is "
      "supported on NPU within head-dim/dtype limits)."),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
      "attention_kernel", "replace", F,
      "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is unsupported in Ascend's list; NPU SDPA picks its fused kernel itself. "
      "Whether the context manager errors on NPU is unconfirmed."),
])

E("vmae_modeling_pretrain", "modeling_pretrain.py", "explicit_replacement",
  "VideoMAE modeling_pretrain.py variant with optional xFormers memory-efficient attention", [
    C("x = xops.memory_efficient_attention(", "attention_kernel", "replace", F,
      "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, 'BSND', scale=self.scale, keep_prob=1. - (self.attn_drop_p if self.training else 0.))[0]",
      "xformers has no NPU backend; the guarded import already falls back to eager attention, so this is a "
      "performance rewrite only."),
])

E("vmae_optim_factory", "optim_factory.py", "explicit_replacement",
  "VideoMAE optim_factory.py (timm create_optimizer with apex Fused* options)", [
    C("from apex.optimizers import FusedNovoGrad, FusedAdam, FusedLAMB, FusedSGD", "fused_optimizer", "replace", F,
      "from torch_npu.optim import NpuFusedAdam, NpuFusedAdamW, NpuFusedLamb, NpuFusedSGD",
      "Guarded import (has_apex=False on NPU); Ascend apex has no FusedAdam/FusedLAMB CUDA kernels."),
    C("assert has_apex and torch.cuda.is_available(), 'APEX and CUDA required for fused optimizers'",
      "torch_cuda_api", "replace", T,
      "assert has_npu_fused and torch.npu.is_available(), 'torch_npu required for fused optimizers'",
      "Any --opt fused* aborts here on NPU."),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)", "fused_optimizer", "replace", T,
      "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)", "--opt fusedsgd."),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "fused_optimizer", "replace", T,
      "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "--opt fusedmomentum."),
    C("optimizer = FusedAdam(parameters, adam_w_mode=False, **opt_args)", "fused_optimizer", "replace", T,
      "optimizer = NpuFusedAdam(parameters, **opt_args)", "--opt fusedadam."),
    C("optimizer = FusedAdam(parameters, adam_w_mode=True, **opt_args)", "fused_optimizer", "replace", T,
      "optimizer = NpuFusedAdamW(parameters, **opt_args)", "--opt fusedadamw (adam_w_mode has no NPU flag; separate class)."),
    C("optimizer = FusedLAMB(parameters, **opt_args)", "fused_optimizer", "replace", T,
      "optimizer = NpuFusedLamb(parameters, **opt_args)", "--opt fusedlamb."),
    C("optimizer = FusedNovoGrad(parameters, **opt_args)", "fused_optimizer", "replace", T,
      "optimizer = NovoGrad(parameters, **opt_args)", "No NPU fused NovoGrad; fall back to timm's Python NovoGrad."),
])

E("vmae_pretrain_sh", "scripts/kinetics/videomae_vit_base_patch16_224_tubemasking_ratio_0.9_epoch_800/pretrain.sh",
  "device_branch_or_abstraction",
  "VideoMAE scripts/kinetics/.../pretrain.sh (8 nodes x 8 GPUs, torch.distributed.launch)", [
    C("# Set the path to save checkpoints", "import_torch_npu", "npu_only_addition", F,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment (unless the node profile sets it)."),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", T,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "The CUDA mask is silently ignored by the Ascend runtime, so any device restriction would not apply."),
    C("GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", T,
      "GPUS_PER_NODE=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi is absent, the count becomes 0 and the launcher starts no workers."),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", F, None, "No HCCL meaning; ignored."),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", F,
      "export HCCL_SOCKET_IFNAME=eth0", "HCCL host-NIC selection; NCCL variable is ignored."),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", F,
      "export ASCEND_GLOBAL_LOG_LEVEL=1", "Debug logging only (INFO level for CANN/HCCL plogs)."),
])

E("vmae_requirements", "requirements.txt", "explicit_replacement",
  "VideoMAE-style requirements.txt pinned to cu113 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", T,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch build on x86 (plain PyPI on aarch64)."),
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", T,
      "torch==2.1.0", "CUDA build of torch; must be the torch version matching the torch_npu wheel."),
    C("torchvision==0.13.1+cu113", "import_torch_npu", "replace", T,
      "torchvision==0.16.0", "Must match the new torch."),
    C("timm==0.4.12", "import_torch_npu", "npu_only_addition", T,
      "torch-npu==2.1.0.post17", "The torch_npu pin itself (wheel version = torch version + .postN; 2.1.0.post17 pairs with CANN 8.3.RC1)."),
    C("deepspeed==0.5.8", "distributed_framework", "replace", F,
      "deepspeed>=0.12.0",
      "Only for --enable_deepspeed. DeepSpeed's NPU accelerator exists only in newer releases; exact minimum version "
      "unconfirmed."),
    C("xformers==0.0.16", "attention_kernel", "removal", F, None,
      "Optional (guarded import); no NPU backend. Install may fail on an NPU host - unconfirmed."),
])

E("vmae_extract_feat", "extract_tad_feature.py", "device_branch_or_abstraction",
  "VideoMAE/InternVideo extract_tad_feature.py (decord GPU decoding, per-clip feature dump)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu  # noqa: F401", "Standalone script."),
    C("torch.cuda.set_device(args.gpu_id)", "torch_cuda_api", "replace", T,
      "torch.npu.set_device(args.gpu_id)", "Device binding."),
    C("=model.cuda()", "tensor_to_device", "replace", T,
      "model.npu()", "Model placement."),
    C("ctx = gpu(args.gpu_id) if args.decode_device == 'gpu' else cpu(0)", "unsupported_op_workaround", "replace", T,
      "ctx = cpu(0)",
      "decord's GPU (NVDEC) context needs a CUDA build of decord and an NVIDIA GPU; default is 'gpu', so decoding "
      "fails on NPU. CPU decoding (or Ascend DVPP) instead."),
    C("input_data = frame_q.unsqueeze(0).cuda()", "tensor_to_device", "replace", T,
      "input_data = frame_q.unsqueeze(0).npu()", "Clip batch to device."),
])

# ---------------------------------------------------------------------------------------------
# TSM (mit-han-lab/temporal-shift-module)
# ---------------------------------------------------------------------------------------------
E("tsm_main", "main.py", "device_branch_or_abstraction",
  "TSM main.py (nn.DataParallel(model, device_ids=args.gpus).cuda(), torch.load without map_location)", [
    C("=import torch.nn.parallel", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu  # noqa: F401", "Entry script; first torch import."),
    C("model = torch.nn.DataParallel(model, device_ids=args.gpus).cuda()", "distributed_framework", "replace", T,
      "model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[args.local_rank])",
      "nn.DataParallel is unsupported on NPU. DDP keeps model.module (partialBN / make_temporal_pool still work) but "
      "also needs init_process_group('hccl'), a DistributedSampler and a launcher, which this DP-era script lacks."),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", T,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "Checkpoints saved from the CUDA DataParallel model hold CUDA tensors; deserialising them without map_location "
      "fails when CUDA is unavailable."),
    C("sd = torch.load(args.tune_from)", "device_type", "replace", T,
      "sd = torch.load(args.tune_from, map_location='cpu')", "Same for fine-tuning checkpoints."),
    C("criterion = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", F,
      "criterion = torch.nn.CrossEntropyLoss().npu()",
      "CrossEntropyLoss without class weights has no tensors, so .cuda() is a no-op; change only for consistency."),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "target = target.npu(non_blocking=True)", "Training targets."),
    C("input_var = torch.autograd.Variable(input)", "tensor_to_device", "replace", F,
      "input_var = input.npu(non_blocking=True)",
      "DataParallel used to scatter the CPU batch. DDP(device_ids=[i]) also copies forward inputs to its device, so "
      "the explicit non_blocking copy is clarity/overlap only (DDP's input move on NPU unconfirmed)."),
    C("target = target.cuda()", "tensor_to_device", "replace", T,
      "target = target.npu()", "Validation targets."),
    C("output = model(input)", "tensor_to_device", "replace", F,
      "output = model(input.npu(non_blocking=True))", "As for training: DDP would move it; explicit copy optional."),
])

E("tsm_temporal_shift", "ops/temporal_shift.py", "kernel_rewrite",
  "TSM ops/temporal_shift.py with an optional fused CUDA shift extension and GPU self-test", [
    C("=import tsm_shift_cuda", "custom_cuda_extension", "removal", F, None,
      "Guarded import of the nvcc-built kernel; on NPU it raises ImportError and the pure-PyTorch shift (supported "
      "ops) is used, so nothing breaks. Drop or replace with an Ascend C kernel for speed."),
    C("=tsm1.cuda()", "tensor_to_device", "replace", F,
      "tsm1.npu()", "TemporalShift(nn.Sequential()) has no parameters: Module.cuda() is a no-op."),
    C("=tsm2.cuda()", "tensor_to_device", "replace", F,
      "tsm2.npu()", "Same no-op."),
    C("x = torch.rand(2 * 8, 3, 224, 224).cuda()", "tensor_to_device", "replace", T,
      "x = torch.rand(2 * 8, 3, 224, 224).npu()", "Self-test input; fails on NPU."),
    C("x1 = torch.rand(2 * 8, 3, 224, 224).cuda()", "tensor_to_device", "replace", T,
      "x1 = torch.rand(2 * 8, 3, 224, 224).npu()", "Self-test backward input."),
])

E("tsm_cuda_shift_setup", "ops/cuda_shift/setup.py", "kernel_rewrite",
  "setup.py building a CUDAExtension for a fused TSM shift kernel", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", T,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "No nvcc/CUDA_HOME on an NPU host; torch_npu's NpuExtension links against torch_npu/ACL instead."),
    C("os.environ.setdefault('TORCH_CUDA_ARCH_LIST', '7.0;7.5;8.0')", "custom_cuda_extension", "removal", F, None,
      "nvcc arch list; meaningless without CUDA."),
    C("CUDAExtension(", "custom_cuda_extension", "replace", T,
      "NpuExtension(", "CUDAExtension fails to build without CUDA."),
    C("'shift_cuda_kernel.cu',", "custom_cuda_extension", "replace", T,
      "'shift_kernel_ascendc.cpp',", "The .cu kernel has to be rewritten (Ascend C) - the actual porting work."),
    C("'nvcc': ['-O3', '--use_fast_math', '-lineinfo'],", "custom_cuda_extension", "removal", F, None,
      "nvcc-only flags."),
])
