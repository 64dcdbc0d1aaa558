# Labels for probe378 (audio super-resolution / bandwidth extension / packet-loss concealment).
# One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- AudioSR (latent diffusion SR)
E("audiosr_main", "audiosr/__main__.py", "device_branch_or_abstraction",
  "haoheliu/versatile_audio_super_resolution audiosr/__main__.py (CLI)", [
    C('choices=["auto", "cuda", "cpu", "mps"],', "device_type", "add_branch", False,
      'choices=["auto", "cuda", "npu", "cpu", "mps"],',
      "lets users pass -d npu; the default 'auto' already resolves to npu once build_model is ported, so not required"),
    C('if args.device == "cuda" and not torch.cuda.is_available():', "torch_cuda_api", "add_branch", False,
      'elif args.device == "npu" and not torch.npu.is_available():',
      "mirror the CPU-fallback guard for an explicit -d npu; guard only, never fails as written"),
    C('if args.device.startswith("cuda"):', "device_type", "add_branch", False,
      'elif args.device.startswith("npu"):',
      "cache release branch for npu; memory hygiene only (and 'auto' never matches either branch)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA was never initialised; perf/memory only"),
])

E("audiosr_pipeline", "audiosr/pipeline.py", "explicit_replacement",
  "haoheliu/versatile_audio_super_resolution audiosr/pipeline.py (build_model / super_resolution)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "library entry imported by the CLI and by users (from audiosr import build_model); project pins torch<2.5 so no autoload"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "torch.manual_seed on the line above already seeds every device; lazy cuda seeding is a silent no-op on an NPU host (unconfirmed that torch.manual_seed reaches npu on every torch_npu version)"),
    C("        if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "        if torch.npu.is_available():",
      "device auto-selection; unported it silently falls through to CPU"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True,
      'device = torch.device("npu:0")',
      "model placement and map_location for the checkpoint"),
    C('if latent_diffusion.device.type == "cuda":', "device_type", "replace", False,
      'if latent_diffusion.device.type == "npu":',
      "gates cache release between chunks; memory hygiene only"),
    C("            torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "            torch.npu.empty_cache()",
      "no-op without CUDA init; perf/memory only"),
])

E("audiosr_ddim", "audiosr/latent_diffusion/models/ddim.py", "explicit_replacement",
  "haoheliu/versatile_audio_super_resolution audiosr/latent_diffusion/models/ddim.py (LDM DDIMSampler)", [
    C('def __init__(self, model, schedule="linear", device=torch.device("cuda"), **kwargs):', "device_type", "replace", False,
      'def __init__(self, model, schedule="linear", device=torch.device("npu"), **kwargs):',
      "default only stored in self.device, which register_buffer does not read; cosmetic"),
    C('if attr.device != torch.device("cuda"):', "device_type", "replace", False,
      'if attr.device != torch.device("npu"):',
      "comparison is always true anyway (npu:0 != npu, and != cuda); leaving it only means a redundant .to()"),
    C('attr = attr.to(torch.device("cuda"))', "tensor_to_device", "replace", True,
      'attr = attr.to(torch.device("npu"))',
      "every DDIM schedule buffer is moved here; .to('cuda') raises on an NPU host"),
])

E("audiosr_diffutil", "audiosr/latent_diffusion/modules/diffusionmodules/util.py", "explicit_replacement",
  "haoheliu/versatile_audio_super_resolution latent_diffusion/modules/diffusionmodules/util.py (CheckpointFunction)", [
    C('"enabled": torch.is_autocast_enabled(),', "amp", "replace", False,
      '"enabled": torch.npu.is_autocast_enabled(),',
      "no-arg is_autocast_enabled reports CUDA autocast only; matters only in the backward of gradient-checkpointed training, which the inference-only AudioSR release never runs"),
    C('"dtype": torch.get_autocast_gpu_dtype(),', "amp", "replace", False,
      '"dtype": torch.npu.get_autocast_dtype(),',
      "same: only read back in CheckpointFunction.backward (training)"),
    C("with torch.enable_grad(), torch.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", "replace", False,
      "with torch.enable_grad(), torch.npu.amp.autocast(**ctx.gpu_autocast_kwargs):",
      "recompute would run outside NPU autocast; unreachable for inference-only use, required only if someone fine-tunes with use_checkpoint=True"),
])

