"""Labels for probe481 (grammatical error correction / text editing, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# 1. grammarly/gector (AllenNLP 0.8/0.9 seq2edit tagger)
# ---------------------------------------------------------------------------------------------
E("gector_train", "train.py", "explicit_replacement",
  "grammarly/gector train.py (AllenNLP Seq2Labels training entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; the port pins torch_npu 2.1.x (no torch_npu exists for the pinned torch 1.10) where "
      "import torch_npu is mandatory before torch.npu.* exists (autoload only from 2.5.1)"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "model placement; unchanged the model silently stays on the CPU"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "only feeds Trainer(cuda_device=...); after the trainer port (super(...,-1) + own NPU batch move) the value "
      "no longer selects a device, so leaving it is harmless; ported for consistency"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if torch.npu.device_count() > 1:",
      "dead after the trainer port (multi-device DataParallel-style path is disabled there); consistency only"),
    C("cuda_device = list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "cuda_device = list(range(torch.npu.device_count()))", "same as above; consistency only"),
    C("model.load_state_dict(torch.load(os.path.join(args.pretrain_folder, args.pretrain + '.th')))",
      "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(os.path.join(args.pretrain_folder, args.pretrain + '.th'), map_location='cpu'))",
      "stage-2/3 fine-tuning restores a checkpoint written from CUDA tensors; without map_location torch.load "
      "tries to deserialize onto CUDA and fails on an NPU host"),
])

E("gector_trainer", "gector/trainer.py", "explicit_replacement",
  "grammarly/gector gector/trainer.py (tweaked copy of AllenNLP Trainer)", [
    C("super().__init__(serialization_dir, cuda_device)", "device_capability_check", "replace", True,
      "super().__init__(serialization_dir, -1)  # allennlp check_for_gpu() only knows CUDA; NPU placement handled below",
      "AllenNLP TrainerBase runs check_for_gpu(cuda_device) which raises ConfigurationError when "
      "torch.cuda.device_count()==0; passing -1 also disables the replicate/parallel_apply multi-GPU path"),
    C("batch = nn_util.move_to_device(batch, self._cuda_devices[0])", "tensor_to_device", "replace", True,
      "batch = move_to_npu(batch, next(self.model.parameters()).device)  # allennlp move_to_device() calls .cuda(int)",
      "allennlp.nn.util.move_to_device uses .cuda(device_id); with -1 it is a no-op and the batch would stay on "
      "the CPU while the model is on the NPU"),
    C("print(f'Before forward pass - Cuda memory allocated: {torch.cuda.memory_allocated() / 1e9}')",
      "torch_cuda_api", "replace", False,
      "print(f'Before forward pass - NPU memory allocated: {torch.npu.memory_allocated() / 1e9}')",
      "diagnostic only (--cuda_verbose_steps); torch.cuda.memory_allocated() returns 0 without CUDA init"),
    C("print(f'Before forward pass - Cuda memory cached: {torch.cuda.memory_cached() / 1e9}')",
      "torch_cuda_api", "replace", False,
      "print(f'Before forward pass - NPU memory cached: {torch.npu.memory_reserved() / 1e9}')",
      "diagnostic only; reports 0 unported"),
    C("print(f'After backprop - Cuda memory allocated: {torch.cuda.memory_allocated() / 1e9}')",
      "torch_cuda_api", "replace", False,
      "print(f'After backprop - NPU memory allocated: {torch.npu.memory_allocated() / 1e9}')",
      "diagnostic only"),
    C("print(f'After backprop - Cuda memory cached: {torch.cuda.memory_cached() / 1e9}')",
      "torch_cuda_api", "replace", False,
      "print(f'After backprop - NPU memory cached: {torch.npu.memory_reserved() / 1e9}')",
      "diagnostic only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "per-step cache flush; torch.cuda.empty_cache() is a silent no-op when CUDA is not initialised; "
      "memory behaviour only"),
])

E("gector_gec_model", "gector/gec_model.py", "explicit_replacement",
  "grammarly/gector gector/gec_model.py (GecBERTModel inference wrapper)", [
    C('self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "models are built .to(self.device); unchanged, inference silently runs on the CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "unported the else-branch (map_location=cpu) is taken and still works, so not required on its own; "
      "ported mechanically, which is what makes the next line required"),
    C("model.load_state_dict(torch.load(model_path), strict=False)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(model_path, map_location=self.device), strict=False)",
      "released GECToR .th weights were saved from CUDA tensors; torch.load without map_location fails on NPU"),
    C("batch = util.move_to_device(batch.as_tensor_dict(), 0 if torch.cuda.is_available() else -1)",
      "tensor_to_device", "replace", True,
      "batch = move_to_npu(batch.as_tensor_dict(), self.device)  # allennlp move_to_device() is CUDA-only",
      "allennlp move_to_device(int) calls .cuda(); with -1 the batch stays on CPU while the model is on NPU"),
])

E("gector_predict", "predict.py", "explicit_replacement",
  "grammarly/gector predict.py (CLI around GecBERTModel.handle_batch)", [
    C("=import argparse", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the inference entry point never imports torch itself; torch_npu must be imported before gec_model uses "
      "torch.npu.* (torch_npu 2.1.x era, no autoload)"),
])

E("gector_requirements", "requirements.txt", "explicit_replacement",
  "grammarly/gector requirements.txt", [
    C("torch==1.10.0", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu wheel exists for torch 1.10 (matrix has 1.8.1, 1.11.0, 2.1.0, ...); allennlp 0.8.4 accepts torch>=0.4.1"),
    C("allennlp==0.8.4", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the Ascend adapter must be installed next to the CPU torch wheel (2.1.0.post10 pairs with CANN 8.0.0)"),
])

# ---------------------------------------------------------------------------------------------
# 2. gotutiyan/gector (HF transformers re-implementation)
# ---------------------------------------------------------------------------------------------
E("gectorhf_train", "train.py", "explicit_replacement",
  "gotutiyan/gector train.py (HF GECToR re-implementation; torchrun DDP + AMP variant)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; explicit import so torch.npu / torch_npu.optim exist regardless of autoload"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "reproducibility only; torch.manual_seed(seed) on the line above also seeds accelerator generators in recent "
      "torch (unconfirmed for PrivateUse1 in the knowledge base)"),
    C("return torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "return torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "single-process path; unchanged, the batches go to the CPU while the model is moved to the NPU"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "torch.cuda.set_device lazily initialises CUDA and raises on a CPU torch build"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL is not available on Ascend; HCCL"),
    C("return torch.device('cuda', args.local_rank)", "device_type", "replace", True,
      "return torch.device('npu', args.local_rank)", "per-rank device for batches"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "unported, CUDA autocast does nothing for NPU tensors: training runs in fp32 (correct, slower, more memory); "
      "performance-only"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.amp):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=args.amp):",
      "validation autocast; fp32 if unported; performance-only"),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "DataLoader pins only for CUDA when pin_memory_device is empty, so pinning silently turns off; performance "
      "only (and some torch_npu versions had pin_memory problems per the seed article)"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "Module.cuda() raises on a CPU torch build"),
    C("optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, fused=torch.cuda.is_available())",
      "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr)",
      "unported fused=False on NPU (plain AdamW works); NpuFusedAdamW is a performance swap"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "with autocast ported to NPU fp16, the CUDA GradScaler disables itself when CUDA is unavailable ('Disabling' "
      "warning), so fp16 gradients are no longer loss-scaled and can underflow"),
    C("print(f'max memory: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB')", "torch_cuda_api", "replace",
      False, "print(f'max memory: {torch.npu.max_memory_allocated() / 2 ** 30:.2f} GiB')",
      "logging only; returns 0 without CUDA init"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "unlike the stats getters this resolves the current CUDA device (lazy init) and raises on a CPU torch build"),
])

E("gectorhf_modeling", "gector/modeling.py", "explicit_replacement",
  "gotutiyan/gector gector/modeling.py (GECToR PreTrainedModel)", [])

E("gectorhf_predict", "gector/predict.py", "explicit_replacement",
  "gotutiyan/gector gector/predict.py (iterative tag-and-edit inference)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "with the CLI putting the model on the NPU, an unported check leaves the batch on the CPU -> device mismatch"),
    C("batch = {k: v.cuda() for k, v in batch.items()}", "tensor_to_device", "replace", True,
      "batch = {k: v.npu() for k, v in batch.items()}", "Tensor.cuda() raises on a CPU torch build"),
])

E("gectorhf_predict_cli", "predict.py", "explicit_replacement",
  "gotutiyan/gector predict.py (CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "inference entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unported the model stays on the CPU while gector/predict.py (ported) moves batches to the NPU"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
])

E("gectorhf_launch", "scripts/train_bert.sh", "explicit_replacement",
  "gotutiyan/gector-style two-stage torchrun launcher", [
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1,2,3}",
      "the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so the user's card selection is silently lost"),
    C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "device_capability_check", "replace", True,
      "NUM_GPUS=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "nvidia-smi is absent on Ascend hosts; under set -euo pipefail the script aborts here"),
    C("MODEL_ID=${MODEL_ID:-bert-base-cased}", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be loaded before the device-count probe and "
      "before torch_npu is imported by train.py"),
])

# ---------------------------------------------------------------------------------------------
# 3. HillZhang1999/MuCGEC (Chinese GEC: BART seq2seq, GECToR seq2edit, ChERRANT scorer)
# ---------------------------------------------------------------------------------------------
E("mucgec_s2s_train", "models/seq2seq-based-CGEC/train.py", "explicit_replacement",
  "HillZhang1999/MuCGEC models/seq2seq-based-CGEC/train.py (BART-large-chinese, HF Seq2SeqTrainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "this script calls torch.npu.* (set_seed, set_device) before transformers gets a chance to import torch_npu"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "seeding only; Seq2SeqTrainingArguments(seed=...) re-seeds all devices through transformers.set_seed"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant with the Trainer's own set_seed"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises on a CPU torch build (torch.distributed.launch path)"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n_gpu = torch.npu.device_count()",
      "only logged"),
])

E("mucgec_s2s_predict", "models/seq2seq-based-CGEC/predict.py", "explicit_replacement",
  "HillZhang1999/MuCGEC models/seq2seq-based-CGEC/predict.py (beam-search decoding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu card selection would be silently ignored (set before the first NPU call; torch_npu inits lazily - "
      "ordering relative to import torch_npu unconfirmed)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "unchanged, decoding silently runs on the CPU"),
    C("batch = {k: v.cuda() for k, v in batch.items()}", "tensor_to_device", "replace", True,
      "batch = {k: v.to(device) for k, v in batch.items()}", "Tensor.cuda() raises on a CPU torch build"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA init; memory housekeeping only"),
])

E("mucgec_s2s_pipeline", "models/seq2seq-based-CGEC/pipeline.sh", "explicit_replacement",
  "HillZhang1999/MuCGEC models/seq2seq-based-CGEC/pipeline.sh", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, "load CANN before any python step"),
    C("CUDA_VISIBLE_DEVICES=$CUDA_DEVICE nohup python -m torch.distributed.launch", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$CUDA_DEVICE nohup python -m torch.distributed.launch --nproc_per_node $NPROC --master_port 29513 -u train.py \\",
      "device selection/isolation for the 4-process job is silently lost otherwise"),
])

E("mucgec_s2e_gec_model", "models/seq2edit-based-CGEC/gector/gec_model.py", "explicit_replacement",
  "HillZhang1999/MuCGEC models/seq2edit-based-CGEC/gector/gec_model.py (Chinese GECToR fork)", [
    C('self.device = torch.device("cuda:" + str(cuda_device)', "device_type", "replace", True,
      'self.device = torch.device("npu:" + str(cuda_device)', "device string"),
    C("if int(cuda_device) >= 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "if int(cuda_device) >= 0 and torch.npu.is_available()",
      "unchanged, self.device falls back to CPU and inference silently runs there"),
    C("batch = util.move_to_device(batch.as_tensor_dict(), self.cuda_device if torch.cuda.is_available() else -1)",
      "tensor_to_device", "replace", True,
      "batch = move_to_npu(batch.as_tensor_dict(), self.device)  # allennlp move_to_device() is CUDA-only",
      "allennlp move_to_device(int) calls .cuda(); -1 leaves the batch on CPU"),
])

E("mucgec_s2e_pipeline", "models/seq2edit-based-CGEC/pipeline.sh", "explicit_replacement",
  "HillZhang1999/MuCGEC models/seq2edit-based-CGEC/pipeline.sh", [
    C("=# Step 1. Data preprocessing", "env_var", "npu_only_addition", True, SET_ENV, "load CANN first"),
    C("CUDA_VISIBLE_DEVICES=$CUDA_DEVICE python train.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$CUDA_DEVICE python train.py --tune_bert 1 \\", "card selection"),
    C("CUDA_VISIBLE_DEVICES=$CUDA_DEVICE python predict.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$CUDA_DEVICE python predict.py --model_path $MODEL_PATH \\", "card selection"),
])

E("mucgec_cherrant_p2m", "scorers/ChERRANT/parallel_to_m2.py", "explicit_replacement",
  "HillZhang1999/MuCGEC scorers/ChERRANT/parallel_to_m2.py (CPU scorer)", [])

E("mucgec_cherrant_tokenizer", "scorers/ChERRANT/modules/tokenizer.py", "explicit_replacement",
  "HillZhang1999/MuCGEC scorers/ChERRANT/modules/tokenizer.py (LTP word segmentation)", [])

E("mucgec_requirements", "requirements.txt", "explicit_replacement",
  "HillZhang1999/MuCGEC requirements.txt", [
    C("# CUDA 11.1 build of PyTorch", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "Ascend adapter wheel, inserted next to the torch pin block"),
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 Ascend hosts take the CPU torch wheel from the cpu index (aarch64 uses plain PyPI); the old find-links "
      "page still resolves torch==2.1.0, so not strictly required"),
    C("torch==1.9.0+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
      "a +cu111 CUDA build cannot be paired with torch_npu (no 1.9 adapter at all)"),
    C("transformers==4.4.2", "distributed_framework", "replace", True, "transformers==4.32.0",
      "transformers only knows the NPU from 4.32.0 (is_torch_npu_available); 4.4.2's Trainer picks cuda-or-cpu and "
      "NCCL, so BART training would silently run on the CPU or fail in DDP init"),
])

# ---------------------------------------------------------------------------------------------
# 4. zhawe01/fairseq-gec (copy-augmented transformer on fairseq 0.6)
# ---------------------------------------------------------------------------------------------
E("fseq_train", "train.py", "explicit_replacement",
  "zhawe01/fairseq-gec train.py (fairseq 0.6 trainer entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script (torch 1.x era)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "unchanged it raises NotImplementedError('Training on CPU is not supported') on every NPU host"),
    C("torch.cuda.set_device(args.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.device_id)", "raises on a CPU torch build; also picks the rank's card"),
])

E("fseq_trainer", "fairseq/trainer.py", "explicit_replacement",
  "zhawe01/fairseq-gec fairseq/trainer.py (fairseq 0.6 Trainer)", [
    C("self.cuda = torch.cuda.is_available() and not args.cpu", "torch_cuda_api", "replace", True,
      "self.cuda = torch.npu.is_available() and not args.cpu",
      "the attribute name stays; unchanged, model and samples silently stay on the CPU (and HCCL gets CPU tensors)"),
    C("self.criterion = self.criterion.cuda()", "tensor_to_device", "replace", False,
      "self.criterion = self.criterion.npu()",
      "label_smoothed_cross_entropy has no parameters or buffers, so Module.cuda() touches no tensor and does not "
      "raise; ported for hygiene (would be required for a criterion with buffers)"),
    C("self._model = self._model.cuda()", "tensor_to_device", "replace", True, "self._model = self._model.npu()",
      "Module.cuda() raises on a CPU torch build"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", "replace", True,
      "if False:  # CUDA compute-capability hint; torch.npu.get_device_capability() returns None",
      "with self.cuda now True, torch.cuda.get_device_capability lazily initialises CUDA and raises"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", "replace", True,
      "if False:  # CUDA compute-capability hint dropped on Ascend", "same, fp32 branch"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "OOM-retry housekeeping; silent no-op unported"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "per-update reseed for resumable dropout; lazily queued (no error) unported; reproducibility only"),
])

E("fseq_options", "fairseq/options.py", "explicit_replacement",
  "zhawe01/fairseq-gec fairseq/options.py (fairseq 0.6 argument parser)", [
    C("default=max(1, torch.cuda.device_count()),", "torch_cuda_api", "replace", True,
      "default=max(1, torch.npu.device_count()),",
      "train.sh relies on the default world size; unported it is 1, so the job silently trains on one card with a "
      "4x smaller effective batch (max_tokens x update_freq x world_size) than the recipe"),
    C("group.add_argument('--distributed-backend', default='nccl', type=str,", "dist_backend", "replace", True,
      "group.add_argument('--distributed-backend', default='hccl', type=str,",
      "distributed_utils.distributed_init passes this straight to init_process_group"),
])

E("fseq_dist_utils", "fairseq/distributed_utils.py", "explicit_replacement",
  "zhawe01/fairseq-gec fairseq/distributed_utils.py (fairseq 0.6)", [
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", "replace", True,
      "all_gather_list._buffer = torch.npu.ByteTensor(buffer_size)",
      "the pickled-logging all_reduce buffer must live on the NPU for HCCL; torch.cuda.ByteTensor raises"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", "replace", False,
      "all_gather_list._cpu_buffer = torch.ByteTensor(max_size)",
      "pinning a 16 KB staging buffer is perf-only; whether Tensor.pin_memory() without a device works on a "
      "torch_npu host is unconfirmed, so the porter drops it"),
])

E("fseq_utils", "fairseq/utils.py", "explicit_replacement",
  "zhawe01/fairseq-gec fairseq/utils.py (fairseq 0.6 helpers)", [
    C("return maybe_tensor.cuda()", "tensor_to_device", "replace", True, "return maybe_tensor.npu()",
      "move_to_cuda() keeps its name (callers unchanged) but must move to the NPU"),
])

E("fseq_interactive", "interactive.py", "explicit_replacement",
  "zhawe01/fairseq-gec interactive.py (n-best generation for CoNLL-14/BEA-19)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("use_cuda = torch.cuda.is_available() and not args.cpu", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available() and not args.cpu", "unchanged, generation silently runs on the CPU"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
    C("tokens = tokens.cuda()", "tensor_to_device", "replace", True, "tokens = tokens.npu()", "input placement"),
    C("lengths = lengths.cuda()", "tensor_to_device", "replace", True, "lengths = lengths.npu()", "input placement"),
])

E("fseq_copy_transformer", "fairseq/models/copy_augmented_transformer.py", "explicit_replacement",
  "zhawe01/fairseq-gec fairseq/models/copy_augmented_transformer.py", [])

E("fseq_train_sh", "train.sh", "explicit_replacement",
  "zhawe01/fairseq-gec train.sh (fine-tuning + generation launcher)", [
    C("source ./config.sh", "env_var", "npu_only_addition", True, SET_ENV, "load CANN next to the project config"),
    C("CUDA_VISIBLE_DEVICES=$device python train.py $DATA_BIN \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$device python train.py $DATA_BIN \\", "card selection for the 4-card run"),
    C("CUDA_VISIBLE_DEVICES=0 python interactive.py $DATA_BIN \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python interactive.py $DATA_BIN \\", "single-card generation"),
])

# ---------------------------------------------------------------------------------------------
# 5. facebookresearch/fairseq Levenshtein transformer (edit-based NAT) + libnat CUDA extension
# ---------------------------------------------------------------------------------------------
E("fseqlev_setup", "setup.py", "explicit_replacement",
  "facebookresearch/fairseq setup.py (libnat / libnat_cuda extensions)", [])

E("fseqlev_edit_dist_cu", "fairseq/clib/libnat_cuda/edit_dist.cu", "explicit_replacement",
  "facebookresearch/fairseq fairseq/clib/libnat_cuda/edit_dist.cu (Levenshtein edit-path kernels)", [])

E("fseqlev_utils", "fairseq/models/nat/levenshtein_utils.py", "explicit_replacement",
  "facebookresearch/fairseq fairseq/models/nat/levenshtein_utils.py (insertion/deletion targets)", [])

E("fseqlev_adam", "fairseq/optim/adam.py", "explicit_replacement",
  "facebookresearch/fairseq fairseq/optim/adam.py (FairseqAdam with apex/FusedAdam dispatch)", [
    C("elif use_fused_adam:", "fused_optimizer", "add_branch", False,
      "elif torch.npu.is_available() and not self.cfg.fp16_adam_stats:  self._optimizer = torch_npu.optim.NpuFusedAdamW(params, **self.optimizer_config)",
      "on NPU use_fused_adam is False (no apex FusedAdam) and fairseq's own Adam works; the NpuFusedAdamW branch "
      "(FairseqAdam is AdamW-style decay) is a performance addition only"),
])

# ---------------------------------------------------------------------------------------------
# 6. chrisjbryant/errant (CPU-only annotation / scoring)
# ---------------------------------------------------------------------------------------------
E("errant_init", "errant/__init__.py", "explicit_replacement",
  "chrisjbryant/errant errant/__init__.py (spaCy-based loader)", [])

E("errant_parallel", "errant/commands/parallel_to_m2.py", "explicit_replacement",
  "chrisjbryant/errant errant/commands/parallel_to_m2.py", [])
