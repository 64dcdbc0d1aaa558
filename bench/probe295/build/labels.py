# Labels for probe295 (image watermarking / steganography, CUDA -> Ascend NPU).
# One label per line a careful porter would edit; see README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
LOAD_NOTE = ("torch.load without map_location restores the CUDA storages of a GPU-trained checkpoint; "
             "on an NPU host with a CPU/NPU torch build this raises 'Attempting to deserialize object on a CUDA device'")
SEED_NOTE = ("torch.cuda seeding is lazy and silently does nothing without CUDA; torch.manual_seed already seeds "
             "the NPU generator, so only for parity")
AMP_NOTE = ("CUDA autocast on a host without CUDA is disabled with a warning, so the requested mixed precision is "
            "silently dropped (fp32 run, different memory/numerics)")
SCALER_NOTE = ("torch.cuda.amp.GradScaler disables itself when CUDA is unavailable; paired with NPU autocast the "
               "fp16 gradients would go unscaled")

# ---------------------------------------------------------------- HiDDeN
E("hidden_main", "HiDDeN/main.py", "explicit_replacement",
  "ando-khachatryan/HiDDeN main.py (argparse 'new'/'continue' launcher)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script: register the NPU backend before any device is created"),
      C("=device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
        "add_branch", True,
        "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
        "torch.cuda.is_available() is False on an Ascend host, so training silently runs on the CPU"),
  ])

E("hidden_model", "HiDDeN/model/hidden.py", "explicit_replacement",
  "HiDDeN model/hidden.py (encoder-decoder + discriminator wrapper, fp16 fork)", [
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)", SCALER_NOTE + " (with --enable-fp16)"),
      C("# D on cover", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=self.use_amp):  # D on cover", AMP_NOTE + " (with --enable-fp16)"),
      C("# D on encoded", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=self.use_amp):  # D on encoded", AMP_NOTE),
      C("# G step", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=self.use_amp):  # G step", AMP_NOTE),
  ])

E("hidden_jpeg", "HiDDeN/noise_layers/jpeg_compression.py", "explicit_replacement",
  "HiDDeN noise_layers/jpeg_compression.py + quantization (JPEG-Mask / Fourier rounding)", [
      C("            device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')",
        "device_type", "add_branch", True,
        "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
        "fallback when Quantization() is built without a device: picks the CPU on NPU hosts, then the weights "
        "and the NPU images are on different devices at forward time"),
  ])

E("hidden_utils", "HiDDeN/utils.py", "explicit_replacement",
  "HiDDeN utils.py (checkpoints, loaders, logging)", [
      C("checkpoint = torch.load(last_checkpoint_file)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(last_checkpoint_file, map_location='cpu')", LOAD_NOTE + " ('continue' runs)"),
      C("if device.type != 'cuda':", "device_type", "replace", False,
        "if device.type != 'npu':",
        "memory summary is logging only; unchanged it just prints n/a on NPU"),
      C("allocated = torch.cuda.memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", False,
        "allocated = torch.npu.memory_allocated(device) / 2 ** 20",
        "must change together with the device.type guard (torch.cuda.* rejects an npu device); logging only"),
      C("peak = torch.cuda.max_memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated(device) / 2 ** 20", "logging only, see guard"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", False,
        "torch.npu.reset_peak_memory_stats(device)", "logging only, see guard"),
  ])

