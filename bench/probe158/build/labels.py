# Labels for probe158 (neural vocoders / singing-voice / voice-conversion, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see ../README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- HiFi-GAN (jik876/hifi-gan)
E("hifigan_train", "train.py", "explicit_replacement",
  "HiFi-GAN train.py (mp.spawn, dist_config from JSON, torch.cuda seeding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point: registers the npu device / torch.npu before any device use"),
    C("=torch.cuda.manual_seed(h.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(h.seed)",
      "lazy-queued no-op without CUDA; NPU generator of the spawned worker stays unseeded (reproducibility only)"),
    C("device = torch.device('cuda:{:d}'.format(rank))", "device_type", "replace", True,
      "device = torch.device('npu:{:d}'.format(rank))",
      "every model/tensor move goes through this device; cuda:N fails on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a silent no-op when CUDA was never initialised; NPU cache is not released"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: num_gpus/batch split never computed, multi-card training silently not used"),
    C("torch.cuda.manual_seed(h.seed)  # seeds the current GPU only", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(h.seed)  # seeds the current NPU only",
      "silent no-op without CUDA; torch.manual_seed on the line above already seeds the default generator"),
    C("h.num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "h.num_gpus = torch.npu.device_count()",
      "returns 0 without CUDA; once is_available is ported this would divide batch_size by zero and never spawn per-card workers"),
])

E("hifigan_inference", "inference_e2e.py", "explicit_replacement",
  "HiFi-GAN inference_e2e.py (global device chosen from torch.cuda.is_available)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point for mel->wav inference"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: inference silently falls back to CPU"),
    C("torch.cuda.manual_seed(h.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(h.seed)",
      "seeding only; inference is deterministic apart from this"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "global device used for the generator, checkpoint map_location and inputs"),
])

E("hifigan_config", "config_v1.json", "explicit_replacement",
  "HiFi-GAN config_v1.json (dist_config block read by train.py)", [
    C('"dist_backend": "nccl",', "dist_backend", "replace", True, '"dist_backend": "hccl",',
      "train.py passes this straight to init_process_group; NCCL is not available with torch_npu"),
])

E("hifigan_meldataset", "meldataset.py", "device_branch_or_abstraction",
  "HiFi-GAN meldataset.py (STFT/mel caches keyed by str(y.device)); nothing to change", [])

# ---------------------------------------------------------------- BigVGAN (NVIDIA/BigVGAN)
E("bigvgan_cuda_load", "alias_free_activation/cuda/load.py", "kernel_rewrite",
  "BigVGAN alias_free_activation/cuda/load.py (nvcc JIT build of the fused anti-aliased activation)", [
    C("_, bare_metal_major, _ = _get_cuda_bare_metal_version(cpp_extension.CUDA_HOME)", "custom_cuda_extension",
      "removal", True, None,
      "probes nvcc under CUDA_HOME; CUDA_HOME is None on an Ascend host so the build fails before compiling"),
    C("return cpp_extension.load(", "custom_cuda_extension", "replace", True,
      'raise RuntimeError("anti_alias_activation_cuda is CUDA-only; construct BigVGAN with use_cuda_kernel=False on Ascend NPU")',
      "nvcc/.cu JIT build; torch.utils.cpp_extension.load is not supported on A2/A3 and there is no nvcc; the torch "
      "implementation in alias_free_activation/torch is the NPU path (an Ascend C port would go through NpuExtension)"),
])

E("bigvgan_cuda_act", "alias_free_activation/cuda/activation1d.py", "kernel_rewrite",
  "BigVGAN alias_free_activation/cuda/activation1d.py (autograd.Function over the fused CUDA kernel)", [
    C("from alias_free_activation.cuda import load", "custom_cuda_extension", "removal", False, None,
      "dead once the JIT build below is dropped; importing load.py alone only sets TORCH_CUDA_ARCH_LIST"),
    C("anti_alias_activation_cuda = load.load()", "custom_cuda_extension", "removal", True, None,
      "module-level nvcc build runs at import time and fails on an NPU host"),
    C("activation_results = anti_alias_activation_cuda.forward(", "custom_cuda_extension", "replace", True,
      "activation_results = _anti_alias_torch(inputs, up_ftr, down_ftr, alpha, beta)",
      "fused upsample->snake->downsample kernel has no NPU build; rewrite with conv_transpose1d/conv1d + snake in torch "
      "(what alias_free_activation/torch does) or an Ascend C kernel"),
])

