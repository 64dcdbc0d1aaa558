# Labels for probe194: text-to-audio / music generation (stable-audio-tools, AudioLDM/AudioLDM2, Tango, audiocraft).
# One entry per upstream file; one C(...) per line a careful porter would edit for Ascend NPU (torch_npu).
# "required" = the unchanged line fails, computes something wrong, or silently does the wrong thing on an NPU host
# (judged for the line when it executes); performance-only / no-op / unconfirmed claims are required=False.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------- stable-audio-tools

E("sat_train", "train.py", "explicit_replacement",
  "stable-audio-tools train.py (prefigure args, Lightning Trainer, DDP / DeepSpeed strategy)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry point: registers the npu device / torch.npu before the Trainer is built (mandatory before torch_npu 2.5.1 autoload, recommended after)"),
      C("strategy = DeepSpeedStrategy(stage=2,", "distributed_framework", "replace", False,
        "strategy = DDPStrategy(find_unused_parameters=True, process_group_backend=\"hccl\")  # Lightning DeepSpeedStrategy is CUDA-only",
        "unconfirmed: Lightning's DeepSpeedStrategy refuses non-CUDA accelerators in the versions I know; DeepSpeed itself has an NPU accelerator (knowledge §6), so keeping ZeRO-2 may be possible with a patched Lightning"),
      C("strategy = DDPStrategy(find_unused_parameters=True)", "dist_backend", "replace", True,
        "strategy = DDPStrategy(find_unused_parameters=True, process_group_backend=\"hccl\")",
        "Lightning picks nccl only for cuda root devices and gloo otherwise; gloo cannot all-reduce NPU tensors, HCCL is the NPU backend"),
      C("accelerator=\"gpu\",", "device_type", "replace", True,
        "accelerator=NPUAccelerator(),  # custom lightning Accelerator wrapping torch_npu",
        "'gpu' resolves to CUDA/MPS; with no CUDA device Lightning raises at Trainer construction. Lightning ships no NPU accelerator, a small Accelerator subclass (or a plugin) is needed"),
  ])

E("sat_run_gradio", "run_gradio.py", "explicit_replacement",
  "stable-audio-tools run_gradio.py launcher",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry point for the gradio UI; interface/gradio.py then uses torch.npu to pick the device"),
  ])

E("sat_training_utils", "stable_audio_tools/training/utils.py", "explicit_replacement",
  "stable-audio-tools training/utils.py (optimizer/scheduler factories)",
  [
      C("from deepspeed.ops.adam import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdam as FusedAdam",
        "DeepSpeed's FusedAdam is a CUDA op build; on NPU DeepSpeed may route it to an NPU op builder (unconfirmed). torch_npu.optim.NpuFusedAdam is the documented fused replacement (knowledge §5); only used when a config asks for type FusedAdam"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "memory logging is silently skipped on an NPU host; logging only"),
      C("torch.cuda.memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
        "f\"{prefix}/gpu_mem_allocated_gb\": torch.npu.memory_allocated() / 1e9,",
        "torch.cuda memory stats report 0 without CUDA; NPU form torch_npu.npu.memory_allocated (TSV)"),
      C("torch.cuda.max_memory_reserved() / 1e9", "torch_cuda_api", "replace", False,
        "f\"{prefix}/gpu_mem_peak_reserved_gb\": torch.npu.max_memory_reserved() / 1e9,",
        "logging only; NPU form torch_npu.npu.max_memory_reserved (TSV)"),
  ])

E("sat_training_diffusion", "stable_audio_tools/training/diffusion.py", "explicit_replacement",
  "stable-audio-tools training/diffusion.py (DiffusionCondTrainingWrapper + demo callback)",
  [
      C("=with torch.cuda.amp.autocast():", "amp", "replace", True,
        "with torch.npu.amp.autocast():",
        "torch.cuda.amp.autocast warns and disables itself when CUDA is absent: the T5/number conditioners silently run in fp32. TSV maps it to torch_npu.npu.amp.autocast"),
      C("with torch.cuda.amp.autocast() and torch.set_grad_enabled(", "amp", "replace", False,
        "with torch.npu.amp.autocast() and torch.set_grad_enabled(self.diffusion.pretransform.enable_grad):",
        "upstream quirk: `a and b` enters only set_grad_enabled, so autocast is never active here even on CUDA; changed for consistency only"),
      C("with torch.cuda.amp.autocast(): # DiT forward", "amp", "replace", True,
        "with torch.npu.amp.autocast(): # DiT forward + loss in mixed precision",
        "main forward/loss would silently run in fp32 on NPU (CUDA autocast disabled)"),
      C("with torch.cuda.amp.autocast(enabled=True):  # T5", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=True):  # T5 conditioner in half precision",
        "demo conditioning: CUDA autocast silently off on NPU"),
      C("with torch.cuda.amp.autocast():  # sampling", "amp", "replace", True,
        "with torch.npu.amp.autocast():  # sampling + pretransform decode",
        "demo sampling: CUDA autocast silently off on NPU"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a no-op when CUDA was never initialised; NPU cache not released after demos (memory only)"),
  ])

