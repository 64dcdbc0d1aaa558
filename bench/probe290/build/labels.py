# Labels for probe290: differentiable vector graphics / sketch & SVG generation (CUDA -> Ascend NPU).
# One entry per upstream file; every change names exactly one line of that file.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


CANN_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
DIFFVG_CPU = ("diffvg has no NPU backend: on an Ascend host it is built CPU-only, so its scene tensors and "
              "render buffers must live on the CPU; only the networks go to the NPU")

# --------------------------------------------------------------------------------------------- diffvg
E("diffvg_setup", "setup.py", "explicit_replacement",
  "BachiLi/diffvg setup.py (CMake/pybind11 build, CUDA path chosen from torch.cuda.is_available())",
  [])  # deliberate negative: on an NPU host torch.cuda.is_available() is False -> CPU build, which is what we want

E("diffvg_painterly", "apps/painterly_rendering.py", "explicit_replacement",
  "BachiLi/diffvg apps/painterly_rendering.py (pure diffvg optimisation, everything on pydiffvg.get_device())",
  [])  # deliberate negative: no network besides LPIPS, all tensors follow pydiffvg.get_device() -> runs unchanged (on CPU)

# --------------------------------------------------------------------------------------------- CLIPasso
E("clipasso_config", "config.py", "device_branch_or_abstraction",
  "yael-vinker/CLIPasso config.py (argparse, seeding, args.device, pydiffvg device setup)",
  [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)",
        "lazy CUDA seeding is a silent no-op without CUDA; torch.manual_seed above already seeds the NPU generator "
        "(unconfirmed for old torch_npu), so this is for completeness/reproducibility only"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "same as above: silent no-op on an NPU host"),
      C('args.device = torch.device("cuda" if (', "device_type", "replace", True,
        'args.device = torch.device("npu" if (',
        "CLIP / U2Net / losses must run on the NPU; with 'cuda' the run silently falls back to the CPU"),
      C("torch.cuda.is_available() and torch.cuda.device_count() > 0) else \"cpu\")", "torch_cuda_api", "replace", True,
        'torch.npu.is_available() and torch.npu.device_count() > 0) else "cpu")',
        "the availability test is False on an NPU host, so the device silently becomes cpu"),
      C("pydiffvg.set_device(args.device)", "custom_cuda_extension", "replace", True,
        'pydiffvg.set_device(torch.device("cpu"))',
        DIFFVG_CPU + "; set_device(npu) would make pydiffvg allocate render buffers on the NPU and hand NPU "
        "pointers to the CPU rasterizer"),
  ])

E("clipasso_painter", "models/painter_params.py", "explicit_replacement",
  "yael-vinker/CLIPasso models/painter_params.py (Painter stroke init, render_warp, CLIP/DINO saliency)",
  [
      C("img = img[:, :, 3:4] * img[:, :, :3] + torch.ones(img.shape[0], img.shape[1], 3, device=self.device) * (1 - img[:, :, 3:4])",
        "unsupported_op_workaround", "replace", True,
        "img = img[:, :, 3:4] * img[:, :, :3] + torch.ones(img.shape[0], img.shape[1], 3, device=img.device) * (1 - img[:, :, 3:4])",
        "the diffvg render now comes back on the CPU; compositing it with a tensor on self.device (NPU) is a device "
        "mismatch. Composite on the render's device, the .to(self.device) below moves the result to the NPU"),
      C("img = opacity * img[:, :, :3] + torch.ones(img.shape[0], img.shape[1], 3, device=self.device) * (1 - opacity)",
        "unsupported_op_workaround", "replace", True,
        "img = opacity * img[:, :, :3] + torch.ones(img.shape[0], img.shape[1], 3, device=img.device) * (1 - opacity)",
        "same CPU-render / NPU-background mismatch in get_image (called every iteration)"),
      C("points = torch.tensor(points).to(self.device)", "unsupported_op_workaround", "replace", True,
        "points = torch.tensor(points).to(pydiffvg.get_device())",
        "stroke control points are diffvg scene tensors and must stay on the CPU rasterizer's device; on the NPU "
        "diffvg would read device pointers"),
  ])

E("clipasso_loss", "models/loss.py", "explicit_replacement",
  "yael-vinker/CLIPasso models/loss.py (CLIPLoss, CLIPConvLoss, LPIPS, L2)",
  [])  # deliberate negative: everything follows args.device; the 'cuda if available else cpu' map_location falls back to cpu

