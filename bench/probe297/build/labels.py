# Labels for probe297 (sound event detection / audio captioning, CUDA -> Ascend NPU).
# One entry per upstream file; see README.md "How the labels were chosen" for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported before any NPU use (mandatory before torch_npu 2.5.1, "
               "still recommended after device-backend autoload)")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN environment must be sourced or `import torch_npu` fails "
                "(libhccl.so / ASCEND_OPP_PATH errors: 'Please run source set_env.sh')")
DP_NOTE = ("torch.nn.DataParallel is not supported on Atlas A2/A3 (Ascend 2.7.1 API list); its scatter goes through "
           "torch.cuda.comm (also unsupported), so it fails once torch_npu makes 'npu' the available device type")
AMP_NOTE = ("torch.cuda.amp on a CPU-only torch build warns 'CUDA is not available. Disabling' and runs fp32: "
            "training still works, just without mixed precision (slower, more memory)")

# ---------------------------------------------------------------- DCASE 2023 Task 4 baseline (DESED_task)

E("dcase23_train_sed", "recipes/dcase2023_task4_baseline/train_sed.py", "explicit_replacement",
  "DCASE 2023 Task 4 baseline (DESED_task) recipe entry point: PyTorch Lightning 1.9 Trainer with --gpus / accelerator=\"gpu\"",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('accelerator = "gpu"', "device_type", "replace", True,
        'accelerator = "npu"  # custom Lightning NPU accelerator registered in AcceleratorRegistry',
        "Lightning's 'gpu' accelerator resolves to CUDA/MPS and raises MisconfigurationException on a host with "
        "neither; Lightning has no built-in NPU accelerator, a custom one must be registered (not covered by the "
        "knowledge notes)"),
  ])

E("dcase23_sed_trainer", "recipes/dcase2023_task4_baseline/local/sed_trainer.py", "explicit_replacement",
  "DCASE 2023 Task 4 baseline LightningModule (mean-teacher SEDTask4) with codecarbon energy tracking",
  [
      C("gpu_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True, "gpu_ids=None,",
        "torch.cuda.current_device() initialises CUDA and raises on a CPU-only torch build; codecarbon's GPU "
        "power reading is NVML-only anyway, so pass no GPU ids"),
      C("gpu_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True, "gpu_id = None",
        "same CUDA initialisation failure in on_test_start; the tracker would get gpu_ids=[None] -> use gpu_ids=None"),
  ])

E("dcase23_crnn", "desed_task/nnet/CRNN.py", "explicit_replacement",
  "DESED_task CRNN (CNN + BiGRU with attention pooling and embedding fusion), no device code",
  [])

E("dcase23_default_yaml", "recipes/dcase2023_task4_baseline/confs/default.yaml", "explicit_replacement",
  "DCASE 2023 Task 4 baseline default.yaml (training/scaler/data/feats/net sections)",
  [
      C("backend: dp", "distributed_framework", "replace", True,
        "backend: null # single NPU; dp (DataParallel) is not supported on NPU",
        "Lightning 'dp' wraps the model in torch.nn.DataParallel, which Ascend lists as unsupported and whose "
        "scatter uses torch.cuda.comm; with one device simply drop the strategy"),
  ])

