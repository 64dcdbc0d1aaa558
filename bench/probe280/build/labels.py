# Labels for probe280 (font generation / handwriting synthesis, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# `required` is judged assuming the surrounding lines of the same port are applied.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE_ENTRY = ("entry script: torch_npu must be imported before any NPU use (autoload only from torch_npu 2.5.1; "
                     "the project pins older torch)")
PIN_NOTE = ("DataLoader pins only when CUDA is available unless pin_memory_device is given; on NPU the pin is "
            "silently skipped (performance only; unconfirmed in knowledge base)")

# ---------------------------------------------------------------- DG-Font
E("p280_01", "dgfont/main.py", "explicit_replacement",
  "DG-Font / TUNIT main.py (argparse --gpu, mp.spawn DDP, build_model with .cuda(args.gpu))", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_ENTRY),
      C("--dist_backend', default='nccl'", "dist_backend", "replace", True,
        "parser.add_argument('--dist_backend', default='hccl', type=str, help='distributed backend')",
        "NCCL is not available on Ascend; HCCL is the collective backend (init_process_group uses this default)"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; without the rename every NPU stays visible and "
        "device_count() no longer matches --gpu"),
      C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "ngpus_per_node = torch.npu.device_count()",
        "returns 0 on an NPU host: world_size becomes 0 and mp.spawn starts no workers"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)",
        "silent no-op without CUDA; torch.manual_seed on the line above already seeds the PrivateUse1 (NPU) "
        "generator in torch 2.x (unconfirmed in knowledge base)"),
      C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", "torch.cuda.set_device raises on a host without CUDA"),
      C("net_tmp = net.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "net_tmp = net.npu(args.gpu)", "module move to CUDA fails on NPU host"),
      C("networks['inceptionNet'] = networks['inceptionNet'].cuda(args.gpu)", "tensor_to_device", "replace", True,
        "networks['inceptionNet'] = networks['inceptionNet'].npu(args.gpu)", "module move to CUDA fails"),
      C("net_tmp = net.cuda()", "tensor_to_device", "replace", True,
        "net_tmp = net.npu()", "module move to CUDA fails"),
      C("torch.cuda.set_device(args.gpu)  # single GPU, no DDP", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)  # single NPU, no DDP", "raises without CUDA"),
      C("networks[name] = net.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "networks[name] = net.npu(args.gpu)", "module move to CUDA fails"),
      C("networks[name] = torch.nn.DataParallel(net).cuda()", "distributed_framework", "replace", True,
        "networks[name] = net.npu()",
        "nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list) and .cuda() fails; single-device "
        "fallback (multi-device goes through the DDP branch)"),
      C("pin_memory=True, sampler=train_sampler, drop_last=False)", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu', sampler=train_sampler, drop_last=False)", PIN_NOTE),
      C("num_workers=0, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
        "num_workers=0, pin_memory=True, pin_memory_device='npu', drop_last=False)", PIN_NOTE),
      C("queue = queue.to(device)", "tensor_to_device", "replace", True,
        "queue = queue.to(f'npu:{device}')",
        "device is the integer args.gpu; Tensor.to(int) means a CUDA ordinal and fails on an NPU host"),
      C("x_k = x_k.cuda(device)", "tensor_to_device", "replace", True,
        "x_k = x_k.npu(device)", "tensor move to CUDA fails"),
  ])

E("p280_02", "dgfont/train/train.py", "explicit_replacement",
  "DG-Font train/train.py (trainGAN loop, .cuda(args.gpu) batches, torch.cuda.synchronize)", [
      C("x_org = x_org.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "x_org = x_org.npu(args.gpu)", "tensor move to CUDA fails"),
      C("=y_org = y_org.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "y_org = y_org.npu(args.gpu)", "tensor move to CUDA fails"),
      C("x_ref_idx = x_ref_idx.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "x_ref_idx = x_ref_idx.npu(args.gpu)", "tensor move to CUDA fails"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "torch.cuda.synchronize initialises CUDA and raises on NPU host"),
      C("mem=torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "mem=torch.npu.max_memory_allocated() / 1024.0 / 1024.0))",
        "returns 0 when CUDA was never initialised: log only"),
      C("x_org = imgs.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "x_org = imgs.npu(args.gpu, non_blocking=True)", "tensor move to CUDA fails"),
      C("y_org = y_org.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "y_org = y_org.npu(args.gpu, non_blocking=True)", "tensor move to CUDA fails"),
  ])

E("p280_03", "dgfont/validation/validation.py", "explicit_replacement",
  "DG-Font validation/validation.py (reference-guided grids, FID with InceptionV3)", [
      C("num_workers=0, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
        "num_workers=0, pin_memory=True, pin_memory_device='npu', drop_last=False)", PIN_NOTE),
      C("ones = torch.ones(1, x_each_cls[0]", "tensor_to_device", "replace", True,
        "ones = torch.ones(1, x_each_cls[0].size(1), x_each_cls[0].size(2), x_each_cls[0].size(3)).npu(args.gpu, non_blocking=True)",
        "tensor move to CUDA fails"),
      C("x_src = x_each_cls[src_idx][:args.val_batch, :, :, :].cuda(", "tensor_to_device", "replace", True,
        "x_src = x_each_cls[src_idx][:args.val_batch, :, :, :].npu(args.gpu, non_blocking=True)",
        "tensor move to CUDA fails"),
      C("x_src_rnd = x_each_cls[src_idx][rnd_idx].cuda(", "tensor_to_device", "replace", True,
        "x_src_rnd = x_each_cls[src_idx][rnd_idx].npu(args.gpu, non_blocking=True)", "tensor move to CUDA fails"),
      C("x_ref = x_each_cls[ref_idx][:args.val_batch, :, :, :].cuda(", "tensor_to_device", "replace", True,
        "x_ref = x_each_cls[ref_idx][:args.val_batch, :, :, :].npu(args.gpu, non_blocking=True)",
        "tensor move to CUDA fails"),
      C("x_ref_rnd = x_each_cls[ref_idx][rnd_idx].cuda(", "tensor_to_device", "replace", True,
        "x_ref_rnd = x_each_cls[ref_idx][rnd_idx].npu(args.gpu, non_blocking=True)", "tensor move to CUDA fails"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "no-op when CUDA is not initialised; NPU cache is simply not released"),
      C("x_real = x_each_cls[cls_idx].cuda(", "tensor_to_device", "replace", True,
        "x_real = x_each_cls[cls_idx].npu(args.gpu, non_blocking=True)", "tensor move to CUDA fails"),
      C("x_src = x_each_cls[src_cls][:x_real.size(0)].cuda(", "tensor_to_device", "replace", True,
        "x_src = x_each_cls[src_cls][:x_real.size(0)].npu(args.gpu, non_blocking=True)",
        "tensor move to CUDA fails"),
  ])

E("p280_04", "dgfont/models/DCNv2/setup.py", "kernel_rewrite",
  "DCNv2 (CharlesShang) setup.py vendored by DG-Font: CUDAExtension '_ext' built with nvcc", [
      C("raise NotImplementedError('Cuda is not available')", "custom_cuda_extension", "replace", True,
        "return []  # NPU: deformable conv comes from torch_npu.npu_deformable_conv2d, nothing to compile",
        "on an NPU host there is no CUDA/nvcc, so the build aborts here; the NPU port drops the _ext build "
        "because dcn_v2.py calls the torch_npu deformable-conv op instead"),
  ])

E("p280_05", "dgfont/models/DCNv2/dcn_v2.py", "kernel_rewrite",
  "DCNv2 dcn_v2.py (_DCNv2 autograd Function over the compiled _ext, DCN module with offset-mask conv)", [
      C("import _ext as _backend", "custom_cuda_extension", "replace", True,
        "import torch_npu",
        "the nvcc-built _ext module does not exist on NPU; the kernels are replaced by torch_npu ops"),
      C("output = _backend.dcn_v2_forward(", "custom_cuda_extension", "replace", True,
        "output, offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat([offset[:, 1::2], offset[:, 0::2], mask], 1), bias, kernel_size=ctx.kernel_size, stride=[1, 1, *ctx.stride], padding=[ctx.padding[0]] * 2 + [ctx.padding[1]] * 2, dilation=[1, 1, *ctx.dilation], deformable_groups=ctx.deformable_groups, modulated=True)",
        "CUDA kernel call; NPU op expects offsets as [x-offsets, y-offsets, mask] (DCNv2 interleaves y,x) and "
        "4-element NCHW stride/padding lists"),
      C("grad_input, grad_offset, grad_mask, grad_weight, grad_bias = _backend.dcn_v2_backward(", "custom_cuda_extension",
        "replace", True,
        "grad_input, grad_weight, grad_offset_mask, grad_bias = torch_npu.npu_deformable_conv2dbk(input, grad_output, offset_out, weight, offset_mask, kernel_size=ctx.kernel_size, stride=ctx.npu_stride, padding=ctx.npu_padding, dilation=ctx.npu_dilation, deformable_groups=ctx.deformable_groups, modulated=True)",
        "CUDA backward kernel; NPU has the matching npu_deformable_conv2dbk (offset/mask grads come back fused "
        "and must be split back into DCNv2's layout)"),
      C('def check_dcn_on_gpu(device="cuda"):', "device_type", "replace", True,
        'def check_dcn_on_gpu(device="npu"):', "default device string is CUDA; the sanity check fails when invoked"),
  ])

E("p280_06", "dgfont/models/generator.py", "explicit_replacement",
  "DG-Font models/generator.py (content encoder, FDSC deformable skips, AdaIN decoder) — device-agnostic", [])

E("p280_07", "dgfont/tools/utils.py", "explicit_replacement",
  "DG-Font / TUNIT tools/utils.py (Logger, checkpoints, nvidia-smi helper, timing, env dump)", [
      C("'nvidia-smi', '--query-gpu=memory.used',", "torch_cuda_api", "replace", False,
        "'npu-smi', 'info', '-t', 'usages', '-i', '0',",
        "nvidia-smi does not exist on an Ascend host; the only caller catches OSError and falls back to '0', "
        "so this is a degraded feature, not a failure (npu-smi output format also needs a new parser)"),
      C("total = torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", "replace", False,
        "total = torch.npu.get_device_properties(0).total_memory // (1024 * 1024)",
        "unreachable on NPU host while the nvidia-smi query fails; ported together with it "
        "(NPU properties do have total_memory)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "Timer defaults to cuda_sync=True; torch.cuda.synchronize raises on NPU host"),
      C("torch.cuda.synchronize()  # wait for queued kernels", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for queued kernels before reading the clock",
        "same as __enter__; also NPU ops are async so the sync is needed for correct timings"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():", "env dump only: reports 'no GPU found' on NPU host"),
      C("lines.append('cuda {} / cudnn {}'", "torch_cuda_api", "replace", False,
        "lines.append('torch_npu {}'.format(torch_npu.__version__))",
        "CUDA/cuDNN versions are meaningless on NPU (log only)"),
      C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
        "for i in range(torch.npu.device_count()):", "log only"),
      C("torch.cuda.get_device_name(i)", "torch_cuda_api", "replace", False,
        "lines.append('  [{}] {}'.format(i, torch.npu.get_device_name(i)))", "log only"),
  ])

E("p280_08", "dgfont/run.sh", "explicit_replacement",
  "DG-Font run script (python main.py --gpu 0,1,2,3 --ddp, CUDA_VISIBLE_DEVICES for test)", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (library paths, ASCEND_* vars) must be sourced before torch_npu can load"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL_* is ignored on Ascend; CANN/HCCL logging is controlled by ASCEND_GLOBAL_LOG_LEVEL (no-op otherwise)"),
      C("CUDA_VISIBLE_DEVICES=${GPUS%%,*} python test.py", "env_var", "replace", True,
        'ASCEND_RT_VISIBLE_DEVICES=${GPUS%%,*} python test.py --data_path "$DATA" \\',
        "CUDA_VISIBLE_DEVICES is ignored: the test would not be pinned to the requested device"),
      C("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info",
        "nvidia-smi is absent on an Ascend host; under `set -e` the script exits 127 after the run"),
  ])

E("p280_09", "dgfont/environment.yml", "explicit_replacement",
  "DG-Font conda environment (pytorch 1.7.1 + cudatoolkit 10.1 from the pytorch channel)", [
      C("- pytorch=1.7.1", "import_torch_npu", "replace", True,
        "- pytorch=2.1.0",
        "torch_npu has no build for torch 1.7.1; torch must equal the torch_npu wheel version"),
      C("- torchvision=0.8.2", "import_torch_npu", "replace", True,
        "- torchvision=0.16.0", "must follow the torch version bump (0.16 pairs with torch 2.1)"),
      C("- cudatoolkit=10.1", "import_torch_npu", "replace", True,
        "- cpuonly",
        "CUDA runtime package: unavailable for aarch64 and pulls CUDA torch builds; torch_npu needs CPU torch"),
      C("- pytorch-fid==0.1.1", "import_torch_npu", "npu_only_addition", True,
        "- torch-npu==2.1.0.post12", "the Ascend adapter itself, pinned to the torch version"),
  ])

# ---------------------------------------------------------------- CF-Font
E("p280_10", "cffont/cal_cf_weight.py", "explicit_replacement",
  "CF-Font cal_cf_weight.py (content-fusion weights of fonts w.r.t. basis fonts)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_ENTRY),
      C("map_location=lambda storage, loc: storage.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.model_path, map_location='cpu')",
        "map_location callback moves every storage to CUDA: fails on NPU host"),
      C("return enc.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "return enc.npu(args.gpu)", "module move to CUDA fails"),
      C("x = imgs[i:i + batch].cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "x = imgs[i:i + batch].npu(gpu, non_blocking=True)", "tensor move to CUDA fails"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", "raises without CUDA"),
      C("all_w = torch.cuda.FloatTensor(len(fonts), len(basis)).zero_()", "torch_cuda_api", "replace", True,
        "all_w = torch.zeros(len(fonts), len(basis), device='npu:{}'.format(args.gpu))",
        "legacy CUDA tensor type constructor fails without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op on NPU host; memory housekeeping only"),
  ])

E("p280_11", "cffont/scripts/train_cf.sh", "explicit_replacement",
  "CF-Font three-stage training script (DG-Font pretrain, CF weights, CF finetune)", [
      C("=CF_NAME=CF_finetune", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment must be sourced before torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=$GPUS", "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL workaround for consumer GPUs; meaningless (ignored) under HCCL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only switch, ignored under HCCL"),
      C("--dist_backend nccl", "dist_backend", "replace", True,
        "--basis_list $BASIS --pcl --w_pcl 0.1 --dist_backend hccl",
        "explicit nccl backend passed to init_process_group fails on Ascend"),
  ])

E("p280_12", "cffont/tools/ops.py", "explicit_replacement",
  "DG-Font / CF-Font tools/ops.py (gradient penalty, contrastive loss, queue, all-reduce helpers)", [
      C("alpha = torch.rand(x_real.size(0), 1, 1, 1).cuda(gpu)", "tensor_to_device", "replace", True,
        "alpha = torch.rand(x_real.size(0), 1, 1, 1, device=x_real.device)", "tensor move to CUDA fails"),
      C("zeros = torch.zeros(N, dtype=torch.long).cuda(args.gpu)", "tensor_to_device", "replace", True,
        "zeros = torch.zeros(N, dtype=torch.long).npu(args.gpu)", "tensor move to CUDA fails"),
      C("queue = queue.to(device)", "tensor_to_device", "replace", True,
        "queue = queue.to(f'npu:{device}')",
        "callers pass the integer args.gpu; Tensor.to(int) targets a CUDA ordinal"),
      C("x_k = x_k.cuda(device)", "tensor_to_device", "replace", True,
        "x_k = x_k.npu(device)", "tensor move to CUDA fails"),
      C("device='cuda:{}'.format(args.gpu)", "device_type", "replace", True,
        "t = torch.tensor([value], dtype=torch.float32, device='npu:{}'.format(args.gpu))",
        "CUDA device string fails on NPU host"),
  ])

# ---------------------------------------------------------------- FontDiffuser
E("p280_13", "fontdiffuser/train.py", "device_branch_or_abstraction",
  "FontDiffuser train.py (accelerate Accelerator, fp16, xformers switch, 8-bit Adam option)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "accelerate (>=0.22) imports torch_npu itself when it detects an NPU; explicit import recommended "
        "but not strictly needed (unconfirmed for this accelerate version)"),
      C('with torch.autocast("cuda"):', "amp", "replace", False,
        'with torch.autocast(accelerator.device.type):',
        "autocast('cuda') is disabled (with a warning) when CUDA is unavailable; validation then runs in fp32 "
        "— slower, not wrong, since the accelerate-wrapped forward already autocasts"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op on NPU host"),
      C('unet.load_state_dict(torch.load(f"{args.phase_1_ckpt_dir}/unet.pth"))', "device_type", "replace", True,
        'unet.load_state_dict(torch.load(f"{args.phase_1_ckpt_dir}/unet.pth", map_location="cpu"))',
        "phase-1 checkpoints saved from a CUDA run hold CUDA storages; torch.load without map_location raises "
        "on a host without CUDA"),
      C('style_encoder.load_state_dict(torch.load(f"{args.phase_1_ckpt_dir}/style_encoder.pth"))', "device_type",
        "replace", True,
        'style_encoder.load_state_dict(torch.load(f"{args.phase_1_ckpt_dir}/style_encoder.pth", map_location="cpu"))',
        "CUDA-saved checkpoint without map_location"),
      C('content_encoder.load_state_dict(torch.load(f"{args.phase_1_ckpt_dir}/content_encoder.pth"))', "device_type",
        "replace", True,
        'content_encoder.load_state_dict(torch.load(f"{args.phase_1_ckpt_dir}/content_encoder.pth", map_location="cpu"))',
        "CUDA-saved checkpoint without map_location"),
      C("model.unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", True,
        "logger.warning('xformers is not available on Ascend NPU; using the default attention path')",
        "the shipped launch script passes --enable_xformers_memory_efficient_attention; xformers has no NPU "
        "backend so this raises"),
      C("num_workers=args.dataloader_num_workers, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=args.dataloader_num_workers, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
      C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", True,
        "optimizer_class = torch_npu.optim.NpuFusedAdamW  # bitsandbytes 8-bit Adam has no NPU kernels",
        "bitsandbytes 8-bit optimizers are CUDA-only (NPU support in bnb covers NF4 quantization only)"),
      C('f"max_mem = {torch.cuda.max_memory_allocated() / 2**30:.1f}G")', "torch_cuda_api", "replace", False,
        'f"max_mem = {torch.npu.max_memory_allocated() / 2**30:.1f}G")', "returns 0 on NPU host: log only"),
  ])

E("p280_14", "fontdiffuser/sample.py", "explicit_replacement",
  "FontDiffuser sample.py (DPM-Solver++ sampling, --device cuda:0)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_ENTRY),
      C('parser.add_argument("--device", type=str, default="cuda:0")', "device_type", "replace", True,
        'parser.add_argument("--device", type=str, default="npu:0")', "default device string is CUDA"),
      C('unet.load_state_dict(torch.load(f"{args.ckpt_dir}/unet.pth"))', "device_type", "replace", True,
        'unet.load_state_dict(torch.load(f"{args.ckpt_dir}/unet.pth", map_location="cpu"))',
        "released checkpoints were saved from CUDA tensors; torch.load without map_location raises without CUDA"),
      C('style_encoder.load_state_dict(torch.load(f"{args.ckpt_dir}/style_encoder.pth"))', "device_type", "replace",
        True, 'style_encoder.load_state_dict(torch.load(f"{args.ckpt_dir}/style_encoder.pth", map_location="cpu"))',
        "CUDA-saved checkpoint without map_location"),
      C('content_encoder.load_state_dict(torch.load(f"{args.ckpt_dir}/content_encoder.pth"))', "device_type",
        "replace", True,
        'content_encoder.load_state_dict(torch.load(f"{args.ckpt_dir}/content_encoder.pth", map_location="cpu"))',
        "CUDA-saved checkpoint without map_location"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "raises on NPU host"),
  ])

E("p280_15", "fontdiffuser/src/modules/attention.py", "explicit_replacement",
  "FontDiffuser src/modules/attention.py (diffusers-0.10-era SpatialTransformer / CrossAttention with xformers switch, GEGLU)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "only needed for the optional npu_geglu fusion below"),
      C("hidden_states = xformers.ops.memory_efficient_attention(query, key, value, attn_bias=None)",
        "attention_kernel", "replace", False,
        "hidden_states = F.scaled_dot_product_attention(query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)).squeeze(1)",
        "xformers has no NPU backend; route the memory-efficient path to SDPA (NPU FlashAttention inside). "
        "Not required: unreachable on NPU because the xformers switch cannot be enabled there"),
      C("hidden_states, gate = self.proj(hidden_states).chunk(2, dim=-1)", "npu_fused_op", "add_branch", False,
        'if hidden_states.device.type == "npu": return torch_npu.npu_geglu(self.proj(hidden_states), dim=-1, approximate=0)[0]',
        "performance: fused GEGLU kernel (as diffusers does on NPU); approximate=0 keeps exact-erf GELU"),
  ])

E("p280_16", "fontdiffuser/src/dpm_solver/pipeline_dpm_solver.py", "explicit_replacement",
  "FontDiffuser src/dpm_solver/pipeline_dpm_solver.py (+ batched evaluation helper)", [
      C('generator = torch.Generator(device="cuda").manual_seed(seed)', "device_type", "replace", True,
        "generator = torch.Generator(device=device).manual_seed(seed)",
        "creating a CUDA generator raises on NPU host (and must match x_T's device)"),
      C("with torch.cuda.amp.autocast(enabled=use_fp16):", "amp", "replace", False,
        "with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_fp16):",
        "CUDA autocast silently disables itself without CUDA: fp32 inference, correct but slower"),
  ])

E("p280_17", "fontdiffuser/app.py", "explicit_replacement",
  "FontDiffuser gradio demo app.py (args.device='cuda', fp16 capability check, optional torch.compile)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "recommended; sample.py (imported below) already carries the import after its port"),
      C("major, minor = torch.cuda.get_device_capability(0)", "device_capability_check", "add_branch", True,
        'if args.device.startswith("npu"): return torch.float16',
        "raises without CUDA; on NPU get_device_capability returns None (unpack fails); Ascend runs fp16 natively"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():", "status banner only: shows 'CPU mode' on NPU host"),
      C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", False,
        "free, total = torch.npu.mem_get_info()", "status banner only"),
      C("name = torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", "replace", False,
        "name = torch.npu.get_device_name(torch.npu.current_device())", "status banner only"),
      C("args.device = 'cuda'", "device_type", "replace", True,
        "args.device = 'npu'", "hard-coded CUDA device for the whole pipeline"),
      C('mode="reduce-overhead"', "compile_mode", "replace", False,
        'pipe.model.unet = torch.compile(pipe.model.unet, backend="npugraphs", fullgraph=False)',
        "reduce-overhead relies on CUDA graphs; NPU analogue is backend='npugraphs' (inference only). "
        "Optional flag; behaviour of mode='reduce-overhead' on NPU unconfirmed"),
  ])