E("hidden_test", "HiDDeN/test_model.py", "explicit_replacement",
  "HiDDeN test_model.py (watermark one image with a trained checkpoint)", [
      C("=import torch.nn", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script"),
      C("if torch.has_cuda:", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "torch.has_cuda is False for the CPU torch build used with torch_npu: silently runs on CPU"),
      C("=device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "CUDA device string"),
      C("checkpoint = torch.load(args.checkpoint_file)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.checkpoint_file, map_location='cpu')", LOAD_NOTE),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", False,
        "start = torch.npu.Event(enable_timing=True)",
        "optional --benchmark path, only reached once the device.type guard is ported"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", False,
        "end = torch.npu.Event(enable_timing=True)", "optional --benchmark path"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "optional --benchmark path"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(device)",
        "optional --benchmark path"),
      C("if args.benchmark and device.type == 'cuda':", "device_type", "replace", False,
        "if args.benchmark and device.type == 'npu':",
        "unchanged, --benchmark is silently skipped on NPU; diagnostics only"),
  ])

# ---------------------------------------------------------------- StegaStamp (PyTorch port)
E("stegastamp_train", "StegaStamp-pytorch/train.py", "explicit_replacement",
  "StegaStamp PyTorch port train.py (yaml config, args.cuda guards, tensorboardX)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
        "--gpu selection is silently ignored by the Ascend runtime; every run lands on device 0"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        SEED_NOTE),
      C("num_workers=4, pin_memory=True,", "pin_memory", "replace", False,
        "dataloader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True, pin_memory_device='npu',",
        "without CUDA the DataLoader drops pinning silently; perf only, pin_memory_device='npu' unconfirmed"),
      C("encoder = encoder.cuda()", "tensor_to_device", "replace", True, "encoder = encoder.npu()",
        ".cuda() fails on a torch build without CUDA"),
      C("decoder = decoder.cuda()", "tensor_to_device", "replace", True, "decoder = decoder.npu()", ".cuda()"),
      C("discriminator = discriminator.cuda()", "tensor_to_device", "replace", True,
        "discriminator = discriminator.npu()", ".cuda()"),
      C("lpips_alex.cuda()", "tensor_to_device", "replace", True, "lpips_alex.npu()", ".cuda()"),
      C("print('Using GPU: {}'.format(torch.cuda.get_device_name(0)))", "torch_cuda_api", "replace", True,
        "print('Using NPU: {}'.format(torch.npu.get_device_name(0)))",
        "torch.cuda.get_device_name initialises CUDA and raises"),
      C("image_input = image_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "image_input = image_input.npu(non_blocking=True)", ".cuda()"),
      C("secret_input = secret_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "secret_input = secret_input.npu(non_blocking=True)", ".cuda()"),
      C("Ms = Ms.cuda()", "tensor_to_device", "replace", True, "Ms = Ms.npu()", ".cuda()"),
      C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / 1024 ** 3",
        "returns 0 without CUDA: a wrong tensorboard scalar, nothing else"),
  ])

E("stegastamp_model", "StegaStamp-pytorch/model.py", "explicit_replacement",
  "StegaStamp PyTorch port model.py (encoder/decoder/STN, transform_net, build_model)", [
      C("f = f.cuda()", "tensor_to_device", "replace", True, "f = f.npu()", "blur kernel to device"),
      C("noise = noise.cuda()", "tensor_to_device", "replace", True, "noise = noise.npu()", ".cuda()"),
      C("contrast_scale = contrast_scale.cuda()", "tensor_to_device", "replace", True,
        "contrast_scale = contrast_scale.npu()", ".cuda()"),
      C("rnd_brightness = rnd_brightness.cuda()", "tensor_to_device", "replace", True,
        "rnd_brightness = rnd_brightness.npu()", ".cuda()"),
      C("sat_weight = sat_weight.cuda()", "tensor_to_device", "replace", True, "sat_weight = sat_weight.npu()",
        ".cuda()"),
      C("if 'cuda' in str(secret_pred.device):", "device_type", "replace", True,
        "if secret_pred.device.type != 'cpu':",
        "string test on the device name: NPU tensors skip the .cpu() and the following .numpy() raises"),
      C("cross_entropy = cross_entropy.cuda()", "tensor_to_device", "replace", True,
        "cross_entropy = cross_entropy.npu()", ".cuda()"),
      C("falloff_im = falloff_im.cuda()", "tensor_to_device", "replace", True, "falloff_im = falloff_im.npu()",
        ".cuda()"),
      C("yuv_scales = yuv_scales.cuda()", "tensor_to_device", "replace", True, "yuv_scales = yuv_scales.npu()",
        ".cuda()"),
  ])

E("stegastamp_utils", "StegaStamp-pytorch/utils.py", "explicit_replacement",
  "StegaStamp PyTorch port utils.py (random warps/blur, DiffJPEG-style compression)", [
      C("scale = torch.from_numpy(np.outer(alpha, alpha) * 0.25).float().cuda()", "tensor_to_device", "replace",
        True, "scale = torch.from_numpy(np.outer(alpha, alpha) * 0.25).float().to(image.device)",
        "hard-coded .cuda() inside the differentiable JPEG"),
      C("tensor = torch.from_numpy(tensor).float().cuda()", "tensor_to_device", "replace", True,
        "tensor = torch.from_numpy(tensor).float().to(image.device)", ".cuda()"),
      C("image = image.float() / (y_table.cuda() * factor)", "tensor_to_device", "replace", True,
        "image = image.float() / (y_table.to(image.device) * factor)", ".cuda()"),
      C("image = image.float() / (c_table.cuda() * factor)", "tensor_to_device", "replace", True,
        "image = image.float() / (c_table.to(image.device) * factor)", ".cuda()"),
  ])