E("clipasso_sketch_utils", "sketch_utils.py", "explicit_replacement",
  "yael-vinker/CLIPasso sketch_utils.py (U2Net masking, svg read/render helpers, plotting)",
  [
      C("device=device) * (1 - img[:, :, 3:4])", "unsupported_op_workaround", "replace", True,
        "device=img.device) * (1 - img[:, :, 3:4])",
        "read_svg is called with args.device (NPU) but the diffvg render is on the CPU -> device mismatch"),
      C("if torch.cuda.is_available() and args.use_gpu:", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available() and args.use_gpu:",
        "otherwise U2Net stays on the CPU while input_im_trans is on args.device (NPU) -> device mismatch"),
      C("net.load_state_dict(torch.load(model_dir))", "tensor_to_device", "replace", True,
        "net.load_state_dict(torch.load(model_dir, map_location='cpu'))",
        "u2net.pth was saved from a CUDA process; unpickling CUDA storages fails on a host without CUDA"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "memory report helper silently returns '' on NPU; logging only"),
      C("alloc = torch.cuda.memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
        "alloc = torch.npu.memory_allocated() / 2 ** 20", "logging only"),
      C("peak = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 2 ** 20", "logging only"),
  ])

E("clipasso_run_object", "run_object_sketching.py", "explicit_replacement",
  "yael-vinker/CLIPasso run_object_sketching.py (multi-seed launcher, subprocess per sketch)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "torch.npu is only available after torch_npu is imported (the project pins torch < 2.5, no autoload)"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():",
        "on an NPU host this forces use_gpu=False and every child run silently goes to the CPU"),
      C('print(f"GPU: {use_gpu}, {torch.cuda.current_device()}")', "torch_cuda_api", "replace", True,
        'print(f"NPU: {use_gpu}, {torch.npu.current_device()}")',
        "torch.cuda.current_device() raises 'Torch not compiled with CUDA enabled' (colab/display path)"),
      C("env=dict(os.environ, CUDA_VISIBLE_DEVICES=str(args.gpunum)))", "env_var", "replace", True,
        "env=dict(os.environ, ASCEND_RT_VISIBLE_DEVICES=str(args.gpunum)))",
        "--gpunum is silently ignored on Ascend (CUDA_VISIBLE_DEVICES means nothing there), all runs land on npu:0"),
  ])

E("clipasso_main", "painterly_rendering.py", "explicit_replacement",
  "yael-vinker/CLIPasso painterly_rendering.py (main optimisation loop)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script: load the NPU backend before config.parse_arguments() builds the npu device"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "raises without CUDA (lazy init) when --display_logs is on"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op on an NPU host; releases the NPU cache at exit"),
  ])

E("clipasso_docker", "Dockerfile", "explicit_replacement",
  "yael-vinker/CLIPasso Dockerfile (nvidia/cuda base, cu113 torch wheels, diffvg build)",
  [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image; an Ascend image needs CANN (its ENV lines replace sourcing set_env.sh)"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
        "no CUDA toolkit in the image any more; harmless if left"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
        "only read by CUDA extension builds; ignored on Ascend"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
        "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "nvidia-container-runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (usually passed at docker run)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime only"),
      C("RUN pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113",
        "device_type", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
        "CUDA wheels; torch_npu has no 1.12 release, pair torch 2.1.0 with torch-npu 2.1.0.postN"),
      C("DIFFVG_CUDA=1 python setup.py install", "custom_cuda_extension", "replace", True,
        "DIFFVG_CUDA=0 python setup.py install",
        "forcing the CUDA code path needs nvcc/thrust; diffvg must be built CPU-only on Ascend"),
  ])

E("clipasso_requirements", "requirements.txt", "explicit_replacement",
  "yael-vinker/CLIPasso requirements.txt (cu113 torch pins)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu on x86 pairs with the CPU torch wheels (aarch64 uses plain PyPI)"),
      C("torch==1.12.1+cu113", "device_type", "replace", True,
        "torch==2.1.0",
        "CUDA build, and no torch_npu release exists for torch 1.12"),
      C("torchvision==0.13.1+cu113", "device_type", "replace", True,
        "torchvision==0.16.0",
        "CUDA build pinned to torch 1.12"),
      C("=IPython", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post10",
        "add the Ascend adapter wheel matching torch 2.1.0"),
  ])