E("dcase23_environment", "environment.yml", "explicit_replacement",
  "DCASE 2023 Task 4 conda environment.yml (pytorch + pytorch-cuda from the pytorch/nvidia channels)",
  [
      C("- nvidia", "torch_cuda_api", "removal", False, None,
        "nvidia channel only serves the CUDA runtime packages; harmless once pytorch-cuda is gone"),
      C("- pytorch=1.13.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
        "no torch_npu wheel exists for torch 1.13; torch must be a version torch_npu is built for (2.1.0 here)"),
      C("- torchaudio=0.13.1", "torch_cuda_api", "replace", True, "- torchaudio=2.1.0",
        "torchaudio must match the bumped torch version or the environment does not solve"),
      C("- pytorch-cuda=11.7", "torch_cuda_api", "removal", True, None,
        "selects the CUDA build of pytorch (and CUDA runtime libraries); torch_npu expects the CPU build of torch"),
      C("- cudatoolkit-dev=11.7", "torch_cuda_api", "removal", False, None,
        "nvcc toolkit for building CUDA extensions, none are built here; dead weight on NPU hosts "
        "(availability on aarch64 unconfirmed)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "torch-npu wheel matching torch 2.1.0 must be installed"),
  ])

E("dcase24_extract_emb", "recipes/dcase2024_task4_baseline/extract_embeddings.py", "explicit_replacement",
  "DCASE 2024 Task 4 baseline script that pre-extracts BEATs embeddings to hdf5 (--use_gpu flag)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch_dset, batch_size=batch_size, drop_last=False, num_workers=4, pin_memory=True", "pin_memory", "replace",
        False, "torch_dset, batch_size=batch_size, drop_last=False, num_workers=4, pin_memory=True, pin_memory_device=\"npu\"",
        "without CUDA the DataLoader silently skips pinning; performance only (unconfirmed in the knowledge notes)"),
      C("embedding_model = embedding_model.cuda()", "tensor_to_device", "replace", True,
        "embedding_model = embedding_model.npu()", ".cuda() raises on a CPU-only torch build"),
      C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
        "features are moved with feats.to(device); 'cuda' fails on NPU"),
      C('if device == "cuda":', "device_type", "replace", False, 'if device == "npu":',
        "after the port this guard is silently False, so the cache is never emptied; memory hygiene only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a silent no-op when CUDA is not initialised"),
  ])

E("dcase23_slurm", "recipes/dcase2023_task4_baseline/run_slurm.sh", "explicit_replacement",
  "SLURM batch launcher for the DCASE 2023 Task 4 baseline on a university GPU cluster",
  [
      C("#SBATCH --gres=gpu:1", "device_type", "replace", False, "#SBATCH --gres=npu:1",
        "GRES name is site-specific; an Ascend partition may not define 'gpu' (unconfirmed)"),
      C("module load cuda/11.7", "import_torch_npu", "replace", True, SET_ENV,
        "the CUDA module is useless on NPU nodes (and may not exist there under set -e); the CANN environment "
        "must be sourced instead. " + SET_ENV_NOTE),
      C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "device_capability_check", "replace",
        True, "npu-smi info",
        "nvidia-smi is not installed on Ascend hosts; with set -e the missing command aborts the job"),
  ])

E("beats_backbone", "beats/backbone.py", "explicit_replacement",
  "BEATs (microsoft/unilm) fairseq-derived backbone helpers and relative-position MultiheadAttention",
  [])

# ---------------------------------------------------------------- ATST-SED

E("atst_train_stage2", "train/train_stage2.py", "explicit_replacement",
  "ATST-SED stage-2 fine-tuning script (Lightning 1.x Trainer(gpus=...), layer-wise lr decay)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("gpus=gpus,", "device_type", "replace", True,
        'accelerator="npu", devices=[int(g) for g in gpus.strip(",").split(",")],',
        "Trainer(gpus=...) requests CUDA devices and raises without CUDA; needs a registered NPU accelerator "
        "(Lightning NPU support is not covered by the knowledge notes)"),
      C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", "replace", False,
        'os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"',
        "debug-only switch; CUDA_LAUNCH_BLOCKING is ignored on NPU, the Ascend counterpart is ASCEND_LAUNCH_BLOCKING"),
  ])

E("atst_stage2_yaml", "train/confs/stage2.yaml", "explicit_replacement",
  "ATST-SED stage-2 YAML config (Lightning ddp backend, sync batchnorm)",
  [
      C("backend: ddp #", "dist_backend", "replace", False,
        "backend: ddp # built as DDPStrategy(process_group_backend=\"hccl\") in train_stage2.py",
        "Lightning picks nccl only for CUDA devices and falls back to gloo for others; on NPU the process group "
        "should be hccl (Lightning behaviour unconfirmed in the knowledge notes)"),
  ])