E("stegastamp_encode", "StegaStamp-pytorch/encode_image.py", "explicit_replacement",
  "StegaStamp PyTorch port encode_image.py (BCH secret, pickled encoder)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("encoder = torch.load(args.model)", "tensor_to_device", "replace", True,
        "encoder = torch.load(args.model, map_location='cpu')",
        "the encoder is a whole nn.Module pickled from a GPU run; " + LOAD_NOTE),
      C("encoder = encoder.cuda()", "tensor_to_device", "replace", True, "encoder = encoder.npu()", ".cuda()"),
      C("secret = secret.cuda()", "tensor_to_device", "replace", True, "secret = secret.npu()", ".cuda()"),
      C("image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", ".cuda()"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; cache is freed at exit anyway"),
  ])

E("stegastamp_detector", "StegaStamp-pytorch/detector.py", "explicit_replacement",
  "StegaStamp detector.py (webcam/video decoding), PyTorch port", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("decoder = torch.load(args.decoder, map_location='cuda:0')", "device_type", "replace", True,
        "decoder = torch.load(args.decoder, map_location='npu:0')", "explicit CUDA map_location"),
      C("image = preprocess(frame).to('cuda:0', non_blocking=True)", "tensor_to_device", "replace", True,
        "image = preprocess(frame).to('npu:0', non_blocking=True)", "CUDA device string"),
  ])

E("stegastamp_docker", "StegaStamp-pytorch/Dockerfile", "explicit_replacement",
  "Dockerfile of a StegaStamp PyTorch port (nvidia/cuda base, cu118 wheels)", [
      C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA runtime base image; the Ascend image brings CANN (driver is mounted from the host)"),
      C("torch==2.0.1+cu118 torchvision==0.15.2+cu118", "torch_cuda_api", "replace", True,
        "RUN pip3 install --no-cache-dir torch==2.1.0 torchvision==0.16.0",
        "CUDA wheels; torch must match a torch_npu release (2.1.0 here) and +cu118 wheels do not exist for aarch64"),
      C("RUN pip3 install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip3 install --no-cache-dir torch-npu==2.1.0.post12", "torch_npu wheel matching torch 2.1.0"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container runtime variable; ignored on Ascend (devices are passed as /dev/davinci*)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime variable"),
      C("ENV TORCH_CUDA_ARCH_LIST", "env_var", "removal", False, None,
        "only used when compiling CUDA extensions; nothing here builds one"),
  ])

# ---------------------------------------------------------------- Stable Signature
E("ss_finetune", "stable_signature/finetune_ldm_decoder.py", "explicit_replacement",
  "facebookresearch/stable_signature finetune_ldm_decoder.py (+ fp16 autocast option)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "add_branch",
        True, "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "module-level device choice falls back to CPU on NPU hosts"),
      C("torch.cuda.manual_seed_all(params.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(params.seed)", SEED_NOTE),
      C("msg_decoder = torch.jit.load(params.msg_decoder_path).to(device)", "tensor_to_device", "replace", False,
        "msg_decoder = torch.jit.load(params.msg_decoder_path, map_location='cpu').to(device)",
        "unconfirmed: fails only if the TorchScript file was exported with CUDA tensors"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=params.use_amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=params.use_amp)", SCALER_NOTE + " (with --use_amp)"),
      C("with torch.cuda.amp.autocast(enabled=params.use_amp, dtype=torch.float16):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=params.use_amp, dtype=torch.float16):", AMP_NOTE),
  ])

E("ss_utils_model", "stable_signature/utils_model.py", "explicit_replacement",
  "stable_signature utils_model.py (LDM / HiDDeN checkpoint loading)", [
      C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
        "every LDM load goes through this .cuda()"),
  ])

