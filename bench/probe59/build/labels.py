"""Labels for probe59 (hand-written synthetic upstream files; see ../README.md).

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
# Style names as the shared builder spells them; "device_branch_or_abstraction" is the device-agnostic style.
EXPL, XFER, AGN = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction"

IMPORT_NOTE = "torch.npu.* / the 'npu' device / hccl need torch_npu loaded (explicit import recommended even with autoload)"

# ============================================================================================
# consistency models (openai/consistency_models)
# ============================================================================================

E("cm_dist_util", "cm/dist_util.py", EXPL,
  "openai/consistency_models cm/dist_util.py (mpi4py launcher, rank -> CUDA_VISIBLE_DEVICES, gloo/nccl pick)", [
    C("=import torch.distributed as dist", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"',
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES; unchanged, every MPI rank sees all NPUs and dev() "
      "puts every rank on npu:0"),
    C('backend = "gloo" if not th.cuda.is_available() else "nccl"', "dist_backend", R, True,
      'backend = "hccl" if th.npu.is_available() else "gloo"',
      "th.cuda.is_available() is False on an NPU host, so the group silently comes up as gloo on localhost "
      "instead of HCCL"),
    C("=if th.cuda.is_available():", "device_type", R, True, "if th.npu.is_available():",
      "dev() silently returns the CPU on an NPU host"),
    C('return th.device("cuda")', "device_type", R, True, 'return th.device("npu")', "device string"),
])

E("cm_unet_flash", "cm/unet.py", EXPL,
  "openai/consistency_models cm/unet.py (QKVFlashAttention on flash-attn 0.2.x, attention_type switch)", [
    C("=import torch as th", "import_torch_npu", A, True, "import torch_npu",
      "needed for torch_npu.npu_fusion_attention in the ported QKVFlashAttention"),
    C('=attention_type="flash",', "attention_kernel", R, False, 'attention_type="legacy",',
      "AttentionBlock signature default only; UNetModel passes attention_type explicitly (the operative "
      "default is in script_util.py)"),
    C("from flash_attn.flash_attention import FlashAttention", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU; with the default attention_type='flash' this import runs "
      "when the UNet is built"),
    C("assert self.head_dim in [16, 32, 64]", "attention_kernel", R, False,
      'assert self.head_dim <= 768, "npu_fusion_attention supports head_dim <= 768"',
      "flash-attn 0.2 head-dim restriction; harmless for the shipped configs (64)"),
    C("self.inner_attn = FlashAttention(", "attention_kernel", R, True,
      "self.scale = self.head_dim ** -0.5",
      "FlashAttention module object from the flash-attn package"),
    C("qkv, _ = self.inner_attn(", "attention_kernel", R, True,
      'q, k, v = qkv.unbind(2); qkv = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", '
      'keep_prob=1.0, scale=self.scale)[0]',
      "flash-attn forward; layout b s three h d -> BSND for npu_fusion_attention (fp16/bf16 inputs)"),
])

E("cm_script_util", "cm/script_util.py", EXPL,
  "openai/consistency_models cm/script_util.py (model_and_diffusion_defaults with attention_type='flash')", [
    C('=attention_type="flash",', "attention_kernel", R, True, 'attention_type="legacy",',
      "the CLI default every cm_train/image_sample run gets; it routes AttentionBlock to the flash-attn "
      "wrapper (or to an npu_fusion_attention-based 'flash' path once unet.py is ported)"),
    C('attention_type="flash",  # fused', "attention_kernel", R, False,
      'attention_type="legacy",  # einsum path; "flash" uses npu_fusion_attention after the port',
      "create_model() default, only used when a caller omits attention_type"),
])

E("cm_train_util", "cm/train_util.py", EXPL,
  "openai/consistency_models cm/train_util.py TrainLoop (DDP only when CUDA is available, sync_cuda timing)", [
    C("self.sync_cuda = th.cuda.is_available()", "torch_cuda_api", R, False,
      "self.sync_cuda = th.npu.is_available()",
      "only gates the step-time synchronize below; False on NPU makes the logged step_time measure launch "
      "time, not compute time"),
    C("th.cuda.synchronize()", "torch_cuda_api", R, False, "th.npu.synchronize()",
      "unreached on an NPU host while sync_cuda stays False (see above)"),
    C("=if th.cuda.is_available():", "device_type", R, True, "if th.npu.is_available():",
      "unchanged, an NPU host skips DDP and trains every rank independently (only a warning is logged)"),
])

# ============================================================================================
# latent diffusion / stable diffusion (CompVis, Stability-AI/stablediffusion)
# ============================================================================================

E("ldm_main", "main.py", EXPL,
  "CompVis/latent-diffusion main.py (Lightning 1.4 trainer from --gpus, CUDACallback)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.reset_peak_memory_stats(trainer.root_gpu)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(pl_module.device)",
      "torch.cuda.* raises on a torch build without CUDA; root_gpu is CUDA-accelerator specific too"),
    C("=torch.cuda.synchronize(trainer.root_gpu)", "torch_cuda_api", R, True,
      "torch.npu.synchronize(pl_module.device)", "CUDA-only call"),
    C("torch.cuda.synchronize(trainer.root_gpu)  # wait", "torch_cuda_api", R, True,
      "torch.npu.synchronize(pl_module.device)  # wait for the epoch's kernels", "CUDA-only call"),
    C("max_memory = torch.cuda.max_memory_allocated(trainer.root_gpu)", "torch_cuda_api", R, True,
      "max_memory = torch.npu.max_memory_allocated(pl_module.device) / 2 ** 20", "CUDA-only call"),
    C('trainer_config["accelerator"] = "ddp"', "distributed_framework", R, True,
      'trainer_config["strategy"] = "ddp"  # with an NPU accelerator registered for Lightning',
      "Lightning's 'ddp' accelerator with gpus= is CUDA + NCCL; which Lightning NPU accelerator/plugin to use "
      "is not covered by the knowledge base"),
    C('if not "gpus" in trainer_config:', "device_type", R, True,
      'if not "devices" in trainer_config:  # accelerator="npu"',
      "--gpus drives Lightning's CUDA accelerator and fails on a host without CUDA; without it the run "
      "silently falls back to CPU"),
    C("ngpu = len(lightning_config.trainer.gpus.strip", "device_type", R, False,
      "ngpu = len(str(lightning_config.trainer.devices).strip(\",\").split(','))",
      "follows the trainer-argument rename; only affects the learning-rate scaling"),
])

E("ldm_ddim", "ldm/models/diffusion/ddim.py", EXPL,
  "CompVis/stable-diffusion ldm/models/diffusion/ddim.py (register_buffer forces cuda)", [
    C('if attr.device != torch.device("cuda"):', "device_type", R, True,
      "if attr.device != self.model.device:",
      "always true on NPU, so every schedule buffer is pushed to CUDA below"),
    C('attr = attr.to(torch.device("cuda"))', "tensor_to_device", R, True,
      "attr = attr.to(self.model.device)", "fails on a host without CUDA"),
])

E("ldm_attention", "ldm/modules/attention.py", EXPL,
  "Stability-AI/stablediffusion ldm/modules/attention.py (ATTN_PRECISION fp32 upcast, optional xformers)", [
    C("with torch.autocast(enabled=False, device_type = 'cuda'):", "amp", R, True,
      "with torch.autocast(enabled=False, device_type=q.device.type):",
      "disabling CUDA autocast leaves NPU autocast on, so the q.k^T the block upcasts to fp32 runs in fp16 "
      "again and can overflow - silently wrong"),
    C("out = xformers.ops.memory_efficient_attention(", "attention_kernel", R, False,
      'out = torch_npu.npu_fusion_attention(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1), 1, "BNSD", '
      "scale=self.dim_head ** -0.5)[0].squeeze(1)",
      "unreached on NPU: the guarded xformers import fails and BasicTransformerBlock picks 'softmax'; a port "
      "may route this class to the fused NPU kernel for speed"),
    C("out = einsum('b i j, b j d -> b i d', sim, v)", "attention_kernel", R, False,
      "out = F.scaled_dot_product_attention(q, k, v)  # SDPA dispatches to the NPU flash kernel",
      "performance: the explicit softmax attention materialises the full similarity matrix"),
    C("return x * F.gelu(gate)", "npu_fused_op", R, False,
      "return torch_npu.npu_geglu(self.proj(x), dim=-1, approximate=0)[0]",
      "performance only; npu_geglu argument convention (approximate / activate_left) unconfirmed"),
])

E("ldm_diffusionmodules_util", "ldm/modules/diffusionmodules/util.py", EXPL,
  "Stability-AI/stablediffusion ldm/modules/diffusionmodules/util.py (CheckpointFunction replays CUDA autocast)", [
    C('"enabled": torch.is_autocast_enabled(),', "amp", R, True,
      '"enabled": torch.npu.is_autocast_enabled(),',
      "the argument-less query reports CUDA autocast; under NPU autocast it is False, so the checkpointed "
      "recomputation below runs without autocast"),
    C('"dtype": torch.get_autocast_gpu_dtype(),', "amp", R, False,
      '"dtype": torch.npu.get_autocast_dtype(),',
      "CUDA autocast dtype; differs from the NPU one only for bf16 runs (unconfirmed)"),
    C("torch.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", R, True,
      "torch.npu.amp.autocast(**ctx.gpu_autocast_kwargs):",
      "CUDA autocast is inactive for NPU tensors: the backward recompute runs in fp32 while the forward ran "
      "in fp16, i.e. gradients come from a different graph"),
])

E("ldm_encoders", "ldm/modules/encoders/modules.py", EXPL,
  "Stability-AI/stablediffusion ldm/modules/encoders/modules.py (frozen CLIP/T5/OpenCLIP, device='cuda' defaults)", [
    C('def get_unconditional_conditioning(self, bs, device="cuda"):', "device_type", R, False,
      'def get_unconditional_conditioning(self, bs, device="npu"):',
      "only used when a caller omits device"),
    C('version="google/t5-v1_1-large", device="cuda"', "device_type", R, True,
      'def __init__(self, version="google/t5-v1_1-large", device="npu", max_length=77, freeze=True):',
      "configs instantiate the encoder without a device, so tokens.to('cuda') runs"),
    C('version="openai/clip-vit-large-patch14", device="cuda"', "device_type", R, True,
      'def __init__(self, version="openai/clip-vit-large-patch14", device="npu", max_length=77,',
      "SD v1 cond_stage_config has no device param; tokens go to 'cuda'"),
    C('version="laion2b_s32b_b79k", device="cuda"', "device_type", R, True,
      'def __init__(self, arch="ViT-H-14", version="laion2b_s32b_b79k", device="npu", max_length=77,',
      "SD v2 cond_stage_config has no device param"),
    C('t5_version="google/t5-v1_1-xl", device="cuda"', "device_type", R, True,
      'def __init__(self, clip_version="openai/clip-vit-large-patch14", t5_version="google/t5-v1_1-xl", device="npu",',
      "passed through to both sub-encoders"),
])

E("sd_txt2img", "scripts/txt2img.py", EXPL,
  "CompVis/stable-diffusion scripts/txt2img.py (model.cuda(), precision_scope('cuda'))", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "fails on a host without CUDA"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type", R, True,
      'device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "silently picks the CPU on an NPU host"),
    C('with precision_scope("cuda"):', "amp", R, True, 'with precision_scope("npu"):',
      "torch.autocast('cuda') (aliased as precision_scope) does not cover NPU tensors: the default "
      "--precision autocast run silently goes fp32"),
])

E("ldm_config_yaml", "configs/stable-diffusion/v2-finetune-512-xformers.yaml", EXPL,
  "Stability-AI/stablediffusion-style fine-tune config (vanilla-xformers VAE attention, Lightning gpu/ddp/nccl)", [
    C('=attn_type: "vanilla-xformers"', "attention_kernel", R, True, 'attn_type: "vanilla"',
      "forces the xformers attention block in the VAE; xformers has no NPU backend (the commented line above "
      "is a near-miss)"),
    C("accelerator: gpu", "device_type", R, True, "accelerator: npu",
      "Lightning's gpu accelerator needs CUDA; which NPU accelerator plugin provides 'npu' is not covered by the "
      "knowledge base"),
    C("process_group_backend: nccl", "dist_backend", R, True, "process_group_backend: hccl", "NCCL"),
])

E("ldm_environment_yaml", "environment.yaml", EXPL,
  "CompVis/latent-diffusion / stable-diffusion conda environment.yaml (cudatoolkit, xformers, nvitop)", [
    C("=- nvidia", "torch_cuda_api", X, False, None, "channel only serves CUDA packages; harmless once they are gone"),
    C("- cudatoolkit=11.3", "torch_cuda_api", X, True, None,
      "pulls the CUDA build of pytorch from the pytorch channel; torch_npu pairs with the CPU build"),
    C("- pytorch=1.12.1", "torch_cuda_api", R, True, "- pytorch=2.1.0=*cpu*",
      "no torch_npu for 1.12; torch_npu wheels pair with the same torch version (e.g. 2.1.0 + 2.1.0.postN)"),
    C("- torchvision=0.13.1", "torch_cuda_api", R, True, "- torchvision=0.16.0",
      "pinned to the CUDA torch 1.12.1"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post12",
      "torch_npu itself (CANN installed on the host)"),
    C("- xformers==0.0.16", "attention_kernel", X, True, None, "no NPU backend; wheel is built against CUDA torch"),
    C("- triton==2.0.0.dev20221202", "triton_kernel_tuning", X, False, None,
      "only there for xformers; NVIDIA triton is useless on NPU (triton-ascend is a separate package)"),
    C("- nvitop", "torch_cuda_api", X, False, None, "NVML-based monitor; use npu-smi"),
    C("CUDA_DEVICE_ORDER: PCI_BUS_ID", "env_var", X, False, None, "CUDA-only variable, ignored on NPU"),
    C('XFORMERS_FORCE_DISABLE_TRITON: "1"', "env_var", X, False, None, "meaningless once xformers is removed"),
])

# ============================================================================================
# EDM / EDM2 (NVlabs)
# ============================================================================================

E("edm_training_loop", "training/training_loop.py", EXPL,
  "NVlabs/edm training/training_loop.py (device default, peak-memory stats in the status line)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("device              = torch.device('cuda'),", "device_type", R, True,
      "device              = torch.device('npu'),",
      "train.py does not pass a device, so the default is what runs"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      "fields += [f\"gpumem {training_stats.report0('Resources/peak_gpu_mem_gb', torch.npu.max_memory_allocated(device) / 2**30):<6.2f}\"]",
      "CUDA-only call"),
    C("torch.cuda.max_memory_reserved(device)", "torch_cuda_api", R, True,
      "fields += [f\"reserved {training_stats.report0('Resources/peak_gpu_mem_reserved_gb', torch.npu.max_memory_reserved(device) / 2**30):<6.2f}\"]",
      "CUDA-only call"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "CUDA-only call"),
])

E("edm2_distributed", "torch_utils/distributed.py", EXPL,
  "NVlabs/edm2 torch_utils/distributed.py (env:// init, nccl, CUDA sync device for training_stats, CheckpointIO)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("backend = 'gloo' if os.name == 'nt' else 'nccl'", "dist_backend", R, True,
      "backend = 'gloo' if os.name == 'nt' else 'hccl'", "NCCL"),
    C("torch.cuda.set_device(int(os.environ.get('LOCAL_RANK', '0')))", "torch_cuda_api", R, True,
      "torch.npu.set_device(int(os.environ.get('LOCAL_RANK', '0')))", "CUDA-only call"),
    C("_sync_device = torch.device('cuda') if get_world_size() > 1 else None", "device_type", R, True,
      "_sync_device = torch.device('npu') if get_world_size() > 1 else None",
      "training_stats moves its counters to this device before all_reduce; a CUDA device fails on NPU"),
])

E("edm_fid", "fid.py", EXPL,
  "NVlabs/edm fid.py (pickled Inception detector, float64 mean/covariance accumulated on the device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("num_workers=3, prefetch_factor=2, device=torch.device('cuda'),", "device_type", R, True,
      "num_workers=3, prefetch_factor=2, device=torch.device('npu'),",
      "calc/ref never pass a device"),
    C("features = detector_net(images.to(device), **detector_kwargs).to(torch.float64)",
      "unsupported_op_workaround", R, False,
      "features = detector_net(images.to(device), **detector_kwargs).to(torch.float32)",
      "fp64 statistics on the device; NPU fp64 support/speed for this path unconfirmed (a port may keep fp32 "
      "on the NPU and accumulate the fp64 sums on the CPU)"),
    C("sigma += features.T @ features", "unsupported_op_workaround", R, False,
      "sigma += (features.T @ features).cpu().to(torch.float64)",
      "fp64 matmul on the NPU (no fp64 cube path) - unconfirmed whether it errors, falls back or is just slow"),
])

E("edm_generate", "generate.py", EXPL,
  "NVlabs/edm generate.py (EDM 2nd-order sampler in float64, StackedRandomGenerator)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("max_batch_size, device=torch.device('cuda'), **sampler_kwargs):", "device_type", R, True,
      "def main(network_pkl, outdir, subdirs, seeds, class_idx, max_batch_size, device=torch.device('npu'), **sampler_kwargs):",
      "click never passes device, so the default runs"),
    C("step_indices = torch.arange(num_steps, dtype=torch.float64, device=latents.device)",
      "unsupported_op_workaround", R, False,
      "step_indices = torch.arange(num_steps, dtype=torch.float32, device=latents.device)",
      "the sampler runs in float64 on the device; NPU fp64 elementwise support unconfirmed"),
    C("x_next = latents.to(torch.float64) * t_steps[0]", "unsupported_op_workaround", R, False,
      "x_next = latents.to(torch.float32) * t_steps[0]",
      "float64 sampler state (see above); fp32 changes results slightly"),
])

E("edm_dockerfile", "Dockerfile", EXPL,
  "NVlabs/edm Dockerfile on the NGC PyTorch image (NVIDIA env, NVML, nvidia-smi healthcheck)", [
    C("FROM nvcr.io/nvidia/pytorch:22.10-py3", "torch_cuda_api", R, True,
      "FROM <Ascend CANN + PyTorch base image>  # then: pip install torch==2.1.0 torch-npu==2.1.0.post12",
      "the NGC image is CUDA torch; an NPU container needs CANN + torch_npu (image name unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES 0-7",
      "nvidia-container-runtime variable; NPUs are exposed with --device /dev/davinciN or Ascend Docker Runtime"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", X, False, None, "nvidia-container-runtime only"),
    C('ENV TORCH_CUDA_ARCH_LIST "7.0 7.5 8.0 8.6+PTX"', "env_var", X, False, None, "nvcc arch list"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING 1", "env_var", R, False, "ENV HCCL_ASYNC_ERROR_HANDLING 1",
      "NCCL watchdog knob; HCCL_ASYNC_ERROR_HANDLING is the torch_npu counterpart"),
    C("RUN pip install --no-cache-dir nvidia-ml-py3==7.352.0", "torch_cuda_api", X, False, None,
      "NVML bindings, no NPU equivalent (npu-smi / torch.npu.utilization)"),
    C("HEALTHCHECK --interval=5m --timeout=30s CMD nvidia-smi", "torch_cuda_api", R, False,
      "HEALTHCHECK --interval=5m --timeout=30s CMD npu-smi info > /dev/null || exit 1",
      "the container is marked unhealthy without nvidia-smi; does not stop the job by itself"),
])

# ============================================================================================
# score_sde_pytorch custom op (rosinality-style JIT extension)
# ============================================================================================

E("score_sde_upfirdn2d", "op/upfirdn2d.py", EXPL,
  "yang-song/score_sde_pytorch op/upfirdn2d.py (JIT-loaded .cu op at import, cpu-only native fallback)", [
    C("from torch.utils.cpp_extension import load", "custom_cuda_extension", X, False, None,
      "the import itself works; it goes with the load() call"),
    C("upfirdn2d_op = load(", "custom_cuda_extension", X, True, None,
      "nvcc JIT build at import time; cpp_extension.load is marked unsupported on NPU"),
    C("grad_input = upfirdn2d_op.upfirdn2d(", "custom_cuda_extension", R, True,
      "grad_input = upfirdn2d_native(grad_output.view(-1, 1, *out_size), grad_kernel, down_x, down_y, up_x, up_y, g_pad_x0, g_pad_x1, g_pad_y0, g_pad_y1)",
      "call into the CUDA extension"),
    C("gradgrad_out = upfirdn2d_op.upfirdn2d(", "custom_cuda_extension", R, True,
      "gradgrad_out = upfirdn2d_native(gradgrad_input.view(-1, 1, ctx.in_size[2], ctx.in_size[3]), kernel, ctx.up_x, ctx.up_y, ctx.down_x, ctx.down_y, ctx.pad_x0, ctx.pad_x1, ctx.pad_y0, ctx.pad_y1)",
      "call into the CUDA extension"),
    C("out = upfirdn2d_op.upfirdn2d(input, kernel", "custom_cuda_extension", R, True,
      "out = upfirdn2d_native(input.view(-1, 1, in_h, in_w), kernel, up_x, up_y, down_x, down_y, pad_x0, pad_x1, pad_y0, pad_y1)",
      "call into the CUDA extension"),
    C('if input.device.type == "cpu":', "device_type", R, True, 'if input.device.type != "cuda":',
      "NPU tensors take the extension branch"),
])

# ============================================================================================
# DiT / SiT / Latte / OpenDiT
# ============================================================================================

E("sit_train", "train.py", EXPL,
  "willisma/SiT train.py (DiT lineage: int device index from rank % device_count, NCCL, A100 TF32)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('assert torch.cuda.is_available(), "Training currently requires at least one GPU."', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "Training currently requires at least one NPU."',
      "fails on an NPU host"),
    C('dist.init_process_group("nccl")', "dist_backend", R, True, 'dist.init_process_group("hccl")', "NCCL"),
    C("device = rank % torch.cuda.device_count()", "device_type", R, True,
      'device = torch.device("npu", rank % torch.npu.device_count())',
      "an int device means CUDA in .to()/factories; making it an npu torch.device fixes every later .to(device)"),
    C("=torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", "CUDA-only call"),
    C("opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)", "fused_optimizer", R, False,
      "opt = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-4, weight_decay=0)", "performance only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "CUDA-only call"),
])

E("dit_sample_ddp", "sample_ddp.py", EXPL,
  "facebookresearch/DiT sample_ddp.py (FID sample generation over DDP, int device index)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('assert torch.cuda.is_available(), "Sampling with DDP requires', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "Sampling with DDP requires at least one NPU."',
      "fails on an NPU host"),
    C('dist.init_process_group("nccl")', "dist_backend", R, True, 'dist.init_process_group("hccl")', "NCCL"),
    C("device = rank % torch.cuda.device_count()", "device_type", R, True,
      'device = torch.device("npu", rank % torch.npu.device_count())',
      "int device = CUDA for the .to()/randn/randint/tensor calls that follow"),
    C("=torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", "CUDA-only call"),
])

E("latte_train", "train.py", EXPL,
  "Vchitect/Latte train.py (slurm/torchrun setup_distributed, xformers flag, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=torch.backends.cudnn.allow_tf32 = True", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance only (dynamic video shapes)"),
    C('def setup_distributed(backend="nccl", port=None):', "dist_backend", R, True,
      'def setup_distributed(backend="hccl", port=None):', "main() calls it without arguments"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "0 or an error without CUDA; LOCAL_RANK is derived from it under slurm"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", R, True, "torch.npu.set_device(rank % num_gpus)",
      "CUDA-only call"),
    C('device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))', "device_type", R, True,
      'device = torch.device("npu", int(os.environ["LOCAL_RANK"]))', "device string"),
    C("model = torch.compile(model)", "compile_mode", R, False,
      'model = torch.compile(model, backend="npugraphs")',
      "use_compile is off in the shipped configs; Inductor/graph mode on NPU unconfirmed for this model"),
    C('raise ValueError("xformers is not available. Make sure it is installed correctly")', "attention_kernel", R, False,
      'logger.info("xformers is not available on NPU; using the default attention")',
      "reached only when the config enables xformers (that config line is the required change)"),
    C("opt = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0)", "fused_optimizer", R, False,
      "opt = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.learning_rate, weight_decay=0)",
      "performance only"),
    C('pin_memory_device="cuda",', "pin_memory", R, True, 'pin_memory_device="npu",',
      "pins batches for a CUDA device; fails without CUDA (reasoned from PyTorch, not in the knowledge base)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.mixed_precision)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.mixed_precision)",
      "CUDA GradScaler disables itself without CUDA: fp16 training runs without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=args.mixed_precision):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=args.mixed_precision):",
      "CUDA autocast is inactive for NPU tensors"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "CUDA-only call"),
])

E("latte_config_yaml", "configs/ucf101/ucf101_train.yaml", EXPL,
  "Vchitect/Latte configs/ucf101/ucf101_train.yaml (xformers on, launch keys for the shell wrapper)", [
    C("enable_xformers_memory_efficient_attention: True", "attention_kernel", R, True,
      "enable_xformers_memory_efficient_attention: False",
      "train.py raises when xformers is missing, and it has no NPU backend"),
    C("dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl",
      "passed by the launch wrapper to init_process_group"),
    C('cuda_visible_devices: "0,1,2,3,4,5,6,7"', "env_var", R, False,
      'ascend_rt_visible_devices: "0,1,2,3,4,5,6,7"',
      "exported as CUDA_VISIBLE_DEVICES by the wrapper; ignored on NPU, harmless while it lists every device"),
])

E("latte_sample_t2v", "sample/sample_t2v.py", XFER,
  "Vchitect/Latte sample/sample_t2v.py (diffusers pipeline, xformers, capability-based dtype)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu maps the torch.cuda calls and 'cuda' strings in this script"),
    C("dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16",
      "device_capability_check", R, True, "dtype = torch.bfloat16  # Atlas A2 supports bf16",
      "get_device_capability() returns None on NPU (unless TORCH_NPU_DEVICE_CAPABILITY is set), even through "
      "transfer_to_npu: TypeError"),
    C("transformer_model = torch.compile(transformer_model)", "compile_mode", R, False,
      'transformer_model = torch.compile(transformer_model, backend="npugraphs")',
      "use_compile is opt-in; transfer_to_npu turns Triton off for Inductor (unconfirmed how this model fares)"),
    C("videogen_pipeline.enable_xformers_memory_efficient_attention()", "attention_kernel", X, True, None,
      "diffusers raises when xformers is not installed/usable; xformers has no NPU backend"),
])

E("opendit_fused_modulate", "opendit/kernels/fused_modulate.py", EXPL,
  "NUS-HPC-AI-Lab/OpenDiT-style Triton LayerNorm+adaLN modulate kernel (Triton tutorial layer-norm backward)", [
    C('mean = torch.empty((M,), dtype=torch.float32, device="cuda")', "device_type", R, True,
      "mean = torch.empty((M,), dtype=torch.float32, device=x.device)", "hard-coded CUDA buffer"),
    C('rstd = torch.empty((M,), dtype=torch.float32, device="cuda")', "device_type", R, True,
      "rstd = torch.empty((M,), dtype=torch.float32, device=x.device)", "hard-coded CUDA buffer"),
    C("MAX_FUSED_SIZE = 65536 // x.element_size()", "triton_kernel_tuning", R, False,
      "MAX_FUSED_SIZE = 16384 // x.element_size()  # fit the NPU on-chip buffer",
      "64KB-per-row budget is a GPU shared-memory figure; the triton-ascend limit is unconfirmed"),
    C("num_warps = min(max(BLOCK_N // 256, 1), 8)", "triton_kernel_tuning", R, False,
      "num_warps = 1  # warps have no meaning on triton-ascend",
      "warp heuristic; unconfirmed how triton-ascend treats num_warps"),
    C("with torch.cuda.device(x.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(x.device.index):", "torch.cuda.device needs a CUDA build"),
    C("_ln_modulate_fwd[(M,)](", "triton_kernel_tuning", R, False,
      "_ln_modulate_fwd[(min(M, num_cores),)](  # loop over rows inside the kernel",
      "one program per row; Ascend prefers a grid near the AI-core count (unconfirmed)"),
    C("while tl.atomic_cas(Lock, 0, 1) == 1:", "unsupported_op_workaround", R, False,
      "# reduce partial dW/dB with a second pass instead of a spin lock",
      "spin lock on atomic_cas across programs; triton-ascend support unconfirmed"),
    C("=GROUP_SIZE_M = 64", "triton_kernel_tuning", R, False, "GROUP_SIZE_M = 32",
      "reduction-stream heuristic tuned for GPU SM counts"),
    C("with torch.cuda.device(dy.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(dy.device.index):", "torch.cuda.device needs a CUDA build"),
])

E("opendit_setup_py", "setup.py", EXPL,
  "NUS-HPC-AI-Lab/OpenDiT-style setup.py (optional CUDAExtension build on by default, nvcc version check)", [
    C('BUILD_EXT = int(os.environ.get("BUILD_EXT", "1"))', "custom_cuda_extension", R, True,
      'BUILD_EXT = int(os.environ.get("BUILD_EXT", "0"))',
      "default install builds the .cu kernels and raises without CUDA_HOME"),
    C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension", "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension; from torch.utils.cpp_extension import BuildExtension",
      "only for a real port of csrc/ to Ascend C"),
    C('raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"]', "custom_cuda_extension", X, False, None,
      "nvcc version check; unreached once BUILD_EXT defaults to 0"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", X, False, None, "nvcc arch list"),
    C("=CUDAExtension(", "custom_cuda_extension", R, False, "NpuExtension(",
      "the .cu sources need an Ascend C rewrite; unreached once BUILD_EXT defaults to 0"),
])

E("opendit_requirements", "requirements.txt", EXPL,
  "OpenDiT-style requirements.txt pinned to cu121 wheels (flash-attn, xformers, triton, NVML)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU wheel on x86 (plain PyPI on aarch64)"),
    C("=torch==2.2.2", "torch_cuda_api", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "no active torch_npu release for 2.2.2; torch_npu must match the torch version"),
    C("=torchvision==0.17.2", "torch_cuda_api", R, True, "torchvision==0.16.0", "pinned to torch 2.2.2"),
    C("=torchaudio==2.2.2", "torch_cuda_api", R, True, "torchaudio==2.1.0", "pinned to torch 2.2.2"),
    C("=flash-attn==2.5.6", "attention_kernel", X, True, None, "cannot be installed on NPU"),
    C("=xformers==0.0.25.post1", "attention_kernel", X, True, None, "no NPU backend; CUDA-built wheel"),
    C("=triton==2.2.0", "triton_kernel_tuning", R, True, "triton-ascend",
      "the repo's Triton kernels need the Ascend Triton backend"),
    C("=nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None, "NVML bindings, no NPU equivalent"),
    C("=gpustat==1.1.1", "torch_cuda_api", X, False, None, "NVML-based monitor"),
])

E("dit_slurm_sh", "scripts/slurm_train_sit_xl.sh", EXPL,
  "SiT/DiT-style multi-node sbatch + srun torchrun launch script (CUDA modules, NCCL/IB env)", [
    C("#SBATCH --gres=gpu:8", "device_type", R, False, "#SBATCH --gres=npu:8",
      "GRES naming depends on the cluster's Slurm config (unconfirmed)"),
    C("module load cuda/12.1 cudnn/8.9 nccl/2.18.3", "env_var", R, True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "the CANN environment must be sourced or import torch_npu fails (libhccl.so); the CUDA modules do not "
      "exist there and set -e stops the script"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=ib0",
      "ignored by HCCL; needed only if HCCL's own NIC choice cannot reach the root node"),
    C("export NCCL_IB_HCA=", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_DEBUG=INFO", "env_var", X, False, None, "NCCL-only logging"),
    C("export NCCL_NVLS_ENABLE=0", "env_var", X, False, None, "NCCL-only"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA-only"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "ignored on NPU; the NPU allocator reads PYTORCH_NPU_ALLOC_CONF"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL watchdog knob"),
    C("srun --ntasks-per-node=1 nvidia-smi", "torch_cuda_api", R, True,
      "srun --ntasks-per-node=1 npu-smi info",
      "nvidia-smi is missing on NPU nodes; srun fails and set -e aborts the job before training"),
])

# ============================================================================================
# k-diffusion, denoising-diffusion-pytorch
# ============================================================================================

E("kdiff_train", "train.py", AGN,
  "crowsonkb/k-diffusion train.py (accelerate, bf16 auto-pick, CUDA-event step timing)", [
    C("args.mixed_precision = 'bf16' if torch.cuda.is_bf16_supported() else 'fp16'", "torch_cuda_api", B, True,
      "args.mixed_precision = 'bf16' if (torch.cuda.is_available() and torch.cuda.is_bf16_supported()) or "
      "(hasattr(torch, 'npu') and torch.npu.is_available()) else 'fp16'",
      "without CUDA it raises (older torch) or silently answers False and the run goes fp16 instead of bf16"),
    C("=inner_model.compile()", "compile_mode", R, False, 'inner_model.compile(backend="npugraphs")',
      "opt-in flag; Inductor on NPU unconfirmed for these models"),
    C("opt = optim.AdamW(groups,", "fused_optimizer", R, False,
      "opt = torch_npu.optim.NpuFusedAdamW(groups,", "performance only"),
    C("opt = bnb.optim.Adam8bit(groups,", "fused_optimizer", R, False, "opt = optim.AdamW(groups,",
      "config-dependent; bitsandbytes 8-bit optimizers are not listed for NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      "(torch.npu if device.type == 'npu' else torch.cuda).empty_cache()",
      "silent no-op without CUDA"),
])

E("ddpm_attend", "denoising_diffusion_pytorch/attend.py", AGN,
  "lucidrains/denoising-diffusion-pytorch attend.py (sdp_kernel config for CUDA and CPU)", [
    C("with torch.backends.cuda.sdp_kernel(**config._asdict()):", "attention_kernel", B, True,
      "with (torch.backends.cuda.sdp_kernel(**config._asdict()) if is_cuda else nullcontext()):",
      "torch.backends.cuda.sdp_kernel is marked unsupported on NPU and is entered on every device when "
      "flash=True; SDPA itself dispatches to the NPU kernel"),
])

# ============================================================================================
# FID evaluation
# ============================================================================================

E("cleanfid_features", "cleanfid/features.py", EXPL,
  "GaParmar/clean-fid cleanfid/features.py (torchscript Inception, DataParallel by default)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('def feature_extractor(name="torchscript_inception", device=torch.device("cuda")', "device_type", R, False,
      'def feature_extractor(name="torchscript_inception", device=torch.device("npu"), resize_inside=False, use_dataparallel=True):',
      "build_feature_extractor always passes device"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", R, True,
      "pass  # DataParallel is unsupported on NPU; one process per device",
      "use_dataparallel defaults to True and DataParallel is marked unsupported"),
    C('def build_feature_extractor(mode, device=torch.device("cuda"), use_dataparallel=True):', "device_type", R, True,
      'def build_feature_extractor(mode, device=torch.device("npu"), use_dataparallel=True):',
      "public entry point commonly called with the default device"),
])

E("pytorch_fid_score", "src/pytorch_fid/fid_score.py", AGN,
  "mseitzer/pytorch-fid fid_score.py (auto device pick: cuda or cpu)", [
    C("=import torch", "import_torch_npu", A, True,
      "try:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    pass",
      "guarded import so torch.npu exists for the device pick"),
    C('device = torch.device("cuda" if (torch.cuda.is_available()) else "cpu")', "device_type", B, True,
      'device = torch.device("cuda" if torch.cuda.is_available() else "npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cpu")',
      "silently runs Inception on the CPU on an NPU host"),
])

# ============================================================================================
# guided-diffusion launch script
# ============================================================================================

E("gd_launch_sh", "scripts/train_imagenet64.sh", EXPL,
  "openai/guided-diffusion-style ImageNet-64 launch script (mpiexec, nvidia-smi GPU count, NCCL IB env)", [
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", X, False, None, "NCCL-only (RoCE GID)"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only logging"),
    C("NUM_GPUS=${NUM_GPUS:-$(nvidia-smi -L | wc -l)}", "torch_cuda_api", R, True,
      "NUM_GPUS=${NUM_GPUS:-$(npu-smi info -l | grep -c 'NPU ID')}",
      "nvidia-smi is missing: with pipefail the script stops (or mpiexec -n 0); npu-smi -l output format per "
      "the knowledge base, exact grep unconfirmed"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "torch_cuda_api", R, True,
      "npu-smi info", "command not found under set -e stops the script"),
    C("CUDA_VISIBLE_DEVICES=${SAMPLE_GPU} python scripts/classifier_sample.py", "env_var", R, False,
      "ASCEND_RT_VISIBLE_DEVICES=${SAMPLE_GPU} python scripts/classifier_sample.py ${MODEL_FLAGS} \\",
      "dist_util.setup_dist overwrites the variable with rank % GPUS_PER_NODE anyway (upstream quirk), so it "
      "has no effect on either platform"),
])