# ---------------------------------------------------------------- PANNs (audioset_tagging_cnn)

E("panns_main", "pytorch/main.py", "explicit_replacement",
  "PANNs audioset_tagging_cnn training script (--cuda flag, DataParallel, move_data_to_device)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device('cuda') if args.cuda and torch.cuda.is_available() else torch.device('cpu')",
        "device_type", "replace", True,
        "device = torch.device('npu') if args.cuda and torch.npu.is_available() else torch.device('cpu')",
        "torch.cuda.is_available() is False on NPU, so --cuda silently trains on CPU"),
      C("if 'cuda' in str(device):", "device_type", "replace", True, "if 'npu' in str(device):",
        "after the device line is ported this check falls through to device = 'cpu'"),
      C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
        "string device used by move_data_to_device and model.to"),
      C("num_workers=num_workers, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=num_workers, pin_memory=True, pin_memory_device='npu')",
        "pinning is silently skipped without CUDA; performance only (unconfirmed)"),
      C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
        "same as the training loader; performance only (unconfirmed)"),
      C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
        "print('NPU number: {}'.format(torch.npu.device_count()))", "log only; prints 0 on NPU"),
      C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None, DP_NOTE),
      C("if 'cuda' in device:", "device_type", "replace", True, "if 'npu' in device:",
        "otherwise the model stays on CPU while batches are moved to the NPU"),
  ])

E("panns_inference", "pytorch/inference.py", "explicit_replacement",
  "PANNs inference script (audio tagging and sound event detection with a pretrained checkpoint)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device('cuda') if args.cuda and torch.cuda.is_available() else torch.device('cpu')",
        "device_type", "replace", True,
        "device = torch.device('npu') if args.cuda and torch.npu.is_available() else torch.device('cpu')",
        "silently falls back to CPU on NPU hosts"),
      C("if 'cuda' in str(device):", "device_type", "replace", True, "if 'npu' in str(device):",
        "else-branch leaves the model on CPU while the waveform is moved to the NPU"),
      C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
        "print('NPU number: {}'.format(torch.npu.device_count()))", "log only"),
      C("        model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None, DP_NOTE),
      C("device = torch.device('cuda') if (args.cuda and torch.cuda.is_available()) else torch.device('cpu')",
        "device_type", "replace", True,
        "device = torch.device('npu') if (args.cuda and torch.npu.is_available()) else torch.device('cpu')",
        "silently falls back to CPU on NPU hosts"),
      C("print('GPU number: %d' % torch.cuda.device_count())", "torch_cuda_api", "replace", False,
        "print('NPU number: %d' % torch.npu.device_count())", "log only"),
      C("model = torch.nn.DataParallel(model, device_ids=None)", "distributed_framework", "removal", True, None,
        DP_NOTE),
      C("if device.type == 'cuda':", "device_type", "replace", True, "if device.type == 'npu':",
        "model would stay on CPU while inputs go to the NPU"),
  ])

E("panns_utils", "pytorch/pytorch_utils.py", "explicit_replacement",
  "PANNs pytorch_utils.py (move_data_to_device, mixup, forward, count_flops), device-agnostic",
  [])

E("panns_finetune", "pytorch/finetune_template.py", "explicit_replacement",
  "PANNs finetune_template.py (Transfer_Cnn14 on a pretrained Cnn14 checkpoint)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("checkpoint = torch.load(pretrained_checkpoint_path)", "device_type", "replace", True,
        "checkpoint = torch.load(pretrained_checkpoint_path, map_location='cpu')",
        "the released PANNs checkpoints were saved from CUDA tensors; without map_location the CPU-only torch "
        "build cannot deserialize them"),
      C("device = 'cuda' if (args.cuda and torch.cuda.is_available()) else 'cpu'", "device_type", "replace", True,
        "device = 'npu' if (args.cuda and torch.npu.is_available()) else 'cpu'",
        "silently CPU on NPU hosts"),
      C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
        "print('NPU number: {}'.format(torch.npu.device_count()))", "log only"),
      C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None, DP_NOTE),
      C("if 'cuda' in device:", "device_type", "replace", True, "if 'npu' in device:",
        "model would never be moved to the NPU"),
  ])

