"""Labels for probe157: controllable image / video generation pipelines on diffusers (CUDA -> Ascend NPU).

One C(...) per line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "torch_npu must be imported (torch_npu < 2.5.1 has no autoload) before any 'npu' device string or torch.npu call used by the port"

# ---------------------------------------------------------------- AnimateDiff
E("ad_animate", "scripts/animate.py", "explicit_replacement", "guoyww/AnimateDiff scripts/animate.py (v3 inference with SparseCtrl)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('subfolder="text_encoder").cuda()', "tensor_to_device", "replace", True,
      'text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_path, subfolder="text_encoder").npu()',
      "Module.cuda() needs a CUDA device"),
    C('subfolder="vae").cuda()', "tensor_to_device", "replace", True,
      'vae          = AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae").npu()',
      "Module.cuda() needs a CUDA device"),
    C("unet_additional_kwargs=OmegaConf.to_container(inference_config.unet_additional_kwargs)).cuda()", "tensor_to_device", "replace", True,
      'unet = UNet3DConditionModel.from_pretrained_2d(args.pretrained_model_path, subfolder="unet", unet_additional_kwargs=OmegaConf.to_container(inference_config.unet_additional_kwargs)).npu()',
      "Module.cuda() needs a CUDA device"),
    C("=controlnet.cuda()", "tensor_to_device", "replace", True, "controlnet.npu()", "Module.cuda() needs a CUDA device"),
    C("controlnet_images = torch.stack(controlnet_images).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "controlnet_images = torch.stack(controlnet_images).unsqueeze(0).npu()", "Tensor.cuda() needs a CUDA device"),
    C("else: assert False", "attention_kernel", "replace", True,
      "else: print('xformers unavailable, keeping the default (SDPA/NPU) attention')",
      "xformers has no NPU build, so is_xformers_available() is False on an NPU host and this assert aborts every run"),
    C('=).to("cuda")', "device_type", "replace", True, ').to("npu")', "pipeline moved to a hard-coded cuda device"),
    C('pipeline.to(torch.device("cuda"))', "device_type", "replace", True, 'pipeline.to(torch.device("npu"))',
      "torch.device('cuda') fails without CUDA"),
])

E("ad_train", "train.py", "explicit_replacement", "guoyww/AnimateDiff train.py (torchrun/slurm DDP motion-module training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU + "; also registers the hccl backend"),
    C("def init_dist(launcher=\"slurm\", backend='nccl', port=29500, **kwargs):", "dist_backend", "replace", True,
      "def init_dist(launcher=\"slurm\", backend='hccl', port=29500, **kwargs):", "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host, so rank % num_gpus raises ZeroDivisionError"),
    C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)", "CUDA call fails without CUDA"),
    C("num_gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus_per_node = torch.npu.device_count()",
      "returns 0 on an NPU host (modulo by zero)"),
    C("torch.cuda.set_device(local_rank)  # bind this proc to its GPU", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)  # bind this proc to its NPU", "CUDA call fails without CUDA"),
    C("enable_xformers_memory_efficient_attention: bool = True,", "attention_kernel", "replace", False,
      "enable_xformers_memory_efficient_attention: bool = False,",
      "default only matters when the YAML omits the key (the shipped YAML sets it; labelled there); xformers has no NPU build"),
    C("=vae.to(local_rank)", "tensor_to_device", "replace", True, 'vae.to(f"npu:{local_rank}")', "a bare int device means cuda:<int>"),
    C("=text_encoder.to(local_rank)", "tensor_to_device", "replace", True, 'text_encoder.to(f"npu:{local_rank}")', "a bare int device means cuda:<int>"),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "pinning target defaults to CUDA on older torch; performance only, unconfirmed"),
    C('=).to("cuda")', "device_type", "replace", True, ').to("npu")', "validation pipeline moved to a hard-coded cuda device"),
    C("=unet.to(local_rank)", "tensor_to_device", "replace", True, 'unet.to(f"npu:{local_rank}")', "a bare int device means cuda:<int>"),
    C("scaler = torch.cuda.amp.GradScaler() if mixed_precision_training else None", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler() if mixed_precision_training else None",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 training would run unscaled"),
    C('pixel_values = batch["pixel_values"].to(local_rank)', "tensor_to_device", "replace", True,
      'pixel_values = batch["pixel_values"].to(f"npu:{local_rank}")', "a bare int device means cuda:<int>"),
    C("with torch.cuda.amp.autocast(enabled=mixed_precision_training):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=mixed_precision_training):",
      "CUDA autocast is silently disabled on an NPU host, so mixed precision is lost"),
])

E("ad_motion", "animatediff/models/motion_module.py", "kernel_rewrite", "guoyww/AnimateDiff animatediff/models/motion_module.py (temporal attention, diffusers 0.11 CrossAttention)", [
    C("if self._use_memory_efficient_attention_xformers:", "attention_kernel", "add_branch", False,
      "if getattr(self, '_use_npu_fusion_attention', False): hidden_states = self._npu_fusion_attention(query, key, value, attention_mask)",
      "the xformers fast path can never be enabled on NPU, so temporal attention falls back to baddbmm+softmax; an npu_fusion_attention branch restores a fused kernel (performance only)"),
])

E("ad_pipeline", "animatediff/pipelines/pipeline_animation.py", "explicit_replacement", "guoyww/AnimateDiff animatediff/pipelines/pipeline_animation.py", [
    C('device = torch.device(f"cuda:{gpu_id}")', "device_type", "replace", True, 'device = torch.device(f"npu:{gpu_id}")',
      "enable_sequential_cpu_offload() hard-codes a cuda execution device; fails whenever the method is called"),
])

E("ad_env", "environment.yaml", "explicit_replacement", "guoyww/AnimateDiff environment.yaml (conda env)", [
    C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel only serves pytorch-cuda; harmless but pointless on Ascend"),
    C("=- pytorch-cuda=11.8", "device_type", "replace", True, "- cpuonly",
      "pytorch-cuda pulls the CUDA build of pytorch (and has no aarch64 package); torch_npu sits on the CPU build"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.0.1.post1",
      "torch_npu wheel matching pytorch 2.0.1 (branch v2.0.1-5.0.0, CANN 7.0.0) must be installed"),
    C("=- xformers==0.0.20", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend; if it installs, is_xformers_available() turns True and diffusers' enable_xformers path raises without CUDA"),
])

E("ad_traincfg", "configs/training/v1/training.yaml", "explicit_replacement", "guoyww/AnimateDiff configs/training/v1/training.yaml", [
    C("enable_xformers_memory_efficient_attention: True", "attention_kernel", "replace", True,
      "enable_xformers_memory_efficient_attention: False",
      "train.py raises 'xformers is not available' when this is True on an NPU host"),
])

# ---------------------------------------------------------------- IP-Adapter
E("ipa_attn", "ip_adapter/attention_processor.py", "device_branch_or_abstraction", "tencent-ailab/IP-Adapter ip_adapter/attention_processor.py (IPAttnProcessor / IPAttnProcessor2_0)", [
    # deliberately empty: device-agnostic processors; F.scaled_dot_product_attention is supported on NPU
])

E("ipa_demo", "ip_adapter_sdxl_demo.py", "explicit_replacement", "tencent-ailab/IP-Adapter ip_adapter_sdxl_demo notebook as a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "module-level device string used by every .to(device) and by IPAdapterXL"),
    C("=pipe.enable_model_cpu_offload()", "device_type", "replace", False, 'pipe.enable_model_cpu_offload(device="npu")',
      "older diffusers default the offload execution device to cuda; newer ones autodetect npu (unconfirmed)"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      'print(f"peak NPU memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")',
      "torch.cuda memory stats return 0 on an NPU host (wrong number reported)"),
])

E("ipa_train", "tutorial_train.py", "device_branch_or_abstraction", "tencent-ailab/IP-Adapter tutorial_train.py (accelerate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "script is device-agnostic through accelerate, which imports torch_npu itself when it detects an NPU; explicit import is belt-and-braces"),
])

E("ipa_faceid", "ip_adapter_faceid_demo.py", "explicit_replacement", "tencent-ailab/IP-Adapter IP-Adapter-FaceID-PlusV2 usage (insightface + onnxruntime-gpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('providers=["CUDAExecutionProvider", "CPUExecutionProvider"]', "device_type", "replace", False,
      'app = FaceAnalysis(name="buffalo_l", providers=["CANNExecutionProvider", "CPUExecutionProvider"])',
      "onnxruntime drops an unavailable CUDA provider and runs on CPU; CANN EP needs an onnxruntime CANN build (performance, unconfirmed)"),
    C('device = f"cuda:{args.gpu}"', "device_type", "replace", True, 'device = f"npu:{args.gpu}"', "device string handed to IPAdapterFaceID*"),
])

# ---------------------------------------------------------------- InstantID
E("iid_app", "gradio_demo/app.py", "explicit_replacement", "InstantID/InstantID gradio_demo/app.py (multi-ControlNet + LCM gradio app)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('dtype = torch.float16 if str(device).__contains__("cuda") else torch.float32', "device_type", "replace", False,
      'dtype = torch.float16 if str(device).split(":")[0] in ("cuda", "npu") else torch.float32',
      "on an npu device the app silently falls back to fp32: correct but ~2x memory and slower (performance)"),
    C('providers=["CUDAExecutionProvider", "CPUExecutionProvider"],', "device_type", "replace", False,
      'providers=["CANNExecutionProvider", "CPUExecutionProvider"],',
      "onnxruntime drops the unavailable CUDA provider and runs antelopev2 on CPU; CANN EP needs an onnxruntime CANN build (performance, unconfirmed)"),
    C("pipe.cuda(use_xformers=False)", "tensor_to_device", "replace", False, "pipe.to(device)",
      "calls InstantID's own cuda() method; it works once that method is ported (labelled in the pipeline file), renaming the call is cosmetic"),
])

E("iid_pipe", "pipeline_stable_diffusion_xl_instantid.py", "explicit_replacement", "InstantID/InstantID pipeline_stable_diffusion_xl_instantid.py (diffusers SDXL ControlNet subclass)", [
    C("self.to('cuda', dtype)", "device_type", "replace", True, "self.to('npu', dtype)",
      "the pipeline's cuda() helper hard-codes the cuda device; the gradio app calls it"),
    C("torch._inductor.cudagraph_mark_step_begin()", "compile_mode", "replace", False,
      "if torch.cuda.is_available(): torch._inductor.cudagraph_mark_step_begin()",
      "CUDA-graph-tree step marker, only reached when unet and controlnet are both torch.compiled; NPU graph mode (npugraphs) does not use cudagraph trees (unconfirmed)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host; only matters with model offload"),
])

E("iid_modelutil", "gradio_demo/model_util.py", "device_branch_or_abstraction", "InstantID/InstantID gradio_demo/model_util.py (ComfyUI-style device helper, torch_gc)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "torch_gc silently does nothing on an NPU host (cache flush between requests; performance only)"),
    C('with torch.cuda.device("cuda"):', "device_type", "replace", False, 'with torch.npu.device("npu"):',
      "inside the cache-flush helper; becomes reachable (and must change) once the gate above is ported"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "cache flush only"),
    C("=torch.cuda.ipc_collect()", "torch_cuda_api", "replace", False, "torch.npu.ipc_collect()", "cache flush only"),
    C("return torch.device(torch.cuda.current_device())", "torch_cuda_api", "add_branch", True,
      'return torch.device("npu", torch.npu.current_device()) if torch.npu.is_available() else torch.device(torch.cuda.current_device())',
      "default branch calls torch.cuda.current_device(), which raises without CUDA; this is where the app's device comes from"),
])

E("iid_req", "gradio_demo/requirements.txt", "explicit_replacement", "InstantID/InstantID gradio_demo/requirements.txt (HF Space)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index; torch_npu sits on the CPU torch build (x86) or plain PyPI torch (aarch64)"),
    C("torch==2.1.2+cu121", "device_type", "replace", True, "torch==2.1.0",
      "+cu121 local version does not exist for aarch64 and is the CUDA build; pin the torch version torch_npu supports"),
    C("torchvision==0.16.2+cu121", "device_type", "replace", True, "torchvision==0.16.0", "CUDA build of torchvision; must match the CPU torch"),
    C("=diffusers==0.25.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0 (branch v2.1.0-7.0.0, CANN 8.1.RC1); goes next to the torch pins"),
    C("=onnxruntime-gpu", "device_type", "replace", False, "onnxruntime",
      "CUDA build of onnxruntime (x86_64 wheels only); CPU onnxruntime or a CANN build is what runs on an Ascend host (unconfirmed)"),
    C("=xformers==0.0.23.post1", "attention_kernel", "removal", True, None,
      "no NPU backend; the wheel pins a CUDA torch and, once importable, diffusers' xformers path raises without CUDA"),
])

# ---------------------------------------------------------------- PhotoMaker
E("pm_app", "gradio_demo/app_v2.py", "device_branch_or_abstraction", "TencentARC/PhotoMaker gradio_demo/app_v2.py (PhotoMaker V2 + T2I-Adapter doodle, HF Space)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("providers=['CUDAExecutionProvider'], allowed_modules", "device_type", "replace", False,
      "face_detector = FaceAnalysis2(providers=['CANNExecutionProvider', 'CPUExecutionProvider'], allowed_modules=['detection', 'recognition'])",
      "onnxruntime warns and runs the face models on CPU when CUDA EP is unavailable; CANN EP needs an onnxruntime CANN build (performance, unconfirmed)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if torch.npu.is_available(): device = "npu"',
      "device probe has no NPU branch: on an Ascend host SDXL + adapter silently run on CPU"),
])

E("pm_infer", "inference_scripts/inference_pmv2.py", "explicit_replacement", "TencentARC/PhotoMaker inference_scripts/inference_pmv2.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("FaceAnalysis2(providers=['CUDAExecutionProvider', 'CPUExecutionProvider']", "device_type", "replace", False,
      "face_detector = FaceAnalysis2(providers=['CANNExecutionProvider', 'CPUExecutionProvider'], allowed_modules=['detection', 'recognition'])",
      "CUDA EP unavailable -> CPU fallback (performance, unconfirmed)"),
    C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "hard-coded device for pipe.to() and the Generator"),
    C("if torch.cuda.is_available() and torch.cuda.is_bf16_supported():", "device_capability_check", "replace", False,
      "if torch.npu.is_available() and torch.npu.is_bf16_supported():",
      "evaluates False on an NPU host so the script keeps fp16, which works on Ascend; bf16 is what the authors intended on capable hardware"),
    C("=pipe.enable_xformers_memory_efficient_attention()", "attention_kernel", "removal", True, None,
      "xformers cannot be installed for NPU; diffusers raises when enabling it. Default SDPA processor already uses the NPU fused attention"),
])

# ---------------------------------------------------------------- ControlNet (lllyasviel) and diffusers ControlNet training
E("cn_gradio", "gradio_canny2image.py", "explicit_replacement", "lllyasviel/ControlNet gradio_canny2image.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("location='cuda'))", "device_type", "replace", True,
      "model.load_state_dict(load_state_dict('./models/control_sd15_canny.pth', location='cpu'))",
      "load_state_dict() passes torch.device(location) as map_location; cuda fails without CUDA (load on CPU, then move)"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "Module.cuda() needs a CUDA device"),
    C("control = torch.from_numpy(detected_map.copy()).float().cuda() / 255.0", "tensor_to_device", "replace", True,
      "control = torch.from_numpy(detected_map.copy()).float().npu() / 255.0", "Tensor.cuda() needs a CUDA device"),
])

E("cn_cldm", "cldm/cldm.py", "explicit_replacement", "lllyasviel/ControlNet cldm/cldm.py (ControlLDM with low_vram_shift, abridged)", [
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
      "low_vram_shift (config.save_memory) moves sub-models with .cuda()"),
    C("self.control_model = self.control_model.cuda()", "tensor_to_device", "replace", True, "self.control_model = self.control_model.npu()",
      "low_vram_shift moves sub-models with .cuda()"),
    C("self.first_stage_model = self.first_stage_model.cuda()", "tensor_to_device", "replace", True,
      "self.first_stage_model = self.first_stage_model.npu()", "low_vram_shift moves sub-models with .cuda()"),
    C("self.cond_stage_model = self.cond_stage_model.cuda()", "tensor_to_device", "replace", True,
      "self.cond_stage_model = self.cond_stage_model.npu()", "low_vram_shift moves sub-models with .cuda()"),
])

E("cn_attn", "ldm/modules/attention.py", "kernel_rewrite", "lllyasviel/ControlNet ldm/modules/attention.py (SD2-era CrossAttention with ATTN_PRECISION and xformers)", [
    C("with torch.autocast(enabled=False, device_type = 'cuda'):", "amp", "replace", False,
      "with torch.autocast(enabled=False, device_type = 'npu'):",
      "fp32 guard for QK^T only disables CUDA autocast; under NPU autocast it would silently stop protecting against fp16 overflow. The shipped entry points run fp32, so not required"),
    C('attn_mode = "softmax-xformers" if XFORMERS_IS_AVAILBLE else "softmax"', "attention_kernel", "add_branch", False,
      'attn_mode = "softmax-xformers" if XFORMERS_IS_AVAILBLE else ("softmax-npu" if hasattr(torch, "npu") and torch.npu.is_available() else "softmax")',
      "without xformers every block falls back to einsum attention (quadratic memory); an SDPA/npu_fusion_attention class keeps a fused path (performance)"),
])

E("cn_train", "examples/controlnet/train_controlnet.py", "device_branch_or_abstraction", "huggingface/diffusers examples/controlnet/train_controlnet.py (v0.21-era)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "accelerate imports torch_npu itself when it detects an NPU; explicit import only needed for the npu-specific lines below on very old accelerate"),
    C('with torch.autocast("cuda"):', "amp", "replace", True, 'with torch.autocast("npu"):',
      "CUDA autocast is disabled on an NPU host; validation then mixes the fp32 ControlNet with the fp16 UNet/VAE and fails with a dtype mismatch under --mixed_precision fp16"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on an NPU host (cache flush after validation)"),
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", True,
      "optimizer_class = torch.optim.AdamW  # bitsandbytes 8-bit optimizers have no NPU kernels",
      "bitsandbytes 8-bit optimizers have no Ascend kernels, so --use_8bit_adam fails; fall back to AdamW (torch_npu.optim.NpuFusedAdamW is the fused option)"),
])

# ---------------------------------------------------------------- T2I-Adapter
E("t2i_app", "app_t2i_adapter_sdxl.py", "device_branch_or_abstraction", "TencentARC/T2I-Adapter SDXL HF Space app.py (controlnet_aux annotators + StableDiffusionXLAdapterPipeline)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("=if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "only decides whether the 'Running on CPU' banner is shown (cosmetic)"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', "silently picks CPU on an Ascend host"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "models are only loaded under this gate; on an NPU host pipe stays None and every request crashes"),
    C("=pipe.enable_xformers_memory_efficient_attention()", "attention_kernel", "removal", True, None,
      "enabled unless DISABLE_XFORMERS=1; xformers has no NPU build and diffusers raises. SDPA (default) maps to NPU fused attention"),
    C('pipe.unet = torch.compile(pipe.unet, mode="reduce-overhead", fullgraph=True)', "compile_mode", "replace", False,
      'pipe.unet = torch.compile(pipe.unet, backend="npugraphs", fullgraph=True)',
      "opt-in (ENABLE_TORCH_COMPILE=1); reduce-overhead relies on Triton/CUDA graphs, NPU graph capture goes through the npugraphs backend (unconfirmed)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on an NPU host"),
])

# ---------------------------------------------------------------- Stable Video Diffusion
E("svd_app", "app.py", "explicit_replacement", "multimodalart/stable-video-diffusion HF Space app.py (diffusers SVD-XT + torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('=pipe.to("cuda")', "device_type", "replace", True, 'pipe.to("npu")', "hard-coded cuda device"),
    C('pipe.unet = torch.compile(pipe.unet, mode="reduce-overhead", fullgraph=True)', "compile_mode", "replace", False,
      'pipe.unet = torch.compile(pipe.unet, backend="npugraphs", fullgraph=True)',
      "reduce-overhead = Inductor/Triton + CUDA graphs; on NPU graph capture is the npugraphs backend (whether reduce-overhead itself fails is unconfirmed)"),
])

E("svd_sample", "scripts/sampling/simple_video_sample.py", "device_branch_or_abstraction", "Stability-AI/generative-models scripts/sampling/simple_video_sample.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('device: str = "cuda",', "device_type", "replace", True, 'device: str = "npu",',
      "default device of the Fire CLI; everything downstream is parameterised on it"),
    C('=if device == "cuda":', "device_type", "replace", False, 'if device in ("cuda", "npu"):',
      "with device='npu' the OpenCLIP embedder is initialised on CPU and moved later: works, slower"),
    C('if device == "cuda":  # instantiate weights directly on the GPU', "device_type", "replace", False,
      'if device in ("cuda", "npu"):  # instantiate weights directly on the accelerator, skips a CPU copy',
      "else-branch instantiates on CPU then moves: correct, slower and more host RAM"),
])

# ---------------------------------------------------------------- LCM-LoRA
E("lcm_infer", "lcm_lora_sdxl.py", "explicit_replacement", "latent-consistency LCM-LoRA SDXL usage (diffusers docs / model card) with an ad-hoc latency benchmark", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('=pipe.to("cuda")', "device_type", "replace", True, 'pipe.to("npu")', "hard-coded cuda device"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True, "start = torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be created/recorded without CUDA (--benchmark path)"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True, "end = torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be created/recorded without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises without CUDA"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # torch.backends.cuda.sdp_kernel is unsupported on NPU; SDPA already dispatches to the NPU fused kernel",
      "torch.backends.cuda.sdp_kernel is marked unsupported in Ascend's API list and msFmkTransplt; the CUDA backend flags do not steer NPU SDPA (likely a silent no-op, unconfirmed)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "lazy CUDA init raises without CUDA; and timing needs an NPU sync"),
    C("mem = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", True,
      "mem = torch.npu.max_memory_allocated() / 1024**3", "returns 0 on an NPU host (wrong number reported)"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      'print(f"peak memory {mem:.2f} GiB on {torch.npu.get_device_name(0)}")', "raises without CUDA"),
])

E("lcm_launch", "examples/consistency_distillation/launch_lcm_lora_sdxl.sh", "explicit_replacement", "huggingface/diffusers consistency_distillation README launch command for train_lcm_distill_lora_sdxl.py, as a multi-GPU script", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH, ...) must be sourced before torch_npu can load"),
    C('export CUDA_VISIBLE_DEVICES="${GPUS:-0,1,2,3,4,5,6,7}"', "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES="${GPUS:-0,1,2,3,4,5,6,7}"',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: the device selection is silently lost"),
    C('NUM_PROCS=$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      "NUM_PROCS=$(echo \"${ASCEND_RT_VISIBLE_DEVICES}\" | tr ',' '\\n' | wc -l)",
      "process count derived from the renamed variable (set -u aborts on the old name once it is gone)"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NCCL tuning, ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL tuning, ignored by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL logging knob has no effect; CANN/HCCL log level is ASCEND_GLOBAL_LOG_LEVEL"),
    C("--enable_xformers_memory_efficient_attention \\", "attention_kernel", "removal", True, None,
      "training script raises 'xformers is not available' on an NPU host"),
    C("--use_8bit_adam \\", "fused_optimizer", "removal", True, None, "bitsandbytes 8-bit AdamW has no NPU kernels"),
])

# ---------------------------------------------------------------- container / build
E("docker", "Dockerfile", "explicit_replacement", "community Dockerfile for the InstantID / IP-Adapter-FaceID gradio demos (CUDA runtime base image)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA runtime base image has no CANN toolkit/driver user-space; an Ascend CANN image is needed for torch_npu"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "NVIDIA container-runtime variable is ignored; with Ascend Docker Runtime the NPUs are chosen by ASCEND_VISIBLE_DEVICES (or --device mounts at docker run)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA container-runtime only; harmless"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post12",
      "CUDA wheel index/build; torch_npu needs the CPU torch build of the matching version, plus the torch-npu wheel"),
    C("RUN pip install xformers==0.0.23.post1 --index-url https://download.pytorch.org/whl/cu121", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend and this wheel drags the CUDA torch back in"),
    C("RUN pip uninstall -y onnxruntime && pip install onnxruntime-gpu==1.17.1", "device_type", "removal", False, None,
      "CUDA build of onnxruntime; keep CPU onnxruntime (or install a CANN build) on Ascend (unconfirmed)"),
    C("HEALTHCHECK --interval=30s --timeout=5s CMD nvidia-smi > /dev/null || exit 1", "device_type", "replace", True,
      "HEALTHCHECK --interval=30s --timeout=5s CMD npu-smi info > /dev/null || exit 1",
      "nvidia-smi does not exist in an Ascend container: the container is reported unhealthy forever"),
])

E("sfast_gn", "sfast/triton/ops/group_norm.py", "kernel_rewrite", "chengzeyi/stable-fast src/sfast/triton/ops/group_norm.py (Triton GroupNorm(+SiLU) for diffusers UNets)", [
    C('"num_warps": lambda kwargs: max(1, min(16, triton.next_power_of_2(kwargs["HxW"] // 128))),', "triton_kernel_tuning", "replace", False,
      '"num_warps": lambda kwargs: 1,  # warps are a CUDA notion; triton-ascend maps programs to AI cores',
      "warp-count heuristic tuned for NVIDIA SMs; meaningless for triton-ascend (kernel needs porting per its migration guide; detail unconfirmed)"),
    C("lambda kwargs: max(1, min(16, kwargs['ROW_SIZE'] * kwargs['BLOCK_SIZE'] // 128)),", "triton_kernel_tuning", "replace", False,
      "lambda kwargs: 1,", "same warp heuristic for the channels-last stats kernel"),
    C('assert input.device.type == "cuda"', "device_type", "replace", False, 'assert input.device.type in ("cuda", "npu")',
      "only reached once the module gates below admit npu tensors (i.e. after a triton-ascend port)"),
    C("with torch.cuda.device(input.device):", "torch_cuda_api", "replace", False, "with torch.npu.device(input.device):",
      "torch.cuda.device rejects an npu device; only reached once the gates admit npu tensors"),
    C('if input.device.type != "cuda" or torch.is_grad_enabled():', "device_type", "replace", False,
      'if input.device.type not in ("cuda", "npu") or torch.is_grad_enabled():',
      "as written, NPU tensors safely fall back to aten GroupNorm; admitting npu only makes sense together with a triton-ascend port (performance)"),
    C("if not input.is_cuda or torch.is_grad_enabled():", "device_type", "replace", False,
      'if input.device.type not in ("cuda", "npu") or torch.is_grad_enabled():',
      "same gate for the fused GroupNorm+SiLU module; NPU falls back to aten (performance)"),
])

E("sfast_setup", "setup.py", "kernel_rewrite", "chengzeyi/stable-fast setup.py (CppExtension / CUDAExtension for sfast._C)", [
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":', "custom_cuda_extension", "add_branch", False,
      'elif hasattr(torch, "npu") and torch.npu.is_available(): extension = NpuExtension  # from torch_npu.utils.cpp_extension, Ascend C sources',
      "without CUDA the build silently degrades to the CPU-only CppExtension (no failure); NPU kernels need an Ascend C rewrite built with NpuExtension (performance)"),
])

E("bench", "benchmarks/run_sdxl_fast.py", "explicit_replacement", "sayakpaul/diffusion-fast run_benchmark.py / diffusers \"accelerate inference of text-to-image diffusion models\" tutorial (SDXL + torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('pipe = pipe.to("cuda")', "device_type", "replace", True, 'pipe = pipe.to("npu")', "hard-coded cuda device"),
    C("pipe.unet.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "msFmkTransplt documents channels_last as unsupported on NPU (use contiguous); whether it errors or is merely useless is unconfirmed"),
    C("pipe.vae.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "same as above for the VAE"),
    C("torch._inductor.config.coordinate_descent_tuning = True", "triton_kernel_tuning", "removal", False, None,
      "Triton autotuning knob; no counterpart in the NPU graph path (unconfirmed)"),
    C("torch._inductor.config.coordinate_descent_check_all_directions = True", "triton_kernel_tuning", "removal", False, None,
      "Triton autotuning knob (unconfirmed on NPU)"),
    C('pipe.unet = torch.compile(pipe.unet, mode="max-autotune", fullgraph=True)', "compile_mode", "replace", False,
      'pipe.unet = torch.compile(pipe.unet, backend="npugraphs", fullgraph=True)',
      "max-autotune = Triton template autotuning + CUDA graphs; NPU graph capture is the npugraphs backend (unconfirmed)"),
    C('pipe.vae.decode = torch.compile(pipe.vae.decode, mode="max-autotune", fullgraph=True)', "compile_mode", "replace", False,
      'pipe.vae.decode = torch.compile(pipe.vae.decode, backend="npugraphs", fullgraph=True)', "same as above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "lazy CUDA init raises without CUDA"),
    C("torch.cuda.synchronize()  # wait for the VAE decode to finish", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the VAE decode to finish", "lazy CUDA init raises without CUDA; NPU timing needs an NPU sync"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
    C("memory = torch.cuda.max_memory_allocated() / (1024 ** 3)", "torch_cuda_api", "replace", True,
      "memory = torch.npu.max_memory_allocated() / (1024 ** 3)", "returns 0 on an NPU host (wrong number in the CSV)"),
    C('"device": torch.cuda.get_device_name(),', "torch_cuda_api", "replace", True, '"device": torch.npu.get_device_name(),', "raises without CUDA"),
])

E("ad_lightning", "animatediff_lightning.py", "explicit_replacement", "ByteDance/AnimateDiff-Lightning model-card diffusers usage", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("adapter.load_state_dict(load_file(hf_hub_download(REPO, ckpt), device=device))", "device_type", "replace", False,
      'adapter.load_state_dict(load_file(hf_hub_download(REPO, ckpt), device="cpu"))',
      "once device is 'npu', safetensors is asked to materialise on npu; loading on CPU and letting load_state_dict copy is the safe form (npu support in safetensors unconfirmed)"),
    C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "hard-coded device for adapter, pipeline and safetensors load"),
    C('generator=torch.Generator("cuda").manual_seed(args.seed),', "device_type", "replace", True,
      'generator=torch.Generator("npu").manual_seed(args.seed),', "a cuda Generator cannot be created without CUDA"),
])
