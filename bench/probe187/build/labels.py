# Labels for probe187 (optical flow / point tracking / monocular depth / feature matching, CUDA -> Ascend NPU).
# One label per upstream line a careful porter would edit; see README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- RAFT
E("raft_train", "train.py", "explicit_replacement", "RAFT train.py (princeton-vl/RAFT)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: registers the npu device before RAFT and the data are moved there"),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", False, "from torch_npu.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler only warns and disables itself without CUDA, so --mixed_precision silently trains unscaled fp32; NPU scaler restores it"),
    C("model = nn.DataParallel(RAFT(args), device_ids=args.gpus)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(RAFT(args).npu(), device_ids=[args.local_rank])",
      "nn.DataParallel is marked unsupported on Atlas A2/A3 (scatter/broadcast are CUDA comm ops); single card: drop it, multi card: DDP over HCCL (keeps .module)"),
    C("model.load_state_dict(torch.load(args.restore_ckpt), strict=False)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.restore_ckpt, map_location='cpu'), strict=False)",
      "RAFT checkpoints hold CUDA tensors; torch.load without map_location tries to restore them on CUDA and raises on an NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() fails without CUDA"),
    C("image1, image2, flow, valid = [x.cuda() for x in data_blob]", "tensor_to_device", "replace", True,
      "image1, image2, flow, valid = [x.npu() for x in data_blob]", "batch to device"),
    C("image1 = (image1 + stdv * torch.randn(*image1.shape).cuda()).clamp(0.0, 255.0)", "tensor_to_device", "replace", True,
      "image1 = (image1 + stdv * torch.randn(*image1.shape, device=image1.device)).clamp(0.0, 255.0)", "--add_noise path; .cuda() fails"),
    C("image2 = (image2 + stdv * torch.randn(*image2.shape).cuda()).clamp(0.0, 255.0)", "tensor_to_device", "replace", True,
      "image2 = (image2 + stdv * torch.randn(*image2.shape, device=image2.device)).clamp(0.0, 255.0)", "--add_noise path; .cuda() fails"),
])

E("raft_model", "core/raft.py", "explicit_replacement", "RAFT core/raft.py", [
    C("autocast = torch.cuda.amp.autocast", "amp", "replace", False, "autocast = torch.npu.amp.autocast",
      "CUDA autocast disables itself (warning only) when CUDA is unavailable: --mixed_precision becomes a silent fp32 no-op"),
])

E("raft_corr", "core/corr.py", "kernel_rewrite", "RAFT core/corr.py (CorrBlock / AlternateCorrBlock over alt_cuda_corr)", [
    C("import alt_cuda_corr", "custom_cuda_extension", "replace", False, "import alt_npu_corr  # Ascend C port of the correlation kernel",
      "nvcc-built extension; the bare try/except hides the ImportError on NPU, so the import line itself does not fail"),
    C("corr, = alt_cuda_corr.forward(fmap1_i, fmap2_i, coords_i, r)", "custom_cuda_extension", "replace", True,
      "corr = local_corr_torch(fmap1_i, fmap2_i, coords_i, r)  # pure-torch windowed correlation (or Ascend C op)",
      "call site of the CUDA kernel: with --alternate_corr this raises NameError on NPU because the module never imported"),
])

E("raft_altcorr_setup", "alt_cuda_corr/setup.py", "kernel_rewrite", "RAFT alt_cuda_corr/setup.py", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch_npu.utils.cpp_extension import NpuExtension; from torch.utils.cpp_extension import BuildExtension",
      "CUDAExtension needs CUDA_HOME/nvcc; NPU builds go through torch_npu's NpuExtension"),
    C("CUDAExtension('alt_cuda_corr',", "custom_cuda_extension", "replace", True, "NpuExtension('alt_npu_corr',",
      "CUDAExtension() looks up the CUDA toolkit libs and raises when CUDA_HOME is missing"),
    C("sources=['correlation.cpp', 'correlation_kernel.cu'],", "custom_cuda_extension", "replace", True,
      "sources=['correlation_npu.cpp', 'correlation_kernel_ascendc.cpp'],", ".cu kernel must be rewritten (Ascend C) - no nvcc on an NPU host"),
    C("extra_compile_args={'cxx': [], 'nvcc': ['-O3']}),", "custom_cuda_extension", "replace", False,
      "extra_compile_args={'cxx': ['-O3']}),", "nvcc flags are meaningless for an NPU build; unconfirmed whether NpuExtension rejects the key"),
])