E("panns_runme", "scripts/runme.sh", "explicit_replacement",
  "PANNs runme.sh: dataset packing, training and inference commands with CUDA_VISIBLE_DEVICES and --cuda",
  [
      C('WORKSPACE="/home/tiger/workspaces/audioset_tagging"', "import_torch_npu", "npu_only_addition", True,
        SET_ENV, SET_ENV_NOTE),
      C("CUDA_VISIBLE_DEVICES=0 python3 pytorch/main.py train", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python3 pytorch/main.py train \\",
        "ignored on NPU, but device 0 is the default anyway once DataParallel is gone"),
      C("CUDA_VISIBLE_DEVICES=1 python3 pytorch/inference.py audio_tagging", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=1 python3 pytorch/inference.py audio_tagging \\",
        "meant to pin inference to card 1; NPU ignores CUDA_VISIBLE_DEVICES and the job silently lands on card 0"),
      C("CUDA_VISIBLE_DEVICES=1 python3 pytorch/inference.py sound_event_detection", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=1 python3 pytorch/inference.py sound_event_detection \\",
        "same: the card selection is silently lost"),
  ])

# ---------------------------------------------------------------- LAION-CLAP

E("clap_hook", "src/laion_clap/hook.py", "device_branch_or_abstraction",
  "LAION-CLAP CLAP_Module inference wrapper (pip package entry point)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401  (inside try/except ImportError so CUDA/CPU installs keep working)",
        IMPORT_NOTE + "; this module is the package's public entry, so the (guarded) import belongs here"),
      C("device = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
        "add_branch", True,
        "device = torch.device('npu:0') if (hasattr(torch, 'npu') and torch.npu.is_available()) else "
        "(torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu'))",
        "auto-detection silently picks CPU on NPU hosts; a library keeps its CUDA path and gains an NPU one"),
  ])

E("clap_distributed", "src/laion_clap/training/distributed.py", "device_branch_or_abstraction",
  "LAION-CLAP training/distributed.py (open_clip-style init_distributed_device, SLURM/torchrun/horovod)",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if hasattr(torch, 'npu') and torch.npu.is_available():",
        "False on NPU hosts, so every rank silently runs on CPU; an NPU branch goes in front of the CUDA one"),
      C("device = 'cuda:%d' % args.local_rank", "device_type", "add_branch", True,
        "device = 'npu:%d' % args.local_rank", "per-rank device string, NPU twin inside the new branch"),
      C("device = 'cuda:0'", "device_type", "add_branch", True, "device = 'npu:0'",
        "single-process device string, NPU twin inside the new branch"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "add_branch", True, "torch.npu.set_device(device)",
        "torch.cuda.set_device fails on a CPU-only torch build; the NPU branch calls torch.npu.set_device"),
  ])

E("clap_params", "src/laion_clap/training/params.py", "explicit_replacement",
  "LAION-CLAP training/params.py argparse definitions",
  [
      C('"--dist-backend", default="nccl"', "dist_backend", "replace", True,
        '"--dist-backend", default="hccl", type=str, help="distributed backend"',
        "NCCL is unavailable on Ascend; init_process_group needs hccl"),
  ])

E("clap_main", "src/laion_clap/training/main.py", "explicit_replacement",
  "LAION-CLAP training/main.py (seeding, DDP wrapping, GradScaler, checkpoint resume)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from torch.cuda.amp import GradScaler", "amp", "replace", False, "from torch_npu.npu.amp import GradScaler",
        AMP_NOTE + "; the NPU form is torch_npu.npu.amp.GradScaler"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        "silent no-op without CUDA; torch.manual_seed on the line above should already seed the NPU generator "
        "(unconfirmed)"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", "silent no-op without CUDA (lazy call never runs)"),
  ])