# --------------------------------------------------------------------------------------------- CLIPDraw / StyleCLIPDraw
E("clipdraw_script", "clipdraw.py", "explicit_replacement",
  "kvfrans/clipdraw notebook exported as a script",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C('assert torch.cuda.is_available(), "CLIPDraw needs a GPU runtime"', "torch_cuda_api", "replace", True,
        'assert torch.npu.is_available(), "CLIPDraw needs an NPU"',
        "assertion fails on every NPU host"),
      C("device = torch.device('cuda')", "device_type", "replace", True,
        "device = torch.device('npu')", "hard-coded CUDA device for CLIP"),
      C("pydiffvg.set_device(device)", "custom_cuda_extension", "replace", True,
        "pydiffvg.set_device(torch.device('cpu'))",
        DIFFVG_CPU),
      C("img = img.permute(0, 3, 1, 2)  # NHWC -> NCHW", "unsupported_op_workaround", "replace", True,
        "img = img.permute(0, 3, 1, 2).to(device)  # NHWC -> NCHW",
        "the render is on the CPU now; move it to the NPU before the augmentations / CLIP encode_image"),
  ])

E("styleclipdraw_style", "style_loss.py", "explicit_replacement",
  "pschaldenbrand/StyleCLIPDraw style loss (VGG16 extractor, rEMD from STROTSS)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "torch.npu is used at import time (use_cuda/dtype globals), before the entry script may have loaded torch_npu"),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()",
        "False on an NPU host: style image and VGG stay on the CPU while the drawing/CLIP are on the NPU"),
      C("dtype = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor", "torch_cuda_api", "replace", True,
        "dtype = torch.npu.FloatTensor if use_cuda else torch.FloatTensor",
        "legacy CUDA tensor type used by rgb_to_yuv(...).type(dtype)"),
      C("style_img = style_img.cuda()", "tensor_to_device", "replace", True,
        "style_img = style_img.npu()", ".cuda() fails without CUDA"),
      C("extractor = extractor.cuda()", "tensor_to_device", "replace", True,
        "extractor = extractor.npu()", ".cuda() fails without CUDA"),
  ])

# --------------------------------------------------------------------------------------------- PyTorch-SVGRender / VectorFusion / SVGDreamer
E("svgrender_diffusers_warp", "pytorch_svgrender/diffusers_warp/__init__.py", "explicit_replacement",
  "ximinng/PyTorch-SVGRender diffusers_warp (init_StableDiffusion_pipeline: fp16, xformers, torch.compile, offload)",
  [
      C('device: torch.device = "cuda",', "device_type", "replace", False,
        'device: torch.device = "npu",',
        "default only: every caller passes the accelerator device"),
      C('pipeline.unet = torch.compile(pipeline.unet, mode="reduce-overhead", fullgraph=True)', "compile_mode", "replace", False,
        'pipeline.unet = torch.compile(pipeline.unet, backend="npugraphs", fullgraph=True)',
        "reduce-overhead means CUDA graphs; npugraphs is the documented NPU counterpart. Off by default "
        "(ldm_speed_up=False); behaviour of reduce-overhead on NPU unconfirmed"),
      C("pipeline.unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", False,
        "pipeline.unet.set_attn_processor(AttnProcessor2_0())",
        "xformers has no NPU backend; the call is guarded by is_xformers_available(), so once xformers is not "
        "installed it is dead code. SDPA (AttnProcessor2_0) dispatches to the NPU flash attention"),
      C("pipeline.enable_sequential_cpu_offload()", "device_type", "replace", True,
        'pipeline.enable_sequential_cpu_offload(device="npu")',
        "diffusers offloads to 'cuda' by default, so enabling cpu_offload fails on an NPU host "
        "(device= argument needs diffusers >= 0.21)"),
      C('device: torch.device = torch.device("cuda"),', "device_type", "replace", False,
        'device: torch.device = torch.device("npu"),',
        "default only: callers pass the device"),
      C('unet = torch.compile(unet, mode="reduce-overhead", fullgraph=True)', "compile_mode", "replace", False,
        'unet = torch.compile(unet, backend="npugraphs", fullgraph=True)',
        "same as the pipeline variant; unconfirmed"),
      C("=unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", False,
        "unet.set_attn_processor(AttnProcessor2_0())",
        "guarded by is_xformers_available(); dead once xformers is dropped"),
  ])