E("raft_evaluate", "evaluate.py", "explicit_replacement", "RAFT evaluate.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("image1, image2 = padder.pad(image1[None].cuda(), image2[None].cuda())", "tensor_to_device", "replace", True,
      "image1, image2 = padder.pad(image1[None].npu(), image2[None].npu())", "Sintel submission inputs"),
    C("flow_prev = forward_interpolate(flow_low[0])[None].cuda()", "tensor_to_device", "replace", True,
      "flow_prev = forward_interpolate(flow_low[0])[None].npu()", "warm-start flow back on device"),
    C("image1, image2 = image1.cuda(), image2.cuda()", "tensor_to_device", "replace", True,
      "image1, image2 = image1.npu(), image2.npu()", "KITTI submission inputs"),
    C("image1 = image1[None].cuda()", "tensor_to_device", "replace", True, "image1 = image1[None].npu()", "chairs validation"),
    C("image2 = image2[None].cuda()", "tensor_to_device", "replace", True, "image2 = image2[None].npu()", "chairs validation"),
    C("image1, image2 = image1[None].cuda(), image2[None].cuda()", "tensor_to_device", "replace", True,
      "image1, image2 = image1[None].npu(), image2[None].npu()", "sintel validation"),
    C("image1 = image1[None].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "image1 = image1[None].npu(non_blocking=True)", "kitti validation"),
    C("image2 = image2[None].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "image2 = image2[None].npu(non_blocking=True)", "kitti validation"),
    C("model = torch.nn.DataParallel(RAFT(args))", "distributed_framework", "replace", False,
      "model = RAFT(args)  # strip the 'module.' prefix when loading and pass model instead of model.module below",
      "DataParallel is only a state-dict container here (model.module is what runs); it is marked unsupported on NPU but whether construction alone fails is unconfirmed"),
    C("model.load_state_dict(torch.load(args.model))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.model, map_location='cpu'))",
      "released RAFT checkpoints were saved from CUDA tensors; without map_location torch.load raises on a host without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() fails without CUDA"),
])

E("raft_train_sh", "train_mixed.sh", "explicit_replacement", "RAFT train_mixed.sh (with a GPU-selection line as in many forks)", [
    C("#!/bin/bash", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before python imports torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=${GPU:-0}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU:-0}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: GPU=3 would silently train on NPU 0"),
])

# ---------------------------------------------------------------- CoTracker
E("cotracker_demo", "demo.py", "device_branch_or_abstraction", "CoTracker demo.py (facebookresearch/co-tracker)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('DEFAULT_DEVICE = "cuda" if torch.cuda.is_available() else "mps"', "device_type", "replace", True,
      'DEFAULT_DEVICE = "npu" if torch.npu.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"',
      "without the npu branch the chain silently falls through to cpu on an Ascend host"),
])

E("cotracker_online_demo", "online_demo.py", "device_branch_or_abstraction", "CoTracker online_demo.py (hub quick-start branch as in forks)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('="cuda"', "device_type", "replace", True, '"npu"', "device string of the multi-line DEFAULT_DEVICE chain"),
    C("if torch.cuda.is_available()", "torch_cuda_api", "replace", True, "if torch.npu.is_available()",
      "torch.cuda.is_available() is False on NPU, so the chain falls to cpu"),
    C('model = torch.hub.load("facebookresearch/co-tracker", "cotracker3_online").to("cuda")', "tensor_to_device", "replace", True,
      'model = torch.hub.load("facebookresearch/co-tracker", "cotracker3_online").to(DEFAULT_DEVICE)',
      "hard-coded cuda in the hub branch; torch.hub.load itself is fine on NPU"),
])