E("ss_hidden_main", "stable_signature/hidden/main.py", "explicit_replacement",
  "stable_signature hidden/main.py (DDP training of the HiDDeN extractor)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("=device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
        "add_branch", True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
        "silently CPU on NPU hosts (and DDP device_ids then mismatch)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "unguarded in the training loop: initialises CUDA and raises"),
      C("        if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "        if torch.npu.is_available():", "guarded sync in eval is skipped on NPU; harmless"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(device)",
        "changes together with its guard"),
  ])

E("ss_hidden_utils", "stable_signature/hidden/utils.py", "explicit_replacement",
  "stable_signature hidden/utils.py (timm optimizers, MetricLogger, SLURM/torchrun init)", [
      C("pin_memory=True, drop_last=True, collate_fn=collate_fn)", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu', drop_last=True, collate_fn=collate_fn)",
        "without CUDA the DataLoader silently drops pinning; perf only, pin_memory_device='npu' unconfirmed"),
      C("pin_memory=True, drop_last=False, collate_fn=collate_fn)", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu', drop_last=False, collate_fn=collate_fn)",
        "same as the distributed loader"),
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
        True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "metric all_reduce buffer on a CUDA device: raises (fp64 HCCL all_reduce support not checked)"),
      C("log_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "log_mem = torch.npu.is_available()", "only drops the 'max mem' column on NPU"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", "logging only; changes together with log_mem"),
      C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',",
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("torch.cuda.set_device(params.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(params.local_rank)", "CUDA call raises without CUDA"),
  ])

E("ss_run_evals", "stable_signature/run_evals.py", "explicit_replacement",
  "stable_signature run_evals.py (bit accuracy under attacks, PSNR/SSIM/FID)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "add_branch",
        True, "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")", "silently CPU"),
      C("with torch.autocast(\"cuda\", dtype=torch.float16, enabled=params.half):", "amp", "replace", True,
        "with torch.autocast(\"npu\", dtype=torch.float16, enabled=params.half):", AMP_NOTE + " (--half)"),
      C("print(f'evaluated on {torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", False,
        "print(f'evaluated on {torch.npu.get_device_name(device) if device.type == \"npu\" else \"cpu\"}')",
        "log line only; unchanged it prints 'cpu'"),
  ])

E("ss_launch_sh", "stable_signature/hidden/launch_train.sh", "explicit_replacement",
  "stable_signature HiDDeN training launcher (sbatch/torchrun, 8 GPUs)", [
      C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
        "unconfirmed: the GRES name depends on the Ascend Slurm setup"),
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; without it import torch_npu fails (libhccl.so / libascendcl.so not found)"),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "device subset selection is silently ignored by the Ascend runtime"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "no effect on HCCL; closest is the CANN log level"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob; no-op on Ascend"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "single node here; matters only for multi-node root-info setup"),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
        "nvidia-smi is absent on Ascend hosts and the script runs under set -e, so it aborts here"),
  ])

E("ss_diffusers_gen", "stable_signature/scripts/generate_diffusers.py", "explicit_replacement",
  "Stable Signature diffusers example (SD 2.1 pipeline with the watermarked VAE decoder)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("safety_checker=None).to(\"cuda\")", "tensor_to_device", "replace", True,
        "safety_checker=None).to(\"npu\")", "pipeline moved to a CUDA device"),
      C("pipe.enable_xformers_memory_efficient_attention()", "attention_kernel", "removal", True, None,
        "xformers has no NPU build; diffusers raises when it is missing. Default SDPA processor works on NPU"),
      C("generator = torch.Generator(device=\"cuda\").manual_seed(args.seed)", "device_type", "replace", True,
        "generator = torch.Generator(device=\"npu\").manual_seed(args.seed)", "CUDA generator"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises"),
      C("f\"peak mem {torch.cuda.max_memory_allocated() / 2**30:.1f} GB\")", "torch_cuda_api", "replace", False,
        "f\"peak mem {torch.npu.max_memory_allocated() / 2**30:.1f} GB\")", "prints 0 GB; log only"),
  ])

# ---------------------------------------------------------------- Tree-Ring
E("treering_run", "tree-ring-watermark/run_tree_ring_watermark.py", "explicit_replacement",
  "YuxinWenRick/tree-ring-watermark run_tree_ring_watermark.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "fp16 SD pipeline would silently go to the CPU"),
  ])

