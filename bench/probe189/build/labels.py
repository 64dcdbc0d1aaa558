# Labels for probe189: lucidrains-style single-author PyTorch model repositories (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.

ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})

NPU_AVAIL = "hasattr(torch, 'npu') and torch.npu.is_available()"

# ---------------------------------------------------------------- x-transformers

E("xt_attend", "x_transformers/attend.py", "device_branch_or_abstraction",
  "lucidrains/x-transformers x_transformers/attend.py (Attend with EfficientAttentionConfig / sdp_kernel)",
  [
    C("with torch.backends.cuda.sdp_kernel(**config._asdict()):", "attention_kernel", "replace", False,
      "with (torch.backends.cuda.sdp_kernel(**config._asdict()) if is_cuda else nullcontext()):",
      "torch.backends.cuda.sdp_kernel is marked unsupported (✘) in Ascend's 2.7.1 API table and in the msFmkTransplt list. "
      "On NPU tensors is_cuda is False, cpu_config (all backends on) is passed and the context only flips global CUDA flags, "
      "so F.scaled_dot_product_attention still reaches the NPU fused kernel: a no-op, not a failure. Porter scopes it to CUDA."),
  ])

E("xt_transformers", "x_transformers/x_transformers.py", "device_branch_or_abstraction",
  "lucidrains/x-transformers x_transformers/x_transformers.py (rotary embedding, RMSNorm, Attention, TransformerWrapper)",
  [
    C("    @autocast('cuda', enabled = False)", "device_type", "replace", True,
      "    @autocast(AUTOCAST_DEVICE_TYPE, enabled = False)  # 'npu' when torch_npu is available, else 'cuda'",
      "Autocast state is per device type: disabling 'cuda' autocast does nothing to NPU autocast (accelerate / torch.autocast('npu')). "
      "RotaryEmbedding.forward computes positions x inv_freq with an einsum, which NPU autocast then runs in fp16/bf16, so the "
      "rotary angles of long sequences lose precision that the author pinned to fp32."),
    C("@autocast(device_type = 'cuda', enabled = False)", "device_type", "replace", False,
      "@autocast(device_type = AUTOCAST_DEVICE_TYPE, enabled = False)",
      "Same fix for apply_rotary_pos_emb for consistency, but the body is elementwise only (cos/sin/mul/cat), which autocast does "
      "not downcast, so leaving it has no numerical effect."),
    C("return F.normalize(x, dim = -1) * self.scale * gamma", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(x, gamma, epsilon = 1e-12)[0] if x.is_npu else F.normalize(x, dim = -1) * self.scale * gamma",
      "Performance only: x / ||x|| * sqrt(d) * gamma equals x / rms(x) * gamma, which torch_npu.npu_rms_norm fuses."),
  ])

E("xt_enwik8", "train_enwik8.py", "explicit_replacement",
  "lucidrains/x-transformers train_enwik8.py (README training script)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script: registers the npu device and Tensor.npu()/Module.npu(); mandatory before torch_npu 2.5.1 autoload."),
    C("=model.cuda()", "tensor_to_device", "replace", True,
      "model.npu()",
      "No CUDA on an Ascend host: .cuda() raises."),
    C("return full_seq.cuda()", "tensor_to_device", "replace", True,
      "return full_seq.npu()",
      "Dataset moves every sample to the accelerator; .cuda() raises on the NPU host."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache just is not released (memory only)."),
  ])

# ---------------------------------------------------------------- denoising-diffusion-pytorch (ported with transfer_to_npu)

E("ddpm_attend", "denoising_diffusion_pytorch/attend.py", "transfer_to_npu",
  "lucidrains/denoising-diffusion-pytorch denoising_diffusion_pytorch/attend.py",
  [
    C("device_properties = torch.cuda.get_device_properties(torch.device('cuda'))", "device_capability_check", "add_branch", True,
      "if " + NPU_AVAIL + ": self.cuda_config = AttentionConfig(True, True, True); return  # NPU props carry no major/minor",
      "The project is ported with transfer_to_npu, which makes torch.cuda.is_available() True on the NPU host, so this block runs. "
      "Ascend's get_device_properties only fills name/total_memory/L2_cache_size/cube_core_num/vector_core_num, so the next line's "
      "version.parse(f'{major}.{minor}') raises. Needs an NPU branch before the CUDA capability logic."),
    C("with torch.backends.cuda.sdp_kernel(**config._asdict()):", "attention_kernel", "replace", False,
      "with nullcontext() if q.is_npu else torch.backends.cuda.sdp_kernel(**config._asdict()):",
      "sdp_kernel is ✘ on NPU and not covered by transfer_to_npu; with the all-enabled NPU config above it only sets CUDA flags "
      "(no-op for the NPU SDPA kernel)."),
  ])

