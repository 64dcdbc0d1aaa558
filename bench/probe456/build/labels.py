"""Labels for probe456 (NMT quality estimation / automatic MT metrics, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
See README.md for the label policy and the judgement calls.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: load the NPU backend before anything touches torch.npu "
               "(mandatory before torch_npu 2.5.1 autoload; still recommended after)")

# --------------------------------------------------------------------------- COMET
E("comet_score", "comet/cli/score.py", "explicit_replacement",
  "Unbabel/COMET comet/cli/score.py (comet-score CLI, Lightning predict)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('accelerator="auto",', "device_type", "replace", True, 'accelerator="npu",',
      "multi-device branch: Lightning's 'auto' accelerator only probes CUDA/MPS/TPU/HPU, so on an NPU host it "
      "would silently score on CPU processes; needs an NPU accelerator registered with Lightning"),
    C('accelerator="cpu" if cfg.gpus == 0 else "cuda",', "device_type", "replace", True,
      'accelerator="cpu" if cfg.gpus == 0 else "npu",',
      "'cuda' accelerator raises on a host without CUDA devices"),
])

E("comet_base", "comet/models/base.py", "explicit_replacement",
  "Unbabel/COMET comet/models/base.py (CometModel.predict builds a Lightning Trainer)", [
    C('accelerator: str = "auto",', "device_type", "replace", True, 'accelerator: str = "npu",',
      "default used by every Python-API caller (model.predict(...)); 'auto' never selects an NPU, so scoring "
      "would silently fall back to CPU"),
    C('strategy="auto" if gpus < 2 else "ddp",', "dist_backend", "replace", True,
      'strategy="auto" if gpus < 2 else DDPStrategy(process_group_backend="hccl"),',
      "Lightning picks nccl only for CUDA root devices and gloo otherwise; collectives on NPU tensors need hccl"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards an extra synchronize after all_gather; .tolist() syncs anyway, so leaving it only skips a no-op"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "never reached while the guard above is CUDA-only; ported for consistency"),
])

E("comet_train", "comet/cli/train.py", "explicit_replacement",
  "Unbabel/COMET comet/cli/train.py (comet-train, Trainer built from YAML)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; the NPU accelerator in configs/trainer.yaml needs the backend loaded"),
])

E("comet_mbr", "comet/cli/mbr.py", "explicit_replacement",
  "Unbabel/COMET comet/cli/mbr.py (comet-mbr minimum Bayes risk decoding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "frees the QE reranker's cached blocks; torch.cuda.empty_cache is a silent no-op without CUDA, memory-only"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "moves the metric to the accelerator; .cuda() raises on an NPU host"),
])

E("comet_xlmr", "comet/encoders/xlmr.py", "explicit_replacement",
  "Unbabel/COMET comet/encoders/xlmr.py (HF XLM-R encoder wrapper, device-agnostic)", [])

E("comet_trainer_yaml", "configs/trainer.yaml", "explicit_replacement",
  "Unbabel/COMET configs/trainer.yaml (Lightning Trainer init_args)", [
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
      "Lightning's gpu accelerator requires CUDA; training config must name the NPU accelerator"),
])

E("comet_pyproject", "pyproject.toml", "explicit_replacement",
  "Unbabel/COMET pyproject.toml (poetry dependencies)", [])

# --------------------------------------------------------------------------- TransQuest
E("tq_mono_run", "transquest/algo/sentence_level/monotransquest/run_model.py", "explicit_replacement",
  "TharinduDR/TransQuest monotransquest/run_model.py (simpletransformers-style trainer)", [
    C("torch.cuda.manual_seed_all(self.args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.args.manual_seed)",
      "CUDA seeding is lazy and harmless without CUDA; whether torch.manual_seed already seeds the NPU "
      "generator is unconfirmed, so ported for reproducibility"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "else use_cuda=True raises ValueError on an NPU host"),
    C('self.device = torch.device("cuda")', "device_type", "replace", True, 'self.device = torch.device("npu")',
      "default device"),
    C('self.device = torch.device(f"cuda:{cuda_device}")', "device_type", "replace", True,
      'self.device = torch.device(f"npu:{cuda_device}")', "explicit device index"),
    C("from torch.cuda import amp  # noqa: F401", "amp", "replace", False,
      "from torch_npu.npu import amp  # noqa: F401",
      "only probes that AMP exists (import succeeds on any torch); ported for consistency"),
    C("=model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "pass  # torch.nn.DataParallel is unsupported on Ascend NPU; run one process per NPU instead",
      "torch.nn.DataParallel is marked unsupported on Atlas A2 in Ascend's 2.7.1 API list; reached when n_gpu > 1"),
    C("=from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
      "the GradScaler/autocast used for fp16 training; torch.cuda.amp disables itself without CUDA, so fp16 "
      "would silently become fp32 (amp.GradScaler()/amp.autocast() lines then need no edit)"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "eval/predict forward under fp16; CUDA autocast is disabled on an NPU host"),
    C("model = torch.nn.DataParallel(model, device_ids=list(range(self.args.n_gpu)))", "distributed_framework",
      "replace", True, "pass  # torch.nn.DataParallel is unsupported on Ascend NPU; predict on one NPU",
      "prediction path, same DataParallel limitation"),
])

E("tq_mono_args", "transquest/algo/sentence_level/monotransquest/model_args.py", "explicit_replacement",
  "TharinduDR/TransQuest monotransquest/model_args.py (dataclass defaults: fp16, n_gpu)", [])

E("tq_siamese_run", "transquest/algo/sentence_level/siamesetransquest/run_model.py", "explicit_replacement",
  "TharinduDR/TransQuest siamesetransquest/run_model.py (sentence-transformers-style bi-encoder)", [
    C("torch.cuda.manual_seed_all(self.args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.args.manual_seed)", "reproducibility only; unconfirmed whether needed"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "otherwise the model silently runs on CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "multi-process encoding pool would silently start 4 CPU workers"),
    C('target_devices = ["cuda:{}".format(i) for i in range(torch.cuda.device_count())]', "device_type",
      "replace", True, 'target_devices = ["npu:{}".format(i) for i in range(torch.npu.device_count())]',
      "one worker per NPU"),
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch_npu.npu.amp import autocast",
      "use_amp=True would silently train in fp32"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA"),
])

E("tq_micro_run", "transquest/algo/word_level/microtransquest/run_model.py", "explicit_replacement",
  "TharinduDR/TransQuest microtransquest/run_model.py (word-level QE token classifier)", [
    C("torch.cuda.manual_seed_all(self.args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.args.manual_seed)", "reproducibility only; unconfirmed whether needed"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "else use_cuda=True raises ValueError"),
    C('self.device = torch.device("cuda" if cuda_device == -1 else f"cuda:{cuda_device}")', "device_type",
      "replace", True, 'self.device = torch.device("npu" if cuda_device == -1 else f"npu:{cuda_device}")',
      "device selection"),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "DataLoader pins only for CUDA by default; performance only (unconfirmed on NPU)"),
    C("=from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
      "GradScaler/autocast for fp16 training; CUDA amp silently disables itself on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory housekeeping between epochs; no-op without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.fp16):',
      "evaluation autocast would be disabled on NPU tensors"),
])

E("tq_example_ro_en", "examples/sentence_level/wmt_2020/ro_en/trans_quest.py", "explicit_replacement",
  "TharinduDR/TransQuest examples/sentence_level/wmt_2020/ro_en/trans_quest.py (n-fold training script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("USE_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "USE_CUDA = torch.npu.is_available()",
      "feeds use_cuda=...; stays False on an NPU host, so training silently runs on CPU"),
])

E("tq_example_config", "examples/sentence_level/wmt_2020/ro_en/transformer_config.py", "explicit_replacement",
  "TharinduDR/TransQuest examples/.../transformer_config.py (hyper-parameter dict)", [])

E("tq_word_example", "examples/word_level/wmt_2020/en_de/microtransquest.py", "explicit_replacement",
  "TharinduDR/TransQuest examples/word_level/wmt_2020/en_de/microtransquest.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=use_cuda=torch.cuda.is_available(), cuda_device=CUDA_DEVICE,", "torch_cuda_api", "replace", True,
      "use_cuda=torch.npu.is_available(), cuda_device=CUDA_DEVICE,", "silently CPU otherwise"),
    C("=use_cuda=torch.cuda.is_available(), cuda_device=CUDA_DEVICE)", "torch_cuda_api", "replace", True,
      "use_cuda=torch.npu.is_available(), cuda_device=CUDA_DEVICE)", "best-model reload, same"),
    C("cuda_device=CUDA_DEVICE, args=microtransquest_config)", "torch_cuda_api", "replace", True,
      "use_cuda=torch.npu.is_available(), cuda_device=CUDA_DEVICE, args=microtransquest_config)",
      "no-eval branch, same"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "between folds; memory-only"),
])

E("tq_requirements", "requirements.txt", "explicit_replacement",
  "TharinduDR/TransQuest requirements.txt", [])

# --------------------------------------------------------------------------- OpenKiwi
E("kiwi_train", "kiwi/lib/train.py", "explicit_replacement",
  "Unbabel/OpenKiwi kiwi/lib/train.py (pydantic configs + PyTorch Lightning 1.x Trainer)", [
    C("import pytorch_lightning as pl", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "training pipeline module: NPU backend must be loaded before the GPU validator and Trainer touch torch.npu"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "gpus == 0 branch only logs an info message"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "gpus = -1 / list would be silently reset to 0 (CPU)"),
    C("elif v > 0 and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "elif v > 0 and not torch.npu.is_available():", "gpus = N would be silently reset to 0 (CPU)"),
    C("gpus=config.trainer.gpus,", "device_type", "replace", True,
      "accelerator='npu', devices=config.trainer.gpus,",
      "Lightning's gpus= means CUDA devices; needs an NPU accelerator (and a Lightning version that accepts one)"),
    C("amp_backend='apex' if config.trainer.amp_level > 'O0' else 'native',", "amp", "replace", False,
      "amp_backend='native',",
      "NVIDIA apex amp is CUDA-only; Ascend ships a patched apex, but whether Lightning's apex path works with "
      "it is unconfirmed; native AMP is the safe choice"),
    C("distributed_backend='ddp' if", "dist_backend", "replace", True,
      "strategy=DDPStrategy(process_group_backend='hccl') if isinstance(config.trainer.gpus, list) and "
      "len(config.trainer.gpus) > 1 else None,",
      "multi-device DDP would initialise NCCL/gloo; NPU collectives need hccl"),
])

E("kiwi_predict", "kiwi/lib/predict.py", "explicit_replacement",
  "Unbabel/OpenKiwi kiwi/lib/predict.py (load_system / run)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = f'cuda:{gpu_id}'", "device_type", "replace", True, "device = f'npu:{gpu_id}'",
      "map_location and .to() target for load_system"),
    C("torch.cuda.set_device(config.gpu_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(config.gpu_id)", "raises without CUDA"),
    C("system.cuda(config.gpu_id)", "tensor_to_device", "replace", True, "system.npu(config.gpu_id)",
      "LightningModule.cuda raises without CUDA"),
])

E("kiwi_utils", "kiwi/lib/utils.py", "explicit_replacement",
  "Unbabel/OpenKiwi kiwi/lib/utils.py (configure_seed, load_torch_file)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy no-op without CUDA; NPU seeding for reproducibility (unconfirmed whether torch.manual_seed covers it)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same"),
])

E("kiwi_qe_system", "kiwi/systems/qe_system.py", "explicit_replacement",
  "Unbabel/OpenKiwi kiwi/systems/qe_system.py (QESystem LightningModule, dataloaders)", [
    C("=pin_memory=torch.cuda.is_initialized(),  # NOQA", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_initialized(),  # NOQA",
      "always False on an NPU host, so batches are not pinned; performance only"),
    C("pin_memory=torch.cuda.is_initialized(),  # NOQA: valid split", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_initialized(),  # NOQA: valid split", "performance only"),
    C("pin_memory=torch.cuda.is_initialized(),  # NOQA: inference", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_initialized(),  # NOQA: inference", "performance only"),
])

E("kiwi_config", "config/xlmroberta.yaml", "explicit_replacement",
  "Unbabel/OpenKiwi config/xlmroberta.yaml (training config: gpus, amp_level, precision)", [])

# --------------------------------------------------------------------------- Prism
E("prism_main", "prism.py", "explicit_replacement",
  "thompsonb/prism prism.py (fairseq multilingual NMT scorer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("self.use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.use_cuda = torch.npu.is_available()", "flag gates every device move; False on NPU means silent CPU"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "fairseq ensemble members"),
    C("batch['id'] = batch['id'].cuda()", "tensor_to_device", "replace", True, "batch['id'] = batch['id'].npu()",
      ".cuda() raises on an NPU host once use_cuda is true"),
    C("batch['net_input']['src_tokens'] = batch['net_input']['src_tokens'].cuda()", "tensor_to_device", "replace",
      True, "batch['net_input']['src_tokens'] = batch['net_input']['src_tokens'].npu()", "same"),
    C("batch['net_input']['src_lengths'] = batch['net_input']['src_lengths'].cuda()", "tensor_to_device",
      "replace", True, "batch['net_input']['src_lengths'] = batch['net_input']['src_lengths'].npu()", "same"),
    C("['prev_output_tokens'].cuda()", "tensor_to_device", "replace", True,
      "batch['net_input']['prev_output_tokens'] = batch['net_input']['prev_output_tokens'].npu()", "same"),
    C("batch['target'] = batch['target'].cuda()", "tensor_to_device", "replace", True,
      "batch['target'] = batch['target'].npu()", "same"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n_gpus = torch.npu.device_count()",
      "only feeds a debug log line"),
])

E("prism_env", "environment.yml", "explicit_replacement",
  "thompsonb/prism environment.yml (conda env with cudatoolkit)", [])

E("prism_sh", "scripts/score_wmt_systems.sh", "explicit_replacement",
  "thompsonb/prism-style WMT system scoring loop (shell launcher)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment, sourced before `set -u` (set_env.sh reads unset variables); not needed when the "
      "login shell already sources it"),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", True, "npu-smi info",
      "nvidia-smi is absent on an Ascend host and `set -e` aborts the script"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime; the chosen device would be silently ignored"),
])

# --------------------------------------------------------------------------- BLEURT (PyTorch port)
E("bleurt_score", "bleurt_pytorch/score_files.py", "explicit_replacement",
  "lucadiliello/bleurt-pytorch scoring CLI (mirrors google-research/bleurt score_files)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "module-level device global; otherwise silent CPU"),
    C('self.model = torch.compile(self.model, mode="reduce-overhead")', "compile_mode", "replace", False,
      'self.model = torch.compile(self.model, backend="npugraphs")',
      "reduce-overhead means CUDA graphs; Ascend lists npugraphs as the graph backend; optional flag, "
      "performance only, unconfirmed"),
    C('with torch.autocast("cuda", dtype=torch.float16, enabled=self.fp16):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=torch.float16, enabled=self.fp16):',
      "model is already .half() under --fp16, so a disabled CUDA autocast changes nothing numerically"),
    C('if DEVICE.type == "cuda":', "device_type", "replace", True, 'if DEVICE.type == "npu":',
      "else --fp16 is silently dropped and a misleading CPU warning printed"),
    C("torch.cuda.get_device_name(DEVICE)", "torch_cuda_api", "replace", True,
      'logger.info("Scoring on %s", torch.npu.get_device_name(DEVICE))', "CUDA query on an NPU device raises"),
    C("torch.cuda.reset_peak_memory_stats(DEVICE)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(DEVICE)", "--benchmark path"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "--benchmark timing events"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "--benchmark timing events"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "--benchmark path; raises without CUDA"),
    C("peak = torch.cuda.max_memory_allocated(DEVICE) / 2 ** 20", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(DEVICE) / 2 ** 20", "--benchmark path"),
])

E("bleurt_convert", "bleurt_pytorch/convert_tf_checkpoint.py", "explicit_replacement",
  "lucadiliello/bleurt-pytorch TF->PyTorch checkpoint converter (CPU only)", [])