E("clap_train", "src/laion_clap/training/train.py", "explicit_replacement",
  "LAION-CLAP training/train.py (train_one_epoch / evaluate with amp autocast and horovod branches)",
  [
      C('autocast = torch.cuda.amp.autocast if args.precision == "amp" else suppress', "amp", "replace", False,
        'autocast = torch.npu.amp.autocast if args.precision == "amp" else suppress',
        AMP_NOTE + " (--precision amp is the default); torch.npu exists once main.py has imported torch_npu"),
      C("autocast = torch.cuda.amp.autocast if args.precision == 'amp' else suppress", "amp", "replace", False,
        "autocast = torch.npu.amp.autocast if args.precision == 'amp' else suppress",
        "evaluation only: fp32 fallback gives the same metrics, just slower"),
  ])

E("clap_requirements", "requirements-training.txt", "explicit_replacement",
  "LAION-CLAP training requirements pinned to CUDA 11.6 wheels",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu116", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; NPU hosts need the CPU build of torch (aarch64 uses plain PyPI)"),
      C("torch==1.12.1+cu116", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "+cu116 builds do not exist for aarch64 and no torch_npu is built for 1.12"),
      C("torchvision==0.13.1+cu116", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "must follow the torch bump; CUDA local version"),
      C("torchaudio==0.12.1+cu116", "torch_cuda_api", "replace", True, "torchaudio==2.1.0",
        "must follow the torch bump; CUDA local version"),
      C("numpy==1.23.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch-npu wheel matching torch 2.1.0"),
  ])

E("clap_train_sh", "experiment_scripts/train-htsat-roberta.sh", "explicit_replacement",
  "LAION-CLAP multi-node SLURM training script (AWS EFA / NCCL environment, srun)",
  [
      C("#SBATCH --cpus-per-gpu=6", "device_type", "replace", False, "#SBATCH --cpus-per-task=6",
        "cpus-per-gpu only makes sense with a GPU GRES; site-specific (unconfirmed)"),
      C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
        "GRES name is site-specific (unconfirmed)"),
      C("export LD_LIBRARY_PATH=/opt/aws-ofi-nccl/lib", "env_var", "removal", False, None,
        "CUDA / aws-ofi-nccl library paths do not exist on Ascend nodes; harmless but dead"),
      C("export NCCL_PROTO=simple", "env_var", "removal", False, None, "NCCL tuning, ignored by HCCL"),
      C('export LD_PRELOAD="/opt/nccl/build/lib/libnccl.so"', "env_var", "removal", False, None,
        "preloading a missing libnccl only prints a loader warning; nothing uses NCCL on NPU"),
      C("export NCCL_DEBUG=info", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "debug logging only"),
      C("export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=0",
        "0 is the default anyway"),
      C("export NCCL_TREE_THRESHOLD=0", "env_var", "removal", False, None, "NCCL tuning, ignored by HCCL"),
      C("export NCCL_SOCKET_IFNAME=^docker0,lo", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=^docker0,lo",
        "HCCL's default NIC order already puts docker and lo last, so ignoring this is harmless; the HCCL "
        "variable accepts the same ^prefix form"),
      C("source /fsx/yusong/clap/bin/activate", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        SET_ENV_NOTE),
  ])

# ---------------------------------------------------------------- WavCaps