E("sat_transformer", "stable_audio_tools/models/transformer.py", "explicit_replacement",
  "stable-audio-tools models/transformer.py (x-transformers style Attention with flash_attn / SDPA fallback)",
  [
      C("from torch.cuda.amp import autocast", "amp", "replace", True,
        "from torch.npu.amp import autocast",
        "@autocast(enabled=False) is meant to keep RoPE in fp32; the CUDA decorator does not switch off NPU autocast, so the rotary einsum silently runs in fp16 under NPU AMP"),
      C("self.use_pt_flash = torch.cuda.is_available() and", "torch_cuda_api", "replace", False,
        "self.use_pt_flash = (torch.cuda.is_available() or torch.npu.is_available()) and version.parse(torch.__version__) >= version.parse('2.0.0')",
        "on NPU this is False and attention falls back to the manual einsum path: correct but slow and memory hungry; SDPA dispatches to NPU FlashAttention (knowledge §3.7/§5)"),
      C("with torch.backends.cuda.sdp_kernel(**self.sdp_kwargs):", "attention_kernel", "replace", False,
        "with contextlib.nullcontext() if q.device.type == 'npu' else torch.backends.cuda.sdp_kernel(**self.sdp_kwargs):",
        "sdp_kernel is ✘ in Ascend's table and on msFmkTransplt's unsupported list; reached only once use_pt_flash is enabled; it seems to just toggle CUDA SDP flags, i.e. a no-op rather than an error (unconfirmed)"),
  ])

E("sat_autoencoders", "stable_audio_tools/models/autoencoders.py", "explicit_replacement",
  "stable-audio-tools models/autoencoders.py (Oobleck encoder/decoder, chunked encode)",
  [
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=False):",
        "fp32 decode island (force_fp32 configs): the CUDA context does not disable NPU autocast, so the decoder silently runs in fp16 on NPU"),
  ])

E("sat_generation", "stable_audio_tools/inference/generation.py", "explicit_replacement",
  "stable-audio-tools inference/generation.py (generate_diffusion_cond/uncond)",
  [
      C("=device = \"cuda\",", "device_type", "replace", True, "device = \"npu\",",
        "public API default: callers that omit device (scripts/notebooks) get torch.randn(..., device='cuda') which raises on an NPU host"),
      C("device: str = \"cuda\",", "device_type", "replace", True, "device: str = \"npu\",",
        "same default in generate_diffusion_cond"),
      C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "replace", False,
        "torch.npu.conv.allow_hf32 = False",
        "intent is full-fp32 convs for reproducible sampling; the cuDNN flag does not reach NPU convs, whose HF32 switch is torch.npu.conv.allow_hf32 (default on, from memory; unconfirmed). The matmul line above is left alone: NPU matmul HF32 is off by default"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; frees sampler buffers before the VAE decode on NPU (memory only)"),
  ])

E("sat_gradio", "stable_audio_tools/interface/gradio.py", "device_branch_or_abstraction",
  "stable-audio-tools interface/gradio.py (model loading + generation UI)",
  [
      C("def load_model(model_config=None, model_ckpt_path=None, pretrained_name=None, pretransform_ckpt_path=None, device=\"cuda\", model_half=False):",
        "device_type", "replace", False,
        "def load_model(model_config=None, model_ckpt_path=None, pretrained_name=None, pretransform_ckpt_path=None, device=\"npu\", model_half=False):",
        "default unused in-repo: create_ui always passes device; changed so direct callers don't hit 'cuda'"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():",
        "cache clearing before each generation is silently skipped on NPU (memory only)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "see previous line"),
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "add_branch", True,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cuda\" if torch.cuda.is_available() else \"cpu\")",
        "on an NPU host the model silently loads and samples on CPU"),
  ])