E("ddpm_trainer", "denoising_diffusion_pytorch/denoising_diffusion_pytorch.py", "transfer_to_npu",
  "lucidrains/denoising-diffusion-pytorch denoising_diffusion_pytorch.py (GaussianDiffusion + accelerate Trainer)",
  [])

E("ddpm_fid", "denoising_diffusion_pytorch/fid_evaluation.py", "transfer_to_npu",
  "lucidrains/denoising-diffusion-pytorch denoising_diffusion_pytorch/fid_evaluation.py",
  [])

E("ddpm_train", "train.py", "transfer_to_npu",
  "denoising-diffusion-pytorch README-style training entry script with argparse flags",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "Single place where the ddpm port happens: transfer_to_npu must be imported before denoising_diffusion_pytorch so that its "
      "module-level `from torch.cuda.amp import autocast` and the Trainer's torch.cuda.* calls bind to the NPU versions."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
      "transfer_to_npu does not translate environment variables; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so --gpus "
      "would silently have no effect and every process would see all NPUs."),
  ])

# ---------------------------------------------------------------- imagen-pytorch

E("imagen_trainer", "imagen_pytorch/trainer.py", "device_branch_or_abstraction",
  "lucidrains/imagen-pytorch imagen_pytorch/trainer.py (ImagenTrainer)",
  [
    C("scaler = GradScaler(enabled = grad_scaler_enabled)", "amp", "add_branch", True,
      "scaler = (torch.npu.amp.GradScaler if " + NPU_AVAIL + " else GradScaler)(enabled = grad_scaler_enabled)",
      "set_accelerator_scaler() installs this per-unet scaler as accelerator.scaler, so accelerator.backward uses it. A "
      "torch.cuda.amp.GradScaler disables itself (warning) when CUDA is unavailable, so fp16=True trains on NPU under fp16 autocast "
      "with no loss scaling (gradient underflow)."),
    C("use_triton = True", "fused_optimizer", "replace", True,
      "use_triton = torch.cuda.is_available()",
      "Lion(use_triton=True) swaps in lion-pytorch's fused Triton update kernel, which asserts t.is_cuda and needs the CUDA Triton "
      "backend; with use_lion=True the first optimizer step fails on NPU. Fall back to the PyTorch Lion update there."),
  ])

E("imagen_t5", "imagen_pytorch/t5.py", "device_branch_or_abstraction",
  "lucidrains/imagen-pytorch imagen_pytorch/t5.py (T5 text encoder singleton)",
  [
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "if torch.cuda.is_available(): t5 = t5.cuda()  /  elif " + NPU_AVAIL + ": t5 = t5.npu()",
      "False on an NPU host, so the T5 encoder silently stays on the CPU and every text batch is encoded on the host. "
      "The `t5 = t5.cuda()` under it is left as the CUDA branch."),
  ])

E("imagen_cli", "imagen_pytorch/cli.py", "explicit_replacement",
  "lucidrains/imagen-pytorch imagen_pytorch/cli.py (click `imagen sample` / `imagen train`)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Console-script entry point; needed for Module.npu() and the npu device (pre-2.5.1 torch_npu)."),
    C("loaded = torch.load(str(model_path))", "tensor_to_device", "replace", True,
      "loaded = torch.load(str(model_path), map_location = 'cpu')",
      "ImagenTrainer.save() writes the live (cuda) state dict, so checkpoints trained on GPUs deserialize to cuda tensors; without "
      "map_location torch.load raises on the NPU host."),
    C("=imagen.cuda()", "tensor_to_device", "replace", True,
      "imagen.npu()",
      ".cuda() raises on an Ascend host."),
    C("loaded = torch.load(model_path)", "tensor_to_device", "replace", True,
      "loaded = torch.load(model_path, map_location = 'cpu')",
      "Same as above when resuming from a GPU-trained checkpoint."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Redundant on NPU: ImagenTrainer.__init__ already moved itself to accelerator.device; the unchanged check is simply False."),
    C("trainer = trainer.cuda()", "tensor_to_device", "replace", False,
      "trainer = trainer.npu()",
      "Goes with the guard above; never executed unchanged on NPU."),
  ])