E("wavcaps_retrieval_train", "retrieval/train.py", "explicit_replacement",
  "WavCaps audio-text retrieval pre-training script (HTSAT/CNN14 + BERT, DDP)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("wavcaps_utils", "retrieval/tools/utils.py", "explicit_replacement",
  "WavCaps retrieval tools/utils.py (BLIP-style MetricLogger, init_distributed_mode, retrieval metrics)",
  [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed above should seed the NPU too (unconfirmed)"),
      C("device='cuda')", "device_type", "replace", True,
        "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "tensor for the all_reduce must live on the NPU for HCCL; fp64 collectives on HCCL unconfirmed"),
      C("on_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "on_cuda = torch.npu.is_available()", "memory column silently dropped from the log"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", "log only"),
      C('args["gpu"] = args["rank"] % torch.cuda.device_count()', "torch_cuda_api", "replace", True,
        'args["gpu"] = args["rank"] % torch.npu.device_count()',
        "device_count() is 0 without CUDA -> ZeroDivisionError under SLURM"),
      C('torch.cuda.set_device(args["gpu"])', "torch_cuda_api", "replace", True, 'torch.npu.set_device(args["gpu"])',
        "fails on a CPU-only torch build"),
      C("args[\"dist_backend\"] = 'nccl'", "dist_backend", "replace", True, "args[\"dist_backend\"] = 'hccl'",
        "NCCL is unavailable on Ascend"),
  ])

E("wavcaps_pretrain_yaml", "retrieval/settings/pretrain.yaml", "explicit_replacement",
  "WavCaps retrieval pretrain.yaml",
  [
      C('device: "cuda"', "device_type", "replace", True, 'device: "npu"',
        "read by torch.device(config[\"device\"]) in train.py"),
  ])

E("wavcaps_dist_sh", "retrieval/scripts/pretrain_htsat_bert.sh", "explicit_replacement",
  "WavCaps-style single-node 8-GPU launcher (torch.distributed.launch) plus fine-tuning commands",
  [
      C("EXP_NAME=${1:-htsat_bert_pretrain}", "import_torch_npu", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "lists every card of an 8-card node, so ignoring it changes nothing"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only switch, ignored by HCCL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only switch, ignored by HCCL"),
      C("_ft_ac", "env_var", "replace", False,
        'ASCEND_RT_VISIBLE_DEVICES=0 python finetune.py -c settings/finetune.yaml -n "${EXP_NAME}_ft_ac" -d AudioCaps',
        "device 0 is the default anyway"),
      C("_ft_clotho", "env_var", "replace", False,
        'ASCEND_RT_VISIBLE_DEVICES=0 python finetune.py -c settings/finetune.yaml -n "${EXP_NAME}_ft_clotho" -d Clotho',
        "device 0 is the default anyway"),
  ])

E("wavcaps_bart", "captioning/models/bart_captioning.py", "explicit_replacement",
  "WavCaps HTSAT-BART captioning model (BartCaptionModel)",
  [
      C('input_ids = text["input_ids"].cuda()', "tensor_to_device", "replace", True,
        'input_ids = text["input_ids"].to(self.device)', "caption token ids moved with .cuda() fail on NPU"),
      C('attention_mask = text["attention_mask"].cuda()', "tensor_to_device", "replace", True,
        'attention_mask = text["attention_mask"].to(self.device)', "same"),
      C(".long().cuda()", "tensor_to_device", "replace", True,
        "decoder_attention_mask = torch.ones((encoder_outputs['last_hidden_state'].size(0), 1)).long().to(self.device)",
        ".cuda() fails on NPU"),
  ])

E("wavcaps_caption_train", "captioning/train.py", "explicit_replacement",
  "WavCaps captioning fine-tuning script (device/device_name idiom, optional AMP)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
        "with torch_npu.npu.amp.autocast(enabled=use_amp):", AMP_NOTE + " (off by default here)"),
      C("device, device_name = (torch.device('cuda'), torch.cuda.get_device_name(torch.cuda.current_device()))",
        "device_type", "replace", True,
        "device, device_name = (torch.device('npu'), torch.npu.get_device_name(torch.npu.current_device())) \\",
        "guarded by torch.cuda.is_available(): silently CPU on NPU"),
      C("if torch.cuda.is_available() else (torch.device('cpu'), platform.processor())", "torch_cuda_api",
        "replace", True, "if torch.npu.is_available() else (torch.device('cpu'), platform.processor())",
        "the guard of the line above"),
      C('pretrain_checkpoint = torch.load(config["pretrain_path"])', "device_type", "replace", True,
        'pretrain_checkpoint = torch.load(config["pretrain_path"], map_location="cpu")',
        "released pre-trained checkpoints were saved from CUDA tensors (state_dict of the DDP-unwrapped model); "
        "they cannot be deserialized without map_location on the CPU-only torch build"),
      C("scaler = torch.cuda.amp.GradScaler() if use_amp else None", "amp", "replace", False,
        "scaler = torch_npu.npu.amp.GradScaler() if use_amp else None", AMP_NOTE),
  ])