E("audiosr_utils", "audiosr/utils.py", "explicit_replacement",
  "haoheliu/versatile_audio_super_resolution audiosr/utils.py (I/O, low-pass, checkpoints)", [])

# ---------------------------------------------------------------- NU-Wave 2 (diffusion BWE, Lightning)
E("nuwave2_trainer", "trainer.py", "explicit_replacement",
  "mindslab-ai/nuwave2 trainer.py (pytorch-lightning 1.x Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script; torch 1.x era pin, no device-backend autoload"),
    C("from pytorch_lightning.plugins import DDPPlugin", "distributed_framework", "replace", True,
      "from pytorch_lightning.strategies import DDPStrategy",
      "DDPPlugin cannot set the process-group backend; DDPStrategy(process_group_backend=...) is needed for hccl (requires PL>=1.6)"),
    C("gpus=hparams.train.gpus,", "distributed_framework", "replace", True,
      "devices=hparams.train.gpus,",
      "gpus= means CUDA devices to Lightning; NPU ids go through devices= with an NPU accelerator"),
    C("accelerator='ddp' if n_gpus > 1 else None,", "distributed_framework", "replace", True,
      "accelerator=NPUAccelerator(),",
      "Lightning ships no NPU accelerator; a project-local Accelerator subclass (or a vendor plugin) is assumed - unconfirmed in the knowledge base"),
    C("plugins=DDPPlugin(find_unused_parameters=False) if n_gpus > 1 else None,", "dist_backend", "replace", True,
      "strategy=DDPStrategy(process_group_backend='hccl', find_unused_parameters=False) if n_gpus > 1 else 'auto',",
      "Lightning picks nccl only for cuda root devices and gloo otherwise; gloo cannot all-reduce NPU tensors"),
])

E("nuwave2_lightning", "lightning_model.py", "explicit_replacement",
  "mindslab-ai/nuwave2 lightning_model.py (LightningModule)", [])

E("nuwave2_inference", "inference.py", "explicit_replacement",
  "mindslab-ai/nuwave2 inference.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C("hparams = OC.load('hparameter.yaml')", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "every utterance has a different length (dynamic shapes); msFmkTransplt advises jit_compile=False for dynamic shapes - perf only"),
    C("default='cuda',", "device_type", "replace", True,
      "default='npu',",
      "default device for model, inputs and band mask"),
    C("if args.device.startswith('cuda'):", "device_type", "replace", False,
      "if args.device.startswith('npu'):",
      "left as is, the sync is skipped and the printed timing covers only the async launch; output audio unaffected"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "reached once the guard is ported; torch.cuda.synchronize raises without a CUDA driver"),
    C("if 'cuda' in args.device:", "device_type", "replace", False,
      "if 'npu' in args.device:",
      "second timing guard; timing only"),
    C("torch.cuda.synchronize(args.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(args.device)",
      "second sync; a torch.cuda call with an npu device string raises"),
])

E("nuwave2_hparams", "hparameter.yaml", "explicit_replacement",
  "mindslab-ai/nuwave2 hparameter.yaml", [])

E("nuwave2_dataloader", "dataloader.py", "explicit_replacement",
  "mindslab-ai/nuwave2 dataloader.py (VCTK, random low-pass filters)", [
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',",
      "torch's DataLoader pins for CUDA only when pin_memory_device is empty and silently disables pinning otherwise; perf only, NPU pinning support unconfirmed"),
])

E("nuwave2_diffusion", "diffusion.py", "explicit_replacement",
  "mindslab-ai/nuwave2 diffusion.py (continuous log-SNR sampler)", [])