E("p280_18", "fontdiffuser/requirements.txt", "explicit_replacement",
  "FontDiffuser requirements.txt (cu118 wheel index, xformers, bitsandbytes)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "pip would prefer torch 2.1.0+cu118 from this index; torch_npu needs the CPU (x86) / plain PyPI (aarch64) build"),
      C("=torchvision==0.16.0", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post12", "the Ascend adapter pinned to torch 2.1.0"),
      C("xformers==0.0.22.post7", "attention_kernel", "removal", True, None,
        "CUDA-only package (no NPU backend); its wheel is a CUDA build and pins its own torch"),
      C("bitsandbytes==0.41.1", "fused_optimizer", "removal", False, None,
        "installs, but its 8-bit optimizers cannot run on NPU; only used with --use_8bit_adam"),
  ])

E("p280_19", "fontdiffuser/scripts/train_phase_1.sh", "explicit_replacement",
  "FontDiffuser phase-1 launch script (accelerate launch --multi_gpu, fp16)", [
      C("# Tested on 4x A100-80G", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment must be sourced before torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3", "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=1", "NCCL_DEBUG has no effect under HCCL"),
      C("export TORCH_CUDNN_V8_API_ENABLED=1", "env_var", "removal", False, None, "cuDNN-only switch, ignored on NPU"),
  ])

E("p280_20", "fontdiffuser/configs/accelerate_default.yaml", "device_branch_or_abstraction",
  "accelerate config for FontDiffuser (MULTI_GPU, fp16)", [
      C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False,
        "distributed_type: MULTI_NPU",
        "accelerate has a MULTI_NPU distributed type; whether MULTI_GPU is auto-corrected on an NPU host is "
        "unconfirmed"),
  ])