E("svgrender_model_state", "pytorch_svgrender/libs/engine/model_state.py", "explicit_replacement",
  "ximinng/PyTorch-SVGRender libs/engine/model_state.py (HF accelerate state, logging, memory report)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "torch.npu.* is used below before Accelerator() (which would import torch_npu itself) is built"),
      C('if mixed_precision == "bf16" and not torch.cuda.is_bf16_supported():', "device_capability_check", "replace", True,
        'if mixed_precision == "bf16" and not torch.npu.is_bf16_supported():',
        "torch.cuda.is_bf16_supported() calls current_device() and raises without CUDA (bf16 runs only)"),
      C('self.print(f"GPU: {torch.cuda.get_device_name(self.accelerator.local_process_index)}, "', "torch_cuda_api", "replace", True,
        'self.print(f"NPU: {torch.npu.get_device_name(self.accelerator.local_process_index)}, "',
        "get_device_name raises without CUDA; runs on every non-cpu start"),
      C('f"{torch.cuda.device_count()} visible device(s)")', "torch_cuda_api", "replace", False,
        'f"{torch.npu.device_count()} visible device(s)")',
        "returns 0 silently; log only"),
      C("peak = torch.cuda.max_memory_allocated(self.device) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated(self.device) / 1024 ** 3",
        "uninitialised CUDA -> empty stats -> 0; log only"),
      C("reserved = torch.cuda.memory_reserved(self.device) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved(self.device) / 1024 ** 3", "log only"),
      C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(self.device)",
        "unlike the getters this resolves the device index first: an npu device (or missing CUDA) raises"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():", "memory summary silently skipped on NPU"),
      C("self.print(f'\\nGPU memory usage: {torch.cuda.max_memory_reserved() / 1024 ** 3:.2f} GB')", "torch_cuda_api", "replace", False,
        "self.print(f'\\nNPU memory usage: {torch.npu.max_memory_reserved() / 1024 ** 3:.2f} GB')", "log only"),
  ])

E("svgrender_diffvg_state", "pytorch_svgrender/diffvg_warp/diffvg_state.py", "device_branch_or_abstraction",
  "ximinng/PyTorch-SVGRender diffvg_warp/diffvg_state.py (DiffVGState base painter, save_svg)",
  [
      C("pydiffvg.set_device(device)", "custom_cuda_extension", "replace", True,
        'pydiffvg.set_device(torch.device("cpu"))',
        DIFFVG_CPU + "; device here is the accelerator device (npu)"),
      C("background = torch.ones(img.shape[0], img.shape[1], 3, device=self.device, requires_grad=False)",
        "unsupported_op_workaround", "replace", True,
        "background = torch.ones(img.shape[0], img.shape[1], 3, device=img.device, requires_grad=False)",
        "render is on the CPU, background on the NPU -> device mismatch"),
  ])

E("svgrender_vf_painter", "pytorch_svgrender/painter/vectorfusion/painter_params.py", "explicit_replacement",
  "ximinng/PyTorch-SVGRender painter/vectorfusion/painter_params.py (iconography/pixelart/sketch painter)",
  [
      C("self.para_bg = torch.tensor([1., 1., 1.], requires_grad=trainable_bg, device=self.device)",
        "unsupported_op_workaround", "replace", True,
        "self.para_bg = torch.tensor([1., 1., 1.], requires_grad=trainable_bg, device=pydiffvg.get_device())",
        "para_bg is composited with the CPU render in get_image(); on the NPU it is a device mismatch"),
      C("]).to(self.device)", "unsupported_op_workaround", "replace", True,
        "]).to(pydiffvg.get_device())",
        "pixelart polygon points are diffvg scene tensors and must stay on the CPU"),
  ])

E("svgrender_vectorfusion", "pytorch_svgrender/pipelines/VectorFusion_pipeline.py", "explicit_replacement",
  "ximinng/PyTorch-SVGRender VectorFusion pipeline + LSDS score distillation (SpecifyGradient)",
  [
      C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
        "from torch_npu.npu.amp import custom_bwd, custom_fwd",
        "without cast_inputs these only record/restore the CUDA autocast state, which is always off on NPU; "
        "swap for the NPU variants so backward honours NPU autocast"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op on NPU; frees sampling memory before LIVE fitting"),
  ])

E("svgdreamer_vpsd", "pytorch_svgrender/painter/svgdreamer/VPSD_pipeline.py", "explicit_replacement",
  "ximinng/SVGDreamer VPSD pipeline (LoRA phi model, variational particle score distillation)",
  [
      C("optimizer_cls = bnb.optim.AdamW8bit", "fused_optimizer", "replace", True,
        "optimizer_cls = torch.optim.AdamW  # no 8-bit optimizer on NPU (torch_npu.optim.NpuFusedAdamW if torch_npu is imported)",
        "bitsandbytes 8-bit optimizers are CUDA-only (not listed for NPU); fails when use_8bit_adam is set"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.use_amp):', "amp", "replace", False,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.use_amp):',
        "CUDA autocast disables itself with a warning on an NPU host; the phi UNet is fp32 so results stay "
        "correct but the fp16 speed/memory saving is lost"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
        "attention_kernel", "replace", False,
        "with nullcontext():",
        "torch.backends.cuda.sdp_kernel is unsupported in Ascend's API list; the flags do not select NPU kernels "
        "(SDPA on NPU uses its own fused attention). Unconfirmed whether it raises or is a no-op"),
  ])