E("bigvgan_model", "bigvgan.py", "device_branch_or_abstraction",
  "BigVGAN bigvgan.py (AMPBlock1/2 + generator, optional CUDA activation kernel, HF hub mixin)", [
    C('self.h["use_cuda_kernel"] = use_cuda_kernel', "custom_cuda_extension", "replace", False,
      'self.h["use_cuda_kernel"] = use_cuda_kernel and torch.cuda.is_available()',
      "default path already uses the torch Activation1d; guard so a True flag (CLI/from_pretrained) cannot import the "
      "CUDA-only kernel on NPU"),
])

E("bigvgan_inference", "inference.py", "explicit_replacement",
  "BigVGAN inference.py (wav->mel->wav, --use_cuda_kernel, RTF timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "initialises CUDA and raises on an NPU host whenever --report_rtf is given"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "same as above; without a device sync the RTF would also be measured on async launches"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: vocoder silently runs on CPU"),
    C("torch.cuda.manual_seed(h.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(h.seed)",
      "seeding only (lazy no-op without CUDA)"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "global device for model, checkpoint map_location and inputs"),
])

E("bigvgan_train", "train.py", "explicit_replacement",
  "BigVGAN train.py (mp.spawn DDP, MPD+MRD/MBD/CQTD, PESQ/MRSTFT validation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point (also re-imported in every mp.spawn child)"),
    C("=torch.cuda.manual_seed(h.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(h.seed)",
      "per-worker seeding; silent no-op without CUDA"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "initialises CUDA -> raises on an NPU host"),
    C('device = torch.device(f"cuda:{rank:d}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{rank:d}")', "device used for every .to(device) in the file"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "cache release before validation; silent no-op without CUDA"),
    C("pesq_resampler = ta.transforms.Resample(h.sampling_rate, 16000).cuda()", "tensor_to_device", "replace", True,
      "pesq_resampler = ta.transforms.Resample(h.sampling_rate, 16000).to(device)",
      "Module.cuda() fails on an NPU host; validation crashes at the first eval step"),
    C('loss_mrstft = auraloss.freq.MultiResolutionSTFTLoss(device="cuda")', "device_type", "replace", False,
      'loss_mrstft = auraloss.freq.MultiResolutionSTFTLoss(device="npu")',
      "unconfirmed: auraloss only uses the device argument for some scaling/weighting options; inputs carry their own device"),
    C("peak mem: {torch.cuda.max_memory_allocated() / 2**30:.2f}GiB", "torch_cuda_api", "replace", False,
      'f"peak mem: {torch.npu.max_memory_allocated() / 2**30:.2f}GiB"',
      "log only: returns 0 silently when CUDA was never initialised"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: num_gpus stays 0 and train(0, ...) runs single-process"),
    C("torch.cuda.manual_seed_all(h.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(h.seed)",
      "seeding only"),
    C("h.num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "h.num_gpus = torch.npu.device_count()", "card count for mp.spawn and the per-card batch split (0 -> ZeroDivisionError)"),
])

E("bigvgan_requirements", "requirements.txt", "explicit_replacement",
  "BigVGAN requirements.txt", [
    C("=torch", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "no NPU backend without the torch_npu wheel; its version must match torch (e.g. torch==2.1.0 with torch-npu==2.1.0.post12)"),
    C("=ninja", "custom_cuda_extension", "removal", False, None,
      "only needed to JIT-build the CUDA activation kernel, which is not used on NPU"),
])

# ---------------------------------------------------------------- VITS (jaywalnut310/vits)
E("vits_train", "train.py", "explicit_replacement",
  "VITS train.py (2-space indent, mp.spawn + NCCL, .cuda(rank) everywhere, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "CUDA autocast/GradScaler disable themselves without CUDA: fp16_run would silently train in fp32 without scaling"),
    C('assert torch.cuda.is_available(), "CPU training is not allowed."', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "CPU training is not allowed."', "assertion fails on an NPU host"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 without CUDA -> mp.spawn(nprocs=0)"),
    C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://', world_size=n_gpus, rank=rank)",
      "NCCL is not available with torch_npu; HCCL is the NPU collective backend"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "raises without CUDA"),
    C("**hps.model).cuda(rank)", "tensor_to_device", "replace", True, "**hps.model).npu(rank)", "Module.cuda fails"),
    C("net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).cuda(rank)", "tensor_to_device", "replace", True,
      "net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).npu(rank)", "Module.cuda fails"),
    C("x, x_lengths = x.cuda(rank, non_blocking=True), x_lengths.cuda(rank, non_blocking=True)", "tensor_to_device",
      "replace", True, "x, x_lengths = x.npu(rank, non_blocking=True), x_lengths.npu(rank, non_blocking=True)",
      "Tensor.cuda fails"),
    C("spec, spec_lengths = spec.cuda(rank, non_blocking=True), spec_lengths.cuda(rank, non_blocking=True)",
      "tensor_to_device", "replace", True,
      "spec, spec_lengths = spec.npu(rank, non_blocking=True), spec_lengths.npu(rank, non_blocking=True)",
      "Tensor.cuda fails"),
    C("y, y_lengths = y.cuda(rank, non_blocking=True), y_lengths.cuda(rank, non_blocking=True)", "tensor_to_device",
      "replace", True, "y, y_lengths = y.npu(rank, non_blocking=True), y_lengths.npu(rank, non_blocking=True)",
      "Tensor.cuda fails"),
    C("x, x_lengths = x.cuda(0), x_lengths.cuda(0)", "tensor_to_device", "replace", True,
      "x, x_lengths = x.npu(0), x_lengths.npu(0)", "eval batch on card 0"),
    C("spec, spec_lengths = spec.cuda(0), spec_lengths.cuda(0)", "tensor_to_device", "replace", True,
      "spec, spec_lengths = spec.npu(0), spec_lengths.npu(0)", "eval batch on card 0"),
    C("y, y_lengths = y.cuda(0), y_lengths.cuda(0)", "tensor_to_device", "replace", True,
      "y, y_lengths = y.npu(0), y_lengths.npu(0)", "eval batch on card 0"),
])

