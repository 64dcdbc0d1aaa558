"""Labels for probe432 (speech emotion recognition / paralinguistics, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: the project pins a torch older than 2.5.1, where the NPU backend is not autoloaded, "
               "so torch.npu / 'npu' devices only exist after import torch_npu")
SET_ENV_NOTE = ("CANN environment for torch_npu; usually already sourced by the shell profile or the image, "
                "so not required in this script (unconfirmed per-host)")
SEED_NOTE = ("reproducibility only: torch.cuda seeding is a lazy no-op without CUDA and nothing fails; "
             "whether torch.manual_seed also seeds the NPU generator is unconfirmed")

# ---------------------------------------------------------------------------------------------
# emotion2vec (ddlBoJack/emotion2vec): fairseq-based feature extraction + IEMOCAP downstream
# ---------------------------------------------------------------------------------------------
E("e2v_extract", "scripts/extract_features.py", "explicit_replacement",
  "ddlBoJack/emotion2vec scripts/extract_features.py (fairseq checkpoint load, .cuda() extraction)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("source = torch.from_numpy(wav).float().cuda()", "tensor_to_device", "replace", True,
      "source = torch.from_numpy(wav).float().npu()",
      "input waveform must live on the same device as the model; .cuda() raises on a host without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "moves the fairseq model; .cuda() raises without CUDA"),
])

E("e2v_extract_sh", "scripts/extract_features.sh", "explicit_replacement",
  "ddlBoJack/emotion2vec scripts/extract_features.sh", [
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on Ascend, but it only pins card 0, which is the default device anyway: inert"),
    C("export PYTHONPATH=$PYTHONPATH", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
])

E("e2v_funasr_demo", "scripts/funasr_demo.py", "explicit_replacement",
  "emotion2vec+ inference through FunASR AutoModel (README usage, iic/emotion2vec_plus_*)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu")',
      "device_type", "replace", True,
      'parser.add_argument("--device", default="npu:0" if torch.npu.is_available() else "cpu")',
      "unported, an NPU host silently runs on CPU; FunASR accepting 'npu:0' (model.to(device)) is unconfirmed"),
])

E("e2v_model", "upstream/models/emotion2vec.py", "explicit_replacement",
  "ddlBoJack/emotion2vec upstream/models/emotion2vec.py (data2vec 2.0 multi-modal model, fairseq)", [])

E("e2v_ds_main", "iemocap_downstream/main.py", "explicit_replacement",
  "ddlBoJack/emotion2vec iemocap_downstream/main.py (hydra, leave-one-session-out)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "unported, the whole downstream training silently falls back to the CPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "between folds only; a no-op without CUDA, performance/fragmentation only"),
])

E("e2v_ds_utils", "iemocap_downstream/utils.py", "explicit_replacement",
  "ddlBoJack/emotion2vec iemocap_downstream/utils.py (train/eval loops, device passed in)", [])

E("e2v_ds_cfg", "iemocap_downstream/config/default.yaml", "explicit_replacement",
  "ddlBoJack/emotion2vec iemocap_downstream/config/default.yaml", [])

# ---------------------------------------------------------------------------------------------
# SpeechBrain (speechbrain/speechbrain): IEMOCAP wav2vec2 emotion recipe + core runtime
# ---------------------------------------------------------------------------------------------
E("sb_core", "speechbrain/core.py", "device_branch_or_abstraction",
  "speechbrain/speechbrain speechbrain/core.py (run_opt_defaults, parse_arguments, Brain.__init__ AMP/GradScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "speechbrain.core is imported by every recipe and inference interface, so it is the one place that "
      "guarantees torch_npu is loaded before devices are resolved (torch < 2.5.1 assumed)"),
    C('"distributed_backend": "nccl",', "dist_backend", "replace", True, '"distributed_backend": "hccl",',
      "default DDP backend; init_process_group('nccl') fails on Ascend"),
    C('default="cuda:0",', "device_type", "replace", True, 'default="npu:0",',
      "--device default; every module is moved with .to(self.device)"),
    C('if local_rank is not None and "cuda" in run_opts["device"]:', "device_type", "replace", True,
      'if local_rank is not None and "npu" in run_opts["device"]:',
      "unported, torchrun ranks all keep npu:0 instead of npu:<LOCAL_RANK>"),
    C('if self.device == "cuda":', "device_type", "replace", True, 'if self.device == "npu":',
      "unported, --device=npu falls into the elif below and int('u') raises"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)",
      "torch.cuda.set_device raises without CUDA"),
    C('elif "cuda" in self.device:', "device_type", "replace", True, 'elif "npu" in self.device:',
      "unported, the current device is never set: HCCL communicators and the NPU allocator stay on device 0 for every rank"),
    C("torch.cuda.set_device(int(self.device[-1]))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(self.device[-1]))", "torch.cuda.set_device raises without CUDA"),
    C('gradscaler_enabled = self.precision == "fp16" and "cuda" in self.device', "amp", "replace", True,
      'gradscaler_enabled = self.precision == "fp16" and "npu" in self.device',
      "autocast is device-agnostic here (device_type=torch.device(self.device).type), so --precision=fp16 would "
      "run fp16 autocast with the loss scaler disabled: gradient underflow"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=gradscaler_enabled)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=gradscaler_enabled)",
      "torch.cuda.amp.GradScaler disables itself when CUDA is unavailable -> fp16 without loss scaling"),
    C('elif "cuda" in self.device and self.precision in ["fp16", "bf16"]:', "amp", "replace", False,
      'elif "npu" in self.device and self.precision in ["fp16", "bf16"]:',
      "unported, use_amp stays False and training silently runs in fp32: correct results, performance only"),
])

E("sb_distributed", "speechbrain/utils/distributed.py", "device_branch_or_abstraction",
  "speechbrain/speechbrain speechbrain/utils/distributed.py (ddp_init_group, ddp_barrier)", [
    C("if local_rank + 1 > torch.cuda.device_count():", "torch_cuda_api", "replace", True,
      "if local_rank + 1 > torch.npu.device_count():",
      "torch.cuda.device_count() is 0 on an NPU host, so every non-gloo rank raises 'Not enough GPUs available!'"),
    C('elif run_opts["distributed_backend"] == "mpi":', "dist_backend", "add_branch", True,
      'elif run_opts["distributed_backend"] == "hccl": pass  # ProcessGroupHCCL is registered by torch_npu',
      "the backend whitelist raises \"hccl communication protocol doesn't exist\" before init_process_group"),
])

E("sb_train", "recipes/IEMOCAP/emotion_recognition/train_with_wav2vec2.py", "device_branch_or_abstraction",
  "speechbrain/speechbrain recipes/IEMOCAP/emotion_recognition/train_with_wav2vec2.py", [])

E("sb_hparams", "recipes/IEMOCAP/emotion_recognition/hparams/train_with_wav2vec2.yaml", "device_branch_or_abstraction",
  "speechbrain/speechbrain recipes/IEMOCAP/emotion_recognition/hparams/train_with_wav2vec2.yaml", [])

E("sb_infer", "recipes/IEMOCAP/emotion_recognition/classify_folder.py", "explicit_replacement",
  "speechbrain/emotion-recognition-wav2vec2-IEMOCAP model card usage (foreign_class custom_interface.py)", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "unported, inference silently runs on the CPU (torch_npu is already loaded through speechbrain.core)"),
])

E("sb_ddp_sh", "recipes/IEMOCAP/emotion_recognition/run_ddp.sh", "explicit_replacement",
  "speechbrain/speechbrain multi-GPU torchrun launch of the IEMOCAP recipe (docs/multigpu)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on Ascend, but ranks 0-3 use npu:0-3 via LOCAL_RANK anyway: inert"),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("--distributed_backend=nccl", "dist_backend", "replace", True, "--distributed_backend=hccl \\",
      "command-line backend overrides run_opt_defaults; NCCL does not exist on Ascend"),
])

# ---------------------------------------------------------------------------------------------
# HF wav2vec2 / HuBERT fine-tuning for SER (m3hrdadfi/soxan style) + a small serving image
# ---------------------------------------------------------------------------------------------
E("w2v_models", "src/models.py", "explicit_replacement",
  "m3hrdadfi/soxan src/models.py (Wav2Vec2/HubertForSpeechClassification)", [])

E("w2v_trainer", "src/trainer.py", "explicit_replacement",
  "m3hrdadfi/soxan src/trainer.py (CTCTrainer.training_step with native amp / apex)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", False, "from torch.npu.amp import autocast",
      "CUDA autocast is disabled with a warning on an NPU host, so the step runs in fp32 and the Trainer's scaler "
      "only scales an fp32 loss: correct, performance only"),
])

E("w2v_run", "run_wav2vec_clf.py", "explicit_replacement",
  "m3hrdadfi/soxan run_wav2vec_clf.py (HfArgumentParser + Trainer fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the fp16 check below calls torch.npu; transformers >= 4.32 may already import torch_npu while resolving "
      "TrainingArguments.device (unconfirmed), so import it explicitly"),
    C("if training_args.fp16 and not torch.cuda.is_available():", "amp", "replace", False,
      "if training_args.fp16 and not torch.npu.is_available():",
      "unported, --fp16 is silently dropped on NPU and training runs in fp32: performance only"),
])

E("w2v_predict", "predict.py", "explicit_replacement",
  "m3hrdadfi/soxan prediction snippet (README / notebook)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "unported, prediction silently runs on the CPU"),
])

E("w2v_run_sh", "run.sh", "explicit_replacement",
  "m3hrdadfi/soxan notebook training command as a shell launcher", [
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on Ascend; pins card 0 which is the default: inert"),
    C("export WANDB_DISABLED=true", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
])

E("w2v_serve", "serve/app.py", "explicit_replacement",
  "FastAPI serving wrapper around a soxan-style wav2vec2/HuBERT emotion classifier (composite)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = os.environ.get("SER_DEVICE", "cuda:0" if torch.cuda.is_available() else "cpu")', "device_type",
      "replace", True, 'DEVICE = os.environ.get("SER_DEVICE", "npu:0" if torch.npu.is_available() else "cpu")',
      "unported default silently serves from the CPU"),
    C('USE_HALF = DEVICE.startswith("cuda") and', "amp", "replace", False,
      'USE_HALF = DEVICE.startswith("npu") and os.environ.get("SER_FP16", "1") == "1"',
      "unported, the service runs fp32 instead of fp16: performance only"),
    C('"gpu_mem_mb": torch.cuda.memory_allocated()', "torch_cuda_api", "replace", False,
      '"gpu_mem_mb": torch.npu.memory_allocated() / 2**20 if DEVICE.startswith("npu") else 0,',
      "health endpoint reports 0 MiB on NPU: monitoring only"),
])

E("w2v_docker", "Dockerfile", "explicit_replacement",
  "serving image for the soxan-style classifier (pytorch/pytorch CUDA runtime base)", [
    C("FROM pytorch/pytorch:1.13.1-cuda11.6-cudnn8-runtime", "import_torch_npu", "replace", True,
      "FROM ascendai/pytorch:2.1.0  # CANN + torch + torch_npu base image (exact repository/tag unconfirmed)",
      "the CUDA image has neither CANN nor torch_npu, and torch 1.13 has no torch_npu release in the version matrix"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "Ascend Docker Runtime variable; devices can equally be mapped with --device /dev/davinciN at docker run "
      "(whether it accepts 'all' is unconfirmed)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting, inert on Ascend"),
    C("ENV SER_DEVICE=cuda:0", "device_type", "replace", True, "ENV SER_DEVICE=npu:0",
      "overrides the default in serve/app.py; model.to('cuda:0') raises on an NPU host"),
])

# ---------------------------------------------------------------------------------------------
# s3prl (s3prl/s3prl): SUPERB emotion downstream with HuBERT / WavLM / wav2vec2 upstreams
# ---------------------------------------------------------------------------------------------
E("s3p_run", "s3prl/run_downstream.py", "explicit_replacement",
  "s3prl/s3prl s3prl/run_downstream.py (argparse --device/--backend/--local_rank)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--backend', default='nccl'", "dist_backend", "replace", True,
      "parser.add_argument('--backend', default='hccl', help='The backend for distributed training')",
      "passed straight to init_process_group"),
    C("parser.add_argument('--device', default='cuda'", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', help='model.to(device)')",
      "every upstream/featurizer/downstream and each wav batch is moved with .to(args.device)"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA; also pins each DDP rank to its own NPU"),
    C("if torch.cuda.is_available(): torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available(): torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
])

E("s3p_runner", "s3prl/downstream/runner.py", "explicit_replacement",
  "s3prl/s3prl s3prl/downstream/runner.py (Runner.train/evaluate, OOM skip, cache emptying)", [
    C("if 'CUDA out of memory' in str(e):", "device_type", "replace", True,
      "if 'out of memory' in str(e):  # torch_npu raises 'NPU out of memory'",
      "unported, an OOM batch crashes the run instead of being skipped; the exact torch_npu message is unconfirmed, "
      "the generic match covers both"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards cache emptying only; unported the helper silently does nothing: performance only"),
    C("with torch.cuda.device(device):", "torch_cuda_api", "replace", True, "with torch.npu.device(device):",
      "with the guard ported, torch.cuda.device('npu') raises (expects a cuda device)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; freed blocks stay in the NPU caching allocator and are reused: performance only"),
    C("if torch.cuda.is_available(): torch.cuda.manual_seed_all(self.args.seed)", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available(): torch.npu.manual_seed_all(self.args.seed)", SEED_NOTE),
])

E("s3p_expert", "s3prl/downstream/emotion/expert.py", "explicit_replacement",
  "s3prl/s3prl s3prl/downstream/emotion/expert.py (IEMOCAP DownstreamExpert)", [])

E("s3p_cfg", "s3prl/downstream/emotion/config.yaml", "explicit_replacement",
  "s3prl/s3prl s3prl/downstream/emotion/config.yaml", [])

E("s3p_cv_sh", "s3prl/downstream/emotion/cross_validation.sh", "explicit_replacement",
  "s3prl/s3prl emotion five-fold cross-validation launcher (docs/superb.md)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=$gpu_id", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$gpu_id",
      "the script's only device selector: unported, every fold job silently lands on npu:0 whatever <gpu_id> says"),
])

E("s3p_mockingjay", "s3prl/upstream/mockingjay/model.py", "explicit_replacement",
  "s3prl/s3prl s3prl/upstream/mockingjay/model.py (optional apex FusedLayerNorm)", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as TransformerLayerNorm",
      "custom_cuda_extension", "replace", False,
      "from torch.nn import LayerNorm as TransformerLayerNorm  # apex fused_layer_norm_cuda has no NPU build",
      "only matters if an apex is installed: the except branch already gives a pure-torch LayerNorm; whether Ascend "
      "apex's FusedLayerNorm imports and then fails on the missing CUDA kernel is unconfirmed"),
])

# ---------------------------------------------------------------------------------------------
# MER2023 baseline (zeroQiaoba/MER2023-Baseline): HF speech features + fusion model
# ---------------------------------------------------------------------------------------------
E("mer_extract", "feature_extraction/audio/extract_wav2vec_huggingface.py", "explicit_replacement",
  "zeroQiaoba/MER2023-Baseline feature_extraction/audio/extract_wav2vec_huggingface.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device(f'cuda:{gpu}')", "device_type", "replace", True, "device = torch.device(f'npu:{gpu}')",
      "model.to(device) raises on an NPU host"),
])

E("mer_main", "main-release.py", "explicit_replacement",
  "zeroQiaoba/MER2023-Baseline main-release.py (5-fold training, .cuda() chains)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("emos = emos.cuda()", "tensor_to_device", "replace", True, "emos = emos.npu()", ".cuda() raises without CUDA"),
    C("vals = vals.cuda()", "tensor_to_device", "replace", True, "vals = vals.npu()", ".cuda() raises without CUDA"),
    C("audio_feat = audio_feat.cuda()", "tensor_to_device", "replace", True, "audio_feat = audio_feat.npu()",
      ".cuda() raises without CUDA"),
    C("text_feat = text_feat.cuda()", "tensor_to_device", "replace", True, "text_feat = text_feat.npu()",
      ".cuda() raises without CUDA"),
    C("visual_feat = visual_feat.cuda()", "tensor_to_device", "replace", True, "visual_feat = visual_feat.npu()",
      ".cuda() raises without CUDA"),
    C("multi_feat = multi_feat.cuda()", "tensor_to_device", "replace", True, "multi_feat = multi_feat.npu()",
      "the tensor is unused afterwards, but the .cuda() call itself still raises without CUDA"),
    C("cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False, "cuda = torch.npu.is_available()",
      "only gates the seeding below: " + SEED_NOTE),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() raises without CUDA"),
    C("reg_loss.cuda()", "tensor_to_device", "replace", False, "reg_loss.npu()",
      "parameter- and buffer-free loss module: Module.cuda() touches no tensor, so it is inert; ported for consistency"),
    C("cls_loss.cuda()", "tensor_to_device", "replace", False, "cls_loss.npu()",
      "NLLLoss without class weights has no tensors (weight buffer is None): inert"),
])

E("mer_gpu", "toolkit/utils/gpu_tools.py", "explicit_replacement",
  "MER2023-Baseline-style GPU helper (nvidia-smi free-memory query, CUDA_VISIBLE_DEVICES) (composite)", [
    C("['nvidia-smi', '--query-gpu=memory.free'", "torch_cuda_api", "replace", True,
      "['npu-smi', 'info', '-t', 'usages', '-i', str(npu_id)],  # parse 'HBM Usage Rate(%)' per NPU",
      "nvidia-smi does not exist on an Ascend host: --gpu auto raises FileNotFoundError; npu-smi keeps the query "
      "out of process so the visibility variable can still be set afterwards"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(gpu)",
      "the only device selector of main-release.py (which then uses the first visible device): unported, --gpu is "
      "silently ignored and every run lands on npu:0"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "memory report only"),
    C("alloc = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated() / 1024 ** 2", "memory report only (returns 0 without CUDA)"),
    C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 2", "memory report only (returns 0 without CUDA)"),
])

# ---------------------------------------------------------------------------------------------
# openSMILE features + PyTorch heads (opensmile-python eGeMAPS/ComParE + MLP / BiLSTM heads)
# ---------------------------------------------------------------------------------------------
E("osm_extract", "features/extract_opensmile.py", "explicit_replacement",
  "audeering/opensmile-python Smile.process_files usage for eGeMAPS/ComParE extraction (composite)", [])

E("osm_head", "ser/models/heads.py", "explicit_replacement",
  "MLP / BiLSTM-attention heads on openSMILE functionals and LLDs (composite, end2you-style)", [])

E("osm_trainer", "ser/training/trainer.py", "explicit_replacement",
  "training loop for openSMILE heads with native AMP and optional DataParallel (composite)", [
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n_gpus = torch.npu.device_count()",
      "only feeds the DataParallel decision and a log line; unported it is 0 and the branch is skipped"),
    C("self.model = nn.DataParallel(self.model)", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on Atlas A2/A3; with the device count ported, --multi-gpu on a multi-NPU "
      "host would take this branch (use DDP instead)"),
    C('self.use_amp = cfg.amp and device.type == "cuda"', "amp", "replace", False,
      'self.use_amp = cfg.amp and device.type == "npu"',
      "unported, AMP is silently off and training runs in fp32: performance only"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "with use_amp and autocast ported, the CUDA GradScaler disables itself on an NPU host: fp16 without loss "
      "scaling"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.use_amp):',
      "CUDA autocast is disabled with a warning when CUDA is missing, so the step runs in fp32 with a scaled "
      "loss: correct, performance only"),
    C('with torch.autocast("cuda", dtype=torch.float16', "amp", "replace", False,
      'with torch.autocast("npu", dtype=torch.float16, enabled=self.use_amp):',
      "evaluation in fp32 instead of fp16: performance only"),
    C('if self.device.type == "cuda":', "device_type", "replace", False, 'if self.device.type == "npu":',
      "peak-memory log only"),
    C("torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", "replace", True,
      'mem = f" peak_mem={torch.npu.max_memory_allocated(self.device) / 2**20:.0f}MiB"',
      "with the guard ported, torch.cuda.max_memory_allocated(npu device) raises (expects a cuda device)"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(self.device)", "same: raises for an npu device once the guard is ported"),
])

E("osm_train", "train.py", "explicit_replacement",
  "entry script: leave-one-group-out training of openSMILE heads (composite)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C('p.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu")', "device_type",
      "replace", True, 'p.add_argument("--device", default="npu:0" if torch.npu.is_available() else "cpu")',
      "unported, training silently runs on the CPU"),
])

E("osm_env", "environment.yml", "explicit_replacement",
  "conda environment for the openSMILE + PyTorch head project (pytorch/nvidia channels)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "channel only serves CUDA packages: inert once pytorch-cuda is gone"),
    C("- pytorch=1.13.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch_npu has no release for torch 1.13 (version matrix); pick a torch that has one"),
    C("- pytorch-cuda=11.7", "import_torch_npu", "replace", True, "- cpuonly",
      "torch_npu is installed on top of the CPU torch build; pytorch-cuda=11.7 cannot be solved together with "
      "pytorch 2.1 (and has no aarch64 build, unconfirmed)"),
    C("- torchaudio=0.13.1", "import_torch_npu", "replace", True, "- torchaudio=2.1.0",
      "torchaudio must match the torch version"),
    C("- tensorboard==2.12.0", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "the code now imports torch_npu; 2.1.0.post12 pairs with torch 2.1.0 / CANN 8.1.RC1 in the version matrix"),
    C("- nvidia-ml-py==11.525.112", "import_torch_npu", "removal", False, None,
      "NVML bindings are not imported by this project: inert"),
])