# ---------------------------------------------------------------- CLAP-prefix captioning, LLM captioner, Docker

E("clapcap_train", "clapcap/train.py", "explicit_replacement",
  "ClipCap-style prefix captioner on CLAP embeddings with GPT-2 (hard-coded cuda:0, torch.autocast)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
        "hard-coded CUDA device"),
      C("num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=4, pin_memory=True, pin_memory_device='npu')", "performance only (unconfirmed)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", False,
        "scaler = torch_npu.npu.amp.GradScaler(enabled=args.fp16)", AMP_NOTE + " (only with --fp16)"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):', "amp", "replace",
        False, 'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.fp16):',
        "cuda autocast does not apply to NPU tensors: --fp16 silently trains in fp32"),
  ])

E("llm_aac_infer", "llm_aac/inference.py", "explicit_replacement",
  "LLM-based audio captioner inference (BEATs + projector + Vicuna LoRA, DCASE 2024 Task 6 style)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.is_available() and torch.cuda.is_bf16_supported():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and torch.npu.is_bf16_supported():",
        "silently False on NPU, so inference runs in fp16 instead of bf16; works for a 7B decoder"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "major = 0 if torch.npu.is_available() else torch.cuda.get_device_capability()[0]",
        "get_device_capability initialises CUDA and raises on the CPU-only torch build; NPU has no CUDA "
        "compute capability"),
      C('return "flash_attention_2"', "attention_kernel", "replace", False,
        'return "sdpa"  # SDPA dispatches to the NPU fused attention',
        "flash-attn cannot be installed on NPU; transformers recommends sdpa there (newer transformers can route "
        "flash_attention_2 to npu_fusion_attention, so not always fatal)"),
      C('device_map="cuda",', "device_type", "replace", True, 'device_map="npu",',
        "accelerate would try to place the weights on a CUDA device"),
      C('model.encoder = torch.compile(model.encoder, mode="max-autotune")', "compile_mode", "replace", False,
        "model.encoder = torch.compile(model.encoder)",
        "optional flag; max-autotune tunes Triton GPU kernels, NPU Inductor support for it is unconfirmed"),
      C("torch.cuda.get_device_name(0), dtype)", "torch_cuda_api", "replace", True,
        'logger.info("captioning %d files on %s (%s)", len(files), torch.npu.get_device_name(0), dtype)',
        "get_device_name initialises CUDA and raises"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.synchronize()  # wait for the last generate()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the last generate() before stopping the clock", "raises without CUDA"),
      C("torch.cuda.max_memory_allocated() / 2 ** 30)", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 2 ** 30)", "log only: reports 0 without CUDA"),
  ])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Docker image for audio captioning/retrieval training on nvidia/cuda with CUDA torch wheels",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "the image has no CANN toolkit or Ascend runtime libraries; torch_npu needs a CANN base image"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "read only by the NVIDIA container runtime; Ascend-Docker-Runtime uses ASCEND_VISIBLE_DEVICES "
        "(value format for 'all' unconfirmed)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime only"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6"', "env_var", "removal", False, None,
        "only affects building CUDA extensions; none are built"),
      C("RUN pip install --no-cache-dir torch==2.1.2 torchaudio==2.1.2 --index-url", "torch_cuda_api", "replace",
        True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index, and torch_npu needs exactly torch 2.1.0 (there is no torch_npu for 2.1.2)"),
      C('RUN pip install --no-cache-dir "numpy<2"', "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch-npu==2.1.0.post12",
        "torch-npu wheel matching torch 2.1.0"),
  ])