# ---------------------------------------------------------------- so-vits-svc 4.x (svc-develop-team/so-vits-svc)
E("sovits_train", "train.py", "explicit_replacement",
  "so-vits-svc train.py (mp.spawn, gloo-on-Windows/NCCL, fp16/bf16 half_type autocast)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "CUDA autocast/GradScaler silently disable without CUDA (fp16_run/half_type ignored)"),
    C('assert torch.cuda.is_available(), "CPU training is not allowed."', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "CPU training is not allowed."', "fails on an NPU host"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 without CUDA"),
    C("dist.init_process_group(backend=  'gloo' if os.name == 'nt' else 'nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://', world_size=n_gpus, rank=rank)",
      "NCCL unavailable with torch_npu (Ascend hosts are Linux, so the gloo branch is moot)"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)", "raises without CUDA"),
    C("**hps.model).cuda(rank)", "tensor_to_device", "replace", True, "**hps.model).npu(rank)", "Module.cuda fails"),
    C("net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).cuda(rank)", "tensor_to_device", "replace", True,
      "net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).npu(rank)", "Module.cuda fails"),
    C("g = spk.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "g = spk.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("spec, y = spec.cuda(rank, non_blocking=True), y.cuda(rank, non_blocking=True)", "tensor_to_device", "replace",
      True, "spec, y = spec.npu(rank, non_blocking=True), y.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("c = c.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "c = c.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("f0 = f0.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "f0 = f0.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("uv = uv.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "uv = uv.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("lengths = lengths.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "lengths = lengths.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("volume = volume.cuda(rank, non_blocking=True) if volume is not None else None", "tensor_to_device", "replace",
      True, "volume = volume.npu(rank, non_blocking=True) if volume is not None else None", "Tensor.cuda fails"),
    C("g = spk[:1].cuda(0)", "tensor_to_device", "replace", True, "g = spk[:1].npu(0)", "eval batch"),
    C("spec, y = spec[:1].cuda(0), y[:1].cuda(0)", "tensor_to_device", "replace", True,
      "spec, y = spec[:1].npu(0), y[:1].npu(0)", "eval batch"),
    C("c = c[:1].cuda(0)", "tensor_to_device", "replace", True, "c = c[:1].npu(0)", "eval batch"),
    C("f0 = f0[:1].cuda(0)", "tensor_to_device", "replace", True, "f0 = f0[:1].npu(0)", "eval batch"),
    C("uv = uv[:1].cuda(0)", "tensor_to_device", "replace", True, "uv = uv[:1].npu(0)", "eval batch"),
    C("volume = volume[:1].cuda(0)", "tensor_to_device", "replace", True, "volume = volume[:1].npu(0)", "eval batch"),
])

E("sovits_infer_tool", "inference/infer_tool.py", "device_branch_or_abstraction",
  "so-vits-svc inference/infer_tool.py (Svc class: auto device, half checkpoints, shallow diffusion, feature retrieval)", [
    C('self.dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.dev = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "auto device selection: silently picks CPU on an NPU host"),
    C('if "half" in self.net_g_path and torch.cuda.is_available():', "torch_cuda_api", "replace", False,
      'if "half" in self.net_g_path and torch.npu.is_available():',
      "unchanged it only skips the fp16 cast: the *_half checkpoint is loaded into an fp32 model and runs correctly, just slower"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "clear_empty(): silent no-op without CUDA, NPU cache not released between slices"),
])

E("sovits_preprocess", "preprocess_hubert_f0.py", "explicit_replacement",
  "so-vits-svc preprocess_hubert_f0.py (ProcessPoolExecutor workers spread over GPUs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; spawn-started workers re-import this module"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: every worker silently keeps the device passed in (or CPU)"),
    C("gpu_id = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpu_id = rank % torch.npu.device_count()", "0 without CUDA -> ZeroDivisionError once the guard is ported"),
    C('device = torch.device(f"cuda:{gpu_id}")', "device_type", "replace", True, 'device = torch.device(f"npu:{gpu_id}")',
      "per-worker device"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "default device for the mel extractor / hubert: silently CPU on an NPU host"),
])

E("sovits_webui", "webUI.py", "device_branch_or_abstraction",
  "so-vits-svc webUI.py (gradio, device dropdown built from torch.cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "dropdown would only offer Auto/cpu"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", True,
      "for i in range(torch.npu.device_count()):", "0 cards without CUDA"),
    C("device_name = torch.cuda.get_device_properties(i).name", "torch_cuda_api", "replace", True,
      "device_name = torch.npu.get_device_properties(i).name", "raises without CUDA"),
    C('cuda[f"CUDA:{i} {device_name}"] = f"cuda:{i}"', "device_type", "replace", True,
      'cuda[f"NPU:{i} {device_name}"] = f"npu:{i}"', "device string handed to Svc(device=...)"),
    C('device = cuda[device] if "CUDA" in device else device', "device_type", "replace", True,
      'device = cuda[device] if "NPU" in device else device',
      "follows the renamed dropdown keys; with the old test an 'NPU:0 ...' choice would reach Svc as a bogus device string"),
    C('device_name = torch.cuda.get_device_properties(model.dev).name if "cuda" in str(model.dev) else str(model.dev)',
      "torch_cuda_api", "replace", False,
      'device_name = torch.npu.get_device_properties(model.dev).name if "npu" in str(model.dev) else str(model.dev)',
      "guarded by 'cuda' in str(dev): never reached on NPU, the message just shows 'npu:0' instead of the chip name"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "model unload: silent no-op without CUDA"),
])

