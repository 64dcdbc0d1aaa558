"""Labels for probe394 (DDSP / RAVE / neural amp modelling / timbre transfer / audio effects).

One C(...) per upstream line a careful porter edits for an explicit torch_npu port.
`required` = complete-port counterfactual (every other labelled line already ported).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port imports torch_npu so torch.npu / the 'npu' device exist; mandatory before "
               "torch_npu 2.5.1 (no autoload), recommended after")

# ---------------------------------------------------------------- acids-ircam/ddsp_pytorch
E("ddsp_train", "train.py", "explicit_replacement",
  "acids-ircam/ddsp_pytorch train.py (effortless_config args, module-level device, multiscale STFT loss)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "without it the whole training silently runs on the host CPU of an NPU machine"),
  ])
E("ddsp_core", "ddsp/core.py", "explicit_replacement",
  "acids-ircam/ddsp_pytorch ddsp/core.py (stft, rfft/irfft convolution, harmonic synth)", [])
E("ddsp_model", "ddsp/model.py", "explicit_replacement",
  "acids-ircam/ddsp_pytorch ddsp/model.py (DDSP decoder, learnable reverb, realtime_forward)", [])
E("ddsp_export", "export.py", "explicit_replacement",
  "acids-ircam/ddsp_pytorch export.py (TorchScript export on CPU for the realtime plugin)", [])
E("ddsp_preprocess", "preprocess.py", "explicit_replacement",
  "acids-ircam/ddsp_pytorch preprocess.py (crepe/librosa feature extraction, numpy dataset)", [])
E("ddsp_config", "config.yaml", "explicit_replacement",
  "acids-ircam/ddsp_pytorch config.yaml", [])

# ---------------------------------------------------------------- acids-ircam/RAVE
E("rave_train", "scripts/train.py", "explicit_replacement",
  "acids-ircam/RAVE scripts/train.py (absl flags, gin, pytorch_lightning Trainer, --gpu selection)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "elif torch.npu.is_available():",
        "otherwise falls through to the mps/CPU branches on an NPU host"),
      C('accelerator = "cuda"', "device_type", "replace", True, 'accelerator = "npu"',
        "Lightning has no built-in 'npu' accelerator (Lightning-AI/pytorch-lightning #19498, PR #19308 closed): "
        "assumes an NPU Accelerator registered in AcceleratorRegistry by a plugin; 'cuda' raises on an NPU host"),
      C("strategy = pl.strategies.DDPStrategy(find_unused_parameters=True)", "dist_backend", "replace", True,
        'strategy = pl.strategies.DDPStrategy(find_unused_parameters=True, process_group_backend="hccl")',
        "Lightning picks 'nccl' only for cuda root devices and 'gloo' otherwise; gloo cannot reduce NPU tensors"),
  ])
E("rave_core", "rave/core.py", "explicit_replacement",
  "acids-ircam/RAVE rave/core.py (losses, mel/STFT helpers, setup_gpu via GPUtil)", [
      C("CUDA = gpu.getAvailable(maxMemory=.05)", "torch_cuda_api", "replace", True,
        "CUDA = npu_smi_available(max_memory=.05)  # parse `npu-smi info` in a subprocess",
        "GPUtil shells out to nvidia-smi and returns [] when it is missing, so devices=None and Lightning grabs every "
        "NPU; query npu-smi without initialising the NPU runtime so the env var below still takes effect"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(CUDA[0])', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(CUDA[0])',
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; returning [0] would then pick NPU 0, not the free one"),
  ])
E("rave_model", "rave/model.py", "explicit_replacement",
  "acids-ircam/RAVE rave/model.py (LightningModule with manual GAN optimisation, PCA on latents)", [])
E("rave_export", "scripts/export.py", "explicit_replacement",
  "acids-ircam/RAVE scripts/export.py (nn_tilde TorchScript export, map_location='cpu')", [])
E("rave_requirements", "requirements.txt", "explicit_replacement",
  "acids-ircam/RAVE requirements.txt", [
      C("=torch", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post17",
        "torch_npu must be installed and its base version must equal torch's (pip resolves torch==2.1.0)"),
      C("=GPUtil", "import_torch_npu", "removal", False, None,
        "unused once setup_gpu queries npu-smi; harmless to keep"),
  ])
E("rave_gin", "rave/configs/v2.gin", "explicit_replacement",
  "acids-ircam/RAVE rave/configs/v2.gin", [])

# ---------------------------------------------------------------- sdatkinson/neural-amp-modeler
E("nam_core", "nam/train/core.py", "explicit_replacement",
  "sdatkinson/neural-amp-modeler nam/train/core.py (GUI/Colab 'easy mode' trainer, Lightning device config)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "else the NPU host is treated as CPU-only ('No GPU was found') and trains on the CPU"),
      C('device_config = {"accelerator": "gpu", "devices": 1}', "device_type", "replace", True,
        'device_config = {"accelerator": "npu", "devices": 1}',
        "'gpu' means CUDA/MPS to Lightning; 'npu' assumes a registered NPU accelerator plugin (not built into Lightning)"),
      C('"pin_memory": True,', "pin_memory", "replace", False,
        '"pin_memory": True, "pin_memory_device": "npu",',
        "performance only: without an accelerator DataLoader just skips pinning; pin_memory_device='npu' unconfirmed"),
  ])
E("nam_lightning", "nam/train/lightning_module.py", "explicit_replacement",
  "sdatkinson/neural-amp-modeler nam/train/lightning_module.py (ESR/MSE/MRSTFT losses, MRSTFT CPU fallback)", [])
E("nam_full", "nam/train/full.py", "explicit_replacement",
  "sdatkinson/neural-amp-modeler nam/train/full.py (config-file trainer)", [
      C("=import torch as _torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu as _torch_npu",
        IMPORT_NOTE + "; the Trainer here takes accelerator='npu' from the learning JSON"),
  ])
E("nam_learning_json", "nam_full_configs/learning/default.json", "explicit_replacement",
  "sdatkinson/neural-amp-modeler nam_full_configs/learning/*.json", [
      C('"pin_memory": true,', "pin_memory", "replace", False,
        '"pin_memory": true, "pin_memory_device": "npu",',
        "performance only (see nam_core); unconfirmed"),
      C('"accelerator": "gpu",', "device_type", "replace", True, '"accelerator": "npu",',
        "Lightning 'gpu' fails on a host without CUDA"),
  ])
E("nam_env_gpu", "environment_gpu.yml", "explicit_replacement",
  "sdatkinson/neural-amp-modeler environment_gpu.yml (conda, pytorch + nvidia channels)", [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "channel becomes unused; inert"),
      C("- pytorch>=1.10.0", "import_torch_npu", "replace", False, "- pytorch==2.1.0",
        "torch must equal torch_npu's base version; pip would otherwise overwrite the conda build"),
      C("- pytorch-cuda=11.8", "import_torch_npu", "removal", True, None,
        "pulls the CUDA runtime / CUDA build of pytorch; no such build for an Ascend (often aarch64) host"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
        "torch_npu is pip-only; added as the first pip dependency"),
  ])

# ---------------------------------------------------------------- yxlllc/DDSP-SVC
E("svc_train", "train.py", "explicit_replacement",
  "yxlllc/DDSP-SVC train.py (YAML config device, torch.cuda.set_device(gpu_id))", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", False,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "default branch never reached: the only caller passes device=args.device"),
      C("loss_func = RSSLoss(", "compile_mode", "npu_only_addition", False,
        "torch.npu.set_compile_mode(jit_compile=False)",
        "RSSLoss draws random FFT sizes every step (dynamic shapes); msFmkTransplt advice, performance only"),
      C("if args.device == 'cuda':", "device_type", "replace", True, "if args.device == 'npu':",
        "after the config says npu this test is False and set_device(gpu_id) is silently skipped"),
      C("torch.cuda.set_device(args.env.gpu_id)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.env.gpu_id)", "torch.cuda.set_device raises without CUDA"),
  ])
E("svc_solver", "solver.py", "explicit_replacement",
  "yxlllc/DDSP-SVC solver.py (autocast(device_type=args.device), GradScaler, fp16/bf16 switch)", [
      C("from torch.cuda.amp import GradScaler", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler",
        "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is absent: fp16 training then runs "
        "without loss scaling (silent underflow)"),
  ])
E("svc_main", "main.py", "explicit_replacement",
  "yxlllc/DDSP-SVC main.py (offline voice conversion CLI)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "auto device picks cpu on an NPU host; everything downstream follows this variable"),
  ])
E("svc_vocoder", "ddsp/vocoder.py", "explicit_replacement",
  "yxlllc/DDSP-SVC ddsp/vocoder.py (F0 extractors, units encoders, CombSubFast synthesiser)", [
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", False,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "crepe default only used when a caller omits device=; all in-repo callers pass it"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", False,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "Units_Encoder default; callers pass device"),
      C("checkpoint = torch.load(path)", "tensor_to_device", "replace", False,
        "checkpoint = torch.load(path, map_location='cpu')",
        "fails only if the hubert-soft checkpoint was saved with CUDA tensors (unconfirmed)"),
      C("src_filter = torch.exp(ctrls['harmonic_magnitude'] + 1.j * np.pi * ctrls['harmonic_phase'])",
        "unsupported_op_workaround", "replace", False,
        "src_filter = torch.polar(torch.exp(ctrls['harmonic_magnitude']), np.pi * ctrls['harmonic_phase'])",
        "Ascend 2.7.1 list gives no complex dtype for torch.exp; torch.polar is listed (fp32). Unconfirmed whether "
        "complex exp errors or falls back"),
  ])
E("svc_loss", "ddsp/loss.py", "explicit_replacement",
  "yxlllc/DDSP-SVC ddsp/loss.py (SSS/MSS/RSS spectral losses)", [
      C("def __init__(self, fft_min, fft_max, n_scale, alpha=1.0, overlap=0, eps=1e-7, device='cuda'):",
        "device_type", "replace", False,
        "def __init__(self, fft_min, fft_max, n_scale, alpha=1.0, overlap=0, eps=1e-7, device='npu'):",
        "default never used: train.py passes device=args.device"),
  ])
E("svc_hifigan_models", "nsf_hifigan/models.py", "explicit_replacement",
  "yxlllc/DDSP-SVC nsf_hifigan/models.py (NSF-HiFiGAN generator and load_model)", [
      C("def load_model(model_path, device='cuda'):", "device_type", "replace", False,
        "def load_model(model_path, device='npu'):",
        "default never used by in-repo callers (Vocoder/Enhancer pass device)"),
  ])
E("svc_nvstft", "nsf_hifigan/nvSTFT.py", "explicit_replacement",
  "yxlllc/DDSP-SVC nsf_hifigan/nvSTFT.py (mel STFT with per-device caches)", [])
E("svc_config", "configs/combsub.yaml", "explicit_replacement",
  "yxlllc/DDSP-SVC configs/combsub.yaml", [
      C("=device: cuda", "device_type", "replace", True, "device: npu",
        "drives model.to, autocast(device_type=...) and set_device in train.py"),
      C("cache_device: 'cuda'", "device_type", "replace", True,
        "cache_device: 'npu' # cache the data set in NPU memory",
        "AudioDataset moves every cached tensor .to(cache_device) at start-up; 'cuda' raises"),
  ])
E("svc_dataloaders", "data_loaders.py", "explicit_replacement",
  "yxlllc/DDSP-SVC data_loaders.py (AudioDataset with on-device cache)", [
      C("pin_memory=True if args.train.cache_device == 'cpu' else False", "pin_memory", "replace", False,
        "pin_memory=True if args.train.cache_device == 'cpu' else False, pin_memory_device='npu'",
        "performance only; only active when caching on cpu; pin_memory_device='npu' unconfirmed"),
      C("=pin_memory=True", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu'",
        "validation loader; performance only"),
  ])
E("svc_flask", "flask_api.py", "explicit_replacement",
  "yxlllc/DDSP-SVC flask_api.py (VST bridge server)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("self.device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "self.device = 'npu' if torch.npu.is_available() else 'cpu'",
        "server would silently infer on the CPU"),
  ])

# ---------------------------------------------------------------- csteinmetz1/micro-tcn
E("mtcn_train", "train_comp.py", "explicit_replacement",
  "csteinmetz1/micro-tcn train_comp.py (Lightning 1.x Trainer.from_argparse_args)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
        "performance only; unconfirmed"),
  ])
E("mtcn_tcn", "microtcn/tcn.py", "explicit_replacement",
  "csteinmetz1/micro-tcn microtcn/tcn.py (FiLM-conditioned TCN)", [])
E("mtcn_train_sh", "scripts/train_comp.sh", "explicit_replacement",
  "csteinmetz1/micro-tcn train_comp.sh (one background run per GPU)", [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (library paths) needed before torch_npu can load"),
      C("CUDA_VISIBLE_DEVICES=0 python train_comp.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0 python train_comp.py \\",
        "without it all three background runs land on NPU 0"),
      C("=--gpus 1 --model_type tcn \\", "device_type", "replace", True,
        "--accelerator npu --devices 1 --model_type tcn \\",
        "--gpus selects the CUDA accelerator in Lightning 1.x"),
      C("CUDA_VISIBLE_DEVICES=1 python train_comp.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=1 python train_comp.py \\", "see first run"),
      C("--gpus 1 --model_type tcn --nblocks 10", "device_type", "replace", True,
        "--accelerator npu --devices 1 --model_type tcn --nblocks 10 \\", "see first run"),
      C("CUDA_VISIBLE_DEVICES=2 python train_comp.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=2 python train_comp.py \\", "see first run"),
      C("--gpus 1 --model_type lstm", "device_type", "replace", True,
        "--accelerator npu --devices 1 --model_type lstm \\", "see first run"),
  ])
E("mtcn_inference", "comp_inference.py", "explicit_replacement",
  "csteinmetz1/micro-tcn comp_inference.py (real-time factor timing, --gpu flag)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if args.gpu: torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "if args.gpu: torch.npu.synchronize()",
        "raises without CUDA; and NPU timing needs the sync (asynchronous launch)"),
      C("input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", ""),
      C("params = params.cuda()", "tensor_to_device", "replace", True, "params = params.npu()", ""),
      C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ""),
  ])
E("mtcn_test", "test.py", "explicit_replacement",
  "csteinmetz1/micro-tcn test.py (evaluation on SignalTrain LA2A test set)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('model = LSTMModel.load_from_checkpoint(checkpoint_path, map_location="cuda:0")', "tensor_to_device",
        "replace", True,
        'model = LSTMModel.load_from_checkpoint(checkpoint_path, map_location="npu:0")', ""),
      C('model = TCNModel.load_from_checkpoint(checkpoint_path, map_location="cuda:0")', "tensor_to_device",
        "replace", True,
        'model = TCNModel.load_from_checkpoint(checkpoint_path, map_location="npu:0")', ""),
      C('input = input.to("cuda:0")', "tensor_to_device", "replace", True, 'input = input.to("npu:0")', ""),
      C('target = target.to("cuda:0")', "tensor_to_device", "replace", True, 'target = target.to("npu:0")', ""),
      C('params = params.to("cuda:0")', "tensor_to_device", "replace", True, 'params = params.to("npu:0")', ""),
  ])

# ---------------------------------------------------------------- yoyololicon/torchlpc
E("lpc_core", "torchlpc/core.py", "device_branch_or_abstraction",
  "yoyololicon/torchlpc torchlpc/core.py (numba @cuda.jit all-pole kernel, numba CPU fallback)", [
      C("if x.is_cuda:", "custom_cuda_extension", "add_branch", False,
        "if x.is_npu: return lpc_npu(x, A, zi)  # block-wise recursion with torch ops / Ascend C",
        "NPU tensors already take the numba CPU path (.cpu() round trip) and get correct results; "
        "an NPU branch is a performance port"),
  ])
E("lpc_recurrence", "torchlpc/recurrence.py", "device_branch_or_abstraction",
  "yoyololicon/torchlpc torchlpc/recurrence.py (first-order scan via C++/CUDA torch.ops)", [
      C("return torch.ops.torchlpc.scan_cpu(impulse, decay, initial_state)", "unsupported_op_workaround",
        "replace", False,
        "return torch.ops.torchlpc.scan_cpu(impulse.cpu(), decay.cpu(), initial_state.cpu()).to(decay.device)",
        "scan_cpu has only a CPU kernel; torch_npu's PrivateUse1 boxed CPU fallback should route it (knowledge §3.8) "
        "but whether that covers out-of-tree ops is unconfirmed; the explicit round trip makes it deliberate"),
  ])
E("lpc_setup", "setup.py", "kernel_rewrite",
  "yoyololicon/torchlpc setup.py (CppExtension / CUDAExtension build)", [
      C("extension = CUDAExtension if use_cuda else CppExtension", "custom_cuda_extension", "replace", False,
        "extension = NpuExtension if use_npu else CppExtension  # torch_npu.utils.cpp_extension",
        "only needed if the .cu scan is rewritten in Ascend C; the CPU C++ build works unchanged on an NPU host"),
  ])