E("svgrender_conf", "conf/x/svgdreamer.yaml", "explicit_replacement",
  "ximinng/PyTorch-SVGRender conf/x/svgdreamer.yaml (hydra method config)",
  [
      C("enable_xformers: True", "attention_kernel", "replace", False,
        "enable_xformers: False",
        "xformers is not installable on Ascend; the code only warns when it is missing, so flipping it is hygiene"),
  ])

E("svgrender_install", "script/install.sh", "explicit_replacement",
  "ximinng/PyTorch-SVGRender script/install.sh (conda env, pytorch-cuda, xformers, diffvg build)",
  [
      C("if ! command -v nvidia-smi &> /dev/null; then", "device_type", "replace", True,
        "if ! command -v npu-smi &> /dev/null; then",
        "no nvidia-smi on an Ascend host: the script exits 1"),
      C("nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv", "device_type", "replace", True,
        "npu-smi info",
        "command not found under set -e"),
      C("conda activate ${ENV_NAME}", "import_torch_npu", "npu_only_addition", True,
        CANN_ENV,
        "torch_npu needs the CANN environment (libascendcl/libhccl) for the import checks at the end"),
      C("conda install -y pytorch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 pytorch-cuda=11.8 -c pytorch -c nvidia",
        "device_type", "replace", True,
        "pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
        "pytorch-cuda build; torch_npu pairs with the CPU torch wheel (plain PyPI on aarch64)"),
      C("# conda install -y pytorch==1.12.1 torchvision==0.13.1 torchaudio==0.12.1 cudatoolkit=11.3 -c pytorch",
        "import_torch_npu", "npu_only_addition", True,
        "pip install torch-npu==2.1.0.post10",
        "install the Ascend adapter matching torch 2.1.0"),
      C("pip install xformers==0.0.22.post7 --index-url https://download.pytorch.org/whl/cu118", "attention_kernel", "removal", True,
        None,
        "CUDA-only wheel from the cu118 index (drags a CUDA torch in / has no NPU backend)"),
      C("export DIFFVG_CUDA=1", "custom_cuda_extension", "replace", True,
        "export DIFFVG_CUDA=0",
        "forces the nvcc/thrust build; diffvg must be compiled CPU-only on Ascend"),
      C('python -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.version.cuda)"', "torch_cuda_api", "replace", False,
        'python -c "import torch, torch_npu; print(torch.__version__, torch.npu.is_available())"',
        "sanity print only (would print False/None)"),
  ])

E("svgrender_batch_sh", "script/batch_svgdreamer.sh", "explicit_replacement",
  "PyTorch-SVGRender style batch launcher (one prompt per GPU, or accelerate --multi_gpu)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        CANN_ENV, "CANN environment for the python jobs"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob, ignored by HCCL"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL logging knob is ignored; CANN/HCCL log level is ASCEND_GLOBAL_LOG_LEVEL (level mapping unconfirmed)"),
      C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "device_type", "replace", True,
        'NUM_GPUS=$(npu-smi info -l | grep -c "NPU ID")',
        "nvidia-smi is missing: set -e aborts (or NUM_GPUS=0 and the modulo fails)"),
      C("CUDA_VISIBLE_DEVICES=${gpu} python svg_render.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${gpu} python svg_render.py x=svgdreamer \"prompt='${PROMPT}'\" \\",
        "ignored on Ascend: every parallel job would start on npu:0 and run out of memory"),
  ])

# --------------------------------------------------------------------------------------------- Word-As-Image
E("wordasimage_losses", "code/losses.py", "explicit_replacement",
  "Shiriluz/Word-As-Image code/losses.py (SDSLoss with fp16 StableDiffusionPipeline, ToneLoss, ConformalLoss)",
  [
      C("with torch.cuda.amp.autocast():", "amp", "replace", True,
        "with torch.npu.amp.autocast():",
        "the VAE is fp16 and x is fp32: CUDA autocast is disabled on an NPU host, so vae.encode gets a "
        "float input against half weights and raises"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", False,
        'with torch.autocast(device_type="npu", dtype=torch.float16):',
        "UNet inputs (latents, text embeddings) are already fp16, so the disabled CUDA autocast changes nothing"),
  ])