# ---------------------------------------------------------------- RVC (RVC-Project/Retrieval-based-Voice-Conversion-WebUI)
E("rvc_config", "configs/config.py", "device_branch_or_abstraction",
  "RVC configs/config.py (singleton Config: device/is_half/GPU-name fp32 heuristics, DirectML/XPU/MPS branches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Config is the first module every RVC launcher imports before touching a device; one import here covers "
      "infer-web.py and the CLI tools"),
    C('self.device = "cuda:0"', "device_type", "replace", True, 'self.device = "npu:0"',
      "default device string, parsed below and passed to every pipeline"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: falls to the cpu branch, forces fp32 and rewrites the training configs to fp16_run=false"),
    C("self.gpu_name = torch.cuda.get_device_name(i_device)", "torch_cuda_api", "replace", True,
      "self.gpu_name = torch.npu.get_device_name(i_device)", "raises without CUDA"),
    C('("16" in self.gpu_name and "V100" not in self.gpu_name.upper())', "device_capability_check", "replace", False,
      '("16" in self.gpu_name and "V100" not in self.gpu_name.upper() and "Ascend" not in self.gpu_name)',
      "NVIDIA-model fp16 blacklist; Ascend SoC names (Ascend910B3, Ascend310P3) match none of the patterns so fp16 stays "
      "on, which is fine on NPU; an explicit NPU exclusion only documents that"),
    C("torch.cuda.get_device_properties(i_device).total_memory", "torch_cuda_api", "replace", True,
      "torch.npu.get_device_properties(i_device).total_memory",
      "raises without CUDA; total_memory is one of the properties torch_npu does report"),
])

E("rvc_infer_web", "infer-web.py", "device_branch_or_abstraction",
  "RVC infer-web.py (gradio launcher: GPU inventory, per-GPU f0/feature extraction subprocesses, faiss index)", [
    C("ngpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpu = torch.npu.device_count()",
      "0 without CUDA: no cards listed, training tab gets default_batch_size=1 and an empty gpus string"),
    C("if torch.cuda.is_available() or ngpu != 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() or ngpu != 0:", "card inventory skipped on NPU"),
    C("gpu_name = torch.cuda.get_device_name(i)", "torch_cuda_api", "replace", True,
      "gpu_name = torch.npu.get_device_name(i)", "raises without CUDA"),
    C('for value in ["10", "16", "20", "30", "40"', "device_capability_check", "replace", False,
      'for value in ["10", "16", "20", "30", "40", "A2", "A3", "A4", "P4", "A50", "500", "A60", "70", "80", "90", "M4", "T4", "TITAN", "4060", "L", "6000", "ASCEND"]',
      "NVIDIA model-name whitelist; 'Ascend910B3'/'Ascend310P3' happen to contain '10' so the card is accepted by "
      "accident; adding 'ASCEND' makes it intentional"),
    C("torch.cuda.get_device_properties(i).total_memory", "torch_cuda_api", "replace", True,
      "torch.npu.get_device_properties(i).total_memory", "raises without CUDA; drives default batch size"),
])