E("sat_dockerfile", "Dockerfile", "explicit_replacement",
  "community Dockerfile for stable-audio-tools (CUDA base, cu121 wheels, flash-attn build)",
  [
      C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "needs a CANN (driver-compatible) base image instead of CUDA; image name/tag is a placeholder (unconfirmed)"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
        "only steers nvcc builds; meaningless without CUDA"),
      C("RUN pip install torch==2.1.2 torchaudio==2.1.2 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
        "RUN pip install torch==2.1.0 torchaudio==2.1.0 torch-npu==2.1.0.post12",
        "CUDA wheel index and no torch_npu; torch_npu pairs with torch 2.1.0 (no 2.1.2 build, knowledge §1.2); x86 would use the /whl/cpu index"),
      C("MAX_JOBS=8 pip install flash-attn==2.5.8 --no-build-isolation", "attention_kernel", "removal", True, None,
        "flash-attn cannot be built/installed on NPU (knowledge §6); the code already falls back when it is missing"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
        "ENV ASCEND_VISIBLE_DEVICES=all",
        "nvidia-container-runtime variable, ignored on Ascend; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (value syntax for 'all' unconfirmed; usually set at docker run)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime only"),
  ])

E("sat_train_sh", "scripts/train_multinode.sh", "explicit_replacement",
  "SLURM multi-node launcher for stable-audio-tools fine-tuning",
  [
      C("module load cuda/12.1", "import_torch_npu", "replace", True, SET_ENV,
        "the CANN environment must be sourced for torch_npu/HCCL to load"),
      C("module load nccl/2.18.3", "dist_backend", "removal", False, None,
        "HCCL ships with CANN; the module likely doesn't exist on the NPU cluster (non-fatal without set -e)"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL_DEBUG has no effect on HCCL; CANN log level variable named from memory (unconfirmed)"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
        "silent no-op on NPU; HCCL uses the NPU RoCE NICs"),
      C("export NCCL_SOCKET_IFNAME=ens", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=ens",
        "interface pinning silently lost on NPU; HCCL_SOCKET_IFNAME takes the same prefix syntax and a wrong NIC choice breaks multi-node link setup (knowledge ascend-distributed §1)"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog variable; documented default is already 1"),
      C("export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False,
        "export ASCEND_LAUNCH_BLOCKING=0",
        "0 is the default anyway; NPU name from memory (unconfirmed)"),
      C("srun --ntasks-per-node=1 nvidia-smi", "torch_cuda_api", "replace", False,
        "srun --ntasks-per-node=1 npu-smi info",
        "diagnostic only; nvidia-smi is absent on NPU nodes (knowledge §6: npu-smi)"),
      C("--strategy deepspeed \\", "distributed_framework", "replace", False,
        "--strategy ddp \\",
        "follows the train.py DeepSpeedStrategy judgement (Lightning DeepSpeed is CUDA-only, unconfirmed)"),
  ])

# ---------------------------------------------------------------- AudioLDM / AudioLDM 2

E("aldm_pipeline", "audioldm/pipeline.py", "device_branch_or_abstraction",
  "AudioLDM audioldm/pipeline.py (build_model, text_to_audio, style_transfer)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "public API module (from audioldm import build_model, text_to_audio); the NPU branch below needs torch.npu"),
      C("if(torch.cuda.is_available()):", "device_type", "add_branch", True,
        "elif hasattr(torch, \"npu\") and torch.npu.is_available(): device = torch.device(\"npu:0\")",
        "build_model silently loads the LDM on CPU on an NPU host"),
      C("=if torch.cuda.is_available():", "device_type", "add_branch", True,
        "elif hasattr(torch, \"npu\") and torch.npu.is_available(): device = torch.device(\"npu:0\")",
        "style_transfer: mel/latents sent to CPU while the model may be on NPU"),
      C("with autocast(\"cuda\"):", "amp", "replace", True,
        "with autocast(device.type):",
        "torch.autocast('cuda') without CUDA warns and disables: DDIM decode silently fp32 on NPU"),
  ])

