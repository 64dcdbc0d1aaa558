"""Labels of probe446 (wearable-sensor HAR: DeepConvLSTM, TinyHAR, AttnSense, CL-HAR SimCLR/TPN, ssl-wearables).

One entry per file under files/<id>/upstream/<path>; one C(...) per line a careful porter would edit for an
explicit torch_npu port. `required` = would this line, left alone while every other label is ported, fail or
silently do the wrong thing on an Ascend host.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu right after torch so the 'npu' device and torch.npu exist "
               "(autoloaded since torch_npu 2.5.1, still recommended and needed on older wheels)")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
PIN_NOTE = ("performance only: without CUDA the DataLoader silently drops pin_memory (torch 2.1 era); "
            "pin_memory_device='npu' keeps pinned host buffers - unconfirmed in /work/shared/knowledge")

# --------------------------------------------------------------------------------------------------
# 1. mariusbock/dl-for-har (DeepConvLSTM, "Improving Deep Learning for HAR with Motion Sensors")
# --------------------------------------------------------------------------------------------------
E("dlhar_main", "main.py", "explicit_replacement", "mariusbock/dl-for-har main.py (argparse config, --gpu cuda:0)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--gpu', default='cuda:0'", "device_type", "replace", True,
      "parser.add_argument('--gpu', default='npu:0', type=str, help='npu to be used (e.g. npu:1)')",
      "device string default is used for every .to(config['gpu']) in model/train.py"),
    C("if args.gpu != 'cpu' and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.gpu != 'cpu' and not torch.npu.is_available():",
      "unported, torch.cuda.is_available() is False on an Ascend host and the run silently falls back to CPU"),
])

E("dlhar_model", "model/DeepConvLSTM.py", "explicit_replacement",
  "mariusbock/dl-for-har model/DeepConvLSTM.py (device-agnostic model)", [])

E("dlhar_train", "model/train.py", "explicit_replacement",
  "mariusbock/dl-for-har model/train.py (train loop, LOSO cross-validation)", [
    C("worker_init_fn=seed_worker, generator=g, num_workers=2, pin_memory=True)", "pin_memory", "replace", False,
      "worker_init_fn=seed_worker, generator=g, num_workers=2, pin_memory=True, pin_memory_device='npu')",
      PIN_NOTE),
    C("if 'cuda' in config['gpu']:", "device_type", "replace", False, "if 'npu' in config['gpu']:",
      "guards only the cache release below; unported it merely skips empty_cache (memory hygiene, not correctness)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "releases cached blocks between folds; torch.cuda.empty_cache is a no-op when CUDA is uninitialised"),
])

E("dlhar_torchutils", "misc/torchutils.py", "explicit_replacement",
  "mariusbock/dl-for-har misc/torchutils.py (seed_torch, init_weights)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed(seed) two lines above already seeds registered accelerator backends (unconfirmed in "
      "knowledge); the CUDA call is a silent lazy no-op on NPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same as above; kept for reproducibility parity"),
])

E("dlhar_sliding", "data_processing/sliding_window.py", "explicit_replacement",
  "mariusbock/dl-for-har data_processing/sliding_window.py (numpy only)", [])

E("dlhar_env", "environment.yml", "explicit_replacement", "mariusbock/dl-for-har conda environment", [
    C("- pytorch=1.10.2", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu build exists for torch 1.10; torch must equal the torch_npu wheel version (2.1.0.post17 "
      "pairs with torch 2.1.0, CANN 8.3.RC1)"),
    C("- cudatoolkit=11.3", "import_torch_npu", "replace", False, "- cpuonly",
      "pulls the CUDA build of pytorch; torch_npu expects the CPU build on x86 - whether a CUDA build actually "
      "breaks it is unconfirmed"),
    C("- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "torch_npu is not on conda; add it to the pip section"),
])

E("dlhar_job", "job_scripts/run_deepconvlstm.sh", "explicit_replacement",
  "mariusbock/dl-for-har job_scripts (SLURM GPU job)", [
    C("#SBATCH --gres=gpu:1", "device_type", "replace", False, "#SBATCH --gres=npu:1",
      "generic-resource name is site configuration; unconfirmed"),
    C("module load cuda/11.3", "env_var", "replace", True, SET_ENV,
      "the job sets up its accelerator runtime explicitly; on Ascend that is CANN's set_env.sh"),
    C("=nvidia-smi", "device_capability_check", "replace", False, "npu-smi info",
      "diagnostic print only (script continues when the command is missing)"),
    C("--gpu cuda:0", "device_type", "replace", True, "--gpu npu:0 \\",
      "explicit device flag overrides the ported default"),
])

# --------------------------------------------------------------------------------------------------
# 2. teco-kit/ISWC22-HAR (TinyHAR)
# --------------------------------------------------------------------------------------------------
E("tinyhar_main", "main.py", "explicit_replacement", "teco-kit/ISWC22-HAR main / run script (argparse + yaml)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False", "torch_cuda_api", "replace",
      True, "args.use_gpu = True if torch.npu.is_available() and args.use_gpu else False",
      "unported, use_gpu becomes False and Exp silently trains on CPU"),
])

E("tinyhar_exp", "experiment.py", "explicit_replacement",
  "teco-kit/ISWC22-HAR experiment.py (Informer-style Exp class, fp64 model)", [
    C("os.environ['CUDA_VISIBLE_DEVICES']", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(self.args.gpu) if not self.args.use_multi_gpu else self.args.devices",
      "redundant with the explicit npu:{gpu} device below (and set after the runtime was queried); mirrored "
      "for parity, but with a non-zero --gpu re-indexing would make npu:{gpu} invalid if it took effect"),
    C("device = torch.device('cuda:{}'.format(self.args.gpu))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(self.args.gpu))", "model and batches go to self.device"),
    C("model = nn.DataParallel(model, device_ids=self.args.device_ids)", "distributed_framework", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model, device_ids=[self.args.gpu])",
      "torch.nn.DataParallel is not supported on Atlas A2/A3 (Ascend API list); multi-NPU needs DDP over hccl "
      "(process-group setup not shown)"),
    C("return model.double()", "unsupported_op_workaround", "replace", True, "return model.float()",
      "Conv2d/Linear/BatchNorm/LSTM accept only fp16/bf16/fp32 on NPU (Ascend API list); fp64 model must become fp32"),
    C("batch_x1 = batch_x1.double().to(self.device)", "unsupported_op_workaround", "replace", True,
      "batch_x1 = batch_x1.float().to(self.device)", "inputs must match the fp32 model"),
    C("batch_x = batch_x1.double().to(self.device)", "unsupported_op_workaround", "replace", True,
      "batch_x = batch_x1.float().to(self.device)", "validation/test inputs must match the fp32 model"),
    C("dtype=torch.float64).to(self.device)", "unsupported_op_workaround", "replace", True,
      "dummy = torch.randn(1, 1, self.args.input_length, self.args.c_in, dtype=torch.float32).to(self.device)",
      "latency probe input must match the fp32 model"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "must synchronise the NPU stream before elapsed_time"),
])

E("tinyhar_model", "models/TinyHAR.py", "explicit_replacement", "teco-kit/ISWC22-HAR models/TinyHAR.py", [])

E("tinyhar_builder", "models/model_builder.py", "explicit_replacement",
  "teco-kit/ISWC22-HAR models/model_builder.py", [])

E("tinyhar_utils", "utils.py", "explicit_replacement",
  "teco-kit/ISWC22-HAR utils.py (EarlyStopping, LR adapter, fastai-style mixup)", [
    C("index = torch.randperm(batch_size).cuda()", "tensor_to_device", "replace", True,
      "index = torch.randperm(batch_size).to(x.device)", "hard-coded .cuda() in the mixup helper"),
])

E("tinyhar_dataloader", "dataloaders/dataloader_base.py", "explicit_replacement",
  "teco-kit/ISWC22-HAR dataloaders/dataloader_base.py (pandas windowing)", [])

E("tinyhar_cfg", "configs/model.yaml", "explicit_replacement", "teco-kit/ISWC22-HAR configs/model.yaml", [])

# --------------------------------------------------------------------------------------------------
# 3. AttnSense (PyTorch re-implementation of the IJCAI'19 model)
# --------------------------------------------------------------------------------------------------
E("attnsense_model", "attnsense/model.py", "explicit_replacement",
  "AttnSense PyTorch re-implementation attnsense/model.py (STFT + sensor/temporal attention + GRU)", [
    C("train_on_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "train_on_gpu = torch.npu.is_available()",
      "only selects the init_hidden branch; unported the else branch builds h0 with weight.new on the weight's "
      "(NPU) device, which is correct"),
    C("zero_().cuda()", "tensor_to_device", "replace", True,
      "hidden = weight.new(self.n_layers, batch_size, self.n_hidden).zero_().npu()",
      "reached once train_on_gpu is ported; .cuda() fails on an Ascend host"),
    C("self.gru = nn.GRU(feat_dim, n_hidden", "unsupported_op_workaround", "replace", False,
      "self.gru = nn.GRU(feat_dim, n_hidden, num_layers=n_layers, batch_first=True)",
      "Ascend API list: nn.GRU does not support the dropout argument; whether it errors or is ignored is unconfirmed"),
])

E("attnsense_train", "train.py", "explicit_replacement",
  "AttnSense re-implementation train.py (module-level device, AMP, cuFFT plan cache)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level device global; unported the run silently falls back to CPU"),
    C("kw = dict(num_workers=args.num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "kw = dict(num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("torch.backends.cuda.cufft_plan_cache.max_size = args.fft_cache", "torch_cuda_api", "replace", True,
      "torch.npu.backends.fft_plan_cache.max_size = args.fft_cache",
      "cufft_plan_cache indexes torch.cuda.current_device() and raises without CUDA; NPU form per Ascend API list "
      "(max_size range 1-99)"),
    C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
      "log branch only; unported it prints a misleading 'No GPU found' warning"),
    C("logger.info('Training on %s', torch.cuda.get_device_name(0))", "torch_cuda_api", "replace", True,
      "logger.info('Training on %s', torch.npu.get_device_name(0))",
      "reached once the branch above is ported; torch.cuda.get_device_name raises without CUDA"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "CUDA GradScaler disables itself without CUDA: fp16 grads would run unscaled"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "CUDA autocast silently disables itself on an NPU host, so --amp has no effect"),
    C("peak_mb = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "peak_mb = torch.npu.max_memory_allocated() / 2 ** 20 if torch.npu.is_available() else 0",
      "log value only (reports 0 MB when unported)"),
])

E("attnsense_fft", "preprocess/fft_features.py", "explicit_replacement",
  "AttnSense re-implementation preprocess (numpy/pandas windowing)", [])

E("attnsense_run", "run.sh", "explicit_replacement", "AttnSense re-implementation run.sh", [
    C("=set -e", "env_var", "npu_only_addition", False, SET_ENV,
      "upstream relies on an already prepared shell; only needed if the CANN environment is not sourced already"),
    C("export CUDA_VISIBLE_DEVICES=1", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=1",
      "unported, the job silently runs on NPU 0 instead of the reserved device 1"),
])

E("attnsense_req", "requirements.txt", "explicit_replacement", "AttnSense re-implementation requirements.txt", [
    C("torch>=1.8.0", "import_torch_npu", "replace", False, "torch==2.1.0",
      "torch must match the torch_npu wheel version; whether an unpinned resolve breaks it is unconfirmed"),
    C("=tqdm", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "torch_npu itself must be installed (appended after the last requirement)"),
])

# --------------------------------------------------------------------------------------------------
# 4. Tian0426/CL-HAR (SimCLR / BYOL / NNCLR / TS-TCC / TPN / SupCon / CPC for wearable HAR)
# --------------------------------------------------------------------------------------------------
E("clhar_main", "main.py", "explicit_replacement", "Tian0426/CL-HAR main.py (DEVICE from --cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("DEVICE = torch.device('cuda:' + str(args.cuda)", "device_type", "replace", True,
      "DEVICE = torch.device('npu:' + str(args.cuda) if torch.npu.is_available() else 'cpu')",
      "DEVICE is threaded through every trainer/framework/loss function"),
])

E("clhar_trainer", "trainer.py", "explicit_replacement", "Tian0426/CL-HAR trainer.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above already seeds the accelerator (unconfirmed in knowledge)"),
])

E("clhar_frameworks", "models/frameworks.py", "explicit_replacement",
  "Tian0426/CL-HAR models/frameworks.py (device passed in)", [])

E("clhar_loss", "models/loss.py", "explicit_replacement",
  "Tian0426/CL-HAR models/loss.py (TS-TCC NT-Xent, HobbitLong SupConLoss)", [
    C("device = (torch.device('cuda')", "device_type", "replace", True, "device = (torch.device('npu')",
      "SupConLoss derives its device from the features; 'cuda' cannot be used on an Ascend host"),
    C("if features.is_cuda", "device_type", "replace", True, "if features.is_npu",
      "is_cuda is False for NPU tensors: masks would be built on CPU and mixed with NPU logits"),
])

E("clhar_backbones", "models/backbones.py", "explicit_replacement",
  "Tian0426/CL-HAR models/backbones.py (FCN, DeepConvLSTM, LSTM, AE, Transformer)", [])

E("clhar_aug", "augmentations.py", "explicit_replacement", "Tian0426/CL-HAR augmentations.py (CPU, numpy)", [])

E("clhar_script", "scripts/run_ssl.sh", "explicit_replacement", "Tian0426/CL-HAR style sweep script", [
    C("GPU=$(nvidia-smi --query-gpu=memory.used", "device_capability_check", "replace", True,
      "GPU=${GPU:-0}  # npu-smi has no --query-gpu CSV mode; choose the NPU explicitly",
      "without nvidia-smi GPU is empty and '--cuda ${GPU}' makes argparse fail"),
])

E("clhar_ucihar", "data_preprocess/data_preprocess_ucihar.py", "explicit_replacement",
  "Tian0426/CL-HAR data_preprocess/data_preprocess_ucihar.py", [])

# --------------------------------------------------------------------------------------------------
# 5. OxWearables/ssl-wearables (multi-task self-supervised pre-training, TPN-style pretext tasks)
# --------------------------------------------------------------------------------------------------
E("sslw_mtl", "mtl.py", "explicit_replacement",
  "OxWearables/ssl-wearables mtl.py (hydra, mp.spawn + DDP, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("my_X = my_X.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "my_X = my_X.npu(gpu, non_blocking=True)", "evaluation batch"),
    C("aot_y = aot_y.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "aot_y = aot_y.npu(gpu, non_blocking=True)", "evaluation target"),
    C("scale_y = scale_y.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "scale_y = scale_y.npu(gpu, non_blocking=True)", "evaluation target"),
    C("permute_y = permute_y.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "permute_y = permute_y.npu(gpu, non_blocking=True)", "evaluation target"),
    C("time_w_y = time_w_y.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "time_w_y = time_w_y.npu(gpu, non_blocking=True)", "evaluation target"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()",
      "0 on an Ascend host: spawns no workers / zero world size, breaks batch division"),
    C("torch.cuda.set_device(cfg.runtime.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.runtime.gpu)", "per-process device scope before DDP"),
    C("=model.cuda(cfg.runtime.gpu)", "tensor_to_device", "replace", True, "model.npu(cfg.runtime.gpu)",
      "model to the process's NPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "DDP without a fixed device"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "single-device path"),
    C("model = model.cuda(cfg.runtime.gpu)", "tensor_to_device", "replace", True,
      "model = model.npu(cfg.runtime.gpu)", "single-device path"),
    C("criterion = nn.CrossEntropyLoss().cuda(cfg.runtime.gpu)", "tensor_to_device", "replace", False,
      "criterion = nn.CrossEntropyLoss().npu(cfg.runtime.gpu)",
      "loss module has no parameters or buffers, so Module.cuda() touches no tensor; changed for consistency"),
    C("loc = 'cuda:{}'.format(cfg.runtime.gpu)", "device_type", "replace", True,
      "loc = 'npu:{}'.format(cfg.runtime.gpu)", "map_location for resuming; 'cuda:N' cannot be deserialised to"),
    C("pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA: fp16 grads would run unscaled"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "CUDA autocast silently disables itself on an NPU host"),
    C("my_X = my_X.cuda(cfg.runtime.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "my_X = my_X.npu(cfg.runtime.gpu, non_blocking=True)", "training batch"),
    C("aot_y = aot_y.cuda(cfg.runtime.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "aot_y = aot_y.npu(cfg.runtime.gpu, non_blocking=True)", "training target"),
    C("scale_y = scale_y.cuda(cfg.runtime.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "scale_y = scale_y.npu(cfg.runtime.gpu, non_blocking=True)", "training target"),
    C("permute_y = permute_y.cuda(cfg.runtime.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "permute_y = permute_y.npu(cfg.runtime.gpu, non_blocking=True)", "training target"),
    C("time_w_y = time_w_y.cuda(cfg.runtime.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "time_w_y = time_w_y.npu(cfg.runtime.gpu, non_blocking=True)", "training target"),
    C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
      "epoch, i, loss.item(), torch.npu.max_memory_allocated() / 1e9))", "log value only"),
])

E("sslw_downstream", "downstream_task_evaluation.py", "explicit_replacement",
  "OxWearables/ssl-wearables downstream_task_evaluation.py (my_device strings, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = nn.DataParallel(model, device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model, device_ids=[cfg.gpu])",
      "torch.nn.DataParallel is not supported on Atlas A2/A3; multi-NPU needs DDP over hccl (setup not shown)"),
    C("my_device = 'cuda:' + str(GPU)", "device_type", "replace", True, "my_device = 'npu:' + str(GPU)",
      "device string used for model, batches and map_location"),
    C("my_device = 'cuda:0'  # use the first GPU as master", "device_type", "replace", True,
      "my_device = 'npu:0'  # use the first NPU as master", "multi-device master device"),
])

E("sslw_accnet", "sslearning/models/accNet.py", "explicit_replacement",
  "OxWearables/ssl-wearables sslearning/models/accNet.py (ResNet-V2 1D)", [])

E("sslw_datautils", "sslearning/data/datautils.py", "explicit_replacement",
  "OxWearables/ssl-wearables sslearning/data/datautils.py (numpy augmentations)", [])

E("sslw_conf", "conf/config_mtl.yaml", "explicit_replacement", "OxWearables/ssl-wearables conf/config_mtl.yaml", [
    C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl",
      "fed to dist.init_process_group(backend=...) in mtl.py"),
])

E("sslw_docker", "Dockerfile", "explicit_replacement", "ssl-wearables style training image", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-runtime-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.10",
      "base image must carry CANN instead of CUDA (image tag illustrative, unconfirmed)"),
    C("RUN pip install --no-cache-dir torch==1.12.1+cu113", "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 \\",
      "no torch_npu for 1.12 and no CUDA wheels; torch must equal the torch_npu version"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts should use the CPU torch wheel with torch_npu; consequence of the CUDA index unconfirmed"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime hint; Ascend Docker Runtime takes ASCEND_VISIBLE_DEVICES at docker run time"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime hint, inert on Ascend"),
])

E("sslw_hubconf", "hubconf.py", "explicit_replacement", "OxWearables/ssl-wearables hubconf.py (torch.hub harnet)",
  [])

E("sslw_slurm", "pretrain_ukb.sh", "explicit_replacement", "OxWearables/ssl-wearables style SLURM pre-training job", [
    C("#SBATCH --gres gpu:4", "device_type", "replace", False, "#SBATCH --gres npu:4",
      "generic-resource name is site configuration; unconfirmed"),
    C("module load CUDA/11.3.1", "env_var", "replace", True, SET_ENV,
      "the job sets up its accelerator runtime explicitly; on Ascend that is CANN's set_env.sh"),
    C("export NCCL_DEBUG=INFO", "env_var", "removal", False, None, "NCCL-only debug switch, inert with HCCL"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL's host-NIC selector; single-node run on tcp://127.0.0.1, so not needed for correctness"),
    C("nvidia-smi --query-gpu=name,memory.total --format=csv", "device_capability_check", "replace", False,
      "npu-smi info", "diagnostic print only"),
])