E("p280_21", "fontdiffuser/Dockerfile", "explicit_replacement",
  "FontDiffuser Dockerfile (nvidia/cuda base, cu118 torch wheels)", [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
        "CUDA base image; the container needs CANN (and the host driver mounted via Ascend docker runtime); "
        "exact CANN image tag is a placeholder"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container-runtime variable; Ascend uses ASCEND_VISIBLE_DEVICES set by its own runtime"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container-runtime variable, ignored"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "only affects nvcc extension builds"),
      C("RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url", "import_torch_npu", "replace",
        True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
        "installs CUDA torch wheels; needs CPU torch + matching torch-npu"),
  ])

# ---------------------------------------------------------------- MX-Font / LF-Font
E("p280_22", "mxfont/train.py", "explicit_replacement",
  "MX-Font train.py (sconf Config, cfg.use_ddp with mp.spawn, .cuda() models)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_ENTRY),
      C('dist.init_process_group(backend="nccl", rank=gpu, world_size=world_size)', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", rank=gpu, world_size=world_size)', "NCCL unavailable on Ascend"),
      C("torch.cuda.set_device(ddp_gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(max(ddp_gpu, 0))",
        "raises without CUDA (non-DDP path passes -1, which CUDA silently ignores)"),
      C("=gen.cuda()", "tensor_to_device", "replace", True, "gen.npu()", "module move to CUDA fails"),
      C("=disc.cuda()", "tensor_to_device", "replace", True, "disc.npu()", "module move to CUDA fails"),
      C("=aux_clf.cuda()", "tensor_to_device", "replace", True, "aux_clf.npu()", "module move to CUDA fails"),
      C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "ngpus_per_node = torch.npu.device_count()", "returns 0 on NPU host: mp.spawn starts nothing"),
  ])