E("rvc_extract_f0", "infer/modules/train/extract/extract_f0_rmvpe.py", "explicit_replacement",
  "RVC extract_f0_rmvpe.py (one subprocess per GPU, pinned with CUDA_VISIBLE_DEVICES)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(i_gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(i_gpu)',
      "ignored by the Ascend runtime: every worker would silently land on npu:0 instead of its own card"),
    C('"assets/rmvpe/rmvpe.pt", is_half=is_half, device="cuda"', "device_type", "replace", True,
      '"assets/rmvpe/rmvpe.pt", is_half=is_half, device="npu"', "RMVPE model/mel extractor device"),
])

E("rvc_rmvpe", "infer/lib/rmvpe.py", "device_branch_or_abstraction",
  "RVC infer/lib/rmvpe.py (RMVPE pitch extractor: DeepUnet+BiGRU, torch.stft mel, DirectML/ONNX and JIT paths)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the f0-extraction subprocesses never import torch themselves; rmvpe.py is where torch is first imported "
      "for them, so torch_npu has to come in here (needed before torch 2.5 autoload)"),
    C('device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu:0" if torch.npu.is_available() else "cpu"', "device=None default: silently CPU on NPU"),
    C('if str(self.device) == "cuda":', "device_type", "replace", False, 'if str(self.device) == "npu":',
      "only normalises the bare string for the JIT cache key; without it an NPU run re-exports the JIT model each load"),
    C('self.device = torch.device("cuda:0")', "device_type", "replace", False, 'self.device = torch.device("npu:0")',
      "dead on NPU until the test above is ported"),
])

E("rvc_pipeline", "infer/modules/vc/pipeline.py", "device_branch_or_abstraction",
  "RVC infer/modules/vc/pipeline.py (HuBERT features, faiss retrieval, pm/harvest/crepe/rmvpe f0, chunked VC)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard for the per-chunk cache release; False on NPU, so cached blocks are kept (memory only)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "cache release only"),
    C('if "cuda" in str(self.device):', "device_type", "replace", False, 'if "npu" in str(self.device):',
      "string test on the device; never true for npu:0, so the end-of-file cache release is skipped"),
    C("torch.cuda.empty_cache()  # 释放显存", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()  # 释放显存",
      "cache release only"),
])