# ---------------------------------------------------------------- AERO (hydra + denoiser-style DDP)
E("aero_train", "train.py", "explicit_replacement",
  "slp-rl/aero train.py (hydra main, run())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "torch is imported lazily inside run(); torch_npu must follow it in every DDP worker"),
    C("if torch.cuda.is_available() and args.device == 'cuda':", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and args.device == 'npu':",
      "unported, models stay on CPU while batches go to args.device"),
    C("=model.cuda()", "tensor_to_device", "replace", True,
      "model.npu()",
      "generator and discriminators"),
])

E("aero_distrib", "src/ddp/distrib.py", "explicit_replacement",
  "slp-rl/aero src/ddp/distrib.py (from facebookresearch/denoiser distrib.py)", [
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank)",
      "per-rank device binding"),
    C("device='cuda', dtype=torch.float32)", "device_type", "replace", True,
      "device='npu', dtype=torch.float32)",
      "metric all-reduce buffer must live on the hccl device"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],",
      "torch.cuda.current_device raises without CUDA"),
    C("output_device=torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "output_device=torch.npu.current_device())",
      "same"),
])

E("aero_executor", "src/ddp/executor.py", "explicit_replacement",
  "slp-rl/aero src/ddp/executor.py (from facebookresearch/denoiser executor.py)", [
    C("import torch as th", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "the launcher process never runs run(), so th.npu needs its own torch_npu import"),
    C("world_size = th.cuda.device_count()", "torch_cuda_api", "replace", True,
      "world_size = th.npu.device_count()",
      "returns 0 on an NPU host and the launcher exits with 'DDP is only available on GPU'"),
])

E("aero_solver", "src/solver.py", "explicit_replacement",
  "slp-rl/aero src/solver.py (training loop)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "gates a memory log; unported the log is just skipped"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 30",
      "returns 0 (empty stats) when CUDA is uninitialised; wrong log value only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "unlike the stat getters this resolves the current CUDA device and raises on an NPU host"),
])

E("aero_config", "conf/main_config.yaml", "explicit_replacement",
  "slp-rl/aero conf/main_config.yaml (hydra)", [
    C("=device: cuda", "device_type", "replace", True,
      "device: npu",
      "drives batch placement in the solver and the model move in train.py"),
    C("=ddp_backend: nccl", "dist_backend", "replace", True,
      "ddp_backend: hccl",
      "passed straight into init_process_group(backend=args.ddp_backend)"),
])

E("aero_predict", "predict.py", "explicit_replacement",
  "slp-rl/aero predict.py (chunked inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "input chunks go to this device"),
    C("=model.cuda()", "tensor_to_device", "replace", True,
      "model.npu()",
      "unconditional .cuda() raises on an NPU host"),
])

E("aero_utils", "src/utils.py", "explicit_replacement",
  "slp-rl/aero src/utils.py (denoiser utils: LogProgress, swap_state)", [])

# ---------------------------------------------------------------- FRN (packet-loss concealment, Lightning)
E("frn_main", "main.py", "explicit_replacement",
  "Crystalsound/FRN main.py (train / eval / test / onnx modes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(CONFIG.gpus)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(CONFIG.gpus)',
      "CONFIG.gpus is the device selection; the CUDA variable is ignored by the Ascend runtime"),
    C("gpus=len(gpus),", "distributed_framework", "replace", True,
      "devices=len(gpus),",
      "gpus= asks Lightning for CUDA devices"),
    C('accelerator="gpu" if len(gpus) > 1 else None,', "distributed_framework", "replace", True,
      'accelerator=NPUAccelerator(), strategy=DDPStrategy(process_group_backend="hccl") if len(gpus) > 1 else "auto",',
      "NPU accelerator (project-local, unconfirmed) plus hccl for multi-device; Lightning would pick gloo for a non-cuda root device"),
    C("model.cuda(device=0)", "tensor_to_device", "replace", True,
      "model.npu(0)",
      "eval mode"),
    C("trainer = pl.Trainer(accelerator='gpu', devices=1, enable_checkpointing=False, logger=False)", "distributed_framework", "replace", True,
      "trainer = pl.Trainer(accelerator=NPUAccelerator(), devices=1, enable_checkpointing=False, logger=False)",
      "accelerator='gpu' fails with no CUDA device"),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      "blind-test mode"),
    C("trainer = pl.Trainer(accelerator='gpu', devices=1, logger=False)", "distributed_framework", "replace", True,
      "trainer = pl.Trainer(accelerator=NPUAccelerator(), devices=1, logger=False)",
      "same, predict()"),
])