E("imagen_setup", "setup.py", "device_branch_or_abstraction",
  "lucidrains/imagen-pytorch setup.py (install_requires)",
  [
    C("'triton',", "triton_kernel_tuning", "removal", False,
      None,
      "Only needed for Lion(use_triton=True), which is disabled on NPU; the CUDA Triton wheel is useless on Ascend (triton-ascend "
      "is the NPU counterpart). Whether the pin breaks installs on aarch64 Ascend hosts is unconfirmed."),
  ])

E("imagen_env", "environment.yml", "explicit_replacement",
  "conda environment.yml shipped with imagen-pytorch training forks",
  [
    C("=- nvidia", "torch_cuda_api", "removal", False,
      None,
      "Channel only serves CUDA runtime packages; harmless once pytorch-cuda is gone."),
    C("- pytorch-cuda=12.1", "torch_cuda_api", "replace", True,
      "  - cpuonly",
      "pytorch-cuda selects the CUDA 12.1 build of pytorch; torch_npu needs the CPU build of the same torch version, and CUDA "
      "packages are not available for the (usually aarch64) Ascend hosts."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.1.0.post12",
      "torch-npu pinned to the env's pytorch 2.1.0 (wheel version must equal the torch version; pairs with CANN 8.1.RC1)."),
  ])

# ---------------------------------------------------------------- DALLE2-pytorch

E("dalle2_trainer", "dalle2_pytorch/trainer.py", "device_branch_or_abstraction",
  "lucidrains/DALLE2-pytorch dalle2_pytorch/trainer.py (pre-accelerate DiffusionPriorTrainer / DecoderTrainer with manual AMP)",
  [
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "add_branch", True,
      "from torch_npu.npu.amp import autocast, GradScaler  # if torch_npu is importable, else from torch.cuda.amp",
      "Both trainers drive AMP by hand (GradScaler(enabled = amp), autocast(enabled = self.amp)). The torch.cuda.amp versions "
      "disable themselves when CUDA is unavailable, so amp=True silently trains in fp32 on NPU (speed and memory the config asked for "
      "are not delivered). torch.cuda.amp.* -> torch_npu.npu.amp.* per Ascend's API table."),
  ])

E("dalle2_train_decoder", "train_decoder.py", "explicit_replacement",
  "lucidrains/DALLE2-pytorch train_decoder.py (early dict-config version with a `device` field)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; registers the npu device used by torch.device(config device)."),
    C("if \"cuda\" in config[\"train\"][\"device\"]:", "device_type", "replace", False,
      "if \"npu\" in config[\"train\"][\"device\"]:",
      "Sanity check only; with the config switched to npu:0 the unchanged test is just skipped."),
    C("assert torch.cuda.is_available(), \"CUDA is not available\"", "torch_cuda_api", "replace", False,
      "assert torch.npu.is_available(), \"NPU is not available\"",
      "Goes with the check above."),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)",
      "torch.cuda.set_device rejects a non-cuda device / fails without CUDA."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Silent no-op on NPU; the inception networks' memory is just not released early."),
    C("\"Peak GPU memory (GB)\": torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "\"Peak NPU memory (GB)\": torch.npu.max_memory_allocated() / 1024 ** 3",
      "Logs 0 on NPU (memory stats of an uninitialised CUDA context); logging only."),
  ])

E("dalle2_config", "configs/train_decoder_config.example.json", "explicit_replacement",
  "lucidrains/DALLE2-pytorch configs/train_decoder_config.example.json",
  [
    C("\"device\": \"cuda:0\",", "device_type", "replace", True,
      "\"device\": \"npu:0\",",
      "Flows into torch.device(...) and set_device() in train_decoder.py and into every .to(device); cuda:0 does not exist on the NPU host."),
  ])