E("aldm_ddim", "audioldm/latent_diffusion/ddim.py", "explicit_replacement",
  "AudioLDM / LDM latent_diffusion/ddim.py (DDIMSampler with hard-coded cuda register_buffer)",
  [
      C("if attr.device != torch.device(\"cuda\"):", "device_type", "replace", False,
        "if attr.device != self.model.device:",
        "the comparison itself runs fine; once the .to() below targets the model device it is only a redundant copy"),
      C("attr = attr.to(torch.device(\"cuda\"))", "tensor_to_device", "replace", True,
        "attr = attr.to(self.model.device)",
        "every schedule buffer is pushed to cuda: raises on an NPU host"),
  ])

E("aldm_hifigan", "audioldm/hifigan/utilities.py", "explicit_replacement",
  "AudioLDM hifigan/utilities.py (vocoder loading/inference helpers)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "the module doubles as a script (__main__ smoke test) that selects torch.npu"),
      C("state_dict = torch.load(ckpt)[\"state_dict\"]", "device_type", "replace", True,
        "state_dict = torch.load(ckpt, map_location=\"cpu\")[\"state_dict\"]",
        "GPU-trained Lightning checkpoints hold CUDA storages; unpickling them without map_location fails on a CUDA-less host"),
      C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "add_branch", True,
        "device = \"npu\" if torch.npu.is_available() else \"cuda\" if torch.cuda.is_available() else \"cpu\"",
        "smoke test silently runs on CPU"),
  ])

E("aldm_train", "audioldm_train/train/latent_diffusion.py", "explicit_replacement",
  "AudioLDM-training-finetuning train/latent_diffusion.py (Lightning Trainer, DDPStrategy)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
      C("pin_memory=True,", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device=\"npu\",",
        "without CUDA the DataLoader may skip pinning (depends on torch version); perf only, unconfirmed"),
      C("devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "devices = torch.npu.device_count()",
        "0 on an NPU host -> Trainer(devices=0) is rejected"),
      C("accelerator=\"gpu\",", "device_type", "replace", True,
        "accelerator=NPUAccelerator(),  # custom lightning Accelerator wrapping torch_npu",
        "'gpu' accelerator needs CUDA; Lightning has no built-in NPU accelerator"),
      C("strategy=DDPStrategy(find_unused_parameters=True),", "dist_backend", "replace", True,
        "strategy=DDPStrategy(find_unused_parameters=True, process_group_backend=\"hccl\"),",
        "default backend for a non-cuda root device is gloo, which cannot reduce NPU tensors"),
      C("ckpt = torch.load(resume_from_checkpoint)[\"state_dict\"]", "device_type", "replace", True,
        "ckpt = torch.load(resume_from_checkpoint, map_location=\"cpu\")[\"state_dict\"]",
        "external checkpoints come from GPU runs; CUDA storages can't be restored without CUDA"),
      C("assert torch.cuda.is_available(), \"CUDA is not available\"", "torch_cuda_api", "replace", True,
        "assert torch.npu.is_available(), \"NPU is not available\"",
        "hard failure on an NPU host"),
  ])

E("aldm2_pipeline", "audioldm2/pipeline.py", "device_branch_or_abstraction",
  "AudioLDM2 audioldm2/pipeline.py (build_model with cuda/mps/cpu auto device, text_to_audio)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "public API module; the NPU branch needs torch.npu"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)",
        "silent no-op without CUDA; torch.manual_seed above should already seed accelerator generators (unconfirmed for NPU), explicit seeding keeps generation reproducible"),
      C("=if torch.cuda.is_available():", "device_type", "add_branch", True,
        "elif hasattr(torch, \"npu\") and torch.npu.is_available(): device = torch.device(\"npu:0\")",
        "device='auto' silently resolves to CPU on an NPU host"),
  ])