E("rvc_train", "infer/modules/train/train.py", "explicit_replacement",
  "RVC infer/modules/train/train.py (mp.Process per GPU, gloo DDP, optional dataset cache in VRAM)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = hps.gpus.replace("-", ",")', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = hps.gpus.replace("-", ",")',
      "card selection from the web UI would be silently ignored by the Ascend runtime"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point (subprocess)"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "non-IPEX branch; CUDA AMP silently disables itself without CUDA (fp16_run ignored)"),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast, GradScaler", "ImportError fallback (no IPEX installed) -- the usual path"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 without CUDA -> 'NO GPU DETECTED' single-process CPU fallback"),
    C('backend="gloo", init_method="env://", world_size=n_gpus, rank=rank', "dist_backend", "replace", False,
      'backend="hccl", init_method="env://", world_size=n_gpus, rank=rank',
      "unconfirmed: gloo is used upstream for Windows compatibility; whether ProcessGroupGloo can all-reduce NPU tensors "
      "is not covered by the notes -- HCCL is the supported NPU backend"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: models silently stay on CPU"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "raises once the guard above is ported"),
    C("net_g = net_g.cuda(rank)", "tensor_to_device", "replace", True, "net_g = net_g.npu(rank)", "Module.cuda fails"),
    C("net_d = net_d.cuda(rank)", "tensor_to_device", "replace", True, "net_d = net_d.npu(rank)", "Module.cuda fails"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", False, "elif torch.npu.is_available():",
      "unchanged, NPU falls to the plain DDP(net_g) branch, which works for a single-device module; device_ids only "
      "makes it explicit"),
    C("info = [t.cuda(rank, non_blocking=True) for t in info] if torch.cuda.is_available() else info",
      "tensor_to_device", "replace", True,
      "info = [t.npu(rank, non_blocking=True) for t in info] if torch.npu.is_available() else info",
      "if_cache_data_in_gpu: cache would silently stay in host memory (and mismatch the model device)"),
    C("if (hps.if_cache_data_in_gpu == False) and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if (hps.if_cache_data_in_gpu == False) and torch.npu.is_available():", "batches would stay on CPU"),
    C("phone = phone.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "phone = phone.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("phone_lengths = phone_lengths.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "phone_lengths = phone_lengths.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("pitch = pitch.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "pitch = pitch.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("pitchf = pitchf.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "pitchf = pitchf.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("sid = sid.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "sid = sid.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("=spec = spec.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "spec = spec.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("spec_lengths = spec_lengths.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "spec_lengths = spec_lengths.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
    C("=wave = wave.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "wave = wave.npu(rank, non_blocking=True)", "Tensor.cuda fails"),
])

E("rvc_requirements", "requirements.txt", "explicit_replacement",
  "RVC requirements.txt (CUDA 11.8 torch wheels, onnxruntime-gpu)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "the torch_npu wheel goes at the head of the torch block; the cu118 index line itself is harmless once the +cu118 "
      "pins below are gone (a porter would also point it at .../whl/cpu, see README)"),
    C("torch==2.0.1+cu118", "device_type", "replace", True, "torch==2.1.0",
      "CUDA build pin: no +cu118 wheel for aarch64 Ascend hosts; torch_npu pairs with the plain/CPU torch of the same version"),
    C("torchaudio==2.0.2+cu118", "device_type", "replace", True, "torchaudio==2.1.0",
      "same CUDA build pin; must follow the torch version"),
    C("onnxruntime-gpu; sys_platform != 'darwin'", "custom_cuda_extension", "replace", False,
      "onnxruntime; sys_platform != 'darwin'",
      "CUDA build of onnxruntime; unconfirmed whether it installs/imports on an Ascend host; the ONNX paths (DirectML "
      "rmvpe, UVR5 MDX) are not the main NPU path"),
])

E("rvc_dockerfile", "Dockerfile", "explicit_replacement",
  "RVC Dockerfile (nvidia/cuda runtime base, deadsnakes python3.9, aria2 model downloads)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image (driver libs are mounted from the host); the CUDA runtime image has no CANN"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; with Ascend Docker Runtime the NPUs are picked by ASCEND_VISIBLE_DEVICES "
      "(or mounted with --device /dev/davinciN)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting, meaningless on Ascend"),
])

# ---------------------------------------------------------------- Bert-VITS2 (fishaudio/Bert-VITS2)
E("bv2_train", "train_ms.py", "explicit_replacement",
  "Bert-VITS2 train_ms.py (torchrun, env from config.yml, TF32/SDPA flags, bf16 autocast, WavLM discriminator)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "CUDA autocast/GradScaler silently disable without CUDA (bf16_run ignored)"),
    C('torch.backends.cuda.sdp_kernel("flash")', "attention_kernel", "removal", False, None,
      "CUDA SDPA backend selector (not supported per Ascend's API list); called bare, outside a with-block, it does "
      "nothing even on CUDA"),
    C("torch.backends.cuda.enable_flash_sdp(True)", "attention_kernel", "removal", False, None,
      "CUDA-only SDPA backend switch (listed unsupported for NPU); only toggles a flag, unconfirmed that it raises"),
    C("torch.backends.cuda.enable_mem_efficient_sdp(", "attention_kernel", "removal", False, None,
      "same as above"),
    C('backend = "nccl"', "dist_backend", "replace", True, 'backend = "hccl"',
      "NCCL unavailable with torch_npu"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("net_dur_disc = net_dur_disc.cuda(local_rank)", "tensor_to_device", "replace", True,
      "net_dur_disc = net_dur_disc.npu(local_rank)", "Module.cuda fails"),
    C("=).cuda(local_rank)", "tensor_to_device", "replace", True, ").npu(local_rank)", "SynthesizerTrn to device"),
    C("net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).cuda(local_rank)", "tensor_to_device", "replace",
      True, "net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).npu(local_rank)", "Module.cuda fails"),
    C("hps.model.slm.initial_channel).cuda(local_rank)", "tensor_to_device", "replace", True,
      "net_wd = WavLMDiscriminator(hps.model.slm.hidden, hps.model.slm.nlayers, hps.model.slm.initial_channel).npu(local_rank)",
      "Module.cuda fails"),
    C("=).to(local_rank)", "tensor_to_device", "replace", True, ").to(f\"npu:{local_rank}\")",
      "Module.to(int) means a CUDA ordinal; WavLMLoss would be sent to cuda:N"),
    C("x, x_lengths = x.cuda(local_rank, non_blocking=True), x_lengths.cuda(", "tensor_to_device", "replace", True,
      "x, x_lengths = x.npu(local_rank, non_blocking=True), x_lengths.npu(", "Tensor.cuda fails"),
    C("=spec, spec_lengths = spec.cuda(", "tensor_to_device", "replace", True, "spec, spec_lengths = spec.npu(",
      "Tensor.cuda fails (first half of a black-wrapped statement)"),
    C("), spec_lengths.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "), spec_lengths.npu(local_rank, non_blocking=True)", "second .cuda of the same statement"),
    C("y, y_lengths = y.cuda(local_rank, non_blocking=True), y_lengths.cuda(", "tensor_to_device", "replace", True,
      "y, y_lengths = y.npu(local_rank, non_blocking=True), y_lengths.npu(", "Tensor.cuda fails"),
    C("speakers = speakers.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "speakers = speakers.npu(local_rank, non_blocking=True)", "Tensor.cuda fails"),
    C("tone = tone.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "tone = tone.npu(local_rank, non_blocking=True)", "Tensor.cuda fails"),
    C("language = language.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "language = language.npu(local_rank, non_blocking=True)", "Tensor.cuda fails"),
    C("=bert = bert.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "bert = bert.npu(local_rank, non_blocking=True)", "Tensor.cuda fails"),
    C("ja_bert = ja_bert.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "ja_bert = ja_bert.npu(local_rank, non_blocking=True)", "Tensor.cuda fails"),
    C("en_bert = en_bert.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "en_bert = en_bert.npu(local_rank, non_blocking=True)", "Tensor.cuda fails"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end-of-epoch cache release; silent no-op without CUDA"),
    C("x, x_lengths = x.cuda(), x_lengths.cuda()", "tensor_to_device", "replace", True,
      "x, x_lengths = x.npu(), x_lengths.npu()", "eval batch"),
    C("spec, spec_lengths = spec.cuda(), spec_lengths.cuda()", "tensor_to_device", "replace", True,
      "spec, spec_lengths = spec.npu(), spec_lengths.npu()", "eval batch"),
    C("y, y_lengths = y.cuda(), y_lengths.cuda()", "tensor_to_device", "replace", True,
      "y, y_lengths = y.npu(), y_lengths.npu()", "eval batch"),
    C("speakers = speakers.cuda()", "tensor_to_device", "replace", True, "speakers = speakers.npu()", "eval batch"),
    C("=bert = bert.cuda()", "tensor_to_device", "replace", True, "bert = bert.npu()", "eval batch"),
    C("ja_bert = ja_bert.cuda()", "tensor_to_device", "replace", True, "ja_bert = ja_bert.npu()", "eval batch"),
    C("en_bert = en_bert.cuda()", "tensor_to_device", "replace", True, "en_bert = en_bert.npu()", "eval batch"),
    C("tone = tone.cuda()", "tensor_to_device", "replace", True, "tone = tone.npu()", "eval batch"),
    C("language = language.cuda()", "tensor_to_device", "replace", True, "language = language.npu()", "eval batch"),
])

E("bv2_config", "config.yml", "explicit_replacement",
  "Bert-VITS2 config.yml (per-stage device strings, torchrun env block)", [
    C('=device: "cuda"', "device_type", "replace", True, 'device: "npu"',
      "bert_gen device: BERT feature extraction would try to open a CUDA device"),
    C('device: "cuda"   # 多卡时按进程号轮流分配', "device_type", "replace", True,
      'device: "npu"   # 多卡时按进程号轮流分配', "emo_gen device"),
    C('device: "cuda:0"', "device_type", "replace", True, 'device: "npu:0"', "webui inference device"),
    C('device: "cuda"  # 模型默认使用设备', "device_type", "replace", True, 'device: "npu"  # 模型默认使用设备',
      "server default device"),
    C('device: "cuda:1"', "device_type", "replace", True, 'device: "npu:1"', "per-model device in the server list"),
])

E("bv2_train_sh", "scripts/train_ddp.sh", "explicit_replacement",
  "community torchrun launcher for Bert-VITS2 train_ms.py (CUDA_VISIBLE_DEVICES, NCCL_* knobs, nvidia-smi)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (libascendcl/libhccl paths) must be sourced before python starts"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "card selection is silently ignored by the Ascend runtime"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NVIDIA consumer-card P2P workaround; no HCCL counterpart, no effect on NPU"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; no effect with HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "logging verbosity only"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "device_capability_check", "replace",
      True, "npu-smi info", "nvidia-smi is absent on an Ascend host and `set -e` aborts the launcher"),
    C('echo "[train] config=${CONFIG} dataset=${DATASET_DIR} gpus=${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", False,
      'echo "[train] config=${CONFIG} dataset=${DATASET_DIR} npus=${ASCEND_RT_VISIBLE_DEVICES}"',
      "log line follows the renamed variable"),
])

# ---------------------------------------------------------------- DiffWave (lmnt-com/diffwave) / WaveGrad (ivanvovk/WaveGrad)
E("diffwave_learner", "src/diffwave/learner.py", "explicit_replacement",
  "DiffWave learner.py (DiffWaveLearner with torch.cuda.amp, single-GPU and spawn/NCCL training)", [
    C("self.autocast = torch.cuda.amp.autocast(enabled=kwargs.get('fp16', False))", "amp", "replace", True,
      "self.autocast = torch.npu.amp.autocast(enabled=kwargs.get('fp16', False))",
      "--fp16 silently ignored without CUDA"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=kwargs.get('fp16', False))", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=kwargs.get('fp16', False))",
      "CUDA GradScaler disables itself without CUDA: no loss scaling under fp16"),
    C("model = DiffWave(params).cuda()", "tensor_to_device", "replace", True, "model = DiffWave(params).npu()",
      "single-card path"),
    C("torch.distributed.init_process_group('nccl', rank=replica_id, world_size=replica_count)", "dist_backend",
      "replace", True, "torch.distributed.init_process_group('hccl', rank=replica_id, world_size=replica_count)",
      "NCCL unavailable with torch_npu"),
    C("device = torch.device('cuda', replica_id)", "device_type", "replace", True,
      "device = torch.device('npu', replica_id)", "per-replica device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "raises without CUDA"),
])

E("diffwave_main", "src/diffwave/__main__.py", "explicit_replacement",
  "DiffWave __main__.py (replica count from torch.cuda.device_count, torch.multiprocessing.spawn)", [
    C("from torch.cuda import device_count", "torch_cuda_api", "replace", True,
      "from torch_npu.npu import device_count",
      "0 without CUDA -> always the single-card path; importing from torch_npu also loads the NPU backend for the "
      "entry point, so no separate import is needed"),
])

E("wavegrad_bench", "benchmark.py", "explicit_replacement",
  "WaveGrad benchmark.py (RTF measurement with CUDA events)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA device"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA device"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; also required for the event timing to be valid"),
    C("model.load_state_dict(torch.load(args.checkpoint_path)['model'], strict=False)", "tensor_to_device", "replace",
      True, "model.load_state_dict(torch.load(args.checkpoint_path, map_location='cpu')['model'], strict=False)",
      "checkpoints written during GPU training hold CUDA tensors; without map_location torch.load tries to restore them "
      "on CUDA and fails"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "Module.cuda fails"),
])

# ---------------------------------------------------------------- Fish-Speech (fishaudio/fish-speech)
E("fish_generate", "tools/llama/generate.py", "explicit_replacement",
  "Fish-Speech tools/llama/generate.py (dual-AR semantic token generation, torch.compile, SDPA math context)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False, "with nullcontext():",
      "CUDA SDPA backend selector (unsupported per Ascend's API list); it only flips CUDA backend flags, unconfirmed "
      "that it raises on NPU; nullcontext is already imported"),
    C('backend="inductor" if torch.cuda.is_available() else "aot_eager",', "compile_mode", "replace", False,
      'backend="inductor" if torch.npu.is_available() else "aot_eager",',
      "--compile only: unchanged, NPU gets aot_eager (works, slower); Inductor on NPU needs torch_npu>=2.6 -- unconfirmed "
      "for this model"),
    C('mode="reduce-overhead" if torch.cuda.is_available() else None,', "compile_mode", "replace", False,
      "mode=None,",
      "reduce-overhead means CUDA graphs; NPU graphs are a separate backend (npugraphs), so drop the mode rather than "
      "port the condition"),
    C('if "cuda" in str(device):', "device_type", "replace", False, 'if "npu" in str(device):',
      "tokens/sec timing only: without the sync the async NPU launch time is reported"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(device)",
      "reached only through the guard above"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "memory log only"),
    C("GPU Memory used: {torch.cuda.max_memory_reserved() / 1e9:.02f} GB", "torch_cuda_api", "replace", False,
      'f"NPU Memory used: {torch.npu.max_memory_reserved() / 1e9:.02f} GB"', "memory log only"),
    C('@click.option("--device", type=str, default="cuda")', "device_type", "replace", True,
      '@click.option("--device", type=str, default="npu")', "default device for model, caches and prompts"),
    C('if device.startswith("cuda"):', "device_type", "replace", False, 'if device.startswith("npu"):',
      "load-time measurement only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "reached only through the guard above"),
])

E("fish_base_yaml", "fish_speech/configs/base.yaml", "explicit_replacement",
  "Fish-Speech fish_speech/configs/base.yaml (Hydra/Lightning trainer defaults)", [
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
      "Lightning's 'gpu' accelerator needs CUDA/MPS; on Ascend an NPU accelerator has to be registered (Lightning does "
      "not ship one) -- the ported line assumes such a plugin"),
    C("process_group_backend: nccl", "dist_backend", "replace", True, "process_group_backend: hccl",
      "DDPStrategy backend; NCCL unavailable with torch_npu"),
])
