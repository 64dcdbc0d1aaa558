"""Labels for probe360 (image inpainting / outpainting, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit.
`required` = complete-port counterfactual (every other labelled line already ported).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: load the Ascend backend before any device use (mandatory before torch_npu 2.5.1, "
               "autoloaded since, still recommended)")

# ---------------------------------------------------------------- LaMa (advimman/lama)

E("lama_train", "bin/train.py", "explicit_replacement",
  "advimman/lama bin/train.py (hydra + PyTorch-Lightning launcher)", [
    C("import hydra", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("trainer_kwargs = OmegaConf.to_container(config.trainer.kwargs, resolve=True)", "dist_backend",
      "npu_only_addition", True,
      "trainer_kwargs.update(accelerator='npu', strategy=DDPStrategy(process_group_backend='hccl'))",
      "Lightning's DDP picks nccl for CUDA roots and gloo otherwise; NPU tensors need an HCCL process group. "
      "The hccl part is confirmed; the exact Lightning hook for an 'npu' accelerator is unconfirmed in the "
      "knowledge base (PL has no built-in NPU accelerator; newer PL or a plugin is needed)."),
])

E("lama_trainer_cfg", "configs/training/trainer/any_gpu_large_ssim_ddp_final.yaml", "explicit_replacement",
  "advimman/lama configs/training/trainer/any_gpu_large_ssim_ddp_final.yaml", [
    C("gpus: -1", "device_type", "replace", True, "devices: -1",
      "gpus=-1 asks Lightning for every CUDA device and raises a MisconfigurationException on a CUDA-less host; "
      "the NPU accelerator itself is set in bin/train.py. 'accelerator: ddp' is left alone because "
      "trainers/__init__.py derives use_ddp from it."),
])

E("lama_predict_cfg", "configs/prediction/default.yaml", "explicit_replacement",
  "advimman/lama configs/prediction/default.yaml", [
    C("device: cuda", "device_type", "replace", True, "device: npu",
      "bin/predict.py does torch.device(predict_config.device); Inpaint-Anything also loads this file"),
])

E("lama_predict", "bin/predict.py", "explicit_replacement",
  "advimman/lama bin/predict.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("lama_trainers_init", "saicinpainting/training/trainers/__init__.py", "explicit_replacement",
  "advimman/lama saicinpainting/training/trainers/__init__.py", [
    C("def load_checkpoint(train_config, path, map_location='cuda', strict=True):", "device_type", "replace", False,
      "def load_checkpoint(train_config, path, map_location='cpu', strict=True):",
      "default only: bin/predict.py passes map_location='cpu'. A caller that relied on the default would hit "
      "'Attempting to deserialize object on a CUDA device' (see ia_lama_inpaint, which does)."),
])

E("lama_refinement", "saicinpainting/evaluation/refinement.py", "explicit_replacement",
  "advimman/lama saicinpainting/evaluation/refinement.py (multi-GPU feature refinement)", [
    C("gpu_ids = [f'cuda:{gpuid}'", "device_type", "replace", True,
      "gpu_ids = [f'npu:{gpuid}' for gpuid in gpu_ids.replace(\" \",\"\").split(\",\") if gpuid.isdigit()]",
      "refine=True path splits the generator over devices built from these strings; 'cuda:N' fails on NPU. "
      "All later .to(devices[i]) calls follow."),
])

E("lama_ffc", "saicinpainting/training/modules/ffc.py", "explicit_replacement",
  "advimman/lama saicinpainting/training/modules/ffc.py (Fast Fourier Convolution)", [])

E("lama_lpips", "saicinpainting/evaluation/losses/lpips.py", "explicit_replacement",
  "advimman/lama saicinpainting/evaluation/losses/lpips.py (vendored PerceptualSimilarity)", [
    C("kw = dict()", "device_type", "replace", False, "kw = dict(map_location='cpu')",
      "unconfirmed: with use_gpu=True torch.load gets no map_location; this only fails if the LPIPS weight "
      "files hold CUDA storages"),
    C("self.net.to(0)", "tensor_to_device", "replace", True, "self.net.to('npu:0')",
      "an int ordinal is a CUDA device (torch 2.1 era); LaMa's validation evaluator builds LPIPSScore with "
      "use_gpu=True, so this runs during training"),
    C("self.net = torch.nn.DataParallel(self.net, device_ids=[0])", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's 2.7.1 API list; the one-device "
      "wrapper adds nothing"),
    C("self.rankLoss = self.rankLoss.to(device=0)", "tensor_to_device", "replace", False,
      "self.rankLoss = self.rankLoss.to(device='npu:0')  # just put this on NPU0",
      "is_train path of LPIPS calibration; never reached from LaMa"),
    C("self.input_ref = self.input_ref.to(device=0)", "tensor_to_device", "replace", False,
      "self.input_ref = self.input_ref.to(device='npu:0')", "LPIPS training path only; never reached from LaMa"),
    C("self.input_p0 = self.input_p0.to(device=0)", "tensor_to_device", "replace", False,
      "self.input_p0 = self.input_p0.to(device='npu:0')", "LPIPS training path only"),
    C("self.input_p1 = self.input_p1.to(device=0)", "tensor_to_device", "replace", False,
      "self.input_p1 = self.input_p1.to(device='npu:0')", "LPIPS training path only"),
    C("self.input_judge = self.input_judge.to(device=0)", "tensor_to_device", "replace", False,
      "self.input_judge = self.input_judge.to(device='npu:0')", "LPIPS training path only"),
    C("self.save_network(self.net.module, path, '', label)", "distributed_framework", "replace", False,
      "self.save_network(self.net, path, '', label)",
      "follows from removing DataParallel; save() is only used when training LPIPS itself"),
])

# ---------------------------------------------------------------- MAT (fenglinglwb/MAT, StyleGAN2-ADA base)

E("mat_train", "train.py", "explicit_replacement",
  "fenglinglwb/MAT train.py (StyleGAN2-ADA click launcher, torch.multiprocessing.spawn)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("dnnlib.util.Logger(file_name=os.path.join(args.run_dir, 'log.txt')", "torch_cuda_api",
      "npu_only_addition", False, "torch.npu.set_device(rank)",
      "unconfirmed: the code passes explicit devices everywhere, but binding each spawned process to its NPU "
      "before HCCL init is the usual torch_npu practice"),
    C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method=init_method, rank=rank, world_size=args.num_gpus)",
      "NCCL does not exist on Ascend; the Windows gloo branch above is left alone"),
    C("sync_device = torch.device('cuda', rank)", "device_type", "replace", True,
      "sync_device = torch.device('npu', rank) if args.num_gpus > 1 else None",
      "training_stats all-reduces its counters on this device over HCCL"),
])

E("mat_training_loop", "training/training_loop.py", "explicit_replacement",
  "fenglinglwb/MAT training/training_loop.py", [
    C("device = torch.device('cuda', rank)", "device_type", "replace", True, "device = torch.device('npu', rank)",
      "every network, batch and DDP device_ids derive from this"),
    C("phase.start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "phase.start_event = torch.npu.Event(enable_timing=True)",
      "torch.cuda.Event cannot be instantiated without CUDA (rank 0 timing)"),
    C("phase.end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "phase.end_event = torch.npu.Event(enable_timing=True)", "as above"),
    C("all_gen_c = torch.from_numpy(np.stack(all_gen_c)).pin_memory().to(device)", "pin_memory", "replace", False,
      "all_gen_c = torch.from_numpy(np.stack(all_gen_c)).pin_memory('npu').to(device)",
      "unconfirmed: Tensor.pin_memory() without a device targets CUDA in older torch; transfer_to_npu wraps "
      "Tensor.pin_memory, which suggests the default needs the NPU device"),
    C("phase.start_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", "replace", True,
      "phase.start_event.record(torch.npu.current_stream(device))", "torch.cuda.current_stream rejects an npu device"),
    C("phase.end_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", "replace", True,
      "phase.end_event.record(torch.npu.current_stream(device))", "as above"),
    C("torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
      "fields += [f\"gpumem {training_stats.report0('Resources/peak_gpu_mem_gb', torch.npu.max_memory_allocated(device) / 2**30):<6.2f}\"]",
      "logging only: the CUDA memory-stat readers return 0 when CUDA was never initialised, so the stat silently "
      "reads 0 instead of failing"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "without a device argument it resolves the current CUDA device and raises on a CUDA-less torch"),
])

E("mat_custom_ops", "torch_utils/custom_ops.py", "explicit_replacement",
  "fenglinglwb/MAT torch_utils/custom_ops.py (JIT build of .cu plugins via torch.utils.cpp_extension.load)", [])

E("mat_upfirdn2d", "torch_utils/ops/upfirdn2d.py", "explicit_replacement",
  "fenglinglwb/MAT torch_utils/ops/upfirdn2d.py", [])

E("mat_conv2d_gradfix", "torch_utils/ops/conv2d_gradfix.py", "explicit_replacement",
  "fenglinglwb/MAT torch_utils/ops/conv2d_gradfix.py", [])

E("mat_training_stats", "torch_utils/training_stats.py", "explicit_replacement",
  "fenglinglwb/MAT torch_utils/training_stats.py", [
    C("_counter_dtype  = torch.float64", "unsupported_op_workaround", "replace", False,
      "_counter_dtype  = torch.float32 # Data type to use for the internal counters.",
      "counters are created on the reporting/sync device; NPU has no fp64 and torch_npu casts to float with a "
      "warning. Precision/noise only; unconfirmed how the fp64 HCCL all_reduce behaves"),
])

E("mat_generate", "generate_image.py", "explicit_replacement",
  "fenglinglwb/MAT generate_image.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "hard-coded inference device"),
    C("z = torch.from_numpy(np.random.randn(1, G.z_dim)).to(device)", "unsupported_op_workaround", "replace", False,
      "z = torch.from_numpy(np.random.randn(1, G.z_dim)).float().to(device)",
      "np.random.randn is float64; NPU has no fp64 (torch_npu casts with a warning) and the mapping network "
      "casts z to float32 anyway"),
])

# ---------------------------------------------------------------- Palette (Janspiry, inpainting + uncropping)

E("palette_run", "run.py", "explicit_replacement",
  "Janspiry/Palette-Image-to-Image-Diffusion-Models run.py (mp.spawn + DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(int(opt['local_rank']))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(opt['local_rank']))", "per-process device binding"),
    C("torch.distributed.init_process_group(backend = 'nccl',", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend = 'hccl',", "NCCL does not exist on Ascend"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_str", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_str",
      "rank i uses logical device i; without the mask '-gpu 2,3' would silently run on NPUs 0 and 1"),
])

E("palette_util", "core/util.py", "explicit_replacement",
  "Janspiry/Palette-Image-to-Image-Diffusion-Models core/util.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above also seeds registered accelerator backends in recent torch "
      "(unconfirmed in the knowledge base); the CUDA call is a lazily queued no-op on an NPU host"),
    C("return DDP(args.cuda(), device_ids=[rank]", "tensor_to_device", "replace", True,
      "return DDP(args.npu(), device_ids=[rank], output_device=rank, broadcast_buffers=True, find_unused_parameters=True)",
      "int device_ids are fine once the module is on the NPU"),
    C("=return args.cuda()", "tensor_to_device", "replace", True, "return args.npu()",
      "every network and batch goes through here"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise set_device silently leaves networks and batches on the CPU"),
])

E("palette_base_model", "core/base_model.py", "explicit_replacement",
  "Janspiry/Palette-Image-to-Image-Diffusion-Models core/base_model.py", [])

E("palette_model", "models/model.py", "explicit_replacement",
  "Janspiry/Palette-Image-to-Image-Diffusion-Models models/model.py", [])

E("palette_network", "models/network.py", "explicit_replacement",
  "Janspiry/Palette-Image-to-Image-Diffusion-Models models/network.py", [
    C("def set_new_noise_schedule(self, device=torch.device('cuda'), phase='train'):", "device_type", "replace", True,
      "def set_new_noise_schedule(self, device=torch.device('npu'), phase='train'):",
      "models/model.py calls set_new_noise_schedule(phase=...) without a device, so this default is the live "
      "path; torch.tensor(..., device='cuda') fails"),
])

E("palette_uncrop_cfg", "config/uncropping_places2.json", "explicit_replacement",
  "Janspiry/Palette-Image-to-Image-Diffusion-Models config/uncropping_places2.json (outpainting)", [])

# ---------------------------------------------------------------- lama-cleaner (Sanster/lama-cleaner, later IOPaint)

E("lc_const", "lama_cleaner/const.py", "device_branch_or_abstraction",
  "Sanster/lama-cleaner lama_cleaner/const.py", [
    C('AVAILABLE_DEVICES = ["cuda", "cpu", "mps"]', "device_type", "replace", True,
      'AVAILABLE_DEVICES = ["cuda", "cpu", "mps", "npu"]',
      "argparse choices for --device and the plugin devices; 'npu' is rejected without it"),
    C('DEFAULT_DEVICE = "cuda"', "device_type", "replace", True, 'DEFAULT_DEVICE = "npu"',
      "with the CUDA default parse_args exits ('torch.cuda.is_available() is False') on an NPU host"),
])

E("lc_parse_args", "lama_cleaner/parse_args.py", "device_branch_or_abstraction",
  "Sanster/lama-cleaner lama_cleaner/parse_args.py", [
    C('if args.device == "cuda":', "device_type", "add_branch", False,
      'elif args.device == "npu":  # import torch, torch_npu; parser.error if not torch.npu.is_available()',
      "validation only: without the branch '--device npu' simply proceeds and fails later if no NPU"),
])

E("lc_server", "lama_cleaner/server.py", "device_branch_or_abstraction",
  "Sanster/lama-cleaner lama_cleaner/server.py (Flask backend)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first torch import of the server process; torch.device(args.device) with 'npu' needs the backend "
      "registered (autoloaded from torch_npu 2.5.1)"),
])

E("lc_helper", "lama_cleaner/helper.py", "device_branch_or_abstraction",
  "Sanster/lama-cleaner lama_cleaner/helper.py", [])

E("lc_model_utils", "lama_cleaner/model/utils.py", "device_branch_or_abstraction",
  "Sanster/lama-cleaner lama_cleaner/model/utils.py", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "housekeeping only: guarded, so nothing fails, but the NPU cache is never released between model switches"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "as above"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", False, "torch.npu.ipc_collect()",
      "as above; ipc_collect is in torch_npu.npu.__all__"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed above already seeds accelerator backends in recent torch (unconfirmed); SD paths use "
      "an explicit CPU generator anyway"),
])

E("lc_sd", "lama_cleaner/model/sd.py", "device_branch_or_abstraction",
  "Sanster/lama-cleaner lama_cleaner/model/sd.py (diffusers StableDiffusionInpaintPipeline)", [
    C('use_gpu = device == torch.device("cuda") and torch.cuda.is_available()', "device_type", "replace", False,
      'use_gpu = device.type == "npu" and torch.npu.is_available()',
      "performance only: left alone, the NPU runs the pipeline in fp32 from the 'main' revision; results correct"),
    C("self.model.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", False,
      "logger.warning('xformers has no Ascend NPU backend; keeping default attention')",
      "opt-in (--enable-xformers), documented as requiring the xformers package, which has no NPU build; the "
      "default path never reaches it"),
    C("self.model.enable_sequential_cpu_offload(gpu_id=0)", "device_type", "replace", True,
      'self.model.enable_sequential_cpu_offload(device="npu")',
      "--cpu-offload: once use_gpu is true on the NPU this branch is taken, and gpu_id=0 makes diffusers offload "
      "to cuda:0"),
])

E("lc_dockerfile", "docker/GPUDockerfile", "explicit_replacement",
  "Sanster/lama-cleaner docker/GPUDockerfile", [
    C("FROM nvidia/cuda:11.7.1-runtime-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "the CUDA runtime image has no CANN; exact Ascend base-image tag is unconfirmed (any CANN 8.0.0 image "
      "matching torch_npu 2.1.0.post10)"),
    C("RUN pip3 install torch==1.13.1", "import_torch_npu", "replace", True,
      "RUN pip3 install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 --extra-index-url https://download.pytorch.org/whl/cpu",
      "cu117 wheels; torch_npu 2.1.0.post10 pairs with torch 2.1.0 / CANN 8.0.0 in the version matrix; x86 "
      "takes CPU torch from download.pytorch.org/whl/cpu"),
    C("RUN pip3 install xformers", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend and the pinned cu117 build has no aarch64 wheel (most Ascend hosts), so the "
      "image build fails"),
    C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64", "env_var", "replace", False,
      "ENV LD_LIBRARY_PATH=/usr/local/Ascend/ascend-toolkit/latest/lib64:$LD_LIBRARY_PATH",
      "inert pointer to a missing CUDA directory; CANN base images normally export their own env (unconfirmed)"),
])

# ---------------------------------------------------------------- Inpaint-Anything (geekyutao/Inpaint-Anything)

DEV_SEL_NOTE = "on an NPU host torch.cuda.is_available() is False, so the whole pipeline silently runs on the CPU"
DEFAULT_NOTE = "default argument only: every caller in the repo passes device= explicitly"

E("ia_remove", "remove_anything.py", "explicit_replacement",
  "geekyutao/Inpaint-Anything remove_anything.py (SAM + LaMa)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', DEV_SEL_NOTE),
])

E("ia_fill", "fill_anything.py", "explicit_replacement",
  "geekyutao/Inpaint-Anything fill_anything.py (SAM + Stable Diffusion inpainting)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', DEV_SEL_NOTE),
])

E("ia_sam_segment", "sam_segment.py", "explicit_replacement",
  "geekyutao/Inpaint-Anything sam_segment.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('=device="cuda"', "device_type", "replace", False, 'device="npu"', DEFAULT_NOTE),
    C('def build_sam_model(model_type: str, ckpt_p: str, device="cuda"):', "device_type", "replace", False,
      'def build_sam_model(model_type: str, ckpt_p: str, device="npu"):', DEFAULT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', DEV_SEL_NOTE),
])

E("ia_lama_inpaint", "lama_inpaint.py", "explicit_replacement",
  "geekyutao/Inpaint-Anything lama_inpaint.py (wraps vendored LaMa)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('=device="cuda"', "device_type", "replace", False, 'device="npu"', DEFAULT_NOTE),
    C("def build_lama_model(config_p: str, ckpt_p: str, device='cuda'):", "device_type", "replace", False,
      "def build_lama_model(config_p: str, ckpt_p: str, device='npu'):", DEFAULT_NOTE),
    C("model = load_checkpoint(train_config, checkpoint_path, strict=False)", "device_type", "replace", True,
      "model = load_checkpoint(train_config, checkpoint_path, strict=False, map_location='cpu')",
      "vendored LaMa's load_checkpoint defaults to map_location='cuda'; torch.load then raises on a host "
      "without CUDA"),
    C('device="cuda:0"', "device_type", "replace", False, 'device="npu:0"', DEFAULT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', DEV_SEL_NOTE),
])

E("ia_sd_inpaint", "stable_diffusion_inpaint.py", "explicit_replacement",
  "geekyutao/Inpaint-Anything stable_diffusion_inpaint.py (diffusers SD-2 inpainting)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('=device="cuda"', "device_type", "replace", False, 'device="npu"', DEFAULT_NOTE),
    C('=device="cuda",', "device_type", "replace", False, 'device="npu",', DEFAULT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', DEV_SEL_NOTE),
])
