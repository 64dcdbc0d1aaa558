"""Labels for probe389 (human image animation / pose-guided video generation, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
TORCH_NPU_PIN = "torch-npu==2.0.1.post1"

# ---------------------------------------------------------------------------------------------
# Moore-AnimateAnyone (MooreThreads/Moore-AnimateAnyone)
# ---------------------------------------------------------------------------------------------
E("maa_train_stage1", "train_stage_1.py", "explicit_replacement",
  "MooreThreads/Moore-AnimateAnyone train_stage_1.py (accelerate stage-1 trainer: ReferenceNet + PoseGuider)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "torch 2.0.1 pinned: no device-backend autoload, torch_npu must be imported before any 'npu' device is used"),
    C('pose_cond_tensor = pose_img.to(device="cuda")', "tensor_to_device", "replace", True,
      'pose_cond_tensor = pose_img.to(device="npu")',
      "hard-coded cuda device inside Net.forward; raises on a CUDA-less host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "after validation; torch.cuda.empty_cache is a silent no-op without CUDA, NPU cache just stays reserved (memory only)"),
    C('vae = AutoencoderKL.from_pretrained(cfg.vae_model_path).to("cuda", dtype=weight_dtype)', "tensor_to_device",
      "replace", True, 'vae = AutoencoderKL.from_pretrained(cfg.vae_model_path).to("npu", dtype=weight_dtype)',
      "frozen VAE is placed by hand, not through accelerator.prepare"),
    C('subfolder="unet").to(device="cuda")', "tensor_to_device", "replace", True,
      'reference_unet = UNet2DConditionModel.from_pretrained(cfg.base_model_path, subfolder="unet").to(device="npu")',
      "reference UNet placed by hand before accelerator.prepare"),
    C('=).to(device="cuda")', "tensor_to_device", "replace", True, ').to(device="npu")',
      "denoising UNet3D placement"),
    C(').to(dtype=weight_dtype, device="cuda")', "tensor_to_device", "replace", True,
      ').to(dtype=weight_dtype, device="npu")', "CLIP image encoder placement"),
    C('block_out_channels=(16, 32, 96, 256)).to(device="cuda")', "tensor_to_device", "replace", True,
      'pose_guider = PoseGuider(conditioning_embedding_channels=320, block_out_channels=(16, 32, 96, 256)).to(device="npu")',
      "PoseGuider (pretrained openpose branch) placement"),
    C('PoseGuider(conditioning_embedding_channels=320).to(device="cuda")', "tensor_to_device", "replace", True,
      'pose_guider = PoseGuider(conditioning_embedding_channels=320).to(device="npu")',
      "PoseGuider (random init branch) placement"),
    C('clip_img.to("cuda", dtype=weight_dtype)', "tensor_to_device", "replace", True,
      'clip_image_embeds = image_enc(clip_img.to("npu", dtype=weight_dtype)).image_embeds',
      "batch tensor moved to a hard-coded cuda device in the training step"),
])

E("maa_stage1_cfg", "configs/train/stage1.yaml", "explicit_replacement",
  "MooreThreads/Moore-AnimateAnyone configs/train/stage1.yaml", [
    C("enable_xformers_memory_efficient_attention: True", "attention_kernel", "replace", True,
      "enable_xformers_memory_efficient_attention: False",
      "xformers has no NPU backend; with True the trainer raises 'xformers is not available'. diffusers then uses "
      "AttnProcessor2_0 (F.scaled_dot_product_attention), which dispatches to NPU fused attention"),
])

E("maa_pose2vid", "scripts/pose2vid.py", "explicit_replacement",
  "MooreThreads/Moore-AnimateAnyone scripts/pose2vid.py (inference entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script; torch 2.0.1 has no autoload"),
    C('=).to("cuda", dtype=weight_dtype)', "tensor_to_device", "replace", True, ').to("npu", dtype=weight_dtype)',
      "VAE placement"),
    C('=).to(dtype=weight_dtype, device="cuda")', "tensor_to_device", "replace", True,
      ').to(dtype=weight_dtype, device="npu")', "reference UNet placement"),
    C('=).to(device="cuda", dtype=weight_dtype)', "tensor_to_device", "replace", True,
      ').to(device="npu", dtype=weight_dtype)', "denoising UNet3D placement"),
    C('=dtype=weight_dtype, device="cuda"', "tensor_to_device", "replace", True, 'dtype=weight_dtype, device="npu"',
      "PoseGuider placement (argument on its own line)"),
    C('from_pretrained(config.image_encoder_path).to(dtype=weight_dtype, device="cuda")', "tensor_to_device", "replace",
      True, 'image_enc = CLIPVisionModelWithProjection.from_pretrained(config.image_encoder_path).to(dtype=weight_dtype, device="npu")',
      "CLIP image encoder placement"),
    C('pipe = pipe.to("cuda", dtype=weight_dtype)', "tensor_to_device", "replace", True,
      'pipe = pipe.to("npu", dtype=weight_dtype)', "pipeline placement"),
])

E("maa_motion_module", "src/models/motion_module.py", "explicit_replacement",
  "MooreThreads/Moore-AnimateAnyone src/models/motion_module.py (AnimateDiff VersatileAttention)", [])

E("maa_wholebody", "src/dwpose/wholebody.py", "explicit_replacement",
  "MooreThreads/Moore-AnimateAnyone src/dwpose/wholebody.py (DWPose via onnxruntime)", [
    C('["CPUExecutionProvider"] if device == "cpu" else ["CUDAExecutionProvider"]', "device_type", "replace", False,
      '["CPUExecutionProvider"] if device == "cpu" else ["CANNExecutionProvider", "CPUExecutionProvider"]',
      "ONNX Runtime, not torch: a CPU onnxruntime build warns about the unavailable CUDA provider and runs on CPU, "
      "so nothing fails; CANNExecutionProvider (onnxruntime built with CANN) is unconfirmed in the knowledge base"),
])

E("maa_extract_dwpose", "tools/extract_dwpose_from_vid.py", "explicit_replacement",
  "MooreThreads/Moore-AnimateAnyone tools/extract_dwpose_from_vid.py", [])

E("maa_requirements", "requirements.txt", "explicit_replacement",
  "MooreThreads/Moore-AnimateAnyone requirements.txt", [
    C("onnxruntime-gpu==1.16.3", "device_type", "replace", False, "onnxruntime==1.16.3",
      "DWPose only; CUDA build of ORT is useless on an NPU host (aarch64 wheel availability unconfirmed)"),
    C("=torch==2.0.1", "import_torch_npu", "npu_only_addition", True, TORCH_NPU_PIN,
      "torch_npu wheel matching torch 2.0.1 (branch v2.0.1-5.0.0, CANN 7.0.0 per the version matrix)"),
    C("=xformers==0.0.22", "attention_kernel", "removal", True, None,
      "xformers has no NPU build; the pip install (source build needing CUDA) fails"),
])

E("maa_util", "src/utils/util.py", "explicit_replacement",
  "MooreThreads/Moore-AnimateAnyone src/utils/util.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant next to torch.manual_seed, which also seeds the registered privateuse1 (npu) generator; "
      "the cuda call is a queued no-op without CUDA"),
])

# ---------------------------------------------------------------------------------------------
# MagicAnimate (magic-research/magic-animate)
# ---------------------------------------------------------------------------------------------
E("mga_animation", "magicanimate/pipelines/animation.py", "explicit_replacement",
  "magic-research/magic-animate magicanimate/pipelines/animation.py (entry, mp.spawn multi-GPU inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry module"),
    C('device = torch.device(f"cuda:{args.rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.rank}")', "per-rank device used for every module"),
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "removal", True, None,
      "diffusers raises ModuleNotFoundError when xformers is missing; default AttnProcessor2_0 (SDPA) is used instead"),
    C("appearance_encoder.enable_xformers_memory_efficient_attention()", "attention_kernel", "removal", True, None,
      "same as the UNet call"),
    C("controlnet.enable_xformers_memory_efficient_attention()", "attention_kernel", "removal", True, None,
      "same as the UNet call"),
    C('generator = torch.Generator(device=torch.device("cuda:0"))', "device_type", "replace", True,
      'generator = torch.Generator(device=torch.device("npu:0"))',
      "CUDA generator cannot be created without CUDA; kept on device 0 like upstream"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: set_device is skipped and every spawned rank silently runs on npu:0"),
    C("torch.cuda.set_device(args.device_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.device_id)",
      "per-rank device selection"),
    C("torch.cuda.init()", "torch_cuda_api", "replace", True, "torch.npu.init()",
      "torch.cuda.init raises without a CUDA driver"),
    C("args.world_size = max(1, torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "args.world_size = max(1, torch.npu.device_count())", "cuda device_count is 0 on an NPU host"),
    C("assert args.world_size <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert args.world_size <= torch.npu.device_count()", "assert would fail (1 <= 0)"),
    C("if args.world_size > 0 and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if args.world_size > 0 and torch.npu.device_count() > 1:",
      "otherwise --dist silently does nothing (no spawn, no main)"),
])

E("mga_dist_tools", "magicanimate/utils/dist_tools.py", "explicit_replacement",
  "magic-research/magic-animate magicanimate/utils/dist_tools.py", [
    C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',", "NCCL is not available on Ascend"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards only a warm-up all_reduce; left unchanged it just skips the warm-up"),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", "replace", True,
      "dist.all_reduce(torch.zeros(1).npu())", "reached once the guard above is ported; .cuda() raises"),
    C("if not dist.is_nccl_available():", "dist_backend", "replace", False, "if not dist.is_hccl_available():",
      "get_rank() then returns 0 on every rank, which only affects print suppression here; "
      "is_hccl_available is the name transfer_to_npu aliases (knowledge section 2.4)"),
])

E("mga_pipeline", "magicanimate/pipelines/pipeline_animation.py", "explicit_replacement",
  "magic-research/magic-animate magicanimate/pipelines/pipeline_animation.py (AnimationPipeline)", [
    C('device = torch.device(f"cuda:{gpu_id}")', "device_type", "replace", False,
      'device = torch.device(f"npu:{gpu_id}")',
      "enable_sequential_cpu_offload is not called by the shipped entry points; breaks only if a user calls it"),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()",
      "reference-image latents (path input branch)"),
    C("ref_image_latents = self.images2latents(source_image[None, :], latents_dtype).cuda()", "tensor_to_device",
      "replace", True, "ref_image_latents = self.images2latents(source_image[None, :], latents_dtype).npu()",
      "reference-image latents (ndarray branch, the one animation.py uses)"),
])

E("mga_gradio", "demo/gradio_animate.py", "explicit_replacement",
  "magic-research/magic-animate demo/gradio_animate.py", [])

E("mga_scripts", "scripts/animate_dist.sh", "explicit_replacement",
  "magic-research/magic-animate scripts/animate_dist.sh", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed only if the shell/image has not sourced it already (Ascend images usually do)"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "ignored on Ascend: world size comes from device_count, so the job silently uses every NPU instead of the 4 chosen"),
])

E("mga_env", "environment.yaml", "explicit_replacement",
  "magic-research/magic-animate environment.yaml", [
    C("nvidia-cublas-cu11", "device_type", "removal", False, None,
      "CUDA runtime wheel; unused on NPU (install succeeds on x86, aarch64 unconfirmed)"),
    C("nvidia-cuda-nvrtc-cu11", "device_type", "removal", False, None, "CUDA runtime wheel; unused on NPU"),
    C("nvidia-cuda-runtime-cu11", "device_type", "removal", False, None, "CUDA runtime wheel; unused on NPU"),
    C("nvidia-cudnn-cu11", "device_type", "removal", False, None, "cuDNN wheel; unused on NPU"),
    C("- torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "- " + TORCH_NPU_PIN,
      "torch_npu wheel for torch 2.0.1"),
    C("- triton==2.0.0", "triton_kernel_tuning", "removal", False, None,
      "CUDA Triton is unused on NPU (triton-ascend is a separate package); only an install-time dependency of CUDA torch"),
    C("- xformers==0.0.22", "attention_kernel", "removal", True, None, "no NPU build; install fails"),
])

# ---------------------------------------------------------------------------------------------
# Champ (fudan-generative-vision/champ)
# ---------------------------------------------------------------------------------------------
E("champ_inference", "inference.py", "explicit_replacement",
  "fudan-generative-vision/champ inference.py (multi-guidance SMPL-driven animation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('=).to(device="cuda", dtype=weight_dtype)', "tensor_to_device", "replace", True,
      ').to(device="npu", dtype=weight_dtype)', "guidance encoders (depth/normal/semantic/dwpose)"),
    C('device: str = "cuda",', "device_type", "replace", False, 'device: str = "npu",',
      "default parameter of inference(); the only caller passes device explicitly, so the default is never used"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene only; no-op without CUDA"),
    C("image_enc = CLIPVisionModelWithProjection.from_pretrained(cfg.image_encoder_path)", "tensor_to_device",
      "replace", True,
      'image_enc = CLIPVisionModelWithProjection.from_pretrained(cfg.image_encoder_path).to(dtype=weight_dtype, device="npu")',
      "CLIP image encoder placement"),
    C('vae = AutoencoderKL.from_pretrained(cfg.vae_model_path).to(dtype=weight_dtype, device="cuda")',
      "tensor_to_device", "replace", True,
      'vae = AutoencoderKL.from_pretrained(cfg.vae_model_path).to(dtype=weight_dtype, device="npu")', "VAE placement"),
    C('=).to(dtype=weight_dtype, device="cuda")', "tensor_to_device", "replace", True,
      ').to(dtype=weight_dtype, device="npu")', "denoising UNet3D placement"),
    C('reference_unet = UNet2DConditionModel.from_pretrained(cfg.base_model_path, subfolder="unet").to(device="cuda"',
      "tensor_to_device", "replace", True,
      'reference_unet = UNet2DConditionModel.from_pretrained(cfg.base_model_path, subfolder="unet").to(device="npu", dtype=weight_dtype)',
      "reference UNet placement"),
    C('=).to("cuda", dtype=weight_dtype)', "tensor_to_device", "replace", True, ').to("npu", dtype=weight_dtype)',
      "ChampModel wrapper placement"),
    C('=device="cuda",', "device_type", "replace", True, 'device="npu",',
      "call-site device string; feeds torch.Generator(device=...) and pipeline.to()"),
])

E("champ_infer_cfg", "configs/inference/inference.yaml", "explicit_replacement",
  "fudan-generative-vision/champ configs/inference/inference.yaml", [
    C("enable_xformers_memory_efficient_attention: true", "attention_kernel", "replace", True,
      "enable_xformers_memory_efficient_attention: false",
      "inference.py raises ValueError when xformers is unavailable; SDPA is the NPU path"),
])

E("champ_train_s1", "train_s1.py", "explicit_replacement",
  "fudan-generative-vision/champ train_s1.py (accelerate stage-1 trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "after validation; memory only"),
    C('vae = AutoencoderKL.from_pretrained(cfg.vae_model_path).to("cuda", dtype=weight_dtype)', "tensor_to_device",
      "replace", True, 'vae = AutoencoderKL.from_pretrained(cfg.vae_model_path).to("npu", dtype=weight_dtype)',
      "frozen VAE placed by hand"),
    C('image_enc = CLIPVisionModelWithProjection.from_pretrained(cfg.image_encoder_path).to(dtype=weight_dtype, device="cuda")',
      "tensor_to_device", "replace", True,
      'image_enc = CLIPVisionModelWithProjection.from_pretrained(cfg.image_encoder_path).to(dtype=weight_dtype, device="npu")',
      "frozen image encoder placed by hand"),
    C("optimizer_cls = torch.optim.AdamW", "fused_optimizer", "replace", False,
      "optimizer_cls = torch_npu.optim.NpuFusedAdamW",
      "performance only (msFmkTransplt advice; more memory); torch.optim.AdamW works on NPU"),
])

E("champ_train_cfg", "configs/train/stage1.yaml", "explicit_replacement",
  "fudan-generative-vision/champ configs/train/stage1.yaml", [
    C("enable_xformers_memory_efficient_attention: True", "attention_kernel", "replace", True,
      "enable_xformers_memory_efficient_attention: False", "train_s1.py raises ValueError without xformers"),
    C("use_8bit_adam: True", "fused_optimizer", "replace", True, "use_8bit_adam: False",
      "bitsandbytes 8-bit optimizers are not listed for NPU (only NF4 quant in the multi-backend branch)"),
])

E("champ_guidance", "models/guidance_encoder.py", "explicit_replacement",
  "fudan-generative-vision/champ models/guidance_encoder.py", [])

E("champ_smpl", "scripts/data_processors/smpl/generate_smpls.py", "device_branch_or_abstraction",
  "fudan-generative-vision/champ scripts/data_processors/smpl/generate_smpls.py (4D-Humans HMR2 preprocessing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "standalone script"),
    C('device = torch.device(f"cuda:{args.device}") if torch.cuda.is_available() else torch.device("cpu")',
      "device_type", "replace", True,
      'device = torch.device(f"npu:{args.device}") if torch.npu.is_available() else torch.device("cpu")',
      "silently falls back to CPU on an NPU host (HMR2 ViT-H on CPU)"),
])

E("champ_requirements", "requirements.txt", "explicit_replacement",
  "fudan-generative-vision/champ requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu docs install CPU torch from the cpu index on x86; whether a CUDA torch build underneath breaks torch_npu is unconfirmed"),
    C("onnxruntime-gpu==1.16.3", "device_type", "replace", False, "onnxruntime==1.16.3", "DWPose only"),
    C("torch==2.0.1+cu118", "device_type", "replace", True, "torch==2.0.1",
      "+cu118 local versions exist only for x86 on the CUDA index; aarch64 Ascend hosts cannot resolve it"),
    C("=torchdiffeq==0.2.3", "import_torch_npu", "npu_only_addition", True, TORCH_NPU_PIN,
      "torch_npu pin inserted after the torch line (which is itself labelled)"),
    C("torchvision==0.15.2+cu118", "device_type", "replace", True, "torchvision==0.15.2",
      "+cu118 torchvision pins torch==2.0.1+cu118 and conflicts with the CPU torch"),
    C("=xformers==0.0.22", "attention_kernel", "removal", True, None, "no NPU build"),
])

# ---------------------------------------------------------------------------------------------
# MimicMotion (Tencent/MimicMotion)
# ---------------------------------------------------------------------------------------------
E("mm_inference", "inference.py", "device_branch_or_abstraction",
  "Tencent/MimicMotion inference.py", [
    C("=import torch.jit", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level device global; silently runs SVD-XT on CPU in fp16 otherwise"),
    C("infer_config = OmegaConf.load(args.inference_config)", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "performance only; msFmkTransplt's default advice, benefit for this model unconfirmed"),
])

E("mm_pipeline", "mimicmotion/pipelines/pipeline_mimicmotion.py", "explicit_replacement",
  "Tencent/MimicMotion mimicmotion/pipelines/pipeline_mimicmotion.py (tiled SVD pipeline with PoseNet)", [
    C("with torch.cuda.device(device):", "torch_cuda_api", "replace", True, "with torch.npu.device(device):",
      "torch.cuda.device rejects a non-cuda torch.device ('Expected a cuda device')"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "frees the cache after modules are shuffled CPU<->device; memory only"),
])

E("mm_loader", "mimicmotion/utils/loader.py", "explicit_replacement",
  "Tencent/MimicMotion mimicmotion/utils/loader.py", [])

E("mm_dwpose", "mimicmotion/dwpose/dwpose_detector.py", "explicit_replacement",
  "Tencent/MimicMotion mimicmotion/dwpose/dwpose_detector.py", [])

E("mm_geglu", "mimicmotion/utils/geglu_patch.py", "explicit_replacement",
  "Tencent/MimicMotion mimicmotion/utils/geglu_patch.py", [])

E("mm_test_cfg", "configs/test.yaml", "explicit_replacement",
  "Tencent/MimicMotion configs/test.yaml", [])

E("mm_env", "environment.yaml", "explicit_replacement",
  "Tencent/MimicMotion environment.yaml", [
    C("- pytorch-cuda=11.7", "device_type", "replace", True, "- cpuonly",
      "selects the CUDA conda build (no aarch64 package); torch_npu sits on a CPU torch build"),
    C("- diffusers==0.27.0", "import_torch_npu", "npu_only_addition", True, "- " + TORCH_NPU_PIN,
      "torch_npu wheel added to the pip section"),
    C("- onnxruntime-gpu", "device_type", "replace", False, "- onnxruntime",
      "DWPose runs on the CPU provider on an NPU host anyway"),
])

# ---------------------------------------------------------------------------------------------
# UniAnimate (ali-vilab/UniAnimate, VGen code base)
# ---------------------------------------------------------------------------------------------
E("ua_inference", "inference.py", "explicit_replacement",
  "ali-vilab/UniAnimate inference.py (registry launcher)", [])

E("ua_entrance", "tools/inferences/inference_unianimate_entrance.py", "explicit_replacement",
  "ali-vilab/UniAnimate tools/inferences/inference_unianimate_entrance.py (mp.spawn worker per GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "module that owns the workers"),
    C("import torch.cuda.amp as amp", "amp", "replace", True, "import torch_npu.npu.amp as amp",
      "torch.cuda.amp.autocast disables itself without CUDA; the fp16 UNet (CPU_CLIP_VAE) then gets fp32 inputs"),
    C("cfg.gpus_per_machine = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "cfg.gpus_per_machine = torch.npu.device_count()", "0 on an NPU host -> world_size 0, no worker runs"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "per-worker device"),
    C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', world_size=cfg.world_size, rank=cfg.rank)", "NCCL -> HCCL"),
    C("clip_encoder.model.to(gpu)", "tensor_to_device", "replace", True, 'clip_encoder.model.to(f"npu:{gpu}")',
      "Module.to(int) means a CUDA index"),
    C("=autoencoder.cuda()", "tensor_to_device", "replace", True, "autoencoder.npu()", "VAE placement"),
    C("model = model.to(gpu)", "tensor_to_device", "replace", True, 'model = model.to(f"npu:{gpu}")',
      "Module.to(int) means a CUDA index"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "memory only"),
    C("misc_data = misc_data.unsqueeze(0).to(gpu)", "tensor_to_device", "replace", True,
      'misc_data = misc_data.unsqueeze(0).to(f"npu:{gpu}")', "Tensor.to(int) means a CUDA index"),
    C("vit_frame = vit_frame.unsqueeze(0).to(gpu)", "tensor_to_device", "replace", True,
      'vit_frame = vit_frame.unsqueeze(0).to(f"npu:{gpu}")', "Tensor.to(int)"),
    C("dwpose_data = dwpose_data.unsqueeze(0).to(gpu)", "tensor_to_device", "replace", True,
      'dwpose_data = dwpose_data.unsqueeze(0).to(f"npu:{gpu}")', "Tensor.to(int)"),
    C("random_ref_frame_data = random_ref_frame_data.unsqueeze(0).to(gpu)", "tensor_to_device", "replace", True,
      'random_ref_frame_data = random_ref_frame_data.unsqueeze(0).to(f"npu:{gpu}")', "Tensor.to(int)"),
    C("random_ref_dwpose_data = random_ref_dwpose_data.unsqueeze(0).to(gpu)", "tensor_to_device", "replace", True,
      'random_ref_dwpose_data = random_ref_dwpose_data.unsqueeze(0).to(f"npu:{gpu}")', "Tensor.to(int)"),
    C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
      "NVML: raises NVMLError_LibraryNotFound on an NPU host; the readings are never used"),
    C("handle=pynvml.nvmlDeviceGetHandleByIndex(0)", "torch_cuda_api", "removal", True, None, "NVML call"),
    C("meminfo=pynvml.nvmlDeviceGetMemoryInfo(handle)", "torch_cuda_api", "removal", True, None,
      "NVML call; meminfo is unused (torch.npu.mem_get_info if a reading is wanted)"),
    C("noise = noise.to(gpu)", "tensor_to_device", "replace", True, 'noise = noise.to(f"npu:{gpu}")', "Tensor.to(int)"),
    C("torch.cuda.empty_cache() # add this line", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache() # add this line", "after CPU-offloading CLIP/VAE; memory only"),
    C("clip_encoder.cuda() # add this line", "tensor_to_device", "replace", True, "clip_encoder.npu() # add this line",
      "reload after offload"),
    C("autoencoder.cuda() # add this line", "tensor_to_device", "replace", True, "autoencoder.npu() # add this line",
      "reload after offload"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
])

E("ua_seed", "utils/seed.py", "explicit_replacement",
  "ali-vilab/UniAnimate utils/seed.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant with torch.manual_seed, which seeds the npu generator too"),
])

E("ua_distributed", "utils/distributed.py", "explicit_replacement",
  "ali-vilab/UniAnimate utils/distributed.py (VGen distributed helpers)", [
    C("assert backend in ['gloo', 'nccl']", "dist_backend", "replace", True,
      "assert backend in ['gloo', 'nccl', 'hccl']", "backend-string check; 'hccl' trips the assert"),
    C("if backend == 'nccl':", "dist_backend", "replace", True, "if backend in ('nccl', 'hccl'):",
      "backend-string comparison (msFmkTransplt says edit by hand): route pickled-object gathers through a gloo group"),
    C("device = torch.device('cpu' if backend == 'gloo' else 'cuda')", "device_type", "replace", False,
      "device = torch.device('cpu' if backend == 'gloo' else 'npu')",
      "defensive: with the branch above ported, object gathers use gloo and this cuda arm is unreachable"),
])

E("ua_unet_util", "tools/modules/unet/util.py", "kernel_rewrite",
  "ali-vilab/UniAnimate tools/modules/unet/util.py (MemoryEfficientCrossAttention via xformers)", [
    C("=import xformers", "attention_kernel", "removal", True, None, "unconditional import; no NPU build"),
    C("=import xformers.ops", "attention_kernel", "removal", True, None, "unconditional import"),
    C("=out = xformers.ops.memory_efficient_attention(", "attention_kernel", "replace", True,
      "out = F.scaled_dot_product_attention(",
      "chunked branch; q/k/v are (b*heads, n, d), SDPA accepts them"),
    C("q_1, k_1, v_1, attn_bias=None, op=self.attention_op)", "attention_kernel", "replace", True, "q_1, k_1, v_1)",
      "xformers-only kwargs dropped"),
    C("out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None", "attention_kernel", "replace", True,
      "out = F.scaled_dot_product_attention(q, k, v)", "main branch"),
])

E("ua_cfg", "configs/UniAnimate_infer.yaml", "explicit_replacement",
  "ali-vilab/UniAnimate configs/UniAnimate_infer.yaml", [])

E("ua_requirements", "requirements.txt", "explicit_replacement",
  "ali-vilab/UniAnimate requirements.txt", [
    C("=xformers==0.0.20", "attention_kernel", "removal", True, None, "no NPU build"),
    C("=torch==2.0.1", "import_torch_npu", "npu_only_addition", True, TORCH_NPU_PIN, "torch_npu wheel"),
])
