"""Labels for probe400: subject-driven image personalization (DreamBooth-LoRA, IP-Adapter, InstantID,
PhotoMaker, Textual Inversion training), CUDA -> Ascend NPU.

One label per upstream line a careful porter would edit (explicit port: torch.npu.*, 'npu', hccl).
See README.md for the policy and the deliberate unlabelled near-misses.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
ACCEL_IMPORT_NOTE = ("accelerate-driven script: Accelerator() state setup runs accelerate's NPU detection, which "
                     "imports torch_npu, before any torch.npu call here; explicit import is recommended, "
                     "that it is needed is unconfirmed")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a silent no-op when CUDA is not initialised; on NPU the cache is "
                    "simply not released - memory hygiene only, not a correctness issue")

# ---------------------------------------------------------------- huggingface/diffusers examples
E("diff_db_lora", "examples/dreambooth/train_dreambooth_lora.py", "explicit_replacement",
  "huggingface/diffusers examples/dreambooth/train_dreambooth_lora.py (peft-era LoRA DreamBooth)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", ACCEL_IMPORT_NOTE),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
      "validation only; without CUDA the autocast is disabled with a warning and the fp16 pipeline still runs "
      "(peft casts LoRA inputs to the adapter dtype) - precision/perf, not a failure"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C('accelerator.device.type == "cuda"', "device_type", "replace", False,
      'torch_dtype = torch.float16 if accelerator.device.type in ("cuda", "npu") else torch.float32',
      "prior-class image generation silently falls back to fp32 on npu: slower and more memory, still correct"),
    C("            if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "            if torch.npu.is_available():", "guard of the empty_cache below; memory hygiene only"),
    C("torch.cuda.empty_cache()  # release the sampling pipeline", "torch_cuda_api", "replace", False,
      "                torch.npu.empty_cache()  # release the sampling pipeline before training starts", EMPTY_CACHE_NOTE),
])

E("diff_ti", "examples/textual_inversion/textual_inversion.py", "explicit_replacement",
  "huggingface/diffusers examples/textual_inversion/textual_inversion.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", ACCEL_IMPORT_NOTE),
    C('with torch.autocast("cuda"):', "amp", "replace", True, 'with torch.autocast("npu"):',
      "validation pipeline mixes the fp32 trained text encoder with fp16/bf16 unet+vae: prompt embeds and latents "
      "come out fp32 and the half-precision unet conv rejects them unless autocast is active on the real device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("diff_training_utils", "src/diffusers/training_utils.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/training_utils.py (free_memory before the NPU branch existed, EMAModel)", [
    C("elif torch.backends.mps.is_available():", "torch_cuda_api", "add_branch", False,
      "elif hasattr(torch, 'npu') and torch.npu.is_available(): torch.npu.empty_cache()",
      "free_memory() gains an npu branch (newer diffusers has exactly this); memory hygiene only"),
    C("self.shadow_params = [p.pin_memory() for p in self.shadow_params]", "pin_memory", "replace", False,
      'self.shadow_params = [p.pin_memory(device="npu") for p in self.shadow_params]',
      "only used with --offload_ema; default pin_memory() targets the CUDA host allocator - NPU pinning behaviour "
      "unconfirmed in the knowledge base"),
])

E("diff_db_req", "examples/dreambooth/requirements.txt", "explicit_replacement",
  "huggingface/diffusers examples/dreambooth/requirements.txt", [])

E("diff_db_launch", "examples/dreambooth/train_lora_dog.sh", "explicit_replacement",
  "huggingface/diffusers examples/dreambooth README launch command, as a script", [
    C("set -euo pipefail", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment (libascendcl, op kernels) must be sourced before torch_npu is imported"),
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "CUDA_VISIBLE_DEVICES does not restrict Ascend devices; the job would see every NPU"),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", True, "npu-smi info",
      "no nvidia-smi on an Ascend host and the script runs under set -e: the launcher aborts"),
    C("--use_8bit_adam", "fused_optimizer", "removal", True, None,
      "bitsandbytes 8-bit optimizers are not available for NPU (only NF4 quant/dequant was ported); "
      "fall back to torch.optim.AdamW"),
    C("--enable_xformers_memory_efficient_attention", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend; the script raises 'xformers is not available'. diffusers uses SDPA by default"),
])

E("diff_accel_cfg", "examples/dreambooth/accelerate_config_2gpu.yaml", "explicit_replacement",
  "`accelerate config` output checked into an examples folder", [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False, "distributed_type: MULTI_NPU",
      "what `accelerate config` writes on an Ascend host; whether MULTI_GPU still resolves to hccl there is "
      "unconfirmed"),
])

E("diff_docker", "docker/diffusers-pytorch-cuda/Dockerfile", "explicit_replacement",
  "huggingface/diffusers docker/diffusers-pytorch-cuda/Dockerfile", [
    C("FROM nvidia/cuda:12.1.0-runtime-ubuntu20.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "image needs the CANN toolkit matching torch_npu 2.1.0.post10 (CANN 8.0.0); exact image tag unconfirmed"),
    C("        torch==2.1.0 \\", "import_torch_npu", "npu_only_addition", True, "        torch-npu==2.1.0.post10 \\",
      "torch_npu wheel paired with torch 2.1.0 / CANN 8.0.0 (version matrix)"),
    C("--extra-index-url https://download.pytorch.org/whl/cu121 && \\", "import_torch_npu", "replace", True,
      "        --extra-index-url https://download.pytorch.org/whl/cpu && \\",
      "torch_npu pairs with the CPU torch build (x86 from whl/cpu, aarch64 from PyPI), not the cu121 wheel"),
    C("xformers==0.0.22.post7", "attention_kernel", "removal", True, None,
      "CUDA-only wheel from the cu121 index; no NPU build - the install step fails or drags a CUDA torch back in"),
])

# ---------------------------------------------------------------- tencent-ailab/IP-Adapter
E("ipa_train", "tutorial_train.py", "explicit_replacement",
  "tencent-ailab/IP-Adapter tutorial_train.py (SD1.5 adapter training with accelerate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", ACCEL_IMPORT_NOTE),
    C("=pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "without an explicit device the DataLoader pins only when CUDA is available; perf only"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3))", "torch_cuda_api", "replace", True,
      "                        torch.npu.max_memory_allocated() / 1024 ** 3))",
      "CUDA memory stats silently return 0 on an NPU host: the per-step log reports a wrong number"),
])

E("ipa_core", "ip_adapter/ip_adapter.py", "explicit_replacement",
  "tencent-ailab/IP-Adapter ip_adapter/ip_adapter.py (IPAdapter / IPAdapterXL wrappers, device passed in)", [])

E("ipa_attn", "ip_adapter/attention_processor.py", "explicit_replacement",
  "tencent-ailab/IP-Adapter ip_adapter/attention_processor.py (SDPA processors)", [])

E("ipa_demo", "ip_adapter_sdxl_demo.py", "explicit_replacement",
  "tencent-ailab/IP-Adapter ip_adapter_sdxl_demo.ipynb, exported to a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "plain script, no accelerate: the 'npu' device type only exists once torch_npu is loaded "
      "(autoload only from torch_npu 2.5.1)"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
      "module-level device global passed into IPAdapterXL"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", "replace", True,
      'print(f"peak memory: {torch.npu.max_memory_reserved() / 2**30:.2f} GiB")',
      "silently prints 0 GiB on an NPU host"),
])

E("ipa_launch", "train_ip_adapter.sh", "explicit_replacement",
  "tencent-ailab/IP-Adapter README multi-GPU training command, as a script", [
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before launching torch_npu processes"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "device selection for the Ascend runtime"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL knob, inert under HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL knob, inert under HCCL"),
])

# ---------------------------------------------------------------- InstantX/InstantID
E("iid_infer", "infer.py", "explicit_replacement", "InstantX/InstantID infer.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "plain script; needed for the npu device (pins torch 2.1, before torch_npu autoload)"),
    C("providers=['CUDAExecutionProvider', 'CPUExecutionProvider']", "device_type", "replace", False,
      "    app = FaceAnalysis(name='antelopev2', root='./', providers=['CANNExecutionProvider', 'CPUExecutionProvider'])",
      "insightface/onnxruntime falls back to the CPU provider; a CANN execution provider is unconfirmed in the "
      "knowledge base - perf only"),
])

E("iid_pipe", "pipeline_stable_diffusion_xl_instantid.py", "explicit_replacement",
  "InstantX/InstantID pipeline_stable_diffusion_xl_instantid.py", [
    C("self.to('cuda', dtype)", "tensor_to_device", "replace", True, "self.to('npu', dtype)",
      "body of the pipeline's own cuda() helper that infer.py calls; the method name can stay"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "final_offload_hook path (model CPU offload); " + EMPTY_CACHE_NOTE),
])

E("iid_app", "gradio_demo/app.py", "explicit_replacement", "InstantX/InstantID gradio_demo/app.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "plain gradio entry point; needed for the npu device (torch 2.1 pinned)"),
    C('dtype = torch.float16 if str(device).__contains__("cuda") else torch.float32', "device_type", "replace", False,
      'dtype = torch.float16 if str(device).__contains__("npu") else torch.float32',
      "on npu the SDXL + 4 ControlNets would silently load in fp32: 2x memory and slower, still correct"),
])

E("iid_model_util", "gradio_demo/model_util.py", "device_branch_or_abstraction",
  "InstantX/InstantID gradio_demo/model_util.py (device helpers)", [
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "add_branch", False,
      "    elif torch.npu.is_available(): torch.npu.empty_cache()",
      "torch_gc() gets an npu branch after the CUDA block; memory hygiene only"),
    C("if torch.backends.mps.is_available():", "device_type", "add_branch", True,
      "    if torch.npu.is_available(): return torch.device('npu')",
      "get_torch_device() would return cpu on an Ascend host and the whole demo would silently run on the CPU"),
])

E("iid_req", "requirements.txt", "explicit_replacement", "InstantX/InstantID requirements.txt", [
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel matching the pinned torch 2.1.0"),
    C("=onnxruntime-gpu", "device_type", "replace", False, "onnxruntime",
      "CUDA build of onnxruntime is useless on Ascend (insightface falls back to CPU); whether the wheel even "
      "installs on an aarch64 Ascend host is unconfirmed"),
])

# ---------------------------------------------------------------- TencentARC/PhotoMaker
E("pm_pipeline", "photomaker/pipeline.py", "explicit_replacement",
  "TencentARC/PhotoMaker photomaker/pipeline.py (v2 SDXL pipeline)", [])

E("pm_insightface", "photomaker/insightface_package.py", "explicit_replacement",
  "TencentARC/PhotoMaker photomaker/insightface_package.py", [])

E("pm_infer", "inference_scripts/inference_pmv2.py", "explicit_replacement",
  "TencentARC/PhotoMaker inference_scripts/inference_pmv2.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "plain script entry point"),
    C("providers=['CUDAExecutionProvider']", "device_type", "replace", False,
      "face_detector = FaceAnalysis2(providers=['CANNExecutionProvider', 'CPUExecutionProvider'], allowed_modules=['detection', 'recognition'])",
      "onnxruntime warns and uses CPU when the CUDA provider is missing; CANN provider unconfirmed - perf only"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"', "module-level device global"),
])

E("pm_app", "gradio_demo/app_v2.py", "explicit_replacement", "TencentARC/PhotoMaker gradio_demo/app_v2.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "plain gradio entry point"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "    if torch.npu.is_available():",
      "without it the try-block falls through to device = 'cpu' and SDXL silently runs on the host CPU"),
    C('device = "cuda"', "device_type", "replace", True, '        device = "npu"', "device chosen by the branch above"),
])

# ---------------------------------------------------------------- kohya-ss/sd-scripts
E("ks_device_utils", "library/device_utils.py", "device_branch_or_abstraction",
  "kohya-ss/sd-scripts library/device_utils.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "device flags are computed at import time, before accelerate is created: torch.npu must already exist"),
    C("=HAS_CUDA = False", "device_type", "npu_only_addition", True,
      "HAS_NPU = hasattr(torch, 'npu') and torch.npu.is_available()",
      "new module-level capability flag used by the branches below"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False, "    if HAS_NPU: torch.npu.empty_cache()",
      "clean_memory(): add npu branch; memory hygiene only"),
    C("torch.cuda.empty_cache()  # per-device variant", "torch_cuda_api", "add_branch", False,
      '    if device.type == "npu": torch.npu.empty_cache()',
      "clean_memory_on_device(): add npu branch; memory hygiene only"),
    C("=elif HAS_XPU:", "device_type", "add_branch", True, 'elif HAS_NPU: device = torch.device("npu")',
      "get_preferred_device() (used by the inference scripts) would silently pick cpu"),
])

E("ks_train_util", "library/train_util.py", "explicit_replacement",
  "kohya-ss/sd-scripts library/train_util.py (optimizer, accelerator, sampling parts)", [
    C('backend="gloo" if os.name == "nt" or not torch.cuda.is_available() else "nccl"', "dist_backend", "replace", True,
      '                backend="gloo" if os.name == "nt" or not torch.npu.is_available() else "hccl",',
      "once the device_count guard below is ported this picks gloo for NPU tensors and DDP collectives fail"),
    C("if torch.cuda.device_count() > 1", "torch_cuda_api", "replace", False, "            if torch.npu.device_count() > 1",
      "left alone, the InitProcessGroupKwargs handler is dropped and accelerate's default hccl group is used: "
      "only --ddp_timeout is silently ignored"),
    C("cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None", "torch_cuda_api", "replace", True,
      "        cuda_rng_state = torch.npu.get_rng_state() if torch.npu.is_available() else None",
      "device RNG is not saved, so sample generation during training perturbs the training noise stream"),
    C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_rng_state(cuda_rng_state)",
      "torch.cuda.set_rng_state is lazily queued and never applied without CUDA: NPU RNG not restored"),
])

E("ks_train_network", "train_network.py", "explicit_replacement",
  "kohya-ss/sd-scripts train_network.py (LoRA trainer; device handling delegated to accelerate/device_utils)", [])

E("ks_config", "examples/lora_sd15_config.toml", "explicit_replacement",
  "kohya-ss/sd-scripts --config_file TOML as shared in the docs/community", [
    C('optimizer_type = "AdamW8bit"', "fused_optimizer", "replace", True, 'optimizer_type = "AdamW"',
      "bitsandbytes 8-bit AdamW is not available on NPU; get_optimizer imports bnb and fails"),
    C("=xformers = true", "attention_kernel", "replace", True, "sdpa = true",
      "xformers cannot be installed for NPU: replace_unet_modules raises ImportError; SDPA dispatches to NPU FA"),
])

E("ks_launch", "examples/train_lora_multi_gpu.sh", "explicit_replacement",
  "kohya-ss/sd-scripts multi-GPU accelerate launch (README command as a script)", [
    C("source venv/bin/activate", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "device selection for the Ascend runtime"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "allocator tuning only; the NPU allocator reads PYTORCH_NPU_ALLOC_CONF"),
])

# ---------------------------------------------------------------- rinongal/textual_inversion (LDM based)
E("ti_ddim", "ldm/models/diffusion/ddim.py", "explicit_replacement",
  "rinongal/textual_inversion ldm/models/diffusion/ddim.py (CompVis latent-diffusion sampler)", [
    C('if attr.device != torch.device("cuda"):', "tensor_to_device", "replace", True,
      '            if attr.device != torch.device("npu"):', "hard-coded device in register_buffer"),
    C('attr = attr.to(torch.device("cuda"))', "tensor_to_device", "replace", True,
      '                attr = attr.to(torch.device("npu"))', "fails on a host without CUDA"),
])

E("ti_txt2img", "scripts/txt2img.py", "explicit_replacement", "rinongal/textual_inversion scripts/txt2img.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "plain script entry point"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "raises without CUDA"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type", "replace", True,
      '    device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "would silently fall back to cpu (after the model.cuda() fix)"),
    C('with precision_scope("cuda"):', "amp", "replace", False, '        with precision_scope("npu"):',
      "model weights are fp32 here, so a disabled autocast only costs speed"),
])

E("ti_main", "main.py", "explicit_replacement",
  "rinongal/textual_inversion main.py (PyTorch Lightning trainer, CUDACallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "training entry point"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "load_model_from_config moves the model eagerly; raises without CUDA"),
    C("torch.cuda.reset_peak_memory_stats(trainer.root_gpu)", "torch_cuda_api", "replace", True,
      "        torch.npu.reset_peak_memory_stats(pl_module.device)", "raises on a CUDA-less torch build"),
    C("=torch.cuda.synchronize(trainer.root_gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(pl_module.device)", "raises on a CUDA-less torch build"),
    C("torch.cuda.synchronize(trainer.root_gpu)  # wait", "torch_cuda_api", "replace", True,
      "        torch.npu.synchronize(pl_module.device)  # wait for the epoch's kernels before timing",
      "raises on a CUDA-less torch build"),
    C("max_memory = torch.cuda.max_memory_allocated(trainer.root_gpu)", "torch_cuda_api", "replace", True,
      "        max_memory = torch.npu.max_memory_allocated(pl_module.device) / 2 ** 20",
      "CUDA stats read 0 on an NPU host"),
    C('trainer_config["accelerator"] = "ddp"', "distributed_framework", "replace", False,
      'trainer_config["accelerator"] = "npu"; trainer_config["strategy"] = "ddp"',
      "Lightning 1.5 only drives CUDA devices; needs a Lightning with an NPU accelerator and hccl DDP - "
      "the exact Lightning API is unconfirmed in the knowledge base"),
])

E("ti_env", "environment.yaml", "explicit_replacement", "rinongal/textual_inversion environment.yaml (CompVis ldm env)", [
    C("cudatoolkit=11.3", "env_var", "removal", False, None,
      "CUDA toolkit is useless on Ascend; whether conda can even solve it on aarch64 is unconfirmed"),
    C("pytorch=1.10.2", "import_torch_npu", "replace", True, "  - pytorch=1.11.0",
      "no torch_npu release exists for torch 1.10; 1.11.0 is the nearest line with a torch_npu wheel (EOL)"),
    C("torchvision=0.11.3", "import_torch_npu", "replace", True, "  - torchvision=0.12.0",
      "must match torch 1.11"),
    C("albumentations==1.1.0", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==1.11.0.post14",
      "torch_npu wheel for torch 1.11.0 (Python 3.8 supported)"),
])