E("wordasimage_main", "code/main.py", "device_branch_or_abstraction",
  "Shiriluz/Word-As-Image code/main.py (letter optimisation loop)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C("device = pydiffvg.get_device()", "device_type", "npu_only_addition", True,
        'sd_device = torch.device("npu:0")',
        "upstream uses one device for diffvg and Stable Diffusion; on Ascend pydiffvg.get_device() is the CPU, "
        "so SD needs its own NPU device"),
      C("sds_loss = SDSLoss(cfg, device)", "device_type", "replace", True,
        "sds_loss = SDSLoss(cfg, sd_device)",
        "otherwise the fp16 Stable Diffusion pipeline is placed on the CPU"),
      C("loss = sds_loss(x_aug)", "tensor_to_device", "replace", True,
        "loss = sds_loss(x_aug.to(sd_device))",
        "the augmented render is on the CPU; the SDS loss is a 0-dim NPU tensor that can be added to the CPU losses"),
  ])

E("wordasimage_run", "run_word_as_image.sh", "explicit_replacement",
  "Shiriluz/Word-As-Image run_word_as_image.sh",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        CANN_ENV, "CANN environment for torch_npu"),
      C("CUDA_VISIBLE_DEVICES=${GPU} python code/main.py $ARGS", "env_var", "replace", True,
        'ASCEND_RT_VISIBLE_DEVICES=${GPU} python code/main.py $ARGS --semantic_concept "${CONCEPT}" --word "${WORD}"',
        "the GPU=... knob is silently ignored on Ascend"),
      C("CUDA_VISIBLE_DEVICES=${GPU} python code/main.py --experiment $EXPERIMENT", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPU} python code/main.py --experiment $EXPERIMENT \\",
        "same"),
  ])

E("wordasimage_env", "environment.yml", "explicit_replacement",
  "Word-As-Image style conda environment (pytorch 1.12.1 + cudatoolkit 11.3)",
  [
      C("=- nvidia", "device_type", "removal", False, None, "CUDA channel, nothing needed from it"),
      C("- pytorch=1.12.1", "device_type", "replace", True,
        "- pytorch=2.1.0",
        "no torch_npu release for torch 1.12; 2.1.0 pairs with torch-npu 2.1.0.postN (aarch64 conda builds unconfirmed, "
        "pip wheels are the documented route)"),
      C("- torchvision=0.13.1", "device_type", "replace", True,
        "- torchvision=0.16.0", "follows the torch bump"),
      C("- torchaudio=0.12.1", "device_type", "removal", True, None,
        "unused, and pins pytorch 1.12.1"),
      C("- cudatoolkit=11.3", "device_type", "replace", True,
        "- cpuonly",
        "CUDA runtime; torch_npu needs the CPU build of torch"),
      C("- bezier==2023.7.28", "import_torch_npu", "npu_only_addition", True,
        "      - torch-npu==2.1.0.post10", "Ascend adapter wheel"),
      C("- xformers==0.0.16", "attention_kernel", "removal", True, None,
        "CUDA-only; building it fails on an Ascend host"),
  ])

# --------------------------------------------------------------------------------------------- Im2Vec
E("im2vec_vector_vae", "models/vector_vae.py", "explicit_replacement",
  "preddy5/Im2Vec models/vector_vae.py (VectorVAE with differentiable rasterisation in the decoder)",
  [
      C("num_ctrl_pts = torch.zeros(self.curves, dtype=torch.int32).to(all_points.device) + 2",
        "unsupported_op_workaround", "replace", True,
        "num_ctrl_pts = torch.zeros(self.curves, dtype=torch.int32) + 2",
        "diffvg path metadata must be on the CPU rasterizer's device, not the NPU"),
      C("points = all_points[k].contiguous()  # [self.sort_idx[k]]", "unsupported_op_workaround", "replace", True,
        "points = all_points[k].cpu().contiguous()  # [self.sort_idx[k]]",
        "decoder output lives on the NPU; diffvg needs CPU points (autograd carries the gradient back)"),
      C("z = mu[i:i + 1] + sigma * torch.randn(n, self.latent_dim).cuda()", "tensor_to_device", "replace", True,
        "z = mu[i:i + 1] + sigma * torch.randn(n, self.latent_dim, device=mu.device)",
        ".cuda() fails without CUDA"),
  ])

E("im2vec_experiment", "experiment.py", "explicit_replacement",
  "preddy5/Im2Vec experiment.py (PyTorch Lightning VAEXperiment)",
  [
      C("self.log('gpu_mem_mb', torch.cuda.max_memory_allocated(self.curr_device) / 2 ** 20)", "torch_cuda_api", "replace", False,
        "self.log('gpu_mem_mb', torch.npu.max_memory_allocated(self.curr_device) / 2 ** 20)",
        "returns 0 silently; logging only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op on NPU"),
      C("pin_memory=True)", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu')",
        "without CUDA older torch silently skips pinning; performance only (unconfirmed for this Lightning/torch combo)"),
  ])