E("aldm2_diffusers_infer", "scripts/text_to_audio_diffusers.py", "explicit_replacement",
  "batch inference script around diffusers AudioLDM2Pipeline",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point"),
      C("pipe.enable_model_cpu_offload()", "device_type", "replace", False,
        "pipe.enable_model_cpu_offload(device=\"npu\")",
        "older diffusers default the offload target to 'cuda', newer ones detect the accelerator (unconfirmed); only with --cpu_offload"),
      C("pipe = pipe.to(\"cuda\")", "tensor_to_device", "replace", True,
        "pipe = pipe.to(\"npu\")", "raises on an NPU host"),
      C("pipe.unet = torch.compile(pipe.unet, mode=\"reduce-overhead\", fullgraph=True)", "compile_mode", "replace", False,
        "pipe.unet = torch.compile(pipe.unet, backend=\"npugraphs\", fullgraph=True)",
        "reduce-overhead = Inductor + CUDA graphs; NPU graph capture is backend 'npugraphs' (TSV note on torch.compile); behaviour of mode='reduce-overhead' on NPU unconfirmed; only with --compile"),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = True",
        "perf only; TSV lists the CUDA flag as supported (fp32 only) but whether it maps to NPU HF32 is unclear (unconfirmed)"),
      C("generator = torch.Generator(\"cuda\").manual_seed(args.seed)", "device_type", "replace", True,
        "generator = torch.Generator(\"npu\").manual_seed(args.seed)",
        "a CUDA generator cannot be created without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "torch.cuda.synchronize initialises CUDA and raises on a CUDA-less build"),
      C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
        "print(f\"[{i:04d}] {elapsed:6.2f}s  peak {torch.npu.max_memory_allocated() / 2**30:5.2f} GiB  {prompt!r}\")",
        "reports 0 GiB without CUDA; logging only"),
  ])

E("aldm2_app", "app.py", "transfer_to_npu",
  "AudioLDM2 Hugging Face Space app.py (gradio + diffusers)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "quick port via transfer_to_npu: torch.cuda.is_available/Generator/.to('cuda') are redirected (knowledge §2), so the cuda branch below runs on the NPU unchanged"),
  ])

# ---------------------------------------------------------------- Tango

E("tango_train", "train.py", "explicit_replacement",
  "Tango train.py (accelerate, flan-t5 + LDM UNet on AudioCaps)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "accelerate (>=0.22) imports torch_npu itself when probing for an NPU, so the script runs without it; added for explicitness"),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = True",
        "--allow_tf32 speed knob; NPU equivalent is HF32 (unconfirmed mapping)"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op without CUDA; memory only"),
      C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
        "result[\"peak_gpu_mem_gb\"] = round(torch.npu.max_memory_allocated() / 1e9, 2)",
        "logs 0 without CUDA; logging only"),
  ])

E("tango_inference", "inference.py", "explicit_replacement",
  "Tango inference.py (evaluation with audioldm_eval + CLAP re-ranking)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry point; .npu() below needs torch_npu"),
      C("vae, stft, model = tango.vae.cuda(), tango.stft.cuda(), tango.model.cuda()", "tensor_to_device", "replace", True,
        "vae, stft, model = tango.vae.npu(), tango.stft.npu(), tango.model.npu()", ".cuda() raises without CUDA"),
      C("vae, stft = vae.cuda(), stft.cuda()", "tensor_to_device", "replace", True,
        "vae, stft = vae.npu(), stft.npu()", ".cuda() raises without CUDA"),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", ".cuda() raises without CUDA"),
      C("model.load_state_dict(torch.load(args.model))", "device_type", "replace", True,
        "model.load_state_dict(torch.load(args.model, map_location=\"cpu\"))",
        "weights saved by accelerate.save_state on GPU are CUDA storages; torch.load without map_location fails on an NPU host"),
      C("evaluator = EvaluationHelper(16000, \"cuda:0\")", "device_type", "replace", True,
        "evaluator = EvaluationHelper(16000, \"npu:0\")",
        "audioldm_eval builds its PANNs/FAD models on this device; further CUDA assumptions inside audioldm_eval not checked"),
  ])

E("tango_models", "models.py", "explicit_replacement",
  "Tango models.py (AudioDiffusion: T5 encoder + diffusers UNet)", [])

E("tango_api", "tango.py", "device_branch_or_abstraction",
  "Tango tango.py (Tango wrapper class for HF checkpoints)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "public API module (from tango import Tango); 'npu' device strings need torch_npu loaded"),
      C("def __init__(self, name=\"declare-lab/tango\", device=\"cuda:0\"):", "device_type", "replace", True,
        "def __init__(self, name=\"declare-lab/tango\", device=\"npu:0\"):",
        "README usage Tango('declare-lab/tango') relies on the default, which raises on an NPU host"),
  ])