E("dalle2_dockerfile", "Dockerfile", "explicit_replacement",
  "Dockerfile for DALLE2-pytorch decoder training (community deployment)",
  [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "Base image must carry the CANN toolkit that torch_npu loads (driver is mounted from the host) instead of CUDA/cuDNN."),
    C("RUN pip3 install --no-cache-dir torch==2.0.1 torchvision==0.15.2 --index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "RUN pip3 install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --extra-index-url https://download.pytorch.org/whl/cpu",
      "cu118 wheels (and no aarch64 builds on that index); torch must be the CPU build at a version torch_npu supports."),
    C("RUN pip3 install --no-cache-dir -e .", "import_torch_npu", "npu_only_addition", True,
      "RUN pip3 install --no-cache-dir torch-npu==2.1.0.post12",
      "torch-npu pinned to torch 2.1.0."),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", True,
      "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "Ascend Docker Runtime decides which /dev/davinciN to mount from ASCEND_VISIBLE_DEVICES; the NVIDIA variable is ignored."),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False,
      None,
      "NVIDIA container runtime setting; meaningless on Ascend."),
    C("CMD [\"python3\", \"train_decoder.py\", \"--config_file\", \"configs/train_decoder_config.json\"]", "import_torch_npu", "replace", False,
      "CMD [\"bash\", \"-c\", \"source /usr/local/Ascend/ascend-toolkit/set_env.sh && python3 train_decoder.py --config_file configs/train_decoder_config.json\"]",
      "torch_npu needs the CANN environment (set_env.sh); unconfirmed whether the chosen base image already exports it."),
  ])

# ---------------------------------------------------------------- audiolm-pytorch

E("audiolm_soundstream", "audiolm_pytorch/soundstream.py", "device_branch_or_abstraction",
  "lucidrains/audiolm-pytorch audiolm_pytorch/soundstream.py (complex STFT discriminator, multi-scale spectral loss)",
  [
    C("return F.relu(torch.abs(x) + self.b) * torch.exp(1.j * torch.angle(x))", "unsupported_op_workaround", "replace", True,
      "re, im = x.real, x.imag; mag = (re ** 2 + im ** 2).sqrt(); s = F.relu(mag + self.b) / mag.clamp(min = 1e-8); return torch.complex(re * s, im * s)",
      "Ascend's API table lists no complex dtypes for torch.abs / torch.exp / torch.mul; compute ModReLU on the real and imaginary parts."),
    C("return F.conv2d(x, weight, bias, stride = self.stride, padding = self.padding)", "unsupported_op_workaround", "replace", True,
      "return complex_conv2d_as_real(x, self.weight, self.bias, stride = self.stride, padding = self.padding)  # 4 real conv2d",
      "F.conv2d on NPU takes bf16/fp16/fp32 input only (Ascend 2.7.1 table) and NPU registers convolution directly, so the complex64 "
      "convs of the STFT discriminator have no kernel; rewrite as (a+ib)*(c+id) with real convs."),
    C("complex_logits = complex_logits.abs()", "unsupported_op_workaround", "replace", True,
      "complex_logits = torch.view_as_real(complex_logits).pow(2).sum(dim = -1).sqrt()",
      "Complex abs is not in the NPU dtype list; view_as_real (complex64 ✔) then a real magnitude."),
    C("with autocast('cuda', enabled = False):", "device_type", "replace", True,
      "with autocast(orig_audio.device.type, enabled = False):",
      "MelSpectrogram applies the mel filterbank with a matmul; the 'cuda' disable does not stop NPU autocast, so the mel/log-mel "
      "reconstruction loss is computed in fp16 under accelerate mixed precision."),
  ])

E("audiolm_trainer", "audiolm_pytorch/trainer.py", "device_branch_or_abstraction",
  "lucidrains/audiolm-pytorch audiolm_pytorch/trainer.py (SoundStreamTrainer on accelerate)",
  [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "torch.npu.empty_cache() if " + NPU_AVAIL + " else torch.cuda.empty_cache()",
      "Silent no-op on NPU (CUDA never initialised); only the post-sampling memory release is lost."),
  ])

E("audiolm_launch", "train_soundstream.sh", "explicit_replacement",
  "shell launcher for audiolm-pytorch SoundStream training with accelerate",
  [
    C("set -eo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "torch_npu cannot load without the CANN environment (library paths, ASCEND_* vars)."),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "Device selection is ignored on Ascend unless given as ASCEND_RT_VISIBLE_DEVICES."),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False,
      None,
      "Workaround for consumer GPUs without P2P; no HCCL counterpart needed."),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False,
      None,
      "NCCL logging knob; HCCL logs go through CANN plog (ASCEND_GLOBAL_LOG_LEVEL)."),
    C("NUM_GPUS=$(echo \"$CUDA_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)", "env_var", "replace", True,
      "NUM_GPUS=$(echo \"$ASCEND_RT_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)",
      "Once the export above is renamed this would count an empty variable as 1 and launch a single process."),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi does not exist on the Ascend host; under `set -e` the script aborts here."),
  ])