E("im2vec_run", "run.py", "explicit_replacement",
  "preddy5/Im2Vec run.py (Lightning Trainer entry point)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C("ckpt = torch.load(args.resume)", "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.resume, map_location='cpu')",
        "GPU-written checkpoints contain CUDA storages"),
      C("gpus=gpus,", "device_type", "replace", True,
        "accelerator=NPUAccelerator(), devices=gpus,",
        "Trainer(gpus=...) raises MisconfigurationException without CUDA; Lightning has no built-in NPU accelerator, "
        "a custom/third-party one is needed (unconfirmed in the knowledge base)"),
      C("distributed_backend='ddp' if multi_gpu else None,", "dist_backend", "replace", True,
        "strategy=DDPStrategy(process_group_backend='hccl') if multi_gpu else None,",
        "Lightning's DDP initialises NCCL for accelerator devices; multi-card runs need HCCL"),
  ])

# --------------------------------------------------------------------------------------------- DeepSVG
E("deepsvg_train", "deepsvg/train.py", "explicit_replacement",
  "alexandre01/deepsvg deepsvg/train.py (hierarchical SVG transformer trainer)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
        "silently trains on the CPU otherwise"),
      C("model = nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
        "model = model  # nn.DataParallel is not supported on NPU; use DDP for several cards",
        "torch.nn.DataParallel is unsupported on Ascend (scatter goes through CUDA comm)"),
  ])

E("deepsvg_train_utils", "deepsvg/utils/train_utils.py", "explicit_replacement",
  "alexandre01/deepsvg deepsvg/utils/train_utils.py (checkpoint I/O, seeding)",
  [
      C("state = torch.load(checkpoint_path)", "tensor_to_device", "replace", False,
        "state = torch.load(checkpoint_path, map_location='cpu')",
        "only breaks when resuming a checkpoint written on a GPU; NPU-written ones load fine"),
      C('state = torch.load(checkpoint_path, map_location=torch.device("cuda") if torch.cuda.is_available() else None)',
        "tensor_to_device", "replace", True,
        "state = torch.load(checkpoint_path, map_location='cpu')",
        "the released pretrained checkpoints hold CUDA storages; map_location=None does not help on a CUDA-less host"),
      C("torch.cuda.manual_seed(_seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(_seed)", "silent no-op without CUDA"),
      C("torch.cuda.manual_seed_all(_seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(_seed)", "silent no-op without CUDA"),
  ])