E("tango_requirements", "requirements.txt", "explicit_replacement",
  "Tango requirements.txt (torch 1.13 + cu117 wheels, accelerate 0.18)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu needs the CPU torch build on x86 (knowledge §1.1), plain PyPI on aarch64"),
      C("=torch==1.13.1", "import_torch_npu", "replace", True, "torch==2.1.0",
        "there is no torch_npu release for torch 1.13 (§1.2/1.3); 2.1.0 is the closest supported line"),
      C("=torchaudio==0.13.1", "import_torch_npu", "replace", True, "torchaudio==2.1.0",
        "must follow the torch bump or pip's resolver fails"),
      C("=torchvision==0.14.1", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "must follow the torch bump or pip's resolver fails"),
      C("=transformers==4.27.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the torch-npu pin itself; placed after the (rewritten) torch stack"),
      C("=accelerate==0.18.0", "distributed_framework", "replace", True, "accelerate>=0.22.0",
        "NPU support in accelerate starts at 0.22.0 (knowledge §6); 0.18 silently trains on CPU"),
  ])

E("tango_train_sh", "train.sh", "explicit_replacement",
  "Tango train.sh (accelerate launch on 4 GPUs)",
  [
      C("# Tango (flan-t5-large + LDM UNet) on AudioCaps", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced before launching"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on NPU: the device restriction is silently lost (knowledge ascend-distributed §1)"),
  ])

# ---------------------------------------------------------------- audiocraft (MusicGen)

E("ac_transformer", "audiocraft/modules/transformer.py", "explicit_replacement",
  "audiocraft modules/transformer.py (StreamingMultiheadAttention with xformers / torch SDPA backends)",
  [
      C("=from xformers import ops", "attention_kernel", "replace", True,
        "ops = None  # xformers has no Ascend build; only the torch SDPA backend is used on NPU",
        "unconditional import; xformers has no NPU backend and is not installable on a typical Atlas host (knowledge §6)"),
      C("=_verify_xformers_memory_efficient_compat()", "attention_kernel", "replace", True,
        "if _efficient_attention_backend == 'xformers': _verify_xformers_memory_efficient_compat()",
        "raises ImportError whenever memory_efficient=True (MusicGen LM config), even with the torch backend"),
      C("=from xformers.ops import LowerTriangularMask", "unsupported_op_workaround", "replace", True,
        "LowerTriangularMask = object  # marker only: the torch backend just tests attn_mask is not None",
        "the causal mask object is imported from xformers even for the torch SDPA backend"),
      C("q, k, v = ops.unbind(packed, dim=2)", "unsupported_op_workaround", "replace", True,
        "q, k, v = packed.unbind(dim=2)",
        "xformers.ops.unbind is used on the custom/memory-efficient path regardless of backend"),
      C("x = ops.memory_efficient_attention(q, k, v, attn_mask, p=p)", "attention_kernel", "replace", False,
        "raise RuntimeError(\"efficient_attention_backend=xformers is not available on Ascend NPU, use torch\")",
        "reached only with backend=xformers, which the ported configs no longer select; SDPA (NPU FA inside) is the replacement"),
      C("if self._is_streaming and self.safe_streaming and q.device.type == 'cuda':", "device_type", "replace", False,
        "if self._is_streaming and self.safe_streaming and q.device.type in ('cuda', 'npu'):",
        "fp32 einsum workaround for streaming decode on GPU; whether NPU needs it is unconfirmed"),
  ])

E("ac_train", "audiocraft/train.py", "explicit_replacement",
  "audiocraft train.py (dora hydra_main entry point)",
  [
      C("=import omegaconf", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "dora entry point; torch is already imported via flashy, so torch_npu goes with the top-level imports"),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = True",
        "perf knob; TSV lists the CUDA flag as supported (fp32 only), mapping to NPU HF32 unconfirmed"),
      C("torch.backends.cudnn.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.conv.allow_hf32 = True",
        "perf knob; conv HF32 on NPU (unconfirmed)"),
  ])

