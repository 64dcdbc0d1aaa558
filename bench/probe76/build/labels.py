"""Labels for probe76 (hand-written synthetic upstream files; see ../README.md).

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

IMPORT_NOTE = ("torch.npu.* and the npu device need torch_npu loaded (autoload since 2.5.1, explicit import "
               "still recommended and needed on older torch_npu)")
AUTOCAST_NOTE = ("CUDA autocast is inactive for NPU tensors: mixed precision is silently off (or fp16 buffers "
                 "meet fp32 weights)")
EMPTY_CACHE_NOTE = "silent no-op without CUDA; the NPU caching allocator is not released"
CKPT_NOTE = ("checkpoint was saved from a CUDA model (tensors tagged cuda); torch.load without map_location "
             "raises on a host where torch.cuda.is_available() is False")

# ---------------------------------------------------------------------------------------------- SuperGlue
E("sg_match_pairs", "match_pairs.py", "explicit_replacement",
  "magicleap/SuperGluePretrainedNetwork match_pairs.py (pair list -> matches .npz + pose AUC)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=torch.set_grad_enabled(False)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "keypoint counts differ for every pair (dynamic shapes); binary kernels avoid recompiling each pair"),
    C("device = 'cuda' if torch.cuda.is_available() and not opt.force_cpu else 'cpu'", "device_type", R, True,
      "device = 'npu' if torch.npu.is_available() and not opt.force_cpu else 'cpu'",
      "is_available() is False on an NPU host: inference silently runs on the CPU"),
])

# ---------------------------------------------------------------------------------------------- LightGlue
E("lightglue_core", "lightglue/lightglue.py", "device_branch_or_abstraction",
  "cvg/LightGlue lightglue/lightglue.py (adaptive depth/width, flash SDPA, rotary encoding)", [
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", R, False,
      '@torch.amp.custom_fwd(device_type="npu", cast_inputs=torch.float32)',
      "only casts under CUDA autocast; the normalisation is add/div (not autocast ops), so results are the same "
      "on NPU - cosmetic"),
    C("torch.backends.cuda.enable_flash_sdp(allow_flash)", "attention_kernel", R, True,
      "pass  # SDPA on NPU dispatches to its fused attention; no backend toggle",
      "torch.backends.cuda.enable_flash_sdp is marked unsupported in Ascend's 2.7.1 list and by msFmkTransplt "
      "(on a CPU-built torch it probably only flips a flag - failure mode unconfirmed)"),
    C("return (t * freqs[0]) + (rotate_half(t) * freqs[1])", "npu_fused_op", R, False,
      'return torch_npu.npu_rotary_mul(t, freqs[0], freqs[1], rotary_mode="interleave")',
      "pairwise (interleaved) rotary embedding; fused RoPE kernel is faster (layout/D limits unconfirmed)"),
    C('pruning_keypoint_thresholds = {"cpu": -1, "mps": -1, "cuda": 1024, "flash": 1536}', "device_type", R, True,
      'pruning_keypoint_thresholds = {"cpu": -1, "mps": -1, "cuda": 1024, "npu": 1024, "flash": 1536}',
      "pruning_min_kpts() indexes this dict with device.type: KeyError 'npu' on every forward (pruning is on "
      "by default)"),
    C("torch.compile(self.transformers[i].masked_forward, mode=mode, fullgraph=True)", "compile_mode", R, False,
      'torch.compile(self.transformers[i].masked_forward, backend="npugraphs", fullgraph=True)',
      "mode='reduce-overhead' means CUDA graphs; npugraphs is the NPU counterpart (behaviour unconfirmed)"),
    C('with torch.autocast(enabled=self.conf.mp, device_type="cuda"):', "amp", R, True,
      'with torch.autocast(enabled=self.conf.mp, device_type=data["image0"]["keypoints"].device.type):',
      AUTOCAST_NOTE),
    C("if torch.is_autocast_enabled():", "amp", R, False,
      'if torch.is_autocast_enabled("npu"):',
      "the no-argument form asks about CUDA autocast; descriptors then stay fp32 under NPU autocast (works, "
      "slower)"),
])

E("lightglue_benchmark", "benchmark.py", "device_branch_or_abstraction",
  "cvg/LightGlue benchmark.py (CUDA-event timing of SuperPoint+LightGlue configurations)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('use_events = device.type == "cuda"', "device_type", R, True,
      'use_events = device.type in ("cuda", "npu")',
      "on NPU the perf_counter branch times asynchronous launches without a sync: the reported numbers are wrong"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, False,
      "starter = torch.npu.Event(enable_timing=True)", "only reached once the branch above admits npu"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, False,
      "ender = torch.npu.Event(enable_timing=True)", "only reached once the branch above admits npu"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
      "only reached once the branch above admits npu"),
    C('choices=["auto", "cuda", "cpu", "mps"],', "device_type", R, False,
      'choices=["auto", "npu", "cuda", "cpu", "mps"],', "--device npu is rejected by argparse (auto is the default)"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "auto picks the CPU on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

# ---------------------------------------------------------------------------------------------- LoFTR
E("loftr_train", "train.py", "explicit_replacement",
  "zju3dv/LoFTR train.py (pytorch-lightning 1.3 Trainer + DDPPlugin)", [
    C("=import pytorch_lightning as pl", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("args.gpus = _n_gpus = setup_gpus(args.gpus)", "distributed_framework", R, True,
      "args.devices = _n_npus = setup_npus(args.gpus); args.gpus = None; args.accelerator = 'npu'",
      "Lightning's gpus=N means CUDA devices: the Trainer raises (no GPUs) on an NPU host"),
    C("plugins=DDPPlugin(find_unused_parameters=False,", "distributed_framework", R, True,
      "strategy=DDPStrategy(process_group_backend='hccl', find_unused_parameters=False),",
      "DDP plugin is built for CUDA/NCCL; an NPU run needs an NPU accelerator and the hccl backend "
      "(PL 1.3 has neither; port moves to a Lightning version with custom accelerators - unconfirmed details)"),
])

E("loftr_misc", "src/utils/misc.py", "explicit_replacement",
  "zju3dv/LoFTR src/utils/misc.py (setup_gpus work-around exporting CUDA_VISIBLE_DEVICES)", [
    C("return torch.cuda.device_count() if count == -1 else count", "torch_cuda_api", R, True,
      "return torch.npu.device_count() if count == -1 else count",
      "--gpus=-1 resolves to 0 devices on an NPU host"),
    C("current = os.environ.get('CUDA_VISIBLE_DEVICES')", "env_var", R, False,
      "current = os.environ.get('ASCEND_RT_VISIBLE_DEVICES')",
      "decides whether a user-set device list is respected; reads the variable the NPU runtime ignores"),
    C("os.environ['CUDA_DEVICE_ORDER'] = 'PCI_BUS_ID'", "env_var", X, False, None,
      "CUDA-only ordering hint, meaningless for the NPU runtime"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(requested)", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = ','.join(requested)",
      "the NPU runtime ignores CUDA_VISIBLE_DEVICES: every process sees all NPUs instead of --gpus=0,2,3"),
])

E("loftr_comm", "src/utils/comm.py", "explicit_replacement",
  "LoFTR/detectron2 utils/comm.py (pickled all_gather over a side gloo group)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", R, True,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "with hccl the WORLD (HCCL) group is returned as the 'gloo' group for CPU byte tensors"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", R, True,
      'assert backend in ["gloo", "nccl", "hccl"]',
      "AssertionError as soon as metrics are gathered in validation_epoch_end on an hccl run"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", R, False,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "only reached with a non-gloo group, which the assert above rejects unless it is widened"),
])

E("eloftr_model", "src/loftr/loftr.py", "explicit_replacement",
  "zju3dv/EfficientLoFTR src/loftr/loftr.py (RepVGG backbone, flash SDPA, autocast mp)", [
    C("with torch.backends.cuda.sdp_kernel(enable_math=False, enable_flash=True, enable_mem_efficient=False):",
      "attention_kernel", R, True,
      'out = torch_npu.npu_fusion_attention(*args, self.nhead, "BNSD", scale=q.shape[-1] ** -0.5)[0]',
      "torch.backends.cuda.sdp_kernel is marked unsupported on Ascend (2.7.1 list, msFmkTransplt)"),
    C("with torch.autocast(enabled=True, device_type='cuda'):", "amp", R, True,
      "with torch.autocast(enabled=True, device_type='npu'):", AUTOCAST_NOTE),
    C("with torch.autocast(device_type='cuda', enabled=False):", "amp", R, False,
      "with torch.autocast(device_type='npu', enabled=False):",
      "no-op until the mp block above is moved to NPU autocast; then keeps fine refinement in fp32"),
])

E("eloftr_demo", "demo/match_pair.py", "explicit_replacement",
  "EfficientLoFTR demo notebook as a script (.cuda() inputs, fp16/mp precision switch, latency bench)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("ckpt = torch.load(args.ckpt)", "tensor_to_device", R, True,
      "ckpt = torch.load(args.ckpt, map_location='cpu')", CKPT_NOTE),
    C("matcher = matcher.eval().cuda()", "tensor_to_device", R, True, "matcher = matcher.eval().npu()",
      ".cuda() needs a CUDA build"),
    C("torch.from_numpy(img0_raw)[None][None].half().cuda()", "tensor_to_device", R, True,
      "img0 = torch.from_numpy(img0_raw)[None][None].half().npu() / 255.", ".cuda() needs a CUDA build"),
    C("torch.from_numpy(img1_raw)[None][None].half().cuda()", "tensor_to_device", R, True,
      "img1 = torch.from_numpy(img1_raw)[None][None].half().npu() / 255.", ".cuda() needs a CUDA build"),
    C("torch.from_numpy(img0_raw)[None][None].cuda()", "tensor_to_device", R, True,
      "img0 = torch.from_numpy(img0_raw)[None][None].npu() / 255.", ".cuda() needs a CUDA build"),
    C("torch.from_numpy(img1_raw)[None][None].cuda()", "tensor_to_device", R, True,
      "img1 = torch.from_numpy(img1_raw)[None][None].npu() / 255.", ".cuda() needs a CUDA build"),
    C("with torch.autocast(enabled=True, device_type='cuda'):", "amp", R, True,
      "with torch.autocast(enabled=True, device_type='npu'):", AUTOCAST_NOTE),
    C("torch.cuda.synchronize()  # make sure warm-up", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # make sure warm-up kernels are done",
      "torch.cuda.synchronize initialises CUDA and raises without it"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises without it"),
    C("(peak mem {torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "f'(peak mem {torch.npu.max_memory_allocated() / 2**20:.0f} MiB)')",
      "CUDA memory stats of an uninitialised CUDA context read 0: wrong number in the log only"),
])

# ---------------------------------------------------------------------------------------------- DROID-SLAM
E("droid_core", "droid_slam/droid.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM droid_slam/droid.py (Droid system: weights, frontend/backend, visualiser process)", [
    C("checkpoint = torch.load(weights)", "tensor_to_device", R, True,
      "checkpoint = torch.load(weights, map_location='cpu')", CKPT_NOTE),
    C('self.net.to("cuda:0").eval()', "device_type", R, True, 'self.net.to("npu:0").eval()',
      "'cuda:0' needs a CUDA build"),
    C("self.visualizer = Process(target=droid_visualization, args=(self.video,))", "unsupported_op_workaround", R,
      False,
      "self.visualizer = Process(target=droid_visualization, args=(self.video.cpu_mirror(),))",
      "hands the device-resident DepthVideo to a child process (CUDA IPC on GPU); whether NPU tensors can be "
      "shared this way is unconfirmed (msFmkTransplt lists Tensor.share_memory_ as unsupported)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # free the frontend graph", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # free the frontend graph before the second global BA", EMPTY_CACHE_NOTE),
])

_DV = "hard-coded 'cuda' device (needs a CUDA build); the buffer is also share_memory_()'d for the viewer process"
E("droid_depth_video", "droid_slam/depth_video.py", "explicit_replacement",
  "DROID-SLAM droid_slam/depth_video.py (shared keyframe buffers + droid_backends BA/distance kernels)", [
    C("=import droid_backends", "custom_cuda_extension", R, True, "import droid_backends_npu as droid_backends",
      "nvcc-built extension (dense BA, frame distance, depth filter); no NPU build exists"),
    C('stereo=False, device="cuda:0"):', "device_type", R, True,
      'def __init__(self, image_size=[480, 640], buffer=1024, stereo=False, device="npu:0"):',
      "default used by Droid(); places intrinsics and the fp16 feature buffers"),
    C('self.tstamp = torch.zeros(buffer, device="cuda"', "device_type", R, True,
      'self.tstamp = torch.zeros(buffer, device=self.device, dtype=torch.float).share_memory_()', _DV),
    C('self.images = torch.zeros(buffer, 3, ht, wd, device="cuda"', "device_type", R, True,
      'self.images = torch.zeros(buffer, 3, ht, wd, device=self.device, dtype=torch.uint8)',
      "hard-coded 'cuda' device"),
    C('self.dirty = torch.zeros(buffer, device="cuda"', "device_type", R, True,
      'self.dirty = torch.zeros(buffer, device=self.device, dtype=torch.bool).share_memory_()', _DV),
    C('self.red = torch.zeros(buffer, device="cuda"', "device_type", R, True,
      'self.red = torch.zeros(buffer, device=self.device, dtype=torch.bool).share_memory_()', _DV),
    C('self.poses = torch.zeros(buffer, 7, device="cuda"', "device_type", R, True,
      'self.poses = torch.zeros(buffer, 7, device=self.device, dtype=torch.float).share_memory_()', _DV),
    C('self.disps = torch.ones(buffer, h8, w8, device="cuda"', "device_type", R, True,
      'self.disps = torch.ones(buffer, h8, w8, device=self.device, dtype=torch.float).share_memory_()', _DV),
    C('self.disps_sens = torch.zeros(buffer, h8, w8, device="cuda"', "device_type", R, True,
      'self.disps_sens = torch.zeros(buffer, h8, w8, device=self.device, dtype=torch.float).share_memory_()', _DV),
    C('self.disps_up = torch.zeros(buffer, ht, wd, device="cuda"', "device_type", R, True,
      'self.disps_up = torch.zeros(buffer, ht, wd, device=self.device, dtype=torch.float).share_memory_()', _DV),
    C('self.poses[:] = torch.as_tensor([0, 0, 0, 0, 0, 0, 1], dtype=torch.float, device="cuda")', "device_type", R,
      True, 'self.poses[:] = torch.as_tensor([0, 0, 0, 0, 0, 0, 1], dtype=torch.float, device=self.device)',
      "hard-coded 'cuda' device"),
    C('ii = ii.to(device="cuda", dtype=torch.long).reshape(-1)', "device_type", R, True,
      'ii = ii.to(device="npu", dtype=torch.long).reshape(-1)', "hard-coded 'cuda' device in a staticmethod"),
    C('jj = jj.to(device="cuda", dtype=torch.long).reshape(-1)', "device_type", R, True,
      'jj = jj.to(device="npu", dtype=torch.long).reshape(-1)', "hard-coded 'cuda' device in a staticmethod"),
    C("d1 = droid_backends.frame_distance(", "custom_cuda_extension", R, True,
      "d1 = frame_distance_torch(", "CUDA kernel call; rewrite with torch ops or an Ascend C kernel"),
    C("d2 = droid_backends.frame_distance(", "custom_cuda_extension", R, True,
      "d2 = frame_distance_torch(", "CUDA kernel call"),
    C("d = droid_backends.frame_distance(", "custom_cuda_extension", R, True,
      "d = frame_distance_torch(", "CUDA kernel call"),
    C("droid_backends.ba(self.poses, self.disps", "custom_cuda_extension", R, True,
      "dense_ba_torch(self.poses, self.disps, self.intrinsics[0], self.disps_sens,",
      "dense bundle adjustment (Schur complement + Cholesky) is a CUDA kernel; needs a torch/Ascend C rewrite"),
    C("counts = droid_backends.depth_filter(", "custom_cuda_extension", R, True,
      "counts = depth_filter_torch(", "CUDA kernel call"),
    C("points = droid_backends.iproj(", "custom_cuda_extension", R, True,
      "points = pops.iproj(disps, intrinsics, lietorch.SE3(poses).inv())", "CUDA kernel call"),
])

E("droid_factor_graph", "droid_slam/factor_graph.py", "explicit_replacement",
  "DROID-SLAM droid_slam/factor_graph.py (edge bookkeeping, update operator under autocast decorators)", [
    C('def __init__(self, video, update_op, device="cuda:0"', "device_type", R, True,
      'def __init__(self, video, update_op, device="npu:0", corr_impl="volume", max_factors=-1, upsample=False):',
      "the frontend/backend build FactorGraph without a device: 'cuda:0' tensors fail"),
    C("@torch.cuda.amp.autocast(enabled=True)  # fmaps/nets", "amp", R, False,
      "@torch.autocast('npu', enabled=True)  # fmaps/nets are stored in half precision",
      "add_factors only slices half buffers and builds the correlation volume from two half tensors: works "
      "without autocast"),
    C("with torch.cuda.amp.autocast(enabled=False):  # reprojection of the new edges", "amp", R, False,
      "with torch.autocast('npu', enabled=False):  # reprojection of the new edges in fp32",
      "no-op until the decorators are moved to NPU autocast; then keeps reprojection in fp32"),
    C("=@torch.cuda.amp.autocast(enabled=True)", "amp", R, False, "@torch.autocast('npu', enabled=True)",
      "rm_factors is pure indexing"),
    C("@torch.cuda.amp.autocast(enabled=True)  # update operator", "amp", R, True,
      "@torch.autocast('npu', enabled=True)  # update operator runs in fp16",
      "without autocast the fp16 nets/inps buffers reach fp32 conv weights in update_op: dtype mismatch error"),
    C("with torch.cuda.amp.autocast(enabled=False):  # motion features", "amp", R, False,
      "with torch.autocast('npu', enabled=False):  # motion features in fp32",
      "no-op until the decorators are moved to NPU autocast"),
    C("with torch.cuda.amp.autocast(enabled=False):  # dense bundle adjustment", "amp", R, False,
      "with torch.autocast('npu', enabled=False):  # dense bundle adjustment in fp32",
      "no-op until the decorators are moved to NPU autocast; BA must stay fp32"),
])

E("droid_corr", "droid_slam/modules/corr.py", "explicit_replacement",
  "DROID-SLAM droid_slam/modules/corr.py (correlation pyramid lookup in droid_backends)", [
    C("=import droid_backends", "custom_cuda_extension", R, True, "import droid_backends_npu as droid_backends",
      "nvcc-built extension"),
    C("corr, = droid_backends.corr_index_forward(volume, coords, radius)", "custom_cuda_extension", R, True,
      "corr = corr_lookup_grid_sample(volume, coords, radius)",
      "CUDA window lookup; a grid_sample-based lookup (RAFT style) is the usual torch rewrite"),
    C("grad_volume, = droid_backends.corr_index_backward(", "custom_cuda_extension", R, True,
      "grad_volume = None  # autograd through the grid_sample lookup", "CUDA kernel call (training only)"),
    C("corr, = droid_backends.altcorr_forward(fmap1, fmap2, coords, ctx.r)", "custom_cuda_extension", R, True,
      "corr = altcorr_torch(fmap1, fmap2, coords, ctx.r)", "CUDA kernel call"),
    C("droid_backends.altcorr_backward(fmap1, fmap2, coords, grad_corr, ctx.r)", "custom_cuda_extension", R, True,
      "altcorr_torch_backward(fmap1, fmap2, coords, grad_corr, ctx.r)", "CUDA kernel call"),
])

E("droid_train", "train.py", "explicit_replacement",
  "DROID-SLAM train.py (mp.spawn DDP on TartanAir, NCCL)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("backend='nccl',", "dist_backend", R, True, "backend='hccl',", "NCCL is not available on Ascend"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(gpu)",
      "torch.cuda.set_device raises without CUDA"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", ".cuda() needs a CUDA build"),
    C("images, poses, disps, intrinsics = [x.to('cuda') for x in item]", "device_type", R, True,
      "images, poses, disps, intrinsics = [x.to('npu') for x in item]", "'cuda' device string"),
    C("optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-6)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.lr, weight_decay=1e-6)",
      "performance only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("lietorch_group_ops", "lietorch/group_ops.py", "explicit_replacement",
  "princeton-vl/lietorch lietorch/group_ops.py (autograd wrappers over the compiled lietorch_backends)", [
    C("=import lietorch_backends", "custom_cuda_extension", R, True, "from . import lietorch_torch as lietorch_backends",
      "compiled extension with CPU and CUDA kernels only; an NPU tensor reaches neither"),
    C("lietorch_backends.expm, lietorch_backends.expm_backward", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.expm, lietorch_torch.expm_backward", "compiled kernel binding"),
    C("lietorch_backends.logm, lietorch_backends.logm_backward", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.logm, lietorch_torch.logm_backward", "compiled kernel binding"),
    C("lietorch_backends.inv, lietorch_backends.inv_backward", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.inv, lietorch_torch.inv_backward", "compiled kernel binding"),
    C("lietorch_backends.mul, lietorch_backends.mul_backward", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.mul, lietorch_torch.mul_backward", "compiled kernel binding"),
    C("lietorch_backends.adj, lietorch_backends.adj_backward", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.adj, lietorch_torch.adj_backward", "compiled kernel binding"),
    C("lietorch_backends.adjT, lietorch_backends.adjT_backward", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.adjT, lietorch_torch.adjT_backward", "compiled kernel binding"),
    C("lietorch_backends.act, lietorch_backends.act_backward", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.act, lietorch_torch.act_backward", "compiled kernel binding"),
    C("lietorch_backends.act4, lietorch_backends.act4_backward", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.act4, lietorch_torch.act4_backward", "compiled kernel binding"),
    C("lietorch_backends.Jinv, None", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.Jinv, None", "compiled kernel binding"),
    C("lietorch_backends.as_matrix, None", "custom_cuda_extension", R, True,
      "forward_op, backward_op = lietorch_torch.as_matrix, None", "compiled kernel binding"),
    C("J = lietorch_backends.projector(ctx.group_id, *inputs)", "custom_cuda_extension", R, True,
      "J = lietorch_torch.projector(ctx.group_id, *inputs)", "compiled kernel call in backward"),
    C("Jproj = lietorch_backends.projector(ctx.group_id, *inputs)", "custom_cuda_extension", R, True,
      "Jproj = lietorch_torch.projector(ctx.group_id, *inputs)", "compiled kernel call in backward"),
])

# ---------------------------------------------------------------------------------------------- DUSt3R / CroCo
E("croco_misc", "croco/utils/misc.py", "explicit_replacement",
  "naver/croco utils/misc.py as used by DUSt3R training (MAE/DeiT-style distributed helpers, NativeScaler)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", R, True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "'cuda' device; also fp64 is not among the dtypes Ascend lists for dist.all_reduce (bf16/fp16/fp32/int32/"
      "int64/bool)"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "device_count() is 0 on an NPU host: ZeroDivisionError on the SLURM path"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", R, True, "args.dist_backend = 'hccl'",
      "NCCL is not available on Ascend"),
    C("self._scaler = torch.cuda.amp.GradScaler(enabled=enabled)", "amp", R, True,
      "self._scaler = torch.npu.amp.GradScaler(enabled=enabled)",
      "CUDA GradScaler disables itself without CUDA: fp16 training without loss scaling"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", R, True, "x_reduce = torch.tensor(x).npu()",
      ".cuda() needs a CUDA build"),
])

E("dust3r_training", "dust3r/training.py", "explicit_replacement",
  "naver/dust3r dust3r/training.py (MAE-style epoch loop, DDP, NativeScaler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "trains on the CPU on an NPU host"),
    C("optimizer = torch.optim.AdamW(param_groups, lr=args.lr, betas=(0.9, 0.95))", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_groups, lr=args.lr, betas=(0.9, 0.95))",
      "performance only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("dust3r_inference", "dust3r/inference.py", "explicit_replacement",
  "naver/dust3r dust3r/inference.py (loss_of_one_batch under torch.cuda.amp)", [
    C("with torch.cuda.amp.autocast(enabled=bool(use_amp)):", "amp", R, True,
      "with torch.autocast('npu', enabled=bool(use_amp)):", AUTOCAST_NOTE + " (--amp 1 trains fp32 on NPU)"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, False,
      "with torch.autocast('npu', enabled=False):",
      "no-op until the outer block is moved to NPU autocast; then keeps the loss in fp32"),
])

E("dust3r_demo", "demo.py", "explicit_replacement",
  "naver/dust3r demo.py (gradio front-end: inference + global alignment + glb export)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument(\"--device\", type=str, default='cuda', help=\"pytorch device\")", "device_type", R, True,
      "parser.add_argument(\"--device\", type=str, default='npu', help=\"pytorch device\")",
      "default device 'cuda' is used for the model, inference and the global aligner"),
])

# ---------------------------------------------------------------------------------------------- MASt3R
E("mast3r_fast_nn", "mast3r/fast_nn.py", "device_branch_or_abstraction",
  "naver/mast3r mast3r/fast_nn.py (reciprocal nearest-neighbour matching of dense descriptors)", [
    C("def bruteforce_reciprocal_nns(A, B, device='cuda', block_size=None, dist='l2'):", "device_type", R, False,
      "def bruteforce_reciprocal_nns(A, B, device='npu', block_size=None, dist='l2'):",
      "every caller in the file passes device explicitly"),
    C("def __init__(self, db_pts, device='cuda'):", "device_type", R, False,
      "def __init__(self, db_pts, device='npu'):", "cdistMatcher is always built with an explicit device"),
    C('device="cuda", **matcher_kw):', "device_type", R, True, 'device="npu", **matcher_kw):',
      "match_descriptors() relies on this default: .to('cuda') fails"),
    C("or (isinstance(device, str) and device.startswith('cuda'))", "device_type", R, True,
      "or (isinstance(device, str) and device.startswith(('cuda', 'npu')))",
      "an 'npu' device without dist/block_size silently takes the scipy KDTree path on the CPU"),
    C("or (isinstance(device, torch.device) and device.type.startswith('cuda'))", "device_type", R, True,
      "or (isinstance(device, torch.device) and device.type in ('cuda', 'npu'))",
      "same CPU fallback for torch.device('npu')"),
])

E("mast3r_sparse_ga", "mast3r/cloud_opt/sparse_ga.py", "explicit_replacement",
  "naver/mast3r cloud_opt/sparse_ga.py (cached pairwise forward, canonical pointmaps, anchors)", [
    C("kinematic_mode='hclust-ward', device='cuda'", "device_type", R, False,
      "kinematic_mode='hclust-ward', device='npu', dtype=torch.float32, shared_intrinsics=False, **kw):",
      "public entry point; the demo passes device explicitly"),
    C("device='cuda', subsample=8, **matching_kw):", "device_type", R, False,
      "device='npu', subsample=8, **matching_kw):", "always called with device=device"),
    C("torch.cuda.empty_cache()  # the forward pass of the next pair", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, False,
      "with torch.autocast('npu', enabled=False):",
      "guards the heads against an outer autocast; CUDA variant does nothing under NPU autocast"),
    C("cache_path=None, device='cuda', **kw):", "device_type", R, True,
      "cache_path=None, device='npu', **kw):",
      "sparse_global_alignment calls prepare_canonical_data without a device: map_location='cuda' and "
      "torch.zeros(device='cuda') fail"),
    C("best = torch.scatter_reduce(best, 0, cell.long(), all_conf.float(), reduce='amax', include_self=True)",
      "unsupported_op_workaround", R, True,
      "best = segment_max_sorted(best, cell.long(), all_conf.float())  # sort + unique_consecutive",
      "torch.scatter_reduce is ✘ in Ascend's 2.7.1 list and unsupported for msFmkTransplt (whether it falls "
      "back to CPU or raises is unconfirmed)"),
])

E("mast3r_retrieval", "mast3r/retrieval/processor.py", "explicit_replacement",
  "naver/mast3r retrieval/processor.py (ASMK retrieval over faiss, guarded faiss-gpu fallback)", [
    C("def __init__(self, modelname, backbone=None, device='cuda'):", "device_type", R, True,
      "def __init__(self, modelname, backbone=None, device='npu'):",
      "make_pairs_retrieval builds the Retriever without a device"),
    C("res = faiss.StandardGpuResources()", "custom_cuda_extension", R, True,
      "res = faiss.StandardGpuResources() if hasattr(faiss, 'StandardGpuResources') else None  # faiss-cpu on NPU hosts",
      "knn_pairs defaults to use_gpu=True; faiss-cpu has no StandardGpuResources (AttributeError)"),
    C("index = faiss.index_cpu_to_gpu(res, 0, index)", "custom_cuda_extension", X, False, None,
      "only reached after the line above, which fails first"),
])

E("mast3r_slam_frame", "mast3r_slam/frame.py", "explicit_replacement",
  "rmurai0610/MASt3R-SLAM mast3r_slam/frame.py (Frame dataclass, SharedKeyframes/SharedStates across processes)", [
    C('def create_frame(i, img, T_WC, img_size=512, device="cuda:0"):', "device_type", R, False,
      'def create_frame(i, img, T_WC, img_size=512, device="npu:0"):',
      "main.py passes the device explicitly"),
    C("return torch.zeros(shape, device=device, dtype=dtype).share_memory_()", "unsupported_op_workaround", R, True,
      "return torch.zeros(shape, device=device, dtype=dtype)  # NPU buffers: share through the manager/CPU mirror",
      "Tensor.share_memory_ is listed unsupported by msFmkTransplt; the tracker, backend and viewer processes "
      "exchange these device buffers (CUDA IPC on GPU) - NPU failure mode unconfirmed"),
    C("self.T_WC = lietorch.Sim3.Identity(1, device=device, dtype=dtype).data.share_memory_()",
      "unsupported_op_workaround", R, True,
      "self.T_WC = lietorch.Sim3.Identity(1, device=device, dtype=dtype).data",
      "same share_memory_ on a device tensor"),
    C('def __init__(self, manager, h, w, dtype=torch.float32, device="cuda"):', "device_type", R, True,
      'def __init__(self, manager, h, w, dtype=torch.float32, device="npu"):',
      "build_shared_state() relies on the default"),
    C('def __init__(self, manager, h, w, buffer=512, dtype=torch.float32, device="cuda"):', "device_type", R, True,
      'def __init__(self, manager, h, w, buffer=512, dtype=torch.float32, device="npu"):',
      "build_shared_state() relies on the default"),
])

# ---------------------------------------------------------------------------------------------- VGGT
E("vggt_demo_colmap", "demo_colmap.py", "explicit_replacement",
  "facebookresearch/vggt demo_colmap.py (feed-forward cameras/depth -> pycolmap reconstruction, optional BA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=with torch.cuda.amp.autocast(dtype=dtype):", "amp", R, True,
      "with torch.autocast('npu', dtype=dtype):", AUTOCAST_NOTE + " (1B-parameter aggregator runs in fp32)"),
    C("dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16",
      "device_capability_check", R, True,
      "dtype = torch.bfloat16  # Atlas A2/A3 support bf16",
      "get_device_capability() needs CUDA and raises; under torch_npu it returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "runs VGGT on the CPU on an NPU host"),
    C("with torch.cuda.amp.autocast(dtype=dtype):  # tracker", "amp", R, True,
      "with torch.autocast('npu', dtype=dtype):  # tracker runs in the same precision as VGGT", AUTOCAST_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

# ---------------------------------------------------------------------------------------------- glue-factory
E("gluefactory_train", "gluefactory/train.py", "explicit_replacement",
  "cvg/glue-factory gluefactory/train.py (generic trainer: file:// rendezvous, GradScaler, spawn)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch.npu.amp import GradScaler",
      "CUDA GradScaler disables itself without CUDA: --mp float16 trains without loss scaling"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", R, True, "assert torch.npu.is_available()",
      "AssertionError for every --distributed run on an NPU host"),
    C('backend="nccl",', "dist_backend", R, True, 'backend="hccl",', "NCCL is not available on Ascend"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "raises without CUDA"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "single-process runs train on the CPU"),
    C('"adam": torch.optim.Adam,', "fused_optimizer", R, False, '"adam": torch_npu.optim.NpuFusedAdam,',
      "performance only (the default optimizer of most configs)"),
    C('with torch.autocast(device_type="cuda" if torch.cuda.is_available() else "cpu",', "amp", R, True,
      'with torch.autocast(device_type="npu" if torch.npu.is_available() else "cpu",',
      "on an NPU host this becomes CPU autocast, which does not touch NPU tensors: --mp is silently ignored"),
    C("torch.cuda.empty_cache()  # should be cleared", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # should be cleared at the first iter", EMPTY_CACHE_NOTE),
    C("args.n_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.n_gpus = torch.npu.device_count()", "0 on an NPU host: spawn starts no worker"),
])

# ---------------------------------------------------------------------------------------------- hloc
E("hloc_extract_features", "hloc/extract_features.py", "explicit_replacement",
  "cvg/Hierarchical-Localization hloc/extract_features.py (named extractor confs, h5 export)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('"backend": "pycolmap_cuda",', "device_type", R, True, '"backend": "pycolmap_cpu",',
      "the sift conf asks for SiftGPU; pycolmap on the NPU host is a CPU build, so the extractor cannot be "
      "created (pycolmap behaviour, not in the Ascend knowledge)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "extraction silently runs on the CPU"),
])

# ---------------------------------------------------------------------------------------------- RoMa
E("roma_train", "experiments/train_roma_outdoor.py", "explicit_replacement",
  "Parskatt/RoMa experiments/train_roma_outdoor.py (torchrun DDP, GradScaler, bf16 probe)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check", R,
      True, "return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "without CUDA this either raises (older torch queries the current CUDA device) or returns False and "
      "picks fp16 on bf16-capable NPUs"),
    C("dist.init_process_group('nccl')", "dist_backend", R, True, "dist.init_process_group('hccl')",
      "NCCL is not available on Ascend"),
    C("device_id = rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "device_id = rank % torch.npu.device_count()", "ZeroDivisionError: device_count() is 0 without CUDA"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", R, True, "torch.npu.set_device(device_id)",
      "raises without CUDA"),
    C("optimizer = torch.optim.AdamW(parameters, weight_decay=0.01)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(parameters, weight_decay=0.01)", "performance only"),
    C("grad_scaler = torch.cuda.amp.GradScaler(growth_interval=1_000_000)", "amp", R, True,
      "grad_scaler = torch.npu.amp.GradScaler(growth_interval=1_000_000)",
      "CUDA GradScaler disables itself without CUDA: fp16 steps without loss scaling"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C('os.environ["TORCH_CUDNN_V8_API_ENABLED"] = "1"', "env_var", X, False, None, "cuDNN-only switch"),
    C("attenuate_cert=attenuate_cert).cuda()", "tensor_to_device", R, True,
      "attenuate_cert=attenuate_cert).npu()", ".cuda() needs a CUDA build"),
    C("states = torch.load(checkpoint_name)", "tensor_to_device", R, True,
      "states = torch.load(checkpoint_name, map_location='cpu')", CKPT_NOTE),
])

# ---------------------------------------------------------------------------------------------- files around code
E("droid_setup", "setup.py", "explicit_replacement",
  "DROID-SLAM setup.py (CUDAExtension droid_backends + vendored lietorch_backends, explicit -gencode list)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension needs nvcc/CUDA_HOME, absent on an NPU host (the 2.7.1 list marks the API itself ✔)"),
    C("=GENCODE = [", "custom_cuda_extension", X, False, None, "SM architecture list, meaningless for NPU"),
    C("CUDAExtension('droid_backends',", "custom_cuda_extension", R, True, "NpuExtension('droid_backends',",
      "kernels must be rewritten (Ascend C / torch) before this builds"),
    C("'nvcc': ['-O3'] + GENCODE,", "custom_cuda_extension", X, False, None, "nvcc flags"),
    C("CUDAExtension('lietorch_backends',", "custom_cuda_extension", R, True, "NpuExtension('lietorch_backends',",
      "CUDA kernels in lietorch_gpu.cu"),
    C("'nvcc': ['-O2', '--use_fast_math'] + GENCODE,", "custom_cuda_extension", X, False, None, "nvcc flags"),
])

E("droid_environment", "environment.yaml", "explicit_replacement",
  "DROID-SLAM / DPVO-style conda environment.yaml (pytorch 1.10 + cudatoolkit 11.3, torch-scatter cu113 wheel)", [
    C("=- nvidia", "torch_cuda_api", X, False, None, "channel only serves CUDA packages"),
    C("=- pytorch=1.10.0", "import_torch_npu", R, True,
      "- pytorch=2.1.0 (cpu build) + pip: torch-npu==2.1.0.post10",
      "no torch_npu release exists for torch 1.10 (1.8.1/1.11 then 2.x); the pytorch channel pulls a CUDA build"),
    C("=- torchvision=0.11.1", "torch_cuda_api", R, True, "- torchvision=0.16.0",
      "pins torch 1.10; must follow the torch version that has a torch_npu"),
    C("=- torchaudio=0.10.0", "torch_cuda_api", R, True, "- torchaudio=2.1.0",
      "pins torch 1.10; the environment no longer solves once torch moves"),
    C("=- cudatoolkit=11.3", "torch_cuda_api", X, True, None,
      "selects the CUDA builds of pytorch; no aarch64 package for most NPU hosts"),
    C("=- cudatoolkit-dev=11.3.1", "custom_cuda_extension", X, True, None,
      "nvcc for building the extensions; x86-only, useless on NPU"),
    C("torch-scatter==2.0.9 -f https://data.pyg.org/whl/torch-1.10.0+cu113.html", "custom_cuda_extension", R, True,
      "- torch-scatter==2.1.2  # built from source against the CPU torch",
      "cu113 wheel links CUDA libraries and torch 1.10"),
    C("pycuda==2021.1", "custom_cuda_extension", X, True, None, "needs a CUDA toolkit to build and a GPU to run"),
    C("CUDA_HOME: $CONDA_PREFIX", "env_var", X, False, None, "only for nvcc builds"),
    C('TORCH_CUDA_ARCH_LIST: "6.0;6.1;7.0;7.5;8.0;8.6"', "env_var", X, False, None, "only for nvcc builds"),
    C('CUDA_VISIBLE_DEVICES: "0"', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES: "0"',
      "ignored by the NPU runtime"),
])

E("loftr_train_sh", "scripts/reproduce_train/outdoor_ds.sh", "explicit_replacement",
  "zju3dv/LoFTR scripts/reproduce_train/outdoor_ds.sh (nvidia-smi device discovery, NCCL env, --gpus/--accelerator)", [
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-$(seq -s, 0", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${NPUS:-$(seq -s, 0 $(( $(npu-smi info -l | grep -c 'NPU ID') - 1 )))}",
      "nvidia-smi is absent and the NPU runtime ignores CUDA_VISIBLE_DEVICES"),
    C("n_gpus_per_node=$(echo ${CUDA_VISIBLE_DEVICES}", "env_var", R, False,
      "n_npus_per_node=$(echo ${ASCEND_RT_VISIBLE_DEVICES} | tr ',' '\\n' | wc -l)",
      "follows the device-list variable above"),
    C("cc=$(nvidia-smi --query-gpu=compute_cap", "device_capability_check", X, True, None,
      "nvidia-smi not found; with set -euo pipefail the script aborts here"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL variable has no effect on HCCL"),
    C("export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}", "env_var", X, False, None,
      "NCCL variable has no effect on HCCL"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", R, False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL picks its host NIC from HCCL_IF_IP / HCCL_SOCKET_IFNAME; matters for multi-node runs"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "torch_cuda_api", R, True,
      "npu-smi info", "nvidia-smi not found (set -e)"),
    C('--gpus=${n_gpus_per_node} --num_nodes=${n_nodes} --accelerator="ddp" \\', "distributed_framework", R, True,
      '--devices=${n_npus_per_node} --num_nodes=${n_nodes} --accelerator=npu --strategy=ddp \\',
      "Lightning --gpus means CUDA devices"),
    C("CUDA_VISIBLE_DEVICES=0 python -u ./test.py \\", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python -u ./test.py \\", "ignored by the NPU runtime"),
    C('--ckpt_path=${ckpt} --gpus=1 --accelerator="ddp" \\', "distributed_framework", R, True,
      '--ckpt_path=${ckpt} --devices=1 --accelerator=npu \\', "Lightning --gpus means CUDA devices"),
])

E("dust3r_dockerfile", "docker/files/cuda.Dockerfile", "explicit_replacement",
  "naver/dust3r docker/files/cuda.Dockerfile (NGC PyTorch base, curope build, gradio entrypoint)", [
    C("FROM nvcr.io/nvidia/pytorch:24.01-py3", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11  # + pip install torch==2.7.1 torch-npu==2.7.1.post2",
      "NGC image: CUDA torch, x86/arm GPU stack, no CANN/torch_npu"),
    C('ENV DEVICE="cuda"', "device_type", R, True, 'ENV DEVICE="npu"',
      "passed to demo.py --device by the entrypoint"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;8.9;9.0"', "env_var", X, False, None, "only for nvcc builds"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "ENV ASCEND_VISIBLE_DEVICES=0",
      "the Ascend Docker Runtime mounts NPUs according to ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", X, False, None,
      "NVIDIA container toolkit only"),
    C("RUN python setup.py build_ext --inplace", "custom_cuda_extension", X, True, None,
      "curope is a CUDA extension: nvcc is missing and the image build fails; DUSt3R falls back to the "
      "PyTorch RoPE without it"),
    C("CMD nvidia-smi > /dev/null && curl", "torch_cuda_api", R, False,
      "CMD curl -fs http://localhost:${GRADIO_SERVER_PORT}/ > /dev/null || exit 1",
      "container always reported unhealthy (health status only)"),
])

E("mast3r_requirements", "requirements.txt", "explicit_replacement",
  "MASt3R/MASt3R-SfM-style pinned requirements.txt (cu121 wheels, faiss-gpu, xformers, pykeops)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; torch_npu needs the CPU torch build (x86) or plain PyPI torch (aarch64)"),
    C("torch==2.2.2+cu121", "import_torch_npu", R, True, "torch==2.7.1  # + torch-npu==2.7.1.post2 on the next line",
      "CUDA build; torch 2.2 only has an end-of-life torch_npu"),
    C("torchvision==0.17.2+cu121", "torch_cuda_api", R, True, "torchvision==0.22.1",
      "CUDA build pinned to torch 2.2.2"),
    C("faiss-gpu-cu12==1.8.0.2", "custom_cuda_extension", R, True, "faiss-cpu==1.8.0",
      "CUDA-only wheel"),
    C("xformers==0.0.25.post1", "attention_kernel", X, True, None,
      "no NPU backend; the wheel requires CUDA torch 2.2.2"),
    C("pykeops==2.2.3", "custom_cuda_extension", X, False, None,
      "JIT-compiles CUDA kernels for the GPU kNN; CPU mode exists (unconfirmed behaviour on an NPU host)"),
    C("nvidia-ml-py>=12.535", "torch_cuda_api", X, False, None, "NVML has no NPU counterpart (npu-smi)"),
])

E("matcher_trainer_yaml", "configs/trainer/megadepth_ddp.yaml", "explicit_replacement",
  "Lightning-CLI trainer config of a LoFTR-family matcher (gpu accelerator, DDPStrategy, NCCL env)", [
    C("accelerator: gpu", "distributed_framework", R, True, "accelerator: npu",
      "'gpu' resolves to CUDA; needs an NPU accelerator registered with Lightning (plugin unconfirmed)"),
    C("process_group_backend: nccl", "dist_backend", R, True, "process_group_backend: hccl",
      "NCCL is not available on Ascend"),
    C("precision: 16-mixed", "amp", R, False, "precision: bf16-mixed",
      "Lightning's mixed-precision plugin autocasts for 'cuda' unless the accelerator says otherwise; "
      "depends on the NPU accelerator plugin (unconfirmed)"),
    C('CUDA_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"', "env_var", R, True,
      'ASCEND_RT_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"', "ignored by the NPU runtime"),
    C('NCCL_IB_DISABLE: "1"', "env_var", X, False, None, "no effect on HCCL"),
    C('NCCL_ASYNC_ERROR_HANDLING: "1"', "env_var", R, False, 'HCCL_ASYNC_ERROR_HANDLING: "1"',
      "NCCL variable; HCCL has its own"),
    C('TORCH_NCCL_BLOCKING_WAIT: "0"', "env_var", X, False, None, "NCCL-only"),
])