E("treering_optim", "tree-ring-watermark/optim_utils.py", "explicit_replacement",
  "tree-ring-watermark optim_utils.py (Fourier ring patterns, injection, detection)", [
      C("torch.cuda.manual_seed(seed + 1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed + 1)",
        SEED_NOTE),
      C("torch.cuda.manual_seed_all(seed + 2)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed + 2)", SEED_NOTE),
      C("torch.cuda.manual_seed_all(seed + 4)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed + 4)", SEED_NOTE),
      C("return torch.fft.fftshift(torch.fft.fft2(latents), dim=(-1, -2))", "unsupported_op_workaround",
        "replace", False,
        "return torch.roll(torch.fft.fft2(latents.float()), shifts=(latents.shape[-2] // 2, latents.shape[-1] // 2), dims=(-2, -1))",
        "unconfirmed: fftshift is marked unsupported in Ascend's 2.7.1 API list and msFmkTransplt's list, but "
        "op-plugin registers fft_fftshift; fp16 latents would also make a complex32 FFT (chalf is unsupported)"),
      C("return torch.fft.ifft2(torch.fft.ifftshift(latents_fft, dim=(-1, -2))).real", "unsupported_op_workaround",
        "replace", False,
        "return torch.fft.ifft2(torch.roll(latents_fft, shifts=(-(latents_fft.shape[-2] // 2), -(latents_fft.shape[-1] // 2)), dims=(-2, -1))).real",
        "unconfirmed, same as fftshift (ifftshift marked unsupported)"),
  ])

E("treering_inverse", "tree-ring-watermark/inverse_stable_diffusion.py", "explicit_replacement",
  "tree-ring-watermark inverse_stable_diffusion.py (DDIM inversion; decoder_inv from exact-inversion follow-ups)", [
      C("generator = torch.Generator(device='cuda').manual_seed(seed)", "device_type", "replace", True,
        "generator = torch.Generator(device='npu').manual_seed(seed)", "CUDA generator raises"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp)", SCALER_NOTE),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=use_amp):", AMP_NOTE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; only frees cached blocks"),
  ])

E("treering_env", "tree-ring-watermark/environment.yml", "explicit_replacement",
  "tree-ring-watermark conda environment", [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA runtime channel, unused once pytorch-cuda goes"),
      C("=- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "selects the CUDA build of pytorch (not solvable on aarch64 Ascend hosts)"),
      C("=- accelerate==0.21.0", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
        "torch_npu wheel matching pytorch=2.1.0"),
      C("=- xformers==0.0.22.post7", "attention_kernel", "removal", True, None,
        "no NPU build; the pip wheel is CUDA-only (source build needs nvcc)"),
  ])

E("treering_sh", "tree-ring-watermark/scripts/run_eval.sh", "explicit_replacement",
  "Tree-Ring evaluation sweep script", [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment"),
      C("=export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
        "device 0 is the default anyway, so ignoring it changes nothing"),
      C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512", "allocator tuning, silently ignored on NPU"),
      C("CUDA_VISIBLE_DEVICES=$i python run_tree_ring_watermark.py", "env_var", "replace", True,
        "    ASCEND_RT_VISIBLE_DEVICES=$i python run_tree_ring_watermark.py --run_name no_attack_shard$i $WM \\",
        "sharding by visible device is ignored: every shard lands on NPU 0 (contention/OOM)"),
  ])

# ---------------------------------------------------------------- Watermark Anything
E("wam_train", "watermark-anything/train.py", "explicit_replacement",
  "facebookresearch/watermark-anything train.py (+ bf16 autocast and torch.compile options)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("=device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
        "add_branch", True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
        "silently CPU"),
      C("if not params.amp or device.type != 'cuda':", "device_type", "replace", True,
        "if not params.amp or device.type != 'npu':",
        "once the device is npu this guard silently turns --amp off"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "major = 8 if torch.npu.is_bf16_supported() else 0",
        "CUDA capability query raises without CUDA; NPU get_device_capability returns None, so test bf16 support"),
      C("wam_ddp = torch.compile(wam_ddp)", "compile_mode", "replace", False,
        "wam_ddp = torch.compile(wam_ddp, backend='npugraphs')",
        "unconfirmed: Inductor on NPU needs torch_npu>=2.6; Ascend lists backend npugraphs (cudagraphs-like)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA"),
      C("with torch.autocast(device_type='cuda', dtype=amp_dtype or torch.float32", "amp", "replace", True,
        "with torch.autocast(device_type='npu', dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):",
        AMP_NOTE),
      C("with torch.autocast('cuda', dtype=amp_dtype or torch.float32", "amp", "replace", True,
        "with torch.autocast('npu', dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):", AMP_NOTE),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises"),
  ])