E("p280_23", "mxfont/trainer/base_trainer.py", "explicit_replacement",
  "MX-Font trainer/base_trainer.py (EMA generator, optional apex amp, checkpointing)", [
      C("from apex import amp", "amp", "replace", False,
        "from apex import amp  # Ascend apex (NPU patch) or switch to torch.npu.amp",
        "guarded import, only used when cfg.use_half; NVIDIA apex's CUDA build does not install on NPU — "
        "Ascend's patched apex keeps amp.initialize/scale_loss"),
      C("mem=torch.cuda.max_memory_allocated() / 1e9))", "torch_cuda_api", "replace", False,
        "mem=torch.npu.max_memory_allocated() / 1e9))", "returns 0 on NPU host: log only"),
  ])

E("p280_24", "mxfont/trainer/fact_trainer.py", "explicit_replacement",
  "MX-Font trainer/fact_trainer.py (batch['...'].cuda() per field, HSIC independence losses)", [
      C('def to_batch(batch, keys, device="cuda"):', "device_type", "replace", True,
        'def to_batch(batch, keys, device="npu"):', "default device string is CUDA; any call with the default fails"),
      C('style_imgs = batch["style_imgs"].cuda()', "tensor_to_device", "replace", True,
        'style_imgs = batch["style_imgs"].npu()', "tensor move to CUDA fails"),
      C('style_fids = batch["style_fids"].cuda()', "tensor_to_device", "replace", True,
        'style_fids = batch["style_fids"].npu()', "tensor move to CUDA fails"),
      C('char_imgs = batch["char_imgs"].cuda()', "tensor_to_device", "replace", True,
        'char_imgs = batch["char_imgs"].npu()', "tensor move to CUDA fails"),
      C('char_fids = batch["char_fids"].cuda()', "tensor_to_device", "replace", True,
        'char_fids = batch["char_fids"].npu()', "tensor move to CUDA fails"),
      C('trg_imgs = batch["trg_imgs"].cuda()', "tensor_to_device", "replace", True,
        'trg_imgs = batch["trg_imgs"].npu()', "tensor move to CUDA fails"),
      C('trg_fids = batch["trg_fids"].cuda()', "tensor_to_device", "replace", True,
        'trg_fids = batch["trg_fids"].npu()', "tensor move to CUDA fails"),
      C('trg_cids = batch["trg_cids"].cuda()', "tensor_to_device", "replace", True,
        'trg_cids = batch["trg_cids"].npu()', "tensor move to CUDA fails"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "raises on NPU host"),
      C("torch.cuda.max_memory_allocated() / 1000 / 1000,", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1000 / 1000,", "log only (0 on NPU host)"),
      C("torch.cuda.max_memory_cached() / 1000 / 1000)", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_reserved() / 1000 / 1000)", "log only"),
      C("tgt_ids = torch.LongTensor(np.concatenate(", "tensor_to_device", "replace", True,
        "tgt_ids = torch.LongTensor(np.concatenate([comp_ids[i][cids[i]] for i in range(B)])).to(ac_logit_c_flat.device)",
        "tensor move to CUDA fails"),
  ])

E("p280_25", "lffont/evaluator/evaluator.py", "explicit_replacement",
  "LF-Font evaluator/evaluator.py (comparable grids, SSIM/MS-SSIM, eval_ckpt)", [
      C("self.ssim = SSIM(window_size=11, size_average=True).cuda()", "tensor_to_device", "replace", True,
        "self.ssim = SSIM(window_size=11, size_average=True).npu()", "module move to CUDA fails"),
      C("self.msssim = MSSSIM(weights=[0.45, 0.3, 0.25], window_size=11, size_average=True).cuda()",
        "tensor_to_device", "replace", True,
        "self.msssim = MSSSIM(weights=[0.45, 0.3, 0.25], window_size=11, size_average=True).npu()",
        "module move to CUDA fails"),
      C("in_imgs = in_imgs.cuda()", "tensor_to_device", "replace", True, "in_imgs = in_imgs.npu()",
        "tensor move to CUDA fails"),
      C("content_imgs = content_imgs.cuda()", "tensor_to_device", "replace", True,
        "content_imgs = content_imgs.npu()", "tensor move to CUDA fails"),
      C("trg_imgs = trg_imgs.cuda()", "tensor_to_device", "replace", True, "trg_imgs = trg_imgs.npu()",
        "tensor move to CUDA fails"),
      C("out = gen.infer(in_style_ids.cuda(), in_comp_ids.cuda(), in_imgs,", "tensor_to_device", "replace", True,
        "out = gen.infer(in_style_ids.npu(), in_comp_ids.npu(), in_imgs,", "tensor move to CUDA fails"),
      C("trg_style_ids.cuda(), trg_comp_ids.cuda(), content_imgs,", "tensor_to_device", "replace", True,
        "trg_style_ids.npu(), trg_comp_ids.npu(), content_imgs,", "tensor move to CUDA fails"),
      C("gen = Generator(1, cfg.C, 1, **g_kwargs).cuda()", "tensor_to_device", "replace", True,
        "gen = Generator(1, cfg.C, 1, **g_kwargs).npu()", "module move to CUDA fails"),
      C("weight = torch.load(args.weight)", "device_type", "replace", True,
        "weight = torch.load(args.weight, map_location='cpu')",
        "checkpoints written by GPU training hold CUDA storages; torch.load without map_location raises on NPU host"),
  ])

E("p280_26", "mxfont/eval.py", "explicit_replacement",
  "MX-Font eval.py (load generator_ema, gen_from_style_char over the test loader)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_ENTRY),
      C("gen = Generator(1, cfg.C, 1, **g_kwargs).cuda()", "tensor_to_device", "replace", True,
        "gen = Generator(1, cfg.C, 1, **g_kwargs).npu()", "module move to CUDA fails"),
      C('weight = torch.load(args.weight, map_location="cuda:0")', "device_type", "replace", True,
        'weight = torch.load(args.weight, map_location="npu:0")', "CUDA map_location fails on NPU host"),
      C('style_imgs = batch["ref_imgs"].cuda()', "tensor_to_device", "replace", True,
        'style_imgs = batch["ref_imgs"].npu()', "tensor move to CUDA fails"),
      C('char_imgs = batch["source_imgs"].unsqueeze(1).cuda()', "tensor_to_device", "replace", True,
        'char_imgs = batch["source_imgs"].unsqueeze(1).npu()', "tensor move to CUDA fails"),
      C('def gen_one(gen, ref_paths, source_path, device="cuda"):', "device_type", "replace", True,
        'def gen_one(gen, ref_paths, source_path, device="npu"):', "default device string is CUDA"),
  ])