E("cotracker_train", "train_on_kubric.py", "explicit_replacement", "CoTracker train_on_kubric.py (LightningLite trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", False, "from torch_npu.npu.amp import GradScaler",
      "CUDA GradScaler disables itself without CUDA: --mixed_precision is a silent no-op"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "eval predictor silently stays on cpu on an NPU host"),
    C("predictor.model = predictor.model.cuda()", "tensor_to_device", "replace", True, "predictor.model = predictor.model.npu()",
      "fails once the guard above is ported"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed above already seeds the NPU generator"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", "same as above"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "model is moved by hand (setup(move_to_device=False)); the commented '# model.cuda()' below is not code"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "returns silently when CUDA was never initialised; NPU cache is simply not released"),
    C("strategy=DDPStrategy(find_unused_parameters=False),", "dist_backend", "replace", True,
      'strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="hccl"),',
      "Lightning picks nccl only for cuda devices and gloo otherwise; gloo cannot all-reduce NPU tensors"),
    C('accelerator="gpu",', "distributed_framework", "replace", True, 'accelerator="npu",',
      "Lightning's gpu accelerator raises when no CUDA/MPS device exists; needs an NPU accelerator plugin for Lightning (unconfirmed: not a built-in Lightning accelerator in the versions this code pins)"),
])

E("cotracker_predictor", "cotracker/predictor.py", "device_branch_or_abstraction", "CoTracker cotracker/predictor.py (device-agnostic, negative control)", [])

E("cotracker_eval", "cotracker/evaluation/evaluate.py", "explicit_replacement", "CoTracker cotracker/evaluation/evaluate.py (hydra)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script (hydra main)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise the whole benchmark silently runs on cpu"),
    C("predictor.model = predictor.model.cuda()", "tensor_to_device", "replace", True, "predictor.model = predictor.model.npu()", "fails once the guard above is ported"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(cfg.gpu_idx)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(cfg.gpu_idx)',
      "gpu_idx selection is silently ignored by the Ascend runtime (set before any device use, as here)"),
])

# ---------------------------------------------------------------- Depth Anything V2
E("da_run", "run.py", "device_branch_or_abstraction", "Depth-Anything-V2 run.py (with an --fp16 autocast flag as in forks)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("DEVICE = 'cuda' if torch.cuda.is_available() else 'mps'", "device_type", "replace", True,
      "DEVICE = 'npu' if torch.npu.is_available() else 'mps' if torch.backends.mps.is_available() else 'cpu'",
      "falls through to cpu on an Ascend host"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.fp16):", "amp", "replace", False,
      "with torch.autocast(device_type=DEVICE, dtype=torch.float16, enabled=args.fp16):",
      "cuda autocast without CUDA only warns and disables itself: --fp16 becomes a silent fp32 no-op"),
])

E("da_dpt", "depth_anything_v2/dpt.py", "device_branch_or_abstraction", "Depth-Anything-V2 depth_anything_v2/dpt.py (device picked inside image2tensor)", [
    C("DEVICE = 'cuda' if torch.cuda.is_available() else 'mps'", "device_type", "replace", True,
      "DEVICE = next(self.parameters()).device",
      "infer_image re-derives the device itself: on NPU the input goes to cpu while the weights are on npu -> device mismatch error"),
])

E("da_attention", "depth_anything_v2/dinov2_layers/attention.py", "kernel_rewrite", "DINOv2 layers/attention.py as vendored by Depth Anything (xformers MemEffAttention)", [
    C("x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)", "attention_kernel", "replace", False,
      "x = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)",
      "xformers has no NPU backend; the guarded import falls back to the eager softmax path (correct, slower). SDPA dispatches to the NPU fused attention"),
])

E("da_metric_train", "metric_depth/train.py", "explicit_replacement", "Depth-Anything-V2 metric_depth/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script (torch.distributed.launch)"),
    C("model.cuda(local_rank)", "tensor_to_device", "replace", True, "model.npu(local_rank)", "Module.cuda() fails without CUDA; DDP below expects the model on the local NPU"),
    C("criterion = SiLogLoss().cuda(local_rank)", "tensor_to_device", "replace", False, "criterion = SiLogLoss().npu(local_rank)",
      "SiLogLoss has no parameters or buffers, so Module.cuda() never touches a tensor and does not fail; edit for consistency only"),
    C("img, depth, valid_mask = sample['image'].cuda(), sample['depth'].cuda(), sample['valid_mask'].cuda()", "tensor_to_device", "replace", True,
      "img, depth, valid_mask = sample['image'].npu(), sample['depth'].npu(), sample['valid_mask'].npu()", "train batch"),
    C("results = {'d1': torch.tensor([0.0]).cuda()", "tensor_to_device", "replace", True,
      "results = {'d1': torch.tensor([0.0]).npu(), 'd2': torch.tensor([0.0]).npu(), 'd3': torch.tensor([0.0]).npu(),",
      "metric accumulators must live on the device HCCL reduces"),
    C("'abs_rel': torch.tensor([0.0]).cuda()", "tensor_to_device", "replace", True,
      "'abs_rel': torch.tensor([0.0]).npu(), 'sq_rel': torch.tensor([0.0]).npu(), 'rmse': torch.tensor([0.0]).npu(),", "continuation of the accumulator dict"),
    C("'rmse_log': torch.tensor([0.0]).cuda()", "tensor_to_device", "replace", True,
      "'rmse_log': torch.tensor([0.0]).npu(), 'log10': torch.tensor([0.0]).npu(), 'silog': torch.tensor([0.0]).npu()}", "continuation of the accumulator dict"),
    C("nsamples = torch.tensor([0.0]).cuda()", "tensor_to_device", "replace", True, "nsamples = torch.tensor([0.0]).npu()", "reduced with dist.reduce over HCCL, must be an NPU tensor"),
    C("img, depth, valid_mask = sample['image'].cuda().float()", "tensor_to_device", "replace", True,
      "img, depth, valid_mask = sample['image'].npu().float(), sample['depth'].npu()[0], sample['valid_mask'].npu()[0]", "val batch"),
])