E("audiolm_accel_cfg", "configs/accelerate_multi_gpu.yaml", "explicit_replacement",
  "accelerate config used to launch audiolm-pytorch trainers",
  [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False,
      "distributed_type: MULTI_NPU",
      "accelerate (>=0.22) has a MULTI_NPU type and picks hccl itself; unconfirmed whether a MULTI_GPU config launches correctly "
      "on an NPU host, so flagged but not required."),
  ])

E("audiolm_generate", "scripts/generate_audiolm.py", "transfer_to_npu",
  "audiolm-pytorch README-style generation script (hubert-kmeans + soundstream + semantic/coarse/fine transformers)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "The script is ported with transfer_to_npu: --device cuda, .to(device), torch.cuda.synchronize/max_memory_allocated and "
      "torch.autocast('cuda') are then redirected to the NPU."),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
      "major = 8 if torch.cuda.is_bf16_supported() else 7  # get_device_capability() returns None on NPU",
      "transfer_to_npu maps this to torch_npu.npu.get_device_capability, which returns None unless TORCH_NPU_DEVICE_CAPABILITY is "
      "set, so the tuple unpacking raises TypeError."),
  ])

# ---------------------------------------------------------------- vector-quantize-pytorch

E("vq_core", "vector_quantize_pytorch/vector_quantize_pytorch.py", "device_branch_or_abstraction",
  "lucidrains/vector-quantize-pytorch vector_quantize_pytorch/vector_quantize_pytorch.py (codebooks, distributed kmeans)",
  [
    C("size = torch.tensor(x.shape[dim], dtype = torch.long, device = x.device)", "unsupported_op_workaround", "replace", True,
      "size = torch.tensor(x.shape[dim], dtype = torch.int32, device = x.device)",
      "all_gather on HCCL: Ascend's 2.7.1 table lists tensor dtypes bf16/fp16/fp32/int8/int32/bool only, so gathering the int64 sizes "
      "used by synced kmeans init is unsupported; int32 is enough for a row count."),
    C("    @autocast('cuda', enabled = False)", "device_type", "replace", True,
      "    @autocast(AUTOCAST_DEVICE_TYPE, enabled = False)",
      "EuclideanCodebook.forward computes code distances with an einsum; NPU autocast is not disabled by the 'cuda' decorator, so "
      "nearest-code search runs in fp16/bf16 despite the explicit x.float()."),
    C("@autocast(device_type = 'cuda', enabled = False)", "device_type", "replace", True,
      "@autocast(device_type = AUTOCAST_DEVICE_TYPE, enabled = False)",
      "Same for CosineSimCodebook.forward (einsum similarities)."),
  ])

E("vq_residual_fsq", "vector_quantize_pytorch/residual_fsq.py", "device_branch_or_abstraction",
  "lucidrains/vector-quantize-pytorch vector_quantize_pytorch/residual_fsq.py",
  [
    C("with autocast('cuda', enabled = False):", "device_type", "replace", False,
      "with autocast(x.device.type, enabled = False):",
      "Kept consistent with the other autocast fixes, but the block only does elementwise FSQ work (scale, round, subtract) and the "
      "layers assert no projections, so NPU autocast would not change the result."),
  ])

E("vq_dist_test", "tests/test_distributed.py", "explicit_replacement",
  "vector-quantize-pytorch multi-GPU codebook-sync test (mp.spawn + DDP-style process group)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Needed in the spawned workers too (module is re-imported there)."),
    C("os.environ['NCCL_ASYNC_ERROR_HANDLING'] = '1'", "env_var", "replace", False,
      "os.environ['HCCL_ASYNC_ERROR_HANDLING'] = '1'",
      "HCCL counterpart exists and already defaults to 1 per MindCluster docs; no effect either way."),
    C("dist.init_process_group('nccl', rank = rank, world_size = world_size)", "dist_backend", "replace", True,
      "dist.init_process_group('hccl', rank = rank, world_size = world_size)",
      "NCCL backend is not available in a torch_npu build."),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank)",
      "Fails without CUDA."),
    C(").cuda(rank)", "tensor_to_device", "replace", True,
      ").npu(rank)",
      ".cuda() raises on the NPU host."),
    C("x = torch.randn(4, 1024, DIM, device = f'cuda:{rank}')", "device_type", "replace", True,
      "x = torch.randn(4, 1024, DIM, device = f'npu:{rank}')",
      "cuda device string."),
    C(").to(torch.device('cuda', rank))", "device_type", "replace", True,
      ").to(torch.device('npu', rank))",
      "cuda device object."),
    C("x = torch.randn(2, 512, DIM).to(rank)", "tensor_to_device", "replace", True,
      "x = torch.randn(2, 512, DIM).to(f'npu:{rank}')",
      "A bare int in Tensor.to means cuda:<int>; only transfer_to_npu rewrites that, an explicit port must."),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "world_size = torch.npu.device_count()",
      "Returns 0 on the NPU host, so the >= 2 assertion fails."),
  ])