E("p280_27", "mxfont/requirements.txt", "explicit_replacement",
  "MX-Font / LF-Font requirements.txt (torch 1.8.1+cu102 from torch_stable)", [
      C("torch==1.8.1+cu102", "import_torch_npu", "replace", True, "torch==2.1.0",
        "+cu102 local version is a CUDA build; torch must be a CPU/aarch64 build equal to the torch-npu version "
        "(1.8.1 adapters are end-of-life)"),
      C("torchvision==0.9.1+cu102", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "CUDA build; must follow the torch version"),
      C("sconf>=0.2.3", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the Ascend adapter pin (placed after the torch block)"),
  ])

# ---------------------------------------------------------------- handwriting synthesis
E("p280_28", "hwsynth/model.py", "explicit_replacement",
  "PyTorch handwriting-synthesis RNN (Graves 2013) with module-level use_cuda / torch.cuda.FloatTensor", [
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()",
        "False on an NPU host: the whole model silently trains/samples on CPU"),
      C("FloatTensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor", "torch_cuda_api", "replace", True,
        "FloatTensor = torch.npu.FloatTensor if use_cuda else torch.FloatTensor",
        "legacy CUDA tensor type used with .type(); fails once use_cuda is true on NPU"),
      C("LongTensor = torch.cuda.LongTensor if use_cuda else torch.LongTensor", "torch_cuda_api", "replace", True,
        "LongTensor = torch.npu.LongTensor if use_cuda else torch.LongTensor", "legacy CUDA tensor type"),
      C("h2 = torch.zeros(1, batch_size, self.hidden_size).cuda() if use_cuda", "tensor_to_device", "replace", True,
        "h2 = torch.zeros(1, batch_size, self.hidden_size).npu() if use_cuda else torch.zeros(1, batch_size, self.hidden_size)",
        "tensor move to CUDA fails"),
      C("packed = pack_padded_sequence(inp2, stroke_lengths, batch_first=True, enforce_sorted=False)",
        "unsupported_op_workaround", "replace", False,
        "out2, hid2 = self.lstm2(inp2, hid2)  # NPU: no packing, padded steps are masked in mdn_loss",
        "pack_padded_sequence/pad_packed_sequence are ✘ in Ascend's 2.7.1 list and flagged by msFmkTransplt, "
        "although aten _pack_padded_sequence has an NPU kernel — actual failure unconfirmed"),
  ])