E("frn_config", "config.py", "explicit_replacement",
  "Crystalsound/FRN config.py (CONFIG class)", [])

E("frn_model", "models/frn.py", "explicit_replacement",
  "Crystalsound/FRN models/frn.py (PLCModel, OnnxWrapper)", [])

E("frn_dataset", "dataset.py", "explicit_replacement",
  "Crystalsound/FRN dataset.py (Markov-chain loss masks, STFT features)", [])

E("frn_onnx", "inference_onnx.py", "explicit_replacement",
  "Crystalsound/FRN ONNX streaming inference (onnxruntime)", [
    C("providers = ['CUDAExecutionProvider', 'CPUExecutionProvider']", "device_type", "replace", False,
      "providers = ['CANNExecutionProvider', 'CPUExecutionProvider']",
      "onnxruntime falls back to the CPU provider with a warning, so nothing fails; CANN EP availability in the installed onnxruntime build is unconfirmed in the knowledge base"),
])

E("frn_requirements", "requirements.txt", "explicit_replacement",
  "Crystalsound/FRN requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with CPU torch wheels; cu113 wheels do not exist for aarch64 Ascend hosts"),
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", True,
      "torch==2.1.0",
      "no torch_npu release exists for torch 1.12; nearest paired versions are 1.11.0 or 2.1.0 (with torch-npu==2.1.0.postN added on the next line)"),
    C("torchaudio==0.12.1+cu113", "import_torch_npu", "replace", True,
      "torchaudio==2.1.0",
      "must match the torch pin or pip cannot resolve"),
])

# ---------------------------------------------------------------- WSRGlow (WaveGlow-derived flow SR)
E("wsrglow_train", "train.py", "explicit_replacement",
  "zkx06111/WSRGlow train.py (NVIDIA/waveglow train.py lineage)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script, one per rank"),
    C("model_for_saving = WaveGlow(**waveglow_config).cuda()", "tensor_to_device", "replace", True,
      "model_for_saving = WaveGlow(**waveglow_config).npu()",
      "checkpoint save path builds a fresh model on the device"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "lazy, silent no-op without CUDA; torch.manual_seed above already seeds (unconfirmed for every torch_npu version)"),
    C("model = WaveGlow(**waveglow_config).cuda()", "tensor_to_device", "replace", True,
      "model = WaveGlow(**waveglow_config).npu()",
      "training model placement"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level='O1')", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level='O1', combine_grad=True)",
      "Ascend apex keeps the amp.initialize/scale_loss API; combine_grad is a perf option of the Ascend patch"),
    C("lr = torch.autograd.Variable(lr.cuda())", "tensor_to_device", "replace", True,
      "lr = torch.autograd.Variable(lr.npu())",
      "batch to device"),
    C("hr = torch.autograd.Variable(hr.cuda())", "tensor_to_device", "replace", True,
      "hr = torch.autograd.Variable(hr.npu())",
      "batch to device"),
    C("num_gpus = torch.cuda.device_count() if args.num_gpus is None else args.num_gpus", "torch_cuda_api", "replace", False,
      "num_gpus = torch.npu.device_count() if args.num_gpus is None else args.num_gpus",
      "only hit for single-process runs (distributed.py passes --num_gpus); 0 behaves like 1 in this script, so not required"),
])

