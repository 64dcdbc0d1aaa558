"""Labels for probe108 (EEG / neuroscience / physiological-signal deep learning, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit.
See README.md "How the labels were chosen" for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
E("bd_bcic_trial", "examples/model_building/plot_bcic_iv_2a_moabb_trial.py", "explicit_replacement",
  "braindecode trialwise BCIC IV 2a example (ShallowFBCSPNet + skorch EEGClassifier)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: registers the npu device (mandatory before torch_npu 2.5.1, recommended after)"),
    C("cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "cuda = torch.npu.is_available()  # check if NPU is available, if True chooses to use it",
      "torch.cuda.is_available() is False on an Ascend host, so the example silently trains on CPU"),
    C('device = "cuda" if cuda else "cpu"', "device_type", "replace", True,
      'device = "npu" if cuda else "cpu"',
      "device string handed to EEGClassifier (skorch moves module/batches to it)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "Module.cuda() needs a CUDA runtime; guarded by the (ported) availability flag, so it would run and fail"),
])

# ---------------------------------------------------------------------------------------------
E("bd_util", "braindecode/util.py", "device_branch_or_abstraction",
  "braindecode util.py (set_random_seeds, np_to_th, th_to_np helpers)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "add_branch", False,
      'if hasattr(torch, "npu") and torch.npu.is_available(): torch.npu.manual_seed_all(seed)',
      "silent no-op without CUDA; torch.manual_seed() two lines above should already seed the privateuse1 "
      "(npu) generator - unconfirmed in knowledge, so only for explicitness"),
    C("X_tensor = X_tensor.pin_memory()", "pin_memory", "replace", False,
      'X_tensor = X_tensor.pin_memory(device="npu") if hasattr(torch, "npu") else X_tensor.pin_memory()',
      "only reached with pin_memory=True (default False); which accelerator a bare pin_memory() targets "
      "depends on the torch version - unconfirmed"),
])

# ---------------------------------------------------------------------------------------------
E("bd_sleep_chambon", "examples/applied_examples/plot_sleep_staging_chambon2018.py", "explicit_replacement",
  "braindecode sleep-staging example (SleepStagerChambon2018, SequenceSampler, weighted loss)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: needed so that the npu device exists (autoloaded only from torch_npu 2.5.1)"),
    C("cuda = torch.cuda.is_available()  # check if GPU is available", "torch_cuda_api", "replace", True,
      "cuda = torch.npu.is_available()  # check if NPU is available",
      "False on an Ascend host: seeds/benchmark/model.cuda() branch skipped, training silently on CPU"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "device used for EEGClassifier and for the class-weight tensor"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "runs once the availability flag is ported; Module.cuda() fails without CUDA"),
])

# ---------------------------------------------------------------------------------------------
E("mne_mi_pipeline", "pipelines/mi_eegbci_pipeline.py", "device_branch_or_abstraction",
  "MNE EEGBCI motor-imagery tutorial turned into an MNE-preprocessing + PyTorch CNN pipeline", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  (guarded: try/except ImportError on non-Ascend hosts)",
      "entry script; torch.npu used by the new device branch"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): dev = torch.device(f"npu:{gpu_id}"); torch.npu.set_device(dev); return dev',
      "get_device() only knows CUDA; without an NPU branch the network trains on CPU"),
    C('return "cuda"', "unsupported_op_workaround", "replace", False,
      'return "1"  # MNE\'s n_jobs="cuda" path is CuPy-only; no Ascend backend',
      "MNE's CUDA filtering/resampling needs CuPy (no Ascend port); MNE falls back to CPU by itself, "
      "so this only removes a misleading code path"),
    C("num_workers=args.num_workers, pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
      "num_workers=args.num_workers, pin_memory=device.type != \"cpu\",",
      "pinning keyed on CUDA availability is silently off on NPU (performance only)"),
])

# ---------------------------------------------------------------------------------------------
E("mne_env_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml of an MNE + braindecode + skorch EEG project (pytorch/nvidia channels, cupy)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None,
      "channel only serves pytorch-cuda / CUDA runtime packages; harmless once those are gone"),
    C("=- pytorch=2.1.2", "import_torch_npu", "replace", True, "- pytorch=2.1.0=*cpu*",
      "torch_npu is published for torch 2.1.0 (2.1.0.postN), not 2.1.2, and must sit on a CPU torch build"),
    C("=- torchvision=0.16.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "0.16.2 pins torch 2.1.2; must follow the torch downgrade to 2.1.0 or the solve fails"),
    C("=- torchaudio=2.1.2", "import_torch_npu", "replace", True, "- torchaudio=2.1.0",
      "same torch pairing constraint as torchvision"),
    C("=- pytorch-cuda=12.1", "import_torch_npu", "replace", True, "- cpuonly",
      "selects the CUDA 12.1 pytorch build (and CUDA runtime); unusable with torch_npu and absent on aarch64 Ascend hosts"),
    C("=- cupy>=12.2", "unsupported_op_workaround", "removal", False, None,
      "CUDA-only (no Ascend port); MNE falls back to CPU filtering without it"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "the Ascend adapter itself, version-locked to torch 2.1.0 (CANN 8.0.0 pairing)"),
])

# ---------------------------------------------------------------------------------------------
E("attnsleep_base_trainer", "base/base_trainer.py", "explicit_replacement",
  "AttnSleep / pytorch-template BaseTrainer (_prepare_device with n_gpu, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "library module; the train_Kfold_CV.py entry point is where the import really has to happen"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
      "returns 0 on an Ascend host, so n_gpu_use is forced to 0 and training silently runs on CPU"),
    C("device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if n_gpu_use > 0 else 'cpu')", "hard-coded CUDA device"),
    C("self.model = torch.nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "replace", True,
      "self.model = model  # nn.DataParallel is unsupported on Ascend; multi-card needs DDP (one process per NPU)",
      "torch.nn.DataParallel is marked unsupported on A2/A3 (scatter/replicate go through torch.cuda.comm); "
      "taken whenever config n_gpu > 1"),
])

# ---------------------------------------------------------------------------------------------
E("attnsleep_batch_train_sh", "batch_train.sh", "explicit_replacement",
  "AttnSleep batch_train.sh k-fold launcher, folds spread over GPUs with CUDA_VISIBLE_DEVICES", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN libraries/paths must be in the environment before torch_npu is imported"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and the script runs under set -e, so it aborts here"),
    C("CUDA_VISIBLE_DEVICES=$gpu python train_Kfold_CV.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpu python train_Kfold_CV.py --fold_id=$i --device 0 --np_data_dir \"$data_dir\" \\",
      "ignored by the Ascend runtime: every parallel fold would land on NPU 0"),
    C("CUDA_VISIBLE_DEVICES=${gpus[0]} python train_Kfold_CV.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpus[0]} python train_Kfold_CV.py --fold_id=$end --device 0 --np_data_dir \"$data_dir\" \\",
      "same device pinning for the final aggregating fold"),
])

# ---------------------------------------------------------------------------------------------
E("deepsleepnet_model", "deepsleepnet/model.py", "explicit_replacement",
  "PyTorch port of DeepSleepNet (two-branch CNN feature net + bi-LSTM sequence model)", [
    C("h0 = torch.zeros(self.n_rnn_layers * 2, batch_size, self.hidden_size).cuda()", "tensor_to_device", "replace", True,
      "h0 = torch.zeros(self.n_rnn_layers * 2, batch_size, self.hidden_size, device=self.fc.weight.device)",
      "initial LSTM state hard-wired to CUDA; fails on NPU (porter makes it follow the module's device)"),
    C("c0 = torch.zeros(self.n_rnn_layers * 2, batch_size, self.hidden_size).cuda()", "tensor_to_device", "replace", True,
      "c0 = torch.zeros(self.n_rnn_layers * 2, batch_size, self.hidden_size, device=self.fc.weight.device)",
      "same as h0"),
    C("self.lstm.flatten_parameters()", "unsupported_op_workaround", "removal", False, None,
      "cuDNN weight compaction: returns early for non-CUDA weights (silent no-op) and is listed unsupported "
      "by msFmkTransplt; removed for clarity"),
])

# ---------------------------------------------------------------------------------------------
E("deepsleepnet_train", "deepsleepnet/train.py", "transfer_to_npu",
  "DeepSleepNet PyTorch two-stage trainer (pretrain + sequence fine-tune, AMP, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "automatic migration: torch.cuda.* (is_available, set_device, manual_seed, amp.autocast/GradScaler, "
      "max_memory_allocated), Tensor/Module.cuda, 'cuda:N' strings passed to .to()/torch.load are redirected "
      "to the NPU, so those lines stay as they are"),
    C("pre_model = nn.DataParallel(feature_net", "distributed_framework", "replace", True,
      "pre_model = feature_net  # nn.DataParallel unsupported on Ascend; use DDP for --n_gpus > 1",
      "not covered by transfer_to_npu: nn.DataParallel is unsupported on A2/A3; taken with --n_gpus > 1"),
    C("model = nn.DataParallel(model, device_ids=list(range(args.n_gpus)))", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel unsupported on Ascend; wrap with DistributedDataParallel in a torchrun launch instead",
      "same as the pretraining wrapper"),
])

# ---------------------------------------------------------------------------------------------
E("ptbxl_train", "code/train_ptbxl.py", "explicit_replacement",
  "PTB-XL ECG benchmark trainer (xresnet1d101 etc., AMP, DataParallel, sliding-window eval)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu device selection is ignored by the Ascend runtime (and n_gpus is derived from it)"),
    C("import torch  # noqa: E402", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: E402,F401", "entry script; after the visible-devices variable is set"),
    C("from torch.cuda.amp import GradScaler, autocast  # noqa: E402", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast  # noqa: E402",
      "CUDA autocast/GradScaler switch themselves off without CUDA (--amp silently ignored); "
      "swapping the import fixes every autocast()/GradScaler() use below"),
    C("pin_memory=True, drop_last=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu", drop_last=True,',
      "older DataLoaders only pin for CUDA; performance only, unconfirmed for newer torch"),
    C("model = nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()  # nn.DataParallel is unsupported on Ascend; use DDP for several NPUs",
      "DataParallel unsupported on A2/A3 and .cuda() fails; taken with --gpu 0,1"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "hard CUDA move"),
    C("inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs = inputs.npu(non_blocking=True)", "hard CUDA move"),
    C("targets = targets.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "targets = targets.npu(non_blocking=True)", "hard CUDA move"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is not initialised; NPU caching allocator is never trimmed (memory only)"),
])

# ---------------------------------------------------------------------------------------------
E("ptbxl_run_sh", "scripts/run_experiments.sh", "explicit_replacement",
  "PTB-XL benchmark reproduction launcher (loops experiments x models)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "CANN environment must be sourced; wrapped in set +u because the script runs with nounset "
      "(whether set_env.sh trips nounset is unconfirmed)"),
    C("NGPU_VISIBLE=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", "replace", True,
      'NGPU_VISIBLE=$(npu-smi info -l | grep -c "NPU ID")',
      "nvidia-smi is missing on Ascend hosts; under set -e/pipefail the script exits here"),
    C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPUS",
      "device selection ignored by the Ascend runtime (train_ptbxl.py re-exports it from --gpu as well)"),
])

# ---------------------------------------------------------------------------------------------
E("cinc2020_apex_train", "train_12ECG_classifier.py", "explicit_replacement",
  "PhysioNet/CinC 2020 12-lead ECG challenge entry (SE-ResNet34, NVIDIA apex amp O1 + FusedAdam)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the challenge driver (train_model.py) is fixed, so the entry module itself must import torch_npu"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from apex.optimizers import NpuFusedAdam",
      "apex FusedAdam is CUDA-kernel backed and must be edited by hand; Ascend apex ships NpuFusedAdam"),
    C("import amp_C  # noqa: F401", "custom_cuda_extension", "removal", True, None,
      "apex's CUDA extension does not exist in Ascend apex: the ImportError flips APEX_AVAILABLE and AMP "
      "silently disappears (msFmkTransplt deletes this import)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA; torch.manual_seed() right above should seed the npu generator (unconfirmed)"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silent CPU training otherwise"),
    C("optimizer = FusedAdam(model.parameters(), lr=1e-3, weight_decay=1e-5)", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedAdam(model.parameters(), lr=1e-3, weight_decay=1e-5)", "follows the import change"),
    C('model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)', "amp", "replace", False,
      'model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0, combine_grad=True)',
      "Ascend apex supports O1 as is; combine_grad is its NPU-specific fused-unscale option (performance)"),
    C('map_location="cuda:0")', "device_type", "replace", True,
      'ckpt = torch.load(os.path.join(input_directory, "model.pth"), map_location="npu:0")',
      "map_location names a CUDA device"),
    C('return {"model": model.cuda(),', "tensor_to_device", "replace", True,
      'return {"model": model.npu(), "classes": ckpt["classes"], "threshold": ckpt["threshold"]}',
      "hard CUDA move in the inference loader"),
])

# ---------------------------------------------------------------------------------------------
E("s4_kernel", "src/models/s4/kernel.py", "kernel_rewrite",
  "state-spaces S4/S4D kernel module as vendored by S4-on-PTB-XL ECG experiments (CUDA ext / pykeops / naive)", [
    C('backend = "cuda" if has_cuda_extension else ("keops" if has_pykeops else "naive")', "custom_cuda_extension",
      "replace", False,
      'backend = "npu" if (hasattr(torch, "npu") and torch.npu.is_available()) else ("cuda" if has_cuda_extension else ("keops" if has_pykeops else "naive"))',
      "on an Ascend host the CUDA extension is absent, but an installed pykeops would be picked and asked for "
      "backend='GPU' on NPU tensors; route NPU to a torch-op (real-arithmetic) Vandermonde instead - "
      "keops failure mode unconfirmed"),
    C("vandermonde_matrix = torch.exp(x.unsqueeze(-1) * torch.arange(L).to(x))", "unsupported_op_workaround",
      "replace", False,
      "xl = x.unsqueeze(-1) * torch.arange(L).to(x); vandermonde_matrix = torch.polar(torch.exp(xl.real), xl.imag)",
      "torch.exp is listed for real dtypes only on A2/A3 (no complex64): either an error or a CPU round-trip "
      "per kernel call - unconfirmed which; torch.polar is supported"),
    C("C = C * (torch.exp(dtA) - 1.0) / A  # ZOH", "unsupported_op_workaround", "replace", False,
      "C = C * (torch.polar(torch.exp(dtA.real), dtA.imag) - 1.0) / A  # ZOH",
      "same complex-exp limitation in the ZOH discretisation"),
])

# ---------------------------------------------------------------------------------------------
E("s4_ext_setup", "extensions/kernels/setup.py", "kernel_rewrite",
  "state-spaces extensions/kernels/setup.py (CUDAExtension for Cauchy / Vandermonde kernels)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension", "custom_cuda_extension",
      "npu_only_addition", False, "from torch_npu.utils.cpp_extension import NpuExtension",
      "only if the kernels are rewritten in Ascend C; NpuExtension adds the torch_npu/ACL include and lib dirs"),
    C("if torch.cuda.is_available() and CUDA_HOME is not None:", "custom_cuda_extension", "add_branch", False,
      'elif hasattr(torch, "npu") and torch.npu.is_available(): ext_modules.append(NpuExtension("structured_kernels", ["cauchy.cpp", "cauchy_ascendc.cpp", "vandermonde.cpp", "vandermonde_ascendc.cpp"]))',
      "the guard already skips the nvcc build on an Ascend host and the model falls back to torch ops, "
      "so an Ascend C kernel is a performance port only"),
])

# ---------------------------------------------------------------------------------------------
E("fairseq_signals_cfg", "examples/w2v_cmsc/config/finetuning/ecg_transformer/diagnosis.yaml",
  "explicit_replacement",
  "fairseq-signals hydra fine-tuning config for an ECG transformer (W2V+CMSC)", [
    C("distributed_backend: nccl", "dist_backend", "replace", True, "distributed_backend: hccl",
      "distributed_world_size is 4, so fairseq calls init_process_group with this backend; NCCL does not "
      "exist on Ascend"),
])

# ---------------------------------------------------------------------------------------------
E("ks4_run", "kilosort/run_kilosort.py", "device_branch_or_abstraction",
  "Kilosort4 run_kilosort.py pipeline driver (device auto-selection, VRAM check, performance logging)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401  (wrapped in try/except ImportError)",
      "library module: the user's script or kilosort/__init__.py may import it instead; the NPU branches "
      "below are hasattr-guarded"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif hasattr(torch, 'npu') and torch.npu.is_available(): device = torch.device('npu')",
      "device=None is the documented default: without an NPU branch Kilosort silently sorts on CPU"),
    C("memory = torch.cuda.get_device_properties(device).total_memory/1024**3", "torch_cuda_api", "replace", True,
      "memory = (torch.npu if device.type == 'npu' else torch.cuda).get_device_properties(device).total_memory/1024**3",
      "runs for every non-CPU device; torch.cuda.get_device_properties rejects an npu device "
      "(total_memory is available on NPU)"),
    C("torch.cuda.manual_seed_all(1)", "torch_cuda_api", "add_branch", False,
      "if device.type == 'npu': torch.npu.manual_seed_all(1)",
      "silent no-op on NPU; torch.random.manual_seed(1) on the next line should also seed the npu generator "
      "(unconfirmed)"),
    C("if isinstance(e, torch.cuda.OutOfMemoryError):", "torch_cuda_api", "replace", False,
      "if isinstance(e, torch.cuda.OutOfMemoryError) or 'NPU out of memory' in str(e):",
      "diagnostics only; the exception type torch_npu raises on OOM is unconfirmed"),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 0:", "torch_cuda_api", "add_branch", False,
      "elif hasattr(torch, 'npu') and torch.npu.is_available(): lines += [f\"NPU {i}: {torch.npu.get_device_name(i)}, {torch.npu.get_device_properties(i).total_memory / 2**30:.1f} GiB\" for i in range(torch.npu.device_count())]",
      "log text only; note the NPU branch must not print major/minor, which NPU device properties lack"),
    C("if torch.cuda.is_initialized():", "torch_cuda_api", "add_branch", False,
      "elif hasattr(torch, 'npu') and torch.npu.is_initialized(): mod = torch.npu  # same memory_allocated/max_memory_allocated/memory_reserved/reset_peak_memory_stats calls",
      "performance log only: NPU memory is silently not reported"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.cuda.is_available(): return log.info(torch.npu.memory_summary(abbreviated=True)) if (hasattr(torch, 'npu') and torch.npu.is_available()) else None",
      "OOM debugging aid only (memory_summary exists on NPU)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache() if device.type == 'npu' else torch.cuda.empty_cache()",
      "clear_cache is the user's OOM workaround; on NPU it silently does nothing"),
    C("torch.cuda.empty_cache()  # release cached blocks before clustering", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache() if device.type == 'npu' else torch.cuda.empty_cache()  # release cached blocks before clustering",
      "same as above"),
])

# ---------------------------------------------------------------------------------------------
_KS_DEF_NOTE = ("CUDA default argument; every pipeline caller (run_kilosort) passes device= explicitly and "
                "creating torch.device('cuda') does not touch CUDA, so only direct third-party calls are affected")
E("ks4_preprocessing", "kilosort/preprocessing.py", "device_branch_or_abstraction",
  "Kilosort4 preprocessing.py (high-pass filter, ZCA whitening, drift kriging matrix)", [
    C("def find_good_channels(ops, chunk_size=60000, device=torch.device('cuda')):", "device_type", "replace", False,
      "def find_good_channels(ops, chunk_size=60000, device=None):", _KS_DEF_NOTE),
    C("def whitening_local(CC, xc, yc, nrange=32, device=torch.device('cuda')):", "device_type", "replace", False,
      "def whitening_local(CC, xc, yc, nrange=32, device=None):", _KS_DEF_NOTE),
    C("def get_drift_matrix(ops, dshift, device=torch.device('cuda')):", "device_type", "replace", False,
      "def get_drift_matrix(ops, dshift, device=None):", _KS_DEF_NOTE),
    C("def get_whitening_matrix(f, xc, yc, nskip=25, nrange=32, device=torch.device('cuda')):", "device_type",
      "replace", False, "def get_whitening_matrix(f, xc, yc, nskip=25, nrange=32, device=None):", _KS_DEF_NOTE),
    C("def get_highpass_filter(fs=30000, cutoff=300, device=torch.device('cuda')):", "device_type", "replace", False,
      "def get_highpass_filter(fs=30000, cutoff=300, device=None):", _KS_DEF_NOTE),
    C("def run(ops, bfile, device=torch.device('cuda')):", "device_type", "replace", False,
      "def run(ops, bfile, device=None):",
      "GUI preview entry point; the GUI passes its selected device - same reasoning as the other defaults"),
    C("X = fftshift(X, dim=-1)", "unsupported_op_workaround", "replace", False,
      "X = torch.roll(X, shifts=X.shape[-1] // 2, dims=-1)",
      "torch.fft.fftshift is marked unsupported (A2/A3 table and msFmkTransplt) although it decomposes to "
      "torch.roll, which has an NPU kernel - precautionary rewrite"),
])

# ---------------------------------------------------------------------------------------------
E("ks4_clustering", "kilosort/clustering_qr.py", "device_branch_or_abstraction",
  "Kilosort4 clustering_qr.py (faiss neighbours, sparse-COO graph clustering on GPU, OOM fallback)", [
    C("from torch import sparse_coo_tensor as coo", "unsupported_op_workaround", "replace", False,
      "from kilosort.utils import dense_coo as coo  # dense index_put_(accumulate=True) builder with a .to_dense() no-op",
      "sparse COO construction is listed as supported on A2, but no NPU kernel for sparse to_dense is listed and "
      "sparse ops without kernels raise instead of falling back - unconfirmed, so a precautionary dense rewrite"),
    C("def assign_iclust(rows_neigh, isub, kn, tones2, nclust, lam, m, ki, kj, device=torch.device('cuda')):",
      "device_type", "replace", False,
      "def assign_iclust(rows_neigh, isub, kn, tones2, nclust, lam, m, ki, kj, device=None):", _KS_DEF_NOTE),
    C("def kmeans_plusplus(Xg, niter=200, seed=1, device=torch.device('cuda'), verbose=False):", "device_type",
      "replace", False, "def kmeans_plusplus(Xg, niter=200, seed=1, device=None, verbose=False):", _KS_DEF_NOTE),
    C("lam=0, device=torch.device('cuda'), verbose=False):", "device_type", "replace", False,
      "lam=0, device=None, verbose=False):", _KS_DEF_NOTE),
    C("def assign_isub(iclust, kn, tones2, nclust, nsub, lam, m, ki, kj, device=torch.device('cuda')):",
      "device_type", "replace", False,
      "def assign_isub(iclust, kn, tones2, nclust, nsub, lam, m, ki, kj, device=None):", _KS_DEF_NOTE),
    C("def Mstats(M, device=torch.device('cuda')):", "device_type", "replace", False,
      "def Mstats(M, device=None):", _KS_DEF_NOTE),
    C("if device.type == 'cuda':", "torch_cuda_api", "add_branch", True,
      "if device.type == 'npu': free, total = torch.npu.mem_get_info(device); return int(safety * free / (4 * (nfeat + 3 * n_neigh + 2 * nclust)))",
      "memory-based batch sizing only knows CUDA; an npu device takes the unbounded CPU path, so large "
      "recordings run into device OOM (which the except below does not catch on NPU)"),
    C("def run(ops, st, tF, mode='template', device=torch.device('cuda'), progress_bar=None,", "device_type",
      "replace", False, "def run(ops, st, tF, mode='template', device=None, progress_bar=None,", _KS_DEF_NOTE),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError) as oom:  # NPU reports OOM as RuntimeError",
      "CPU retry never triggers if torch_npu raises a different exception type - unconfirmed which type"),
    C("torch.cuda.empty_cache()  # free what the failed attempt cached", "torch_cuda_api", "replace", False,
      "(torch.npu if device.type == 'npu' else torch.cuda).empty_cache()  # free what the failed attempt cached",
      "no-op on NPU; memory hygiene only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "(torch.npu if device.type == 'npu' else torch.cuda).empty_cache()",
      "clear_cache option silently does nothing on NPU"),
])

# ---------------------------------------------------------------------------------------------
_CUPY = "CuPy has no Ascend backend, so the cupy call has to become a torch op on the npu device"
E("pykilosort_preprocess", "pykilosort/preprocess.py", "kernel_rewrite",
  "pykilosort (IBL Python port of Kilosort 2.5) preprocess.py: CuPy filtering/whitening + a RawKernel", [
    C("=import cupy as cp", "unsupported_op_workaround", "replace", True,
      "import torch; import torch_npu  # noqa: F401  (CuPy -> torch on NPU)", _CUPY),
    C("from .cptools import lfilter, median, svdecon", "unsupported_op_workaround", "replace", True,
      "from .torchtools import lfilter, median, svdecon  # torch re-implementations of the CuPy helpers",
      "cptools is CuPy code (with its own RawKernels) and has to be re-implemented on torch"),
    C("assert dataRAW.flags.c_contiguous", "unsupported_op_workaround", "replace", True,
      "assert dataRAW.is_contiguous()", "ndarray .flags does not exist on torch tensors"),
    C("dataRAW = dataRAW.astype(cp.float32)", "unsupported_op_workaround", "replace", True,
      "dataRAW = dataRAW.float()", _CUPY),
    C("_whiten_code = r'''", "custom_cuda_extension", "removal", True, None,
      "hand-written CUDA C kernel source, compiled by NVRTC at run time; no NVRTC on Ascend"),
    C("return cp.RawKernel(_whiten_code, 'whiten_batch')", "custom_cuda_extension", "removal", True, None,
      "CuPy RawKernel: the whitening becomes a plain matmul on NPU"),
    C("datr = cp.ascontiguousarray(datr, dtype=cp.float32)", "unsupported_op_workaround", "replace", True,
      "datr = datr.contiguous().float()", _CUPY),
    C("Wrot = cp.ascontiguousarray(Wrot, dtype=cp.float32)", "unsupported_op_workaround", "replace", True,
      "Wrot = Wrot.to(datr.device).contiguous().float()", _CUPY),
    C("out = cp.empty_like(datr)", "unsupported_op_workaround", "removal", True, None,
      "output buffer only needed by the RawKernel launch"),
    C("kernel = _get_whiten_kernel()", "custom_cuda_extension", "removal", True, None, "kernel handle no longer exists"),
    C("kernel((ceil(NT / nthreads), Nchan), (nthreads,),", "custom_cuda_extension", "replace", True,
      "out = datr @ Wrot.T  # (NT, Nchan) x (Nchan, Nchan) on the NPU cube unit",
      "CUDA grid/block launch replaced by a GEMM"),
    C("S1 = cp.minimum.reduce(", "unsupported_op_workaround", "replace", True,
      "S1 = torch.stack([torch.roll(S1, s, dims=d) for s in range(-int(sigma), int(sigma) + 1)]).amin(0)", _CUPY),
    C("cp.stack([cp.roll(S1, s, axis=d) for s in range(-int(sigma), int(sigma) + 1)]), axis=0)",
      "unsupported_op_workaround", "removal", True, None, "continuation of the CuPy reduction folded into the line above"),
    C("CC = cp.zeros((Nchan, Nchan))", "unsupported_op_workaround", "replace", True,
      'CC = torch.zeros((Nchan, Nchan), device="npu")',
      "CuPy allocation (float64 by default; float32 on NPU, where fp64 matmul support is limited)"),
    C("buff_g = cp.asarray(buff, dtype=np.float32)", "tensor_to_device", "replace", True,
      'buff_g = torch.from_numpy(np.ascontiguousarray(buff, dtype=np.float32)).to("npu", non_blocking=True)',
      "host -> device copy through CuPy"),
    C("CC = CC + cp.dot(datr.T, datr) / NT", "unsupported_op_workaround", "replace", True,
      "CC = CC + (datr.T @ datr) / NT  # sample covariance", _CUPY),
    C("Di = cp.diag(1. / (D + eps) ** .5)", "unsupported_op_workaround", "replace", True,
      "Di = torch.diag(1. / (D + eps) ** .5)", _CUPY),
    C("Wrot = cp.dot(cp.dot(E, Di), E.T)", "unsupported_op_workaround", "replace", True,
      "Wrot = E @ Di @ E.T", _CUPY),
    C("Wrot = cp.zeros((CC.shape[0], CC.shape[0]))", "unsupported_op_workaround", "replace", True,
      "Wrot = torch.zeros((CC.shape[0], CC.shape[0]), device=CC.device)", _CUPY),
    C("wrot0 = cp.asnumpy(whiteningFromCovariance(CC[np.ix_(ilocal, ilocal)]))", "tensor_to_device", "replace", True,
      "wrot0 = whiteningFromCovariance(CC[np.ix_(ilocal, ilocal)]).cpu().numpy()", "device -> host copy through CuPy"),
    C("buff_g = cp.asarray(raw_batch, dtype=np.float32)", "tensor_to_device", "replace", True,
      'buff_g = torch.from_numpy(np.ascontiguousarray(raw_batch, dtype=np.float32)).to("npu", non_blocking=True)',
      "host -> device copy through CuPy"),
    C("datcpu = cp.asnumpy(cp.clip(datr, -32767, 32767).astype(np.int16))", "tensor_to_device", "replace", True,
      "datcpu = torch.clamp(datr, -32767, 32767).to(torch.int16).cpu().numpy()", "device -> host copy through CuPy"),
    C("mempool = cp.get_default_memory_pool()", "unsupported_op_workaround", "removal", True, None,
      "CuPy memory pool; the torch_npu caching allocator replaces it"),
    C('logger.debug("cupy memory pool:', "torch_cuda_api", "replace", True,
      'logger.debug("NPU memory: %.1f MB allocated", torch.npu.memory_allocated() / 2 ** 20)',
      "would raise NameError once the pool object is gone"),
    C("mempool.free_all_blocks()", "torch_cuda_api", "replace", True, "torch.npu.empty_cache()",
      "release cached device memory after the pass"),
])

# ---------------------------------------------------------------------------------------------
E("cebra_sklearn_utils", "cebra/integrations/sklearn/utils.py", "device_branch_or_abstraction",
  "CEBRA sklearn integration utils (check_device resolving 'cuda_if_available')", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'elif hasattr(torch, "npu") and torch.npu.is_available(): return "npu"',
      "'cuda_if_available' is CEBRA's default device: without an NPU branch every model silently trains on CPU"),
    C('=elif device == "cpu":', "device_type", "add_branch", False,
      'elif device == "npu" or device.startswith("npu:"): return device if ":" in device else "npu:0"',
      "explicit device='npu' is rejected with 'Device needs to be cuda, cpu or mps'; optional once the "
      "cuda_if_available branch exists"),
])

# ---------------------------------------------------------------------------------------------
E("cebra_hippocampus_demo", "demos/rat_hippocampus_cebra.py", "explicit_replacement",
  "CEBRA rat-hippocampus demo (sklearn API with device='cuda_if_available' + low-level torch API)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('dataset = dataset.to("cuda")', "tensor_to_device", "replace", True, 'dataset = dataset.to("npu")',
      "hard-coded CUDA device for the low-level API"),
    C('=).to("cuda")', "tensor_to_device", "replace", True, ').to("npu")', "model moved to a hard-coded CUDA device"),
    C('solver.to("cuda")', "tensor_to_device", "replace", True, 'solver.to("npu")',
      "solver (model + criterion) moved to a hard-coded CUDA device"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "console message only (the high-level models resolve 'cuda_if_available' in check_device)"),
    C('print("Using GPU:", torch.cuda.get_device_name(0))', "torch_cuda_api", "replace", False,
      'print("Using NPU:", torch.npu.get_device_name(0))', "goes with the guard above; message only"),
])

# ---------------------------------------------------------------------------------------------
E("mindeye_train", "src/Train.py", "explicit_replacement",
  "MindEye2 Train.py (NSD fMRI -> CLIP ViT-bigG, accelerate + deepspeed, fp16 autocast)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script (accelerate launch Train.py); accelerate only detects the NPU once torch_npu is importable"),
    C("=num_devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_devices = torch.npu.device_count()",
      "0 on Ascend -> 1, so every process takes the whole GLOBAL_BATCH_SIZE: effective batch silently multiplied "
      "by the world size"),
    C("num_devices = torch.cuda.device_count()  # re-count", "torch_cuda_api", "replace", True,
      "num_devices = torch.npu.device_count()  # re-count now that the process group is up",
      "drives num_samples_per_epoch / iterations per epoch and num_workers; silently wrong on NPU"),
    C("=pin_memory=True)", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu")',
      "pinning keyed on CUDA in older DataLoaders; performance only"),
    C("test_dl = torch.utils.data.DataLoader(test_data,", "pin_memory", "replace", False,
      'test_dl = torch.utils.data.DataLoader(test_data, batch_size=300, shuffle=False, drop_last=True, pin_memory=True, pin_memory_device="npu")',
      "same as the train loader"),
    C("gc.collect(); torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "gc.collect(); torch.npu.empty_cache()", "no-op on NPU (memory only)"),
    C("with torch.cuda.amp.autocast(dtype=data_type):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=data_type):",
      "CUDA autocast turns itself off on Ascend; fp16 voxels/images then hit fp32 submodules called directly "
      "(model.ridge, clip_img_embedder) outside accelerate's wrapped forward -> dtype mismatch"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(dtype=data_type):", "amp", "replace", True,
      "with torch.no_grad(), torch.npu.amp.autocast(dtype=data_type):", "same for the evaluation loop"),
    C('"gpu/max_mem_gb": torch.cuda.max_memory_allocated() / 1e9}', "torch_cuda_api", "replace", False,
      '"npu/max_mem_gb": torch.npu.max_memory_allocated() / 1e9}', "logging only; reports 0 on NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op on NPU (memory only)"),
])

# ---------------------------------------------------------------------------------------------
E("mindeye_models", "src/models.py", "explicit_replacement",
  "MindEye2 models.py (ridge + MLP-mixer backbone, dalle2-style diffusion prior with xformers/SDPA attention)", [
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):",
      "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # CUDA SDPA backend selection; NPU SDPA dispatches to its own fused kernel",
      "torch.backends.cuda.sdp_kernel is marked unsupported on A2/A3 and only toggles CUDA SDPA backends; "
      "whether it raises or is a silent no-op on NPU is unconfirmed"),
    C('pos_embs = self.learned_query[torch.arange(self.num_tokens, device="cuda")]', "device_type", "replace", True,
      "pos_embs = self.learned_query[torch.arange(self.num_tokens, device=image_embed.device)]",
      "hard-coded CUDA index tensor inside forward (pos_emb query mode is the default used by Train.py)"),
])

# ---------------------------------------------------------------------------------------------
E("mindeye_accel_sh", "src/accel.sh", "explicit_replacement",
  "MindEye2 accel.sh Slurm + accelerate launcher (single node, 8 GPUs, NCCL tuning)", [
    C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
      "GRES names are cluster configuration; on a Slurm cluster that exposes Ascend cards as 'npu' the job "
      "would otherwise get no devices - unconfirmed"),
    C("module load cuda/11.8", "env_var", "replace", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA module is meaningless on an Ascend node; the CANN environment has to be sourced instead"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL logging switch has no effect on HCCL; log level only"),
    C("export NCCL_SOCKET_IFNAME=ens", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ens",
      "HCCL reads its own NIC selector; single-node job, so the default NIC choice normally works"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu's watchdog variable (documented default 1)"),
    C("export NCCL_PROTO=simple", "env_var", "removal", False, None, "NCCL protocol tuning; no HCCL counterpart"),
])

# ---------------------------------------------------------------------------------------------
E("mindeye_requirements", "requirements.txt", "explicit_replacement",
  "MindEye2 requirements.txt (cu118 wheel index, xformers, accelerate/deepspeed)", [
    C("=# MindEye2 -- tested on 8x A100 80GB, CUDA 11.8, python 3.10", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10",
      "the Ascend adapter, version-locked to torch 2.1.0 (added at the top, before the torch pins)"),
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu needs the CPU build of torch (x86) or plain PyPI torch (aarch64)"),
    C("=torch==2.1.0+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu118 local version only exists on the CUDA index and is not the build torch_npu sits on"),
    C("=torchvision==0.16.0+cu118", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "same CUDA local-version problem"),
    C("=xformers==0.0.22.post7", "attention_kernel", "removal", True, None,
      "no NPU build (CUDA-only kernels; source build needs nvcc); models.py already falls back to SDPA"),
    C("=nvidia-ml-py3", "torch_cuda_api", "removal", False, None,
      "NVML bindings install fine but have nothing to talk to on Ascend; unused by the training path"),
])

# ---------------------------------------------------------------------------------------------
E("eeg_conformer", "conformer.py", "explicit_replacement",
  "EEG Conformer (Song et al. 2022) BCI IV 2a training script (torch.cuda.FloatTensor, DataParallel, S&R augmentation)", [
    C("os.environ['CUDA_DEVICE_ORDER'] = 'PCI_BUS_ID'", "env_var", "removal", False, None,
      "CUDA enumeration-order switch; no Ascend counterpart needed"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = \',\'.join(map(str, gpus))', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join(map(str, gpus))',
      "gpus list is ignored by the Ascend runtime"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("self.Tensor = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True, "self.Tensor = torch.npu.FloatTensor",
      "legacy CUDA tensor type used with .type() to move every batch and the test set"),
    C("self.LongTensor = torch.cuda.LongTensor", "torch_cuda_api", "replace", True,
      "self.LongTensor = torch.npu.LongTensor", "same for labels"),
    C("self.criterion_l1 = torch.nn.L1Loss().cuda()", "tensor_to_device", "replace", False,
      "self.criterion_l1 = torch.nn.L1Loss().npu()",
      "a loss module without parameters/buffers: Module.cuda() touches no tensor, so it does not fail; renamed for consistency"),
    C("self.criterion_l2 = torch.nn.MSELoss().cuda()", "tensor_to_device", "replace", False,
      "self.criterion_l2 = torch.nn.MSELoss().npu()", "same as criterion_l1"),
    C("self.criterion_cls = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "self.criterion_cls = torch.nn.CrossEntropyLoss().npu()", "weight buffer is None, so nothing is moved; same as above"),
    C("self.model = Conformer().cuda()", "tensor_to_device", "replace", True, "self.model = Conformer().npu()",
      "hard CUDA move of the model parameters"),
    C("self.model = nn.DataParallel(self.model, device_ids=[i for i in range(len(gpus))])", "distributed_framework",
      "removal", True, None,
      "nn.DataParallel is unsupported on A2/A3 (its scatter goes through torch.cuda.comm, even for one device)"),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
      "hard CUDA move"),
    C("aug_data = torch.from_numpy(aug_data).cuda()", "tensor_to_device", "replace", True,
      "aug_data = torch.from_numpy(aug_data).npu()", "augmented batch moved to CUDA"),
    C("aug_label = torch.from_numpy(aug_label-1).cuda()", "tensor_to_device", "replace", True,
      "aug_label = torch.from_numpy(aug_label-1).npu()", "augmented labels moved to CUDA"),
    C("img = Variable(img.cuda().type(self.Tensor))", "tensor_to_device", "replace", True,
      "img = Variable(img.npu().type(self.Tensor))", "hard CUDA move of every batch"),
    C("label = Variable(label.cuda().type(self.LongTensor))", "tensor_to_device", "replace", True,
      "label = Variable(label.npu().type(self.LongTensor))", "hard CUDA move of every batch"),
    C("torch.save(self.model.module.state_dict(), 'model.pth')", "distributed_framework", "replace", True,
      "torch.save(self.model.state_dict(), 'model.pth')",
      "without the DataParallel wrapper there is no .module: AttributeError at the end of training"),
    C("torch.cuda.manual_seed(seed_n)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed_n)",
      "silent no-op on NPU; torch.manual_seed() right above should seed the npu generator (unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed_n)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed_n)",
      "same as above"),
])

# ---------------------------------------------------------------------------------------------
E("labram_utils", "utils.py", "explicit_replacement",
  "LaBraM (BEiT-v2/DeiT-style) utils.py: metric logger, init_distributed_mode, NativeScaler", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "imported by run_class_finetuning.py, which is where the import is required"),
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "runs on every distributed eval (MetricLogger.synchronize_between_processes); whether HCCL reduces "
      "float64 is unconfirmed, float32 would be the safe choice"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "adds the 'max mem' column; logging only"),
    C("if torch.cuda.is_available():  # log max memory", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # log max memory", "logging only"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "would report 0 on NPU; logging only"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True, "x_reduce = torch.tensor(x).npu()",
      "world_size > 1 path: HCCL all_reduce needs an NPU tensor and .cuda() fails"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "Slurm path: device_count() is 0 -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "binds each rank to its card; raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL does not exist on Ascend"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself on Ascend: fp16 gradients from the autocast region go unscaled"),
])

# ---------------------------------------------------------------------------------------------
E("labram_engine", "engine_for_finetuning.py", "explicit_replacement",
  "LaBraM engine_for_finetuning.py (train_one_epoch / evaluate with autocast, deepspeed or native scaler)", [
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "CUDA autocast switches itself off on Ascend: the native-scaler path silently trains in fp32"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "called every step; lazily initialises CUDA and raises on an Ascend host"),
    C("with torch.cuda.amp.autocast():  # fp16 eval", "amp", "replace", True,
      "with torch.npu.amp.autocast():  # fp16 eval, same as training",
      "evaluation silently in fp32 (numerics differ from training)"),
])

# ---------------------------------------------------------------------------------------------
E("labram_run", "run_class_finetuning.py", "explicit_replacement",
  "LaBraM run_class_finetuning.py (torchrun entry: args, loaders, DDP / deepspeed, training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "torchrun entry script"),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', help='device to use for training / testing')",
      "default flows into torch.device(args.device) and every .to(device)"),
    C("=pin_memory=args.pin_mem,", "pin_memory", "replace", False,
      'pin_memory=args.pin_mem, pin_memory_device="npu" if args.pin_mem else "",',
      "pin_mem defaults to True but older DataLoaders only pin for CUDA; performance only"),
    C("=pin_memory=args.pin_mem, drop_last=False,", "pin_memory", "replace", False,
      'pin_memory=args.pin_mem, pin_memory_device="npu" if args.pin_mem else "", drop_last=False,',
      "same, validation loader"),
    C("num_workers=args.num_workers, pin_memory=args.pin_mem,", "pin_memory", "replace", False,
      'num_workers=args.num_workers, pin_memory=args.pin_mem, pin_memory_device="npu" if args.pin_mem else "",',
      "same, test loader"),
])

# ---------------------------------------------------------------------------------------------
E("poyo_rotary_attention", "torch_brain/nn/rotary_attention.py", "explicit_replacement",
  "torch_brain / POYO RotaryCrossAttention (padded SDPA path + xformers varlen path)", [
    C("=import xformers.ops as xops", "attention_kernel", "replace", True,
      "import torch_npu  # npu_fusion_attention (TND layout) replaces xformers' varlen attention",
      "xformers has no NPU backend; the packed path needs torch_npu's fused attention instead"),
    C("if xops is None:", "attention_kernel", "replace", True, "if torch_npu is None:",
      "xformers cannot be installed on Ascend, so forward_varlen always raises here"),
    C("if not query.is_cuda:", "attention_kernel", "replace", True,
      'if query.device.type not in ("cuda", "npu"):', "explicit CUDA-only guard raises for npu tensors"),
    C("attn_bias = xops.fmha.BlockDiagonalMask.from_seqlens(", "attention_kernel", "replace", True,
      "cu_q, cu_kv = torch.cumsum(q_seqlen, 0).tolist(), torch.cumsum(kv_seqlen, 0).tolist()",
      "block-diagonal mask becomes cumulative sequence lengths (actual_seq_qlen/actual_seq_kvlen of TND)"),
    C("out = xops.memory_efficient_attention(query, key, value, attn_bias=attn_bias, p=dropout_p)",
      "attention_kernel", "replace", True,
      'out = torch_npu.npu_fusion_attention(query[0], key[0], value[0], num_heads, "TND", actual_seq_qlen=cu_q, actual_seq_kvlen=cu_kv, scale=query.shape[-1] ** -0.5, keep_prob=1.0 - dropout_p)[0].unsqueeze(0)',
      "xformers memory-efficient attention; scale must be passed explicitly (npu_fusion_attention defaults to 1.0)"),
])

# ---------------------------------------------------------------------------------------------
E("eegfm_pretrain", "pretrain.py", "explicit_replacement",
  "nanoGPT-style single-file pretraining of a CBraMod-like criss-cross EEG foundation model (DDP, bf16, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("backend = 'nccl'  # 'nccl', 'gloo', etc.", "dist_backend", "replace", True,
      "backend = 'hccl'  # 'hccl', 'gloo', etc.", "torchrun runs init_process_group with this backend"),
    C("device = 'cuda'  # examples:", "device_type", "replace", True,
      "device = 'npu'  # examples: 'cpu', 'npu', 'npu:0', 'npu:1' etc.", "single-process default device"),
    C("dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'",
      "device_capability_check", "replace", True,
      "dtype = 'bfloat16' if torch.npu.is_available() and torch.npu.is_bf16_supported() else 'float16'",
      "capability probe answers False on Ascend, so bf16-capable A2 cards silently train in fp16 with loss scaling"),
    C("device = f'cuda:{ddp_local_rank}'", "device_type", "replace", True, "device = f'npu:{ddp_local_rank}'",
      "per-rank CUDA device string"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "raises without CUDA"),
    C("device_type = 'cuda' if 'cuda' in device else 'cpu'", "device_type", "replace", True,
      "device_type = 'npu' if 'npu' in device else 'cpu'",
      "with an npu device string this yields 'cpu': autocast becomes nullcontext (fp32 training), pinning and "
      "fused AdamW are skipped - all silently"),
    C("return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight", "npu_fused_op", "replace",
      False, "return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
      "hand-written RMSNorm -> fused NPU kernel; performance only"),
    C("use_fused = fused_available and device_type == 'cuda'", "fused_optimizer", "replace", False,
      "use_fused = fused_available and device_type in ('cuda', 'npu')",
      "_fused_adamw_ has an NPU kernel; without this the optimizer silently uses the for-each path (performance)"),
    C("=if device_type == 'cuda':", "pin_memory", "replace", False, "if device_type in ('cuda', 'npu'):",
      "pinned, non-blocking host->device copies skipped on NPU (performance only)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=(dtype == 'float16'))",
      "in the fp16 case the CUDA scaler disables itself on Ascend and fp16 gradients underflow unscaled"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "max-autotune benchmarks Triton/CUDA-graph variants; plain Inductor on NPU is supported from torch_npu 2.6 - "
      "behaviour of max-autotune on NPU unconfirmed"),
])

# ---------------------------------------------------------------------------------------------
E("eeg_docker", "docker/Dockerfile", "explicit_replacement",
  "training Dockerfile of a braindecode/MNE sleep-staging project (nvidia/cuda base, cu121 wheels)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA runtime image has no CANN toolkit; a CANN image (tag layout as in Ascend/cann-container-image, "
      "registry path unconfirmed) also bakes the set_env.sh exports into ENV"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES, but devices "
      "are commonly passed with --device /dev/davinciN at docker run instead"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting; meaningless on Ascend"),
    C("pip3 install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121",
      "import_torch_npu", "replace", True,
      "pip3 install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA build of torch 2.1.2; torch_npu needs a CPU torch and exists for 2.1.0, not 2.1.2"),
    C("RUN python -c \"import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)\"",
      "import_torch_npu", "npu_only_addition", True,
      "RUN pip3 install torch-npu==2.1.0.post17 pyyaml decorator attrs psutil",
      "install the Ascend adapter (2.1.0.post17 pairs with CANN 8.3.RC1)"),
    C('CMD ["python", "-m", "sleepnet.train", "--config", "configs/usleep_sleep_edf.yaml", "--device", "cuda"]',
      "device_type", "replace", True,
      'CMD ["python", "-m", "sleepnet.train", "--config", "configs/usleep_sleep_edf.yaml", "--device", "npu"]',
      "default container command selects the CUDA device"),
])