E("ac_distrib", "flashy/distrib.py", "explicit_replacement",
  "flashy distrib.py (init / average_metrics / eager_sync used by audiocraft solvers)",
  [
      C("def init(backend='nccl'):", "dist_backend", "replace", True, "def init(backend='hccl'):",
        "NCCL is absent on NPU; HCCL is the backend"),
      C("local_rank = int(os.environ.get('LOCAL_RANK', rank_ % torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
        "local_rank = int(os.environ.get('LOCAL_RANK', rank_ % torch.npu.device_count()))",
        "the default is evaluated eagerly: device_count() is 0 on an NPU host -> ZeroDivisionError even when LOCAL_RANK is set"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():",
        "otherwise falls back to gloo and silently trains on CPU"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "fails without CUDA; all ranks must bind their own NPU"),
      C("return torch.device('cuda') if distributed.get_backend() == 'nccl' else torch.device('cpu')", "dist_backend", "replace", True,
        "return torch.device('npu') if distributed.get_backend() == 'hccl' else torch.device('cpu')",
        "backend-string comparison is not rewritten even by transfer_to_npu (knowledge §2.4); with hccl it would hand CPU tensors to HCCL"),
      C("tensor = torch.tensor(list(values) + [1], device='cuda', dtype=torch.float32)", "device_type", "replace", True,
        "tensor = torch.tensor(list(values) + [1], device='npu', dtype=torch.float32)",
        "metrics averaging creates a CUDA tensor: raises on NPU"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "fails without CUDA"),
      C("output_device=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
        "output_device=torch.npu.current_device(),", "fails without CUDA"),
  ])

E("ac_solver_musicgen", "audiocraft/solvers/musicgen.py", "explicit_replacement",
  "audiocraft solvers/musicgen.py (MusicGenSolver: GradScaler, sync debug, run_step)",
  [
      C("self.scaler = ShardedGradScaler()  # type: ignore", "amp", "replace", False,
        "self.scaler = ShardedGradScaler(device=\"npu\")  # type: ignore",
        "defaults to device='cuda' and disables itself without CUDA (recalled, unconfirmed); FSDP itself is ✘ in Ascend's 2.7.1 table"),
      C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler()",
        "torch.cuda.amp.GradScaler disables itself when CUDA is absent: fp16 autocast training silently runs without loss scaling (TSV: torch_npu.npu.amp.GradScaler)"),
  ])

E("ac_musicgen", "audiocraft/models/musicgen.py", "device_branch_or_abstraction",
  "audiocraft models/musicgen.py (MusicGen.get_pretrained / generation API, v1.0 layout)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "public API module (MusicGen.get_pretrained from notebooks/demos); the NPU branch needs torch.npu"),
      C("if torch.cuda.device_count():", "torch_cuda_api", "add_branch", True,
        "elif torch.npu.device_count(): device = 'npu'",
        "device=None silently resolves to CPU on an NPU host"),
  ])

E("ac_config_yaml", "config/config.yaml", "explicit_replacement",
  "audiocraft config/config.yaml (base hydra config)",
  [
      C("=device: cuda", "device_type", "replace", True, "device: npu",
        "StandardSolver moves models/batches to cfg.device for every solver"),
  ])

E("ac_solver_yaml", "config/solver/musicgen/musicgen_base_32khz.yaml", "explicit_replacement",
  "audiocraft config/solver/musicgen/musicgen_base_32khz.yaml",
  [
      C("device: cuda", "device_type", "replace", True, "device: npu",
        "EMA copy is kept on optim.ema.device: raises on NPU"),
  ])

E("ac_requirements", "requirements.txt", "explicit_replacement",
  "audiocraft requirements.txt",
  [
      C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch_npu wheel matching torch 2.1.0 (knowledge §1.2)"),
      C("=xformers<0.0.23", "attention_kernel", "removal", False, None,
        "no NPU backend (knowledge §6) and no longer imported after the port; whether the pip install itself fails on aarch64 is unconfirmed"),
  ])

E("ac_grid", "audiocraft/grids/musicgen/musicgen_base_32khz.py", "explicit_replacement",
  "audiocraft grids/musicgen/musicgen_base_32khz.py (dora grid)",
  [
      C("mem_eff = {'efficient_attention_backend': 'xformers'}", "attention_kernel", "replace", True,
        "mem_eff = {'efficient_attention_backend': 'torch'}",
        "selects the xformers backend for every XP of the grid; xformers is unavailable on NPU"),
      C("fsdp = {'autocast': False, 'fsdp.use': True}", "distributed_framework", "replace", False,
        "fsdp = {'autocast': False, 'fsdp.use': False}",
        "torch.distributed.fsdp.FullyShardedDataParallel is ✘ in Ascend's 2.7.1 table while fully_shard is ✔; unconfirmed whether audiocraft's FSDP wrapper runs, safer with flashy's DDP-style sync"),
  ])