E("wsrglow_distributed", "distributed.py", "explicit_replacement",
  "zkx06111/WSRGlow distributed.py (NVIDIA/waveglow distributed.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "distributed.py is itself an entry point (the launcher counts devices)"),
    C('assert torch.cuda.is_available(), "Distributed mode requires CUDA."', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "Distributed mode requires NPU."',
      "assert fails on every NPU rank"),
    C("torch.cuda.set_device(rank % torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % torch.npu.device_count())",
      "device_count() is 0 -> ZeroDivisionError"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "launcher would start zero workers"),
])

E("wsrglow_glow", "glow.py", "explicit_replacement",
  "zkx06111/WSRGlow glow/model code (NVIDIA/waveglow glow.py lineage)", [
    C("if z.type() == 'torch.cuda.HalfTensor':", "device_type", "replace", True,
      "if z.type() == 'torch.npu.HalfTensor':",
      "NPU half tensors report torch.npu.HalfTensor; unported, fp16 inference convolves half z with a float W_inverse"),
    C("torch.logdet(W)", "unsupported_op_workaround", "replace", False,
      "log_det_W = batch_size * n_of_groups * torch.slogdet(W)[1]",
      "logdet has no direct NPU kernel in the op lists (slogdet has); W is tiny, CPU fallback is perf only; det(W)>0 by construction so slogdet's log|det| matches"),
    C("if spect.type() == 'torch.cuda.HalfTensor':", "device_type", "replace", True,
      "if spect.type() == 'torch.npu.HalfTensor':",
      "fp16 inference would take the FloatTensor branch and mix dtypes"),
    C("audio = torch.cuda.HalfTensor(spect.size(0),", "torch_cuda_api", "replace", True,
      "audio = torch.npu.HalfTensor(spect.size(0),",
      "legacy CUDA tensor constructor"),
    C("audio = torch.cuda.FloatTensor(spect.size(0),", "torch_cuda_api", "replace", True,
      "audio = torch.npu.FloatTensor(spect.size(0),",
      "legacy CUDA tensor constructor; the fp32 inference path"),
    C('if spect.type() == "torch.cuda.HalfTensor":', "device_type", "replace", True,
      'if spect.type() == "torch.npu.HalfTensor":',
      "early-output noise branch, same as above"),
    C("z = torch.cuda.HalfTensor(spect.size(0), self.n_early_size, spect.size(2)).normal_()", "torch_cuda_api", "replace", True,
      "z = torch.npu.HalfTensor(spect.size(0), self.n_early_size, spect.size(2)).normal_()",
      "legacy CUDA tensor constructor"),
    C("z = torch.cuda.FloatTensor(spect.size(0), self.n_early_size, spect.size(2)).normal_()", "torch_cuda_api", "replace", True,
      "z = torch.npu.FloatTensor(spect.size(0), self.n_early_size, spect.size(2)).normal_()",
      "legacy CUDA tensor constructor"),
])

E("wsrglow_config", "config.json", "explicit_replacement",
  "zkx06111/WSRGlow config.json (waveglow-style dist_config)", [
    C('"dist_backend": "nccl",', "dist_backend", "replace", True,
      '"dist_backend": "hccl",',
      "passed positionally to dist.init_process_group"),
])

E("wsrglow_inference", "inference.py", "explicit_replacement",
  "zkx06111/WSRGlow inference.py (NVIDIA/waveglow inference.py lineage)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C("waveglow = torch.load(checkpoint_path)['model']", "tensor_to_device", "replace", True,
      "waveglow = torch.load(checkpoint_path, map_location='cpu')['model']",
      "checkpoints pickle the whole CUDA-resident module; published GPU checkpoints cannot be unpickled on a host without CUDA"),
    C("waveglow.cuda().eval()", "tensor_to_device", "replace", True,
      "waveglow.npu().eval()",
      "model placement"),
    C("lr = torch.autograd.Variable(lr.cuda())", "tensor_to_device", "replace", True,
      "lr = torch.autograd.Variable(lr.npu())",
      "input placement"),
])