# ---------------------------------------------------------------- musiclm-pytorch

E("musiclm_distributed", "musiclm_pytorch/distributed.py", "device_branch_or_abstraction",
  "lucidrains/musiclm-pytorch musiclm_pytorch/distributed.py (variable-length all_gather for contrastive loss)",
  [
    C("size = torch.tensor(t.shape[dim], device = device, dtype = torch.long)", "unsupported_op_workaround", "replace", True,
      "size = torch.tensor(t.shape[dim], device = device, dtype = torch.int32)",
      "int64 is not in the HCCL all_gather dtype list of Ascend's 2.7.1 table (bf16/fp16/fp32/int8/int32/bool)."),
    C("sizes = [torch.empty_like(size, device = device, dtype = torch.long) for i in range(world_size)]", "unsupported_op_workaround", "replace", True,
      "sizes = [torch.empty_like(size, device = device, dtype = torch.int32) for i in range(world_size)]",
      "Receive buffers must match the int32 send tensor."),
  ])

E("musiclm_trainer", "musiclm_pytorch/trainer.py", "device_branch_or_abstraction",
  "lucidrains/musiclm-pytorch musiclm_pytorch/trainer.py (MuLaNTrainer)",
  [
    C("return DataLoader(ds, collate_fn = collate_fn, pin_memory = True, **kwargs)", "pin_memory", "replace", False,
      "return DataLoader(ds, collate_fn = collate_fn, pin_memory = True, pin_memory_device = 'npu' if " + NPU_AVAIL + " else '', **kwargs)",
      "Unconfirmed in the knowledge notes: older torch DataLoaders only pin when torch.cuda.is_available(), so pinning is silently "
      "skipped on NPU (performance only); msFmkTransplt recommends pin_memory on NPU."),
    C("assert torch.cuda.is_bf16_supported(), 'bf16 mixed precision requested but this gpu does not support bf16, use fp16 instead'", "device_capability_check", "add_branch", True,
      "assert (torch.npu.is_bf16_supported() if " + NPU_AVAIL + " else torch.cuda.is_bf16_supported()), 'bf16 mixed precision requested but this device does not support bf16'",
      "With mixed_precision='bf16' the CUDA query fails / returns False on the NPU host and the trainer refuses to start."),
  ])

E("musiclm_requirements", "requirements.txt", "explicit_replacement",
  "pinned requirements.txt of a musiclm-pytorch training setup",
  [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; Ascend hosts need CPU torch (x86) or plain PyPI torch (aarch64)."),
    C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True,
      "torch==2.1.0",
      "+cu118 build cannot be installed/used; torch_npu 2.1.0.postN requires exactly torch 2.1.0."),
    C("torchaudio==2.1.2+cu118", "torch_cuda_api", "replace", True,
      "torchaudio==2.1.0",
      "Must match the torch 2.1.0 CPU build."),
    C("# keep torch / torchaudio in lockstep", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "torch-npu pin for torch 2.1.0."),
    C("triton==2.1.0", "triton_kernel_tuning", "removal", False,
      None,
      "Only used by lion-pytorch's optional CUDA Triton kernel; not usable on NPU (triton-ascend is separate). Install failure on "
      "aarch64 unconfirmed."),
    C("nvidia-ml-py3", "torch_cuda_api", "removal", False,
      None,
      "NVML bindings; no NPU equivalent (npu-smi / torch.npu.utilization), unused by the training code here."),
  ])

# ---------------------------------------------------------------- lion-pytorch (Triton kernel)