E("wam_dist", "watermark-anything/watermark_anything/utils/dist.py", "explicit_replacement",
  "watermark-anything utils/dist.py (torchrun / SLURM init, all_reduce_mean)", [
      C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
        "x_reduce = torch.tensor(x).npu()", ".cuda()"),
      C("params.local_rank = params.global_rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "params.local_rank = params.global_rank % torch.npu.device_count()",
        "device_count() is 0 without CUDA: ZeroDivisionError under SLURM"),
      C("params.dist_backend = 'nccl'", "dist_backend", "replace", True, "params.dist_backend = 'hccl'",
        "NCCL unavailable; HCCL"),
      C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", "replace", False,
        "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')",
        "NCCL knob is a no-op; torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING"),
      C("torch.cuda.set_device(params.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(params.local_rank)", "raises"),
  ])

E("wam_inference", "watermark-anything/notebooks/inference_utils.py", "explicit_replacement",
  "watermark-anything notebooks/inference_utils.py (load model, embed/detect, DBSCAN multi-watermark)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "first torch import of the notebooks"),
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "add_branch",
        True, "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")", "silently CPU"),
      C("USE_HALF = device.type == \"cuda\"", "device_type", "replace", False, "USE_HALF = device.type == \"npu\"",
        "fp16 inference silently off on NPU; memory/speed only"),
      C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "    if torch.npu.is_available():",
        "info print only"),
      C("props = torch.cuda.get_device_properties(0)", "torch_cuda_api", "replace", False,
        "props = torch.npu.get_device_properties(0)", "info print only, after the guard"),
      C("sm_{props.major}{props.minor}", "device_capability_check", "replace", False,
        "print(f\"{props.name} | {props.total_memory / 2**30:.0f} GB\")",
        "NPU device properties have no major/minor (only name, total_memory, cache/core counts)"),
  ])

E("wam_reqs", "watermark-anything/requirements.txt", "explicit_replacement",
  "watermark-anything requirements.txt (cu121 wheels, xformers)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "harmless by itself; x86 Ascend hosts take CPU torch from the cpu index, aarch64 from PyPI"),
      C("=torch==2.1.0+cu121", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA local-version pin: no such wheel on aarch64, pulls CUDA deps on x86"),
      C("=torchvision==0.16.0+cu121", "torch_cuda_api", "replace", True, "torchvision==0.16.0", "same"),
      C("=torchmetrics==1.2.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch_npu pin matching torch 2.1.0"),
      C("=xformers==0.0.22.post7", "attention_kernel", "removal", True, None,
        "no NPU build; the install itself fails without CUDA (vit.py already falls back to SDPA)"),
      C("=nvidia-ml-py3", "torch_cuda_api", "removal", False, None,
        "NVML bindings, unused by the code here; NVML is absent on Ascend"),
  ])

E("wam_vit", "watermark-anything/watermark_anything/modules/vit.py", "explicit_replacement",
  "watermark-anything modules/vit.py (SAM-style ViT extractor, xformers/SDPA attention)", [
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False", "attention_kernel", "removal",
        False, None,
        "unconfirmed: sdp_kernel is marked unsupported in Ascend's 2.7.1 list; it only toggles CUDA SDPA backends "
        "(drop the context and dedent the call)"),
      C("x = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias, scale=self.scale)", "npu_fused_op",
        "replace", False,
        "x = torch_npu.npu_fusion_attention(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1), 1, 'BNSD', pse=None if attn_bias is None else attn_bias.unsqueeze(1), scale=self.scale)[0].squeeze(1)",
        "unconfirmed/perf: Ascend documents SDPA's fused path with bool masks; the float rel-pos bias maps to pse (needs import torch_npu)"),
  ])