E("da_dist_helper", "metric_depth/util/dist_helper.py", "explicit_replacement", "Depth-Anything-V2 metric_depth/util/dist_helper.py", [
    C('def setup_distributed(backend="nccl", port=None):', "dist_backend", "replace", True,
      'def setup_distributed(backend="hccl", port=None):', "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "returns 0 without CUDA -> ZeroDivisionError in rank % num_gpus"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank % num_gpus)", "raises without CUDA; binds each rank to its NPU before init_process_group"),
])

E("da_dist_train_sh", "metric_depth/dist_train.sh", "explicit_replacement", "Depth-Anything-V2 metric_depth/dist_train.sh", [
    C("#!/bin/bash", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists every card of an 8-card node, which is also what the Ascend runtime exposes by default, so leaving it is a harmless no-op"),
])

E("da_requirements", "requirements.txt", "explicit_replacement", "Depth Anything requirements.txt as pinned in CUDA forks (cu118 index + xformers)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Ascend installs CPU torch on x86 (plain PyPI on aarch64); unconfirmed whether a CUDA build of torch breaks torch_npu"),
    C("torch==2.0.1+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA local build; torch_npu pairs with the plain build of a supported torch version (2.0.1 only has an EOL torch_npu)"),
    C("torchvision==0.15.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0", "must follow torch; CUDA local build"),
    C("numpy<2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10", "torch-npu pin goes with the torch block (CANN 8.0.0 line)"),
    C("xformers==0.0.20", "attention_kernel", "removal", True, None,
      "no NPU backend; its wheel pins torch==2.0.1 and would drag the CUDA torch back in"),
])

# ---------------------------------------------------------------- MiDaS
E("midas_run", "run.py", "device_branch_or_abstraction", "MiDaS v3.1 run.py (isl-org/MiDaS)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('if optimize and device == torch.device("cuda"):', "device_type", "replace", False,
      'if optimize and device.type == "npu":',
      "comparison is False on NPU so --optimize (fp16) is silently skipped; results stay correct in fp32"),
    C("sample = sample.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "channels_last is listed as not supported by Ascend's migration tooling (keep the contiguous NCHW tensor); only reached once the --optimize branch above is ported; unconfirmed whether it errors or only slows down"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "falls back to cpu on an Ascend host"),
])

E("midas_dockerfile", "Dockerfile", "explicit_replacement", "MiDaS Dockerfile", [
    C("FROM nvidia/cuda:10.2-cudnn7-runtime-ubuntu18.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA runtime image has no CANN toolkit/driver libraries (and python 3.6 is too old for any torch_npu)"),
    C("RUN pip3 install torch~=1.8 torchvision opencv-python-headless~=3.4 timm", "import_torch_npu", "replace", True,
      "RUN pip3 install torch==2.1.0 torch-npu==2.1.0.post17 torchvision==0.16.0 opencv-python-headless timm",
      "torch 1.8 has no maintained torch_npu; add the torch-npu pin matching torch and the image's CANN (2.1.0.post17 <-> CANN 8.3.RC1)"),
])