E("lion_triton", "lion_pytorch/triton.py", "kernel_rewrite",
  "lucidrains/lion-pytorch lion_pytorch/triton.py (autotuned Triton update kernel)",
  [
    C("triton.Config({'BLOCK_SIZE': 128}, num_warps = 4),", "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE': 4096}),",
      "num_warps is a CUDA warp notion; triton-ascend kernels want larger blocks per vector core. Tuning only, values unconfirmed."),
    C("triton.Config({'BLOCK_SIZE': 1024}, num_warps = 8),", "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE': 16384}),",
      "Same."),
    C("assert all([t.is_cuda for t in (p, grad, exp_avg)])", "device_type", "replace", True,
      "assert all([t.is_npu for t in (p, grad, exp_avg)])",
      "NPU tensors have is_cuda False, so the assertion rejects every call."),
    C("grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']),)", "triton_kernel_tuning", "replace", False,
      "grid = lambda meta: (min(triton.cdiv(n_elements, meta['BLOCK_SIZE']), NUM_VECTOR_CORES),)  # loop over blocks in-kernel",
      "triton-ascend guidance is to launch about one program per core and loop inside; performance, unconfirmed here."),
  ])

# ---------------------------------------------------------------- flash-cosine-sim-attention (CUDA extension)

E("fcsa_setup", "setup.py", "kernel_rewrite",
  "lucidrains/flash-cosine-sim-attention setup.py (CUDAExtension build)",
  [
    C("from torch.utils.cpp_extension import CUDAExtension, BuildExtension", "custom_cuda_extension", "replace", False,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "Kernel rewrite only: unchanged, nvcc is absent so ext_modules() returns [] and the package installs without its kernel "
      "(the wrapper falls back to the einsum path)."),
    C("call([\"nvcc\"], stdout = DEVNULL, stderr = DEVNULL)", "custom_cuda_extension", "replace", False,
      "return os.path.isdir(os.environ.get('ASCEND_TOOLKIT_HOME', '/usr/local/Ascend/ascend-toolkit/latest'))",
      "Build detection must look for the CANN toolkit instead of nvcc."),
    C("CUDAExtension(", "custom_cuda_extension", "replace", False,
      "NpuExtension(",
      "torch_npu's NpuExtension adds the torch_npu/ACL include and lib paths."),
    C("sources = [\"flash_cosine_sim_attention/flash_cosine_sim_attention_cuda.cu\"],", "custom_cuda_extension", "replace", False,
      "sources = [\"flash_cosine_sim_attention/flash_cosine_sim_attention_npu.cpp\"],",
      "The .cu kernel has to be rewritten (Ascend C / op-plugin binding); no nvcc path on Ascend."),
    C("extra_compile_args = {'cxx': ['-O3'], 'nvcc': ['-O3', '--use_fast_math', '-lineinfo', '-gencode=arch=compute_80,code=sm_80']}", "custom_cuda_extension", "replace", False,
      "extra_compile_args = {'cxx': ['-O3']}",
      "nvcc / sm_80 flags are meaningless for the NPU build."),
  ])

E("fcsa_wrapper", "flash_cosine_sim_attention/flash_cosine_sim_attention.py", "kernel_rewrite",
  "lucidrains/flash-cosine-sim-attention flash_cosine_sim_attention/flash_cosine_sim_attention.py",
  [
    C("cuda_pkg = importlib.import_module(__cuda_pkg_name__)", "custom_cuda_extension", "replace", False,
      "cuda_pkg = importlib.import_module(__npu_pkg_name__ if " + NPU_AVAIL + " else __cuda_pkg_name__)",
      "Unchanged the ImportError is caught and only a message is printed."),
    C("if t.data.is_cuda:", "device_type", "replace", False,
      "if t.data.is_cuda or t.data.is_npu:",
      "NPU tensors take the slower manual l2norm path; results are the same."),
    C("fn = flash_cosine_sim_attention_cuda if q.data.is_cuda else plain_cosine_sim_attention", "attention_kernel", "add_branch", False,
      "fn = flash_cosine_sim_attention_cuda if q.data.is_cuda else (npu_cosine_sim_attention if q.data.is_npu else plain_cosine_sim_attention)",
      "On NPU the unchanged code uses plain_cosine_sim_attention (materialises the full attention matrix): correct but slow and "
      "memory hungry. The NPU branch calls the rewritten kernel or torch_npu.npu_fusion_attention(q, k, v, heads, 'BNSD', scale = 8) on "
      "the l2-normalised q/k."),
  ])