# ---------------------------------------------------------------- RivaGAN
E("rivagan_model", "RivaGAN/rivagan/rivagan.py", "explicit_replacement",
  "DAI-Lab/RivaGAN rivagan/rivagan.py (video watermarking with attention)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "the package API module; users only import rivagan"),
      C("frames = torch.cat([frames] * multiplicity, dim=0).cuda()", "tensor_to_device", "replace", True,
        "frames = torch.cat([frames] * multiplicity, dim=0).npu()", ".cuda()"),
      C("data = torch.zeros((frames.size(0), data_dim)).random_(0, 2).cuda()", "tensor_to_device", "replace",
        True, "data = torch.zeros((frames.size(0), data_dim)).random_(0, 2).npu()", ".cuda()"),
      C("frames = torch.cat([frames, frames], dim=0).cuda()", "tensor_to_device", "replace", True,
        "frames = torch.cat([frames, frames], dim=0).npu()", ".cuda()"),
      C("data = torch.cat([data, 1.0 - data], dim=0).cuda()", "tensor_to_device", "replace", True,
        "data = torch.cat([data, 1.0 - data], dim=0).npu()", ".cuda()"),
      C("self.adversary = Adversary().cuda()", "tensor_to_device", "replace", True,
        "self.adversary = Adversary().npu()", ".cuda()"),
      C("self.critic = Critic().cuda()", "tensor_to_device", "replace", True, "self.critic = Critic().npu()",
        ".cuda()"),
      C("self.encoder = AttentiveEncoder(data_dim=data_dim).cuda()", "tensor_to_device", "replace", True,
        "self.encoder = AttentiveEncoder(data_dim=data_dim).npu()", ".cuda()"),
      C("self.decoder = AttentiveDecoder(self.encoder).cuda()", "tensor_to_device", "replace", True,
        "self.decoder = AttentiveDecoder(self.encoder).npu()", ".cuda()"),
      C("self.encoder = DenseEncoder(data_dim=data_dim).cuda()", "tensor_to_device", "replace", True,
        "self.encoder = DenseEncoder(data_dim=data_dim).npu()", ".cuda()"),
      C("self.decoder = DenseDecoder(data_dim=data_dim).cuda()", "tensor_to_device", "replace", True,
        "self.decoder = DenseDecoder(data_dim=data_dim).npu()", ".cuda()"),
      C("\"gpu\": torch.cuda.get_device_name(0),", "torch_cuda_api", "replace", True,
        "\"npu\": torch.npu.get_device_name(0),", "raises before training starts"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA"),
      C("frames = frames.cuda()", "tensor_to_device", "replace", True, "frames = frames.npu()", ".cuda()"),
      C("data = torch.zeros((frames.size(0), self.data_dim)).random_(0, 2).cuda()", "tensor_to_device", "replace",
        True, "data = torch.zeros((frames.size(0), self.data_dim)).random_(0, 2).npu()", ".cuda()"),
      C("return torch.load(path_to_model)", "tensor_to_device", "replace", True,
        "return torch.load(path_to_model, map_location='npu')",
        "whole RivaGAN object pickled with CUDA modules; " + LOAD_NOTE),
      C("data = torch.FloatTensor([data]).cuda()", "tensor_to_device", "replace", True,
        "data = torch.FloatTensor([data]).npu()", ".cuda()"),
      C("unsqueeze(0).cuda()  # (1, 3, L, H, W)", "tensor_to_device", "replace", True,
        "frame = frame.permute(3, 0, 1, 2).unsqueeze(0).npu()  # (1, 3, L, H, W)", ".cuda()"),
      C("unsqueeze(0).cuda()  # -> (1, 3, L, H, W) on GPU", "tensor_to_device", "replace", True,
        "frame = frame.permute(3, 0, 1, 2).unsqueeze(0).npu()  # -> (1, 3, L, H, W) on NPU", ".cuda()"),
  ])

E("rivagan_noise", "RivaGAN/rivagan/noise.py", "explicit_replacement",
  "RivaGAN rivagan/noise.py (crop/scale/DCT compression noise layers)", [
      C("_DCT_CACHE[n] = _dct_matrix(n).cuda()", "tensor_to_device", "replace", True,
        "_DCT_CACHE[n] = _dct_matrix(n).npu()", "cached DCT basis on a CUDA device"),
      C("noise = torch.cuda.FloatTensor(frames.size()).normal_(0, std)", "torch_cuda_api", "replace", True,
        "noise = torch.empty_like(frames).normal_(0, std)", "legacy CUDA tensor type constructor raises"),
  ])