E("p280_29", "hwsynth/train.py", "explicit_replacement",
  "handwriting-synthesis train.py (use_cuda flag, nn.DataParallel option, torch.cuda.manual_seed)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_ENTRY),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True,
        "torch.npu.manual_seed(seed)",
        "silently queued and never applied without CUDA; nothing else seeds the device RNG here, so runs stop "
        "being reproducible"),
      C('device = torch.device(cfg.get("device", "cuda:0") if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device(cfg.get("device", "npu:0") if use_cuda else "cpu")', "default device string is CUDA"),
      C("pin_memory=use_cuda, drop_last=True)", "pin_memory", "replace", False,
        "pin_memory=use_cuda, pin_memory_device='npu', drop_last=True)", PIN_NOTE),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "module move to CUDA fails"),
      C("if args.multi_gpu and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
        "if args.multi_gpu and torch.npu.device_count() > 1:",
        "returns 0 on NPU host so the branch is silently skipped; ported together with the DataParallel change"),
      C('print("Using", torch.cuda.device_count(), "GPUs")', "torch_cuda_api", "replace", False,
        'print("Using", torch.npu.device_count(), "NPUs")', "log only"),
      C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
        "raise SystemExit('nn.DataParallel is not supported on Ascend; launch with torchrun and DDP instead')",
        "nn.DataParallel is ✘ on Ascend (use DDP)"),
      C("strokes = strokes.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "strokes = strokes.npu(non_blocking=True)", "tensor move to CUDA fails"),
      C("chars = chars.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "chars = chars.npu(non_blocking=True)", "tensor move to CUDA fails"),
      C("chars_mask = chars_mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "chars_mask = chars_mask.npu(non_blocking=True)", "tensor move to CUDA fails"),
      C("strokes_mask = strokes_mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "strokes_mask = strokes_mask.npu(non_blocking=True)", "tensor move to CUDA fails"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op on NPU host"),
  ])

E("p280_30", "hwsynth/generate.py", "device_branch_or_abstraction",
  "handwriting-synthesis generate.py (device string chosen once, priming)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_ENTRY),
      C('device = "cuda" if torch.cuda.is_available() and not args.cpu else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() and not args.cpu else "cpu"',
        "picks CPU on an NPU host; worse, model.py's FloatTensor then points at NPU while the model sits on CPU"),
  ])

E("p280_31", "hwsynth/configs/train.json", "explicit_replacement",
  "handwriting-synthesis JSON training config", [
      C('"device": "cuda:0",', "device_type", "replace", True, '"device": "npu:0",',
        "config value fed to torch.device(...) in train.py"),
  ])

E("p280_32", "lffont/models/memory.py", "explicit_replacement",
  "LF-Font models/memory.py (dynamic + persistent component memory)", [
      C("addrs = torch.LongTensor(comp_addrs).cuda()", "tensor_to_device", "replace", True,
        "addrs = torch.LongTensor(comp_addrs).to(saved_char_feats.device)", "tensor move to CUDA fails"),
      C("mem_feats = self.persistent_memory.read(torch.LongTensor(comp_addrs).cuda())", "tensor_to_device",
        "replace", True,
        "mem_feats = self.persistent_memory.read(torch.LongTensor(comp_addrs).to(self.persistent_memory.bias.device))",
        "tensor move to CUDA fails"),
  ])