E("wsrglow_run", "scripts/train_8gpu.sh", "explicit_replacement",
  "WSRGlow-style single-node launcher (shell)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists all eight devices of a node, so ignoring it changes nothing on an 8-NPU host; needed only to select a subset"),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu is imported (unless the image already does it)"),
    C("nvidia-smi > ${LOG_DIR}/hardware.txt", "torch_cuda_api", "replace", False,
      "npu-smi info > ${LOG_DIR}/hardware.txt",
      "diagnostic record only; no set -e, so the missing command does not stop the run"),
])

E("wsrglow_setup", "scripts/setup_env.sh", "explicit_replacement",
  "WSRGlow-style environment setup script (conda + NVIDIA apex)", [
    C("pip install torch==1.10.1+cu113 torchaudio==0.10.1+cu113 -f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchaudio==2.1.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
      "no torch_npu for torch 1.10; 2.1.0 supports the script's Python 3.8"),
    C("git clone https://github.com/NVIDIA/apex", "amp", "replace", True,
      "git clone https://gitee.com/ascend/apex.git",
      "Ascend apex (patch over NVIDIA apex) provides amp O1/O2/O3 on NPU"),
    C('--global-option="--cuda_ext" ./', "amp", "replace", True,
      "bash scripts/build.sh --python=3.8 && pip install --upgrade apex/dist/apex-0.1+ascend-*.whl",
      "--cuda_ext needs nvcc; set -e aborts the whole setup"),
    C('python -c "import torch; print(torch.__version__, torch.cuda.is_available())"', "torch_cuda_api", "replace", False,
      'python -c "import torch, torch_npu; print(torch.__version__, torch.npu.is_available())"',
      "sanity print only"),
])

# ---------------------------------------------------------------- HiFi-GAN+ (bandwidth extension GAN)
E("bwe_train", "hifi_gan_bwe/scripts/train.py", "explicit_replacement",
  "brentspell/hifi-gan-bwe hifi_gan_bwe/scripts/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")',
      "all model/loss/batch placement flows from this"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',",
      "pinning silently disabled without CUDA; perf only, unconfirmed"),
    C("self.gen_scaler = torch.cuda.amp.GradScaler(enabled=amp)", "amp", "replace", True,
      "self.gen_scaler = torch.npu.amp.GradScaler(enabled=amp)",
      "a CUDA GradScaler disables itself without CUDA, so --amp would train fp16 NPU autocast without loss scaling"),
    C("self.disc_scaler = torch.cuda.amp.GradScaler(enabled=amp)", "amp", "replace", True,
      "self.disc_scaler = torch.npu.amp.GradScaler(enabled=amp)",
      "same for the discriminator"),
    C('losses["gpu_mem_gb"] = torch.cuda.memory_allocated(self.device) / 2**30', "torch_cuda_api", "replace", True,
      'losses["gpu_mem_gb"] = torch.npu.memory_allocated(self.device) / 2**30',
      "passing an npu device to a torch.cuda memory API raises (expected a cuda device)"),
    C('with torch.autocast("cuda", enabled=self.amp):', "amp", "replace", True,
      'with torch.autocast("npu", enabled=self.amp):',
      "cuda autocast does not cover NPU ops: --amp silently runs fp32 (2x activation memory)"),
    C("with torch.cuda.amp.autocast(enabled=self.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.amp):",
      "generator step, same"),
])

E("bwe_synth", "hifi_gan_bwe/scripts/synthesize.py", "explicit_replacement",
  "brentspell/hifi-gan-bwe hifi_gan_bwe/scripts/synthesize.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C('default="cuda" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
      'default="npu" if torch.npu.is_available() else "cpu",',
      "unported, synthesis silently runs on CPU"),
])