# ---------------------------------------------------------------- ZoeDepth
E("zoedepth_train_mono", "train_mono.py", "explicit_replacement", "ZoeDepth train_mono.py (with utils.misc.parallelize inlined)", [
    C("import torch.utils.data.distributed", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; mp.spawn workers re-import this module so they get it too"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "queued no-op without CUDA; torch.manual_seed already seeds the NPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", "same as above"),
    C("=torch.cuda.set_device(config.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(config.gpu)", "raises without CUDA"),
    C("=model = model.cuda(config.gpu)", "tensor_to_device", "replace", True, "model = model.npu(config.gpu)", "Module.cuda() fails without CUDA"),
    C("torch.cuda.set_device(config.gpu)  # again", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(config.gpu)  # again, after the process group exists", "DDP branch"),
    C("model = model.cuda(config.gpu)  # move", "tensor_to_device", "replace", True,
      "model = model.npu(config.gpu)  # move the converted SyncBN layers too", "DDP branch"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "DP branch"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "raise NotImplementedError('nn.DataParallel is unsupported on Ascend NPU; set distributed=True to use DDP')",
      "DataParallel is marked unsupported on Atlas A2/A3; the DDP branch is the NPU path"),
    C("config, model, train_loader, test_loader, device=config.gpu)", "tensor_to_device", "replace", True,
      "config, model, train_loader, test_loader, device=torch.device('npu', config.gpu))",
      "the trainer does batch.to(self.device) with this bare int, and an int device means a CUDA ordinal"),
    C("config.dist_backend = 'nccl'", "dist_backend", "replace", True, "config.dist_backend = 'hccl'", "feeds dist.init_process_group in parallelize(); NCCL does not exist on Ascend"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpus_per_node = torch.npu.device_count()",
      "returns 0 without CUDA: mp.spawn(nprocs=0) / wrong DP branch"),
])

E("zoedepth_trainer", "zoedepth/trainers/zoedepth_trainer.py", "explicit_replacement", "ZoeDepth zoedepth/trainers/zoedepth_trainer.py", [
    C("import torch.cuda.amp as amp", "amp", "replace", False, "import torch_npu.npu.amp as amp",
      "every amp.autocast / amp.GradScaler goes through this alias; the CUDA versions disable themselves without CUDA, so use_amp silently becomes fp32"),
])

E("zoedepth_env", "environment.yml", "explicit_replacement", "ZoeDepth environment.yml", [
    C("- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA channel only serves CUDA packages; harmless once they are gone"),
    C("- cuda=11.7.1", "torch_cuda_api", "removal", False, None,
      "CUDA toolkit is unused on an Ascend host; unconfirmed whether it even resolves on aarch64"),
    C("- pytorch=1.13.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
      "there is no torch_npu release for torch 1.13"),
    C("- pytorch-cuda=11.7", "torch_cuda_api", "removal", True, None, "forces the CUDA build of pytorch"),
    C("- pytorch-mutex=1.0", "torch_cuda_api", "replace", False, "- cpuonly",
      "pins the CPU variant of the conda pytorch build that torch_npu sits on; unconfirmed that the solver would otherwise pick a CUDA build"),
    C("- torchaudio=0.13.1", "torch_cuda_api", "removal", True, None, "pinned to torch 1.13 (conflicts with the new torch) and unused by ZoeDepth"),
    C("- torchvision=0.14.1", "torch_cuda_api", "replace", True, "- torchvision=0.16.0", "must follow torch"),
    C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10", "torch-npu pin (pip only)"),
])

# ---------------------------------------------------------------- LoFTR
E("loftr_train", "train.py", "explicit_replacement", "LoFTR train.py (zju3dv/LoFTR, pytorch-lightning 1.3)", [
    C("import pytorch_lightning as pl", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; it never imports torch directly, so torch_npu goes after the Lightning import"),
    C("args.gpus = _n_gpus = setup_gpus(args.gpus)", "distributed_framework", "replace", True,
      "_n_gpus = setup_gpus(args.gpus); args.gpus = None; args.devices = _n_gpus  # NPU accelerator instead of CUDA gpus",
      "Trainer(gpus=N) makes Lightning 1.3 look for CUDA devices and raise a MisconfigurationException on an NPU host; the NPU accelerator plugin to use instead is unconfirmed"),
    C("plugins=DDPPlugin(find_unused_parameters=False,", "dist_backend", "replace", True,
      'plugins=DDPPlugin(find_unused_parameters=False, process_group_backend="hccl",',
      "Lightning's DDP plugin initialises nccl (or gloo when not on CUDA); HCCL is needed for NPU tensors (keyword depends on the Lightning version)"),
])

E("loftr_misc", "src/utils/misc.py", "explicit_replacement", "LoFTR src/utils/misc.py (setup_gpus)", [
    C("return n_gpus if n_gpus != -1 else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "return n_gpus if n_gpus != -1 else torch.npu.device_count()", "--gpus=-1 would resolve to 0 devices"),
    C("visible_devices = os.getenv('CUDA_VISIBLE_DEVICES')", "env_var", "replace", True,
      "visible_devices = os.getenv('ASCEND_RT_VISIBLE_DEVICES')",
      "reading the CUDA variable means a user-set ASCEND_RT_VISIBLE_DEVICES is silently overwritten below"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = \',\'.join(str(i) for i in gpu_ids)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join(str(i) for i in gpu_ids)',
      "--gpus=2,3 is silently ignored by the Ascend runtime"),
    C("visible_devices = os.environ['CUDA_VISIBLE_DEVICES']", "env_var", "replace", True,
      "visible_devices = os.environ['ASCEND_RT_VISIBLE_DEVICES']", "KeyError once the line above writes the Ascend variable"),
])

E("loftr_outdoor_sh", "scripts/reproduce_train/outdoor_ds.sh", "explicit_replacement", "LoFTR scripts/reproduce_train/outdoor_ds.sh (with cluster NCCL exports)", [
    C("#!/bin/bash -l", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL picks the host NIC by its own rules; only matters on multi-node runs where the default NIC cannot reach the root"),
    C('--gpus=${n_gpus_per_node} --num_nodes=${n_nodes} --accelerator="ddp" \\', "distributed_framework", "replace", True,
      '--devices=${n_gpus_per_node} --num_nodes=${n_nodes} \\',
      "--gpus asks Lightning for CUDA devices (fails on NPU); must match whatever NPU accelerator train.py sets up"),
])

# ---------------------------------------------------------------- SuperGlue
E("superglue_match_pairs", "match_pairs.py", "device_branch_or_abstraction", "SuperGluePretrainedNetwork match_pairs.py (magicleap)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("device = 'cuda' if torch.cuda.is_available() and not opt.force_cpu else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() and not opt.force_cpu else 'cpu'",
      "silently runs SuperPoint+SuperGlue on cpu on an Ascend host; everything downstream takes `device` as a parameter"),
])

# ---------------------------------------------------------------- LightGlue
E("lightglue_core", "lightglue/lightglue.py", "device_branch_or_abstraction", "cvg/LightGlue lightglue/lightglue.py", [
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", "replace", False,
      "@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)",
      "the CUDA decorator only looks at CUDA autocast: under NPU autocast (mp=True) keypoint normalisation would run in fp16; default mp=False"),
    C("torch.backends.cuda.enable_flash_sdp(allow_flash)", "attention_kernel", "removal", False, None,
      "CUDA SDPA backend switch; listed as unsupported on NPU and has no effect on the NPU SDPA kernel choice"),
    C('if self.enable_flash and q.device.type == "cuda":', "attention_kernel", "replace", False,
      'if self.enable_flash and q.device.type in ("cuda", "npu"):',
      "on NPU the fp16 flash path is skipped and SDPA runs in fp32: correct but slower"),
    C('if self.flash is not None and qk0.device.type == "cuda":', "attention_kernel", "replace", False,
      'if self.flash is not None and qk0.device.type in ("cuda", "npu"):',
      "cross-attention falls back to the eager einsum/softmax path on NPU"),
    C('"cuda": 1024,', "device_type", "npu_only_addition", True, '"npu": 1024,',
      "pruning_min_kpts indexes this dict with device.type -> KeyError 'npu' whenever width_confidence > 0 (the default)"),
    C('self, mode="reduce-overhead", static_lengths=[256, 512, 768, 1024, 1280, 1536]', "compile_mode", "replace", False,
      'self, mode="default", static_lengths=[256, 512, 768, 1024, 1280, 1536]',
      "reduce-overhead means CUDA graphs; on NPU the graph backend is npugraphs/torchair (unconfirmed how inductor treats this mode there)"),
    C("torch._inductor.cudagraph_mark_step_begin()", "compile_mode", "removal", False, None,
      "cudagraph-trees bookkeeping, meaningless without CUDA graphs (unconfirmed whether it is a no-op or errors on NPU)"),
    C('with torch.autocast(enabled=self.conf.mp, device_type="cuda"):', "amp", "replace", False,
      'with torch.autocast(enabled=self.conf.mp, device_type=data["image0"]["keypoints"].device.type):',
      "cuda autocast is disabled with a warning on an NPU host: mp=True silently runs fp32"),
    C('if self.conf.flash and FLASH_AVAILABLE and device.type == "cuda":', "device_type", "replace", False,
      'if self.conf.flash and FLASH_AVAILABLE and device.type in ("cuda", "npu"):',
      "only changes the pruning threshold (1536 vs 1024 keypoints)"),
])

E("lightglue_benchmark", "benchmark.py", "device_branch_or_abstraction", "cvg/LightGlue benchmark.py (with a GPU-name log line)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('use_events = device.type == "cuda"', "device_type", "replace", True, 'use_events = device.type in ("cuda", "npu")',
      "on NPU the perf_counter branch times only the asynchronous launch (no synchronize): silently wrong numbers"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True, "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA; reached once use_events covers npu"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True, "ender = torch.npu.Event(enable_timing=True)", "as above"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA; the NPU stream must be synchronised before reading the events"),
    C('choices=["auto", "cuda", "cpu", "mps"],', "device_type", "replace", False, 'choices=["auto", "cuda", "npu", "cpu", "mps"],',
      "only needed to pick the NPU explicitly; auto covers it once the line below is ported"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "auto falls back to cpu"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache between configs is not released"),
])

# ---------------------------------------------------------------- CroCo / DUSt3R
E("croco_pos_embed", "croco/models/pos_embed.py", "kernel_rewrite", "naver/croco models/pos_embed.py (cuRoPE2D with PyTorch fallback), as vendored by DUSt3R", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed for the optional npu_rotary_mul rewrite below"),
    C("from models.curope import cuRoPE2D", "custom_cuda_extension", "replace", False,
      "from models.curope_npu import NpuRoPE2D as cuRoPE2D  # or drop and keep the fallback",
      "the curope CUDA extension cannot be built on NPU; the ImportError branch already gives a correct pure-PyTorch RoPE2D"),
    C("return (tokens * cos) + (self.rotate_half(tokens) * sin)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rotary_mul(tokens, cos, sin)",
      "same rotate-half formula as npu_rotary_mul(mode='half'); performance only. Unconfirmed that the B1SD cos/sin broadcast produced by the embedding lookup is accepted"),
])

E("croco_curope_setup", "croco/models/curope/setup.py", "kernel_rewrite", "naver/croco models/curope/setup.py", [
    C("from torch import cuda", "custom_cuda_extension", "removal", False, None, "only used for the gencode flags below"),
    C("all_cuda_archs = cuda.get_gencode_flags().replace('compute=','arch=').split()", "custom_cuda_extension", "removal", False, None,
      "get_gencode_flags() returns an empty string when CUDA is unavailable, so this line does not fail; it is just dead on NPU"),
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch_npu.utils.cpp_extension import NpuExtension; from torch.utils.cpp_extension import BuildExtension",
      "CUDA extension build needs nvcc/CUDA_HOME"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(", "CUDAExtension() raises without CUDA_HOME"),
    C('"kernels.cu",', "custom_cuda_extension", "replace", True, '"kernels_ascendc.cpp",', "RoPE kernel has to be rewritten in Ascend C (or use npu_rotary_mul instead of an extension)"),
    C("nvcc=['-O3','--ptxas-options=-v',\"--use_fast_math\"]+all_cuda_archs,", "custom_cuda_extension", "removal", False, None,
      "nvcc/ptxas options have no meaning for an NPU build"),
])

E("dust3r_inference", "dust3r/inference.py", "explicit_replacement", "naver/dust3r dust3r/inference.py", [
    C("with torch.cuda.amp.autocast(enabled=bool(use_amp)):", "amp", "replace", False,
      "with torch.autocast(device_type=device.type if isinstance(device, torch.device) else str(device).split(':')[0], enabled=bool(use_amp)):",
      "CUDA autocast disables itself on an NPU host: --amp training silently runs fp32"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.autocast(device_type=view1['img'].device.type, enabled=False):",
      "no-op today, but once the outer autocast targets the NPU this CUDA-only 'disable' no longer keeps the loss in fp32 - must change together"),
])