# --------------------------------------------------------------------------------------------- Sketch-RNN
E("sketchrnn", "sketch_rnn.py", "explicit_replacement",
  "alexis-jacq/Pytorch-Sketch-RNN sketch_rnn.py (use_cuda flag + .cuda() everywhere)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script / module-level torch.npu use"),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()",
        "the flag gates every placement; False on NPU = silent CPU training"),
      C("batch = Variable(torch.from_numpy(np.stack(strokes, 1)).cuda().float())", "tensor_to_device", "replace", True,
        "batch = Variable(torch.from_numpy(np.stack(strokes, 1)).npu().float())", "reached once use_cuda is True"),
      C("hidden = torch.zeros(2, batch_size, hp.enc_hidden_size).cuda()", "tensor_to_device", "replace", True,
        "hidden = torch.zeros(2, batch_size, hp.enc_hidden_size).npu()", ".cuda() fails without CUDA"),
      C("cell = torch.zeros(2, batch_size, hp.enc_hidden_size).cuda()", "tensor_to_device", "replace", True,
        "cell = torch.zeros(2, batch_size, hp.enc_hidden_size).npu()", ".cuda() fails without CUDA"),
      C("N = torch.normal(torch.zeros(z_size), torch.ones(z_size)).cuda()", "tensor_to_device", "replace", True,
        "N = torch.normal(torch.zeros(z_size), torch.ones(z_size)).npu()", ".cuda() fails without CUDA"),
      C("self.encoder = EncoderRNN().cuda()", "tensor_to_device", "replace", True,
        "self.encoder = EncoderRNN().npu()", ".cuda() fails without CUDA"),
      C("self.decoder = DecoderRNN().cuda()", "tensor_to_device", "replace", True,
        "self.decoder = DecoderRNN().npu()", ".cuda() fails without CUDA"),
      C("eos = torch.stack([torch.Tensor([0, 0, 0, 0, 1])] * batch.size()[1]).cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
        "eos = torch.stack([torch.Tensor([0, 0, 0, 0, 1])] * batch.size()[1]).npu().unsqueeze(0)", ".cuda() fails without CUDA"),
      C("mask = mask.cuda()", "tensor_to_device", "replace", True,
        "mask = mask.npu()", ".cuda() fails without CUDA"),
      C("sos = torch.stack([torch.Tensor([0, 0, 1, 0, 0])] * hp.batch_size).cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
        "sos = torch.stack([torch.Tensor([0, 0, 1, 0, 0])] * hp.batch_size).npu().unsqueeze(0)", ".cuda() fails without CUDA"),
      C("KL_min = Variable(torch.Tensor([hp.KL_min]).cuda()).detach()", "tensor_to_device", "replace", True,
        "KL_min = Variable(torch.Tensor([hp.KL_min]).npu()).detach()", ".cuda() fails without CUDA"),
      C("saved_encoder = torch.load(encoder_name)", "tensor_to_device", "replace", False,
        "saved_encoder = torch.load(encoder_name, map_location='cpu')",
        "only breaks for checkpoints written on a GPU"),
      C("saved_decoder = torch.load(decoder_name)", "tensor_to_device", "replace", False,
        "saved_decoder = torch.load(decoder_name, map_location='cpu')",
        "only breaks for checkpoints written on a GPU"),
      C("sos = Variable(torch.Tensor([0, 0, 1, 0, 0]).view(1, 1, -1).cuda())", "tensor_to_device", "replace", True,
        "sos = Variable(torch.Tensor([0, 0, 1, 0, 0]).view(1, 1, -1).npu())", ".cuda() fails without CUDA"),
      C("return Variable(next_state.cuda()).view(1, 1, -1), x, y, q_idx == 1, q_idx == 2", "tensor_to_device", "replace", True,
        "return Variable(next_state.npu()).view(1, 1, -1), x, y, q_idx == 1, q_idx == 2", ".cuda() fails without CUDA"),
  ])

# --------------------------------------------------------------------------------------------- distributed SVG indexing
E("svgdataset_ddp", "scripts/build_svg_clip_index.py", "explicit_replacement",
  "torchrun helper of text-to-SVG repos: diffvg rasterisation + CLIP embedding of an SVG corpus, all_gather on rank 0",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "NCCL watchdog knob is ignored; HCCL's equivalent (default 1 per MindCluster docs)"),
      C("img = img[:, :, 3:4] * img[:, :, :3] + torch.ones(size, size, 3, device=device) * (1 - img[:, :, 3:4])",
        "unsupported_op_workaround", "replace", True,
        "img = img[:, :, 3:4] * img[:, :, :3] + torch.ones(size, size, 3, device=img.device) * (1 - img[:, :, 3:4])",
        "render is on the CPU, background was on the rank's accelerator"),
      C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL does not exist on Ascend"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "raises without CUDA"),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "hard-coded CUDA device"),
      C("pydiffvg.set_use_gpu(True)", "custom_cuda_extension", "replace", True,
        "pydiffvg.set_use_gpu(False)",
        "a CPU-only diffvg build refuses use_gpu=True"),
      C("pydiffvg.set_device(device)", "custom_cuda_extension", "replace", True,
        'pydiffvg.set_device(torch.device("cpu"))', DIFFVG_CPU),
      C("num_workers=args.num_workers, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu')",
        "batches are indices and paths; performance only (unconfirmed)"),
      C("x = torch.stack(imgs)", "unsupported_op_workaround", "replace", True,
        "x = torch.stack(imgs).to(device)",
        "CPU renders must be moved to the NPU before normalisation with the NPU clip_mean/std and CLIP"),
      C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.fp16):",
        "clip.load keeps the model in fp16 on an accelerator and encode_image casts its input, so losing CUDA "
        "autocast changes nothing"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "raises without CUDA (rank-0 progress print)"),
      C('f"mem {torch.cuda.max_memory_allocated() / 2 ** 30:.2f}GiB")', "torch_cuda_api", "replace", False,
        'f"mem {torch.npu.max_memory_allocated() / 2 ** 30:.2f}GiB")', "returns 0; log only"),
      C('gather_device = device if dist.get_backend() == "nccl" else torch.device("cpu")', "dist_backend", "replace", True,
        'gather_device = device if dist.get_backend() == "hccl" else torch.device("cpu")',
        "backend string comparison is not rewritten by anything: with hccl the gather would use CPU tensors, "
        "which HCCL cannot communicate"),
  ])
