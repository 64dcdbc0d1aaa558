"""Labels for probe428 (sound event detection and localization, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# PANNs (qiuqiangkong/audioset_tagging_cnn, panns_inference)
# ---------------------------------------------------------------------------------------------
E("panns_main", "pytorch/main.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/main.py (AudioSet tagging / SED training loop)", [
    C("=import torch.utils.data", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script: load the NPU backend before any torch.npu call (autoload only from torch_npu 2.5.1)"),
    C("device = torch.device('cuda') if args.cuda", "device_type", "replace", True,
      "device = torch.device('npu') if args.cuda and torch.npu.is_available() else torch.device('cpu')",
      "torch.cuda.is_available() is False on an NPU host: training would silently fall back to CPU"),
    C("if device.type == 'cuda':", "device_type", "replace", True,
      "if device.type == 'npu':",
      "otherwise the else branch rewrites device to 'cpu'"),
    C("=device = 'cuda'", "device_type", "replace", True,
      "device = 'npu'", "device string handed to move_data_to_device and model.to"),
    C("=num_workers=num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=num_workers, pin_memory=True, pin_memory_device='npu')",
      "without a pin_memory_device the DataLoader only pins when CUDA is available; performance only, unconfirmed in knowledge"),
    C("batch_sampler=eval_bal_sampler, collate_fn=collate_fn, num_workers=num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "batch_sampler=eval_bal_sampler, collate_fn=collate_fn, num_workers=num_workers, pin_memory=True, pin_memory_device='npu')",
      "performance only, unconfirmed"),
    C("batch_sampler=eval_test_sampler, collate_fn=collate_fn, num_workers=num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "batch_sampler=eval_test_sampler, collate_fn=collate_fn, num_workers=num_workers, pin_memory=True, pin_memory_device='npu')",
      "performance only, unconfirmed"),
    C("checkpoint = torch.load(resume_checkpoint_path)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(resume_checkpoint_path, map_location='cpu')",
      "only fails when resuming from a checkpoint written on a CUDA machine (tensors tagged cuda); NPU-written checkpoints reload fine"),
    C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('NPU number: {}'.format(torch.npu.device_count()))", "log only; torch.cuda.device_count() just returns 0"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True,
      None, "torch.nn.DataParallel is unsupported on Ascend (TSV ✘, msFmkTransplt README); train on one NPU or switch to DDP"),
    C("if 'cuda' in str(device):", "device_type", "replace", True,
      "if 'npu' in str(device):", "model would stay on CPU while batches go to the NPU"),
    C("'model': model.module.state_dict(),", "distributed_framework", "replace", True,
      "'model': model.state_dict(),", "follows the DataParallel removal: there is no .module any more"),
])

E("panns_models", "pytorch/models.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/models.py (Cnn14, DecisionLevelMax/Att SED heads, torchlibrosa front end)", [])

E("panns_pytorch_utils", "pytorch/pytorch_utils.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/pytorch_utils.py (move_data_to_device, mixup, framewise interpolation, flop counter)", [])

E("panns_inference_script", "pytorch/inference.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/inference.py (audio tagging and SED inference on one clip)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script"),
    C("device = torch.device('cuda') if args.cuda and torch.cuda.is_available() else", "device_type", "replace", True,
      "device = torch.device('npu') if args.cuda and torch.npu.is_available() else torch.device('cpu')",
      "silently CPU otherwise"),
    C("if 'cuda' in str(device):", "device_type", "replace", True,
      "if 'npu' in str(device):", "model.to(device) only runs inside this branch"),
    C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('NPU number: {}'.format(torch.npu.device_count()))", "log only"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True,
      None, "DataParallel unsupported on Ascend; single-clip inference needs one device"),
    C("torch.cuda.is_available() \\", "device_type", "replace", True,
      "device = torch.device('npu') if args.cuda and torch.npu.is_available() \\",
      "second copy (sound_event_detection), continued on the next line"),
    C("print('Number of GPUs: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('Number of NPUs: {}'.format(torch.npu.device_count()))", "log only"),
    C("=model = nn.DataParallel(model)", "distributed_framework", "removal", True,
      None, "DataParallel unsupported on Ascend"),
    C("if device.type == 'cuda':", "device_type", "replace", True,
      "if device.type == 'npu':", "model would stay on CPU"),
])

E("panns_inference_pkg", "panns_inference/inference.py", "explicit_replacement",
  "qiuqiangkong/panns_inference panns_inference/inference.py (AudioTagging / SoundEventDetection wrappers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "module calls torch.npu.is_available(); also run as a script"),
    C("def __init__(self, model=None, checkpoint_path=None, device='cuda'):", "device_type", "replace", True,
      "def __init__(self, model=None, checkpoint_path=None, device='npu'):",
      "default device; with the ported check below a 'cuda' default silently selects CPU"),
    C("if device == 'cuda' and torch.cuda.is_available():", "device_type", "replace", True,
      "if device == 'npu' and torch.npu.is_available():", "CPU fallback otherwise"),
    C("=self.device = 'cuda'", "device_type", "replace", True,
      "self.device = 'npu'", "device string used for map_location, .to and move_data_to_device"),
    C("if 'cuda' in str(self.device):", "device_type", "replace", True,
      "if 'npu' in str(self.device):", "model.to only inside this branch"),
    C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('NPU number: {}'.format(torch.npu.device_count()))", "log only"),
    C("=self.model = torch.nn.DataParallel(self.model)", "distributed_framework", "removal", True,
      None, "DataParallel unsupported on Ascend (TSV ✘)"),
    C("device='cuda', interpolate_mode='nearest'):", "device_type", "replace", True,
      "def __init__(self, model=None, checkpoint_path=None, device='npu', interpolate_mode='nearest'):",
      "default device of SoundEventDetection"),
    C("self.device = 'cuda' if (device == 'cuda' and torch.cuda.is_available()) else 'cpu'", "device_type", "replace", True,
      "self.device = 'npu' if (device == 'npu' and torch.npu.is_available()) else 'cpu'", "CPU fallback otherwise"),
    C("if self.device == 'cuda':", "device_type", "replace", True,
      "if self.device == 'npu':", "model placement branch"),
    C("self.model = torch.nn.DataParallel(self.model).to(self.device)", "distributed_framework", "replace", True,
      "self.model = self.model.to(self.device)", "drop the DataParallel wrapper, keep the move"),
    C("parser.add_argument('--device', type=str, default='cuda', choices=['cuda', 'cpu'])", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu', choices=['npu', 'cpu'])", "CLI default and choices"),
])

E("panns_evaluate", "pytorch/evaluate.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/evaluate.py (mAP / AUC evaluator)", [])

E("panns_config", "utils/config.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn utils/config.py (label tables)", [])

E("panns_runme", "scripts/runme.sh", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn scripts/runme.sh (pack hdf5, train, infer)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the login shell / image already sources it"),
    C("CUDA_VISIBLE_DEVICES=0 python3 pytorch/main.py train", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 pytorch/main.py train \\",
      "selects device 0, which the single-device 'npu' run uses anyway; port for intent"),
    C("CUDA_VISIBLE_DEVICES=1 python3 pytorch/inference.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python3 pytorch/inference.py sound_event_detection \\",
      "selects device 1; unchanged the job would silently land on NPU 0"),
])

# ---------------------------------------------------------------------------------------------
# DCASE task 4 baseline (DESED_task, recipes/dcase2023_task4_baseline), PyTorch Lightning
# ---------------------------------------------------------------------------------------------
E("desed_train_sed", "recipes/dcase2023_task4_baseline/train_sed.py", "explicit_replacement",
  "DCASE-REPO/DESED_task recipes/dcase2023_task4_baseline/train_sed.py (Lightning entry point, --gpus flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script; also where an NPU Lightning accelerator would be registered"),
    C('accelerator = "gpu"', "device_type", "replace", True,
      'accelerator = "npu"',
      "Lightning's 'gpu' accelerator raises when CUDA is absent; 'npu' assumes an NPU accelerator registered with "
      "Lightning's AcceleratorRegistry (not built into pytorch-lightning 1.9; unconfirmed in knowledge)"),
    C("checkpoint = torch.load(test_from_checkpoint)", "tensor_to_device", "replace", True,
      'checkpoint = torch.load(test_from_checkpoint, map_location="cpu")',
      "--test_from_checkpoint is used with the published baseline checkpoints, which were written on GPU: "
      "deserialising cuda tensors fails on a host without CUDA"),
])

E("desed_sed_trainer", "recipes/dcase2023_task4_baseline/local/sed_trainer.py", "explicit_replacement",
  "DCASE-REPO/DESED_task recipes/dcase2023_task4_baseline/local/sed_trainer.py (mean-teacher LightningModule, codecarbon tracking)", [
    C("gpu_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "gpu_ids=None,",
      "unguarded torch.cuda.current_device() raises without CUDA; codecarbon reads GPU power through NVML and has no "
      "NPU backend (unconfirmed), so drop the GPU ids (or pass torch.npu.current_device() to a tracker that supports it)"),
])

E("desed_crnn", "desed_task/nnet/CRNN.py", "explicit_replacement",
  "DCASE-REPO/DESED_task desed_task/nnet/CRNN.py (CNN + BGRU + attention pooling)", [])

E("desed_rnn", "desed_task/nnet/RNN.py", "explicit_replacement",
  "DCASE-REPO/DESED_task desed_task/nnet/RNN.py (BidirectionalGRU / BidirectionalLSTM)", [])

E("desed_cnn", "desed_task/nnet/CNN.py", "explicit_replacement",
  "DCASE-REPO/DESED_task desed_task/nnet/CNN.py (GLU CNN front end)", [])

E("desed_scaler", "desed_task/utils/scaler.py", "explicit_replacement",
  "DCASE-REPO/DESED_task desed_task/utils/scaler.py (TorchScaler)", [])

E("desed_conf", "recipes/dcase2023_task4_baseline/confs/default.yaml", "explicit_replacement",
  "DCASE-REPO/DESED_task recipes/dcase2023_task4_baseline/confs/default.yaml", [])

E("desed_extract", "recipes/dcase2023_task4_baseline/extract_embeddings.py", "explicit_replacement",
  "DCASE-REPO/DESED_task recipes/dcase2023_task4_baseline/extract_embeddings.py (BEATs / PANNs embedding extraction to HDF5)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script"),
    C("feats = feats.cuda()", "tensor_to_device", "replace", True,
      "feats = feats.npu()", "Tensor.cuda() fails without CUDA"),
    C("checkpoint = torch.load(ckpt_path)", "tensor_to_device", "replace", False,
      'checkpoint = torch.load(ckpt_path, map_location="cpu")',
      "defensive: only fails if the BEATs release checkpoint stores cuda tensors (unconfirmed)"),
    C("embedding_model = embedding_model.cuda()", "tensor_to_device", "replace", True,
      "embedding_model = embedding_model.npu()", "Module.cuda() fails without CUDA"),
])

E("desed_env", "recipes/dcase2023_task4_baseline/conda_create_environment.sh", "explicit_replacement",
  "DCASE-REPO/DESED_task recipes/dcase2023_task4_baseline/conda_create_environment.sh", [
    C("pytorch-cuda=11.7 -c pytorch -c nvidia", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchaudio==2.1.0 torch-npu==2.1.0.post12  # CPU torch + torch_npu (CANN 8.1.RC1)",
      "pytorch-cuda / nvidia channel cannot serve an Ascend host; install CPU torch plus a matching torch_npu wheel "
      "(pairing per the version matrix; torchvision unused by the recipe)"),
])

# ---------------------------------------------------------------------------------------------
# SELDnet baseline (DCASE task 3, sharathadavanne/seld-dcase2023)
# ---------------------------------------------------------------------------------------------
E("seld_train", "train_seldnet.py", "explicit_replacement",
  "sharathadavanne/seld-dcase2023 train_seldnet.py (ACCDOA / multi-ACCDOA training and evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_npu = torch.npu.is_available()", "False on an NPU host: the whole run would silently go to CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_npu else "cpu")', "device used by every .to(device) below"),
    C("torch.autograd.set_detect_anomaly(True)", "unsupported_op_workaround", "removal", False,
      None, "anomaly detection left on for the whole run; msFmkTransplt performance advice says remove it (performance only)"),
])

E("seld_model", "seldnet_model.py", "explicit_replacement",
  "sharathadavanne/seld-dcase2023 seldnet_model.py (CNN + BiGRU + MHSA SELDnet, MSELoss_ADPIT)", [
    C("dropout=params['dropout_rate'], bidirectional=True)", "unsupported_op_workaround", "replace", True,
      "dropout=0., bidirectional=True)  # NPU GRU: no inter-layer dropout; stack 1-layer GRUs with nn.Dropout between them",
      "Ascend's 2.7.1 API list says nn.GRU does not support the dropout argument (and msFmkTransplt lists nn.GRU as "
      "unsupported); with nb_rnn_layers=2 and dropout_rate=0.05 the inter-layer dropout is active. Whether it errors or is "
      "silently ignored is unconfirmed; either way the upstream line does not do what it says"),
])

E("seld_params", "parameters.py", "explicit_replacement",
  "sharathadavanne/seld-dcase2023 parameters.py (task-id parameter sets)", [])

E("seld_data_gen", "cls_data_generator.py", "explicit_replacement",
  "sharathadavanne/seld-dcase2023 cls_data_generator.py (numpy circular-buffer batch generator)", [])

# ---------------------------------------------------------------------------------------------
# ATST-SED (Audio-WestlakeU/ATST-SED), Lightning, multi-GPU DDP in stage 2
# ---------------------------------------------------------------------------------------------
E("atst_train_stage2", "train_stage2.py", "explicit_replacement",
  "Audio-WestlakeU/ATST-SED train_stage2.py (fine-tuning ATST-Frame + CRNN with Lightning DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script"),
    C('accelerator = "gpu"', "device_type", "replace", True,
      'accelerator = "npu"',
      "the 'gpu' accelerator raises without CUDA; 'npu' needs an NPU accelerator registered with Lightning (unconfirmed in knowledge)"),
    C("strategy = DDPStrategy(find_unused_parameters=True)", "dist_backend", "replace", True,
      'strategy = DDPStrategy(find_unused_parameters=True, process_group_backend="hccl")',
      "Lightning only defaults to nccl for cuda devices and falls back to gloo otherwise; gloo cannot reduce NPU tensors"),
])

E("atst_trainer", "local/ultra_sed_trainer_stage2.py", "explicit_replacement",
  "Audio-WestlakeU/ATST-SED local/ultra_sed_trainer_stage2.py (mean-teacher trainer with two feature pipelines)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; porting it only restores the cache release (memory headroom)"),
    C("max_mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "max_mem = torch.npu.max_memory_allocated() / 1024 ** 3",
      "log only: the CUDA allocator stats just report 0 on an NPU host"),
    C("num_workers=self.num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=self.num_workers, pin_memory=True, pin_memory_device=\"npu\")",
      "performance only, unconfirmed"),
])

E("atst_transformer", "desed_task/nnet/atst/audio_transformer.py", "explicit_replacement",
  "Audio-WestlakeU/ATST-SED desed_task/nnet/atst/audio_transformer.py (ATST-Frame ViT encoder)", [])

E("atst_conf", "confs/stage2.yaml", "explicit_replacement",
  "Audio-WestlakeU/ATST-SED confs/stage2.yaml", [])

E("atst_run", "scripts/train.sh", "explicit_replacement",
  "Audio-WestlakeU/ATST-SED training launcher (stage 1 + stage 2)", [
    C("=set -e", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the shell already sources it"),
    C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$GPUS",
      "the script renumbers visible devices from 0; without the Ascend variable the chosen NPUs are ignored"),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on an Ascend host; under set -e the launcher exits non-zero"),
])

# ---------------------------------------------------------------------------------------------
# BEATs fine-tuning (microsoft/unilm beats model code + a DeiT/MAE-style torchrun fine-tuning script)
# ---------------------------------------------------------------------------------------------
E("beats_finetune", "finetune.py", "explicit_replacement",
  "BEATs fine-tuning script in the style of microsoft/unilm beats + facebookresearch/mae main_finetune.py (torchrun, DDP, fp16 AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "CUDA autocast is silently disabled on an NPU host, so training just runs in fp32: slower, not wrong"),
    C("with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.float16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp, dtype=torch.float16):", "evaluation autocast; performance only"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed above already seeds registered backends (unconfirmed in knowledge)"),
    C("num_workers=cfg[\"num_workers\"], pin_memory=True, drop_last=True,", "pin_memory", "replace", False,
      "num_workers=cfg[\"num_workers\"], pin_memory=True, pin_memory_device=\"npu\", drop_last=True,",
      "performance only, unconfirmed"),
    C("num_workers=cfg[\"num_workers\"], pin_memory=cfg[\"pin_mem\"], collate_fn=collate_fn)", "pin_memory", "replace", False,
      "num_workers=cfg[\"num_workers\"], pin_memory=cfg[\"pin_mem\"], pin_memory_device=\"npu\", collate_fn=collate_fn)",
      "performance only, unconfirmed"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "with autocast ported to the NPU, a CUDA GradScaler disables itself on a CUDA-less host: fp16 training without "
      "loss scaling (gradient underflow)"),
    C("max mem {torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MB", "torch_cuda_api", "replace", False,
      "f\"max mem {torch.npu.max_memory_allocated() / 2 ** 20:.0f} MB\")", "log only (reports 0 otherwise)"),
])

E("beats_dist_utils", "utils/dist_utils.py", "explicit_replacement",
  "facebookresearch/mae util/misc.py-style helpers as vendored by BEATs fine-tuning repos", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "tensor for the HCCL all_reduce must live on the NPU; 'cuda' fails without CUDA"),
    C('out = subprocess.check_output(["nvidia-smi"', "torch_cuda_api", "replace", True,
      "return [(t - f) // 2 ** 20 for f, t in (torch.npu.mem_get_info(i) for i in range(torch.npu.device_count()))]",
      "nvidia-smi is absent on an Ascend host (FileNotFoundError inside the training log loop); npu-smi output has a "
      "different layout, so read device memory through torch.npu.mem_get_info"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "torch.cuda.synchronize() initialises CUDA and raises without it"),
    C("data=str(data_time), memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", False,
      "data=str(data_time), memory=torch.npu.max_memory_allocated() / MB,", "log only"),
    C("smi=gpu_memory_used_mb()[get_rank() % max(1, torch.cuda.device_count())]))", "torch_cuda_api", "replace", False,
      "smi=gpu_memory_used_mb()[get_rank() % max(1, torch.npu.device_count())]))",
      "log only: with a 0 CUDA count it always shows device 0"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: modulo by a 0 CUDA device count raises"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "each rank must bind its own NPU before init_process_group"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL is not available on Ascend"),
])

E("beats_model", "BEATs/BEATs.py", "explicit_replacement",
  "microsoft/unilm beats/BEATs.py (BEATsConfig, Kaldi fbank front end, patch embedding)", [])

E("beats_dataset", "data/audio_dataset.py", "explicit_replacement",
  "CSV clip dataset + waveform mixup as used in BEATs fine-tuning repos", [])

E("beats_cfg", "configs/esc50.yaml", "explicit_replacement",
  "BEATs ESC-50 fine-tuning config", [
    C("=device: cuda", "device_type", "replace", True,
      "device: npu", "read verbatim by torch.device(cfg[\"device\"]) in finetune.py; the Python line itself is device-agnostic"),
])

E("beats_run", "scripts/run_finetune.sh", "explicit_replacement",
  "torchrun launcher for BEATs fine-tuning", [
    C("=CONFIG=${1:-configs/esc50.yaml}", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the shell already sources it"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "rank i binds device i anyway, so 0-3 are the devices used even if the variable is ignored; port for intent"),
])

E("beats_docker", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for the BEATs fine-tuning environment", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "needs a CANN toolkit base image matching the host driver (tag illustrative, unconfirmed)"),
    C("NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ASCEND_VISIBLE_DEVICES=0-7",
      "Ascend Docker Runtime device mounting; usually given at docker run time instead (unconfirmed default)"),
    C("pip install --no-cache-dir torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "pip install --no-cache-dir torch==2.1.0 torchaudio==2.1.0 torch-npu==2.1.0.post12",
      "cu118 wheels are useless on Ascend; torch_npu 2.1.0.post12 pairs with torch 2.1.0 / CANN 8.1.RC1 (version matrix)"),
])
