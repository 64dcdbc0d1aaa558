"""Labels for probe420 (information extraction: OneIE, PURE, W2NER, UIE, DyGIE++).

One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu, written as
an explicit port (torch.npu.*, 'npu', ASCEND_RT_VISIBLE_DEVICES, no transfer_to_npu).
`required` = with every other labelled line already ported, would leaving this line unchanged
fail, compute something wrong or silently do the wrong thing on an NPU host?
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------
# OneIE (blender.cs.illinois.edu/software/oneie): use_gpu/gpu_device config, .cuda(device=...),
# legacy torch.cuda.LongTensor/FloatTensor constructors in collate_fn and in the model.
# ----------------------------------------------------------------------------------------------

E("oneie_train", "train.py", "explicit_replacement",
  "OneIE train.py (config-driven single-GPU training loop, gpu_device from JSON config)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point; torch.npu.* and .npu() used below need torch_npu imported (torch < 2.5.1 has no autoload)."),
    C("torch.cuda.set_device(config.gpu_device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(config.gpu_device)",
      "torch.cuda.set_device on a host without CUDA raises; selects the configured NPU instead."),
    C("model.cuda(device=config.gpu_device)", "tensor_to_device", "replace", True,
      "model.npu(device=config.gpu_device)",
      "Module placement; collate_fn already builds NPU tensors, the model must live on the same device."),
])

E("oneie_predict", "predict.py", "explicit_replacement",
  "OneIE predict.py (document-level inference over txt/ltf/json inputs, --gpu/--device flags)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Second entry point (run directly); needs torch_npu for torch.npu.set_device/.npu()."),
    C("map_location = 'cuda:{}'.format(device) if gpu else 'cpu'", "device_type", "replace", True,
      "map_location = 'npu:{}'.format(device) if gpu else 'cpu'",
      "torch.load(map_location='cuda:N') fails when CUDA is unavailable; load straight onto the NPU."),
    C("        model.cuda(device)", "tensor_to_device", "replace", True,
      "        model.npu(device)",
      "Model placement for inference."),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)",
      "Device selection for --device; raises without CUDA."),
])

E("oneie_model", "model.py", "explicit_replacement",
  "OneIE model.py (BERT encoder + CRF taggers + span/edge classifiers + global features)", [
    C("entity_idxs = torch.cuda.LongTensor(entity_idxs)", "tensor_to_device", "replace", True,
      "entity_idxs = torch.npu.LongTensor(entity_idxs)",
      "Legacy typed CUDA constructor; index tensor must be on the NPU for torch.gather with bert_outputs."),
    C("trigger_idxs = torch.cuda.LongTensor(trigger_idxs)", "tensor_to_device", "replace", True,
      "trigger_idxs = torch.npu.LongTensor(trigger_idxs)",
      "Same as entity_idxs."),
    C("entity_masks = torch.cuda.FloatTensor(entity_masks)", "tensor_to_device", "replace", True,
      "entity_masks = torch.npu.FloatTensor(entity_masks)",
      "Mask multiplied with NPU span embeddings."),
    C("trigger_masks = torch.cuda.FloatTensor(trigger_masks)", "tensor_to_device", "replace", True,
      "trigger_masks = torch.npu.FloatTensor(trigger_masks)",
      "Mask multiplied with NPU trigger embeddings."),
    C("label_idxs = [torch.cuda.LongTensor(idx) for idx in label_idxs]", "tensor_to_device", "replace", True,
      "label_idxs = [torch.npu.LongTensor(idx) for idx in label_idxs]",
      "Gold label indices for global-feature scoring (training path)."),
    C("global_vectors = torch.cuda.FloatTensor(global_vectors)", "tensor_to_device", "replace", True,
      "global_vectors = torch.npu.FloatTensor(global_vectors)",
      "Global feature vectors multiplied with an NPU parameter."),
])

E("oneie_data", "data.py", "explicit_replacement",
  "OneIE data.py (IEDataset / IEDatasetEval with GPU-aware collate_fn)", [
    C("batch_piece_idxs = torch.cuda.LongTensor(batch_piece_idxs)", "tensor_to_device", "replace", True,
      "batch_piece_idxs = torch.npu.LongTensor(batch_piece_idxs)",
      "collate_fn builds batches directly on the accelerator when gpu=True."),
    C("batch_attention_masks = torch.cuda.FloatTensor(", "tensor_to_device", "replace", True,
      "batch_attention_masks = torch.npu.FloatTensor(",
      "Attention mask fed to BERT on the NPU."),
    C("batch_entity_labels = torch.cuda.LongTensor(batch_entity_labels)", "tensor_to_device", "replace", True,
      "batch_entity_labels = torch.npu.LongTensor(batch_entity_labels)", "CRF gold labels."),
    C("batch_trigger_labels = torch.cuda.LongTensor(batch_trigger_labels)", "tensor_to_device", "replace", True,
      "batch_trigger_labels = torch.npu.LongTensor(batch_trigger_labels)", "CRF gold labels."),
    C("batch_entity_types = torch.cuda.LongTensor(batch_entity_types)", "tensor_to_device", "replace", True,
      "batch_entity_types = torch.npu.LongTensor(batch_entity_types)", "Classifier targets."),
    C("batch_mention_types = torch.cuda.LongTensor(batch_mention_types)", "tensor_to_device", "replace", True,
      "batch_mention_types = torch.npu.LongTensor(batch_mention_types)", "Classifier targets."),
    C("batch_event_types = torch.cuda.LongTensor(batch_event_types)", "tensor_to_device", "replace", True,
      "batch_event_types = torch.npu.LongTensor(batch_event_types)", "Classifier targets."),
    C("batch_relation_types = torch.cuda.LongTensor(batch_relation_types)", "tensor_to_device", "replace", True,
      "batch_relation_types = torch.npu.LongTensor(batch_relation_types)", "Classifier targets."),
    C("batch_role_types = torch.cuda.LongTensor(batch_role_types)", "tensor_to_device", "replace", True,
      "batch_role_types = torch.npu.LongTensor(batch_role_types)", "Classifier targets."),
    C("token_nums = torch.cuda.LongTensor(token_nums)", "tensor_to_device", "replace", True,
      "token_nums = torch.npu.LongTensor(token_nums)",
      "Sequence lengths used by the CRF on the NPU."),
    C("tensor_type = torch.cuda if self.gpu else torch", "tensor_to_device", "replace", True,
      "tensor_type = torch.npu if self.gpu else torch",
      "Module alias: the three tensor_type.*Tensor(...) calls below stay unchanged and follow this line."),
])

E("oneie_config", "config.py", "explicit_replacement",
  "OneIE config.py (Config object with use_gpu / gpu_device keys)", [])

E("oneie_example_config", "config/example.json", "explicit_replacement",
  "OneIE config/example.json (ACE05-E+ training config)", [])

# ----------------------------------------------------------------------------------------------
# PURE (princeton-nlp/PURE): span-based entity model with move_model_to_cuda(), DataParallel,
# SpanBERT-style relation script with device/n_gpu globals; allennlp 0.9 helpers.
# ----------------------------------------------------------------------------------------------

E("pure_run_entity", "run_entity.py", "explicit_replacement",
  "PURE run_entity.py (span NER training / prediction driver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point; entity/models.py calls torch.npu.is_available() and .npu()."),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "    if torch.npu.is_available():",
      "Seeding guard; torch.manual_seed already seeds the NPU generator via the PrivateUse1 hook "
      "(unconfirmed in knowledge), so only determinism bookkeeping."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "Lazy CUDA seeding is a no-op on an NPU host; redundant with torch.manual_seed (unconfirmed)."),
])

E("pure_entity_models", "entity/models.py", "explicit_replacement",
  "PURE entity/models.py (BertForEntity span classifier + EntityModel wrapper)", [
    C("from allennlp.nn.util import batched_index_select", "unsupported_op_workaround", "replace", True,
      "from entity.utils import batched_index_select  # device-agnostic copy: offsets via torch.arange(device=target.device)",
      "allennlp's batched_index_select builds its batch offsets with get_range_vector(get_device_of(x)); "
      "get_device_of() checks is_cuda, returns -1 for NPU tensors, so the offsets are made on the CPU "
      "and the add with NPU indices fails. Needs a device-agnostic replacement."),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "Unported, the wrapper exits(-1) on every NPU host."),
    C("self._model_device = 'cuda'", "device_type", "replace", True,
      "self._model_device = 'npu'",
      "All batches are moved with .to(self._model_device)."),
    C("self.bert_model.cuda()", "tensor_to_device", "replace", True,
      "self.bert_model.npu()",
      "Model placement."),
    C("logger.info('# GPUs = %d' % (torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "logger.info('# NPUs = %d' % (torch.npu.device_count()))",
      "Log only (reports 0 if left)."),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if torch.npu.device_count() > 1:",
      "Left as-is it returns 0 on an NPU host and simply skips DataParallel, which is harmless."),
    C("self.bert_model = torch.nn.DataParallel(self.bert_model)", "unsupported_op_workaround", "replace", True,
      "logger.warning('nn.DataParallel is not supported on NPU; running on a single NPU')",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's 2.7.1 API list; once the device "
      "count above counts NPUs this branch is taken on multi-card hosts."),
])

E("pure_entity_utils", "entity/utils.py", "explicit_replacement",
  "PURE entity/utils.py (batchify, convert_dataset_to_samples, NpEncoder)", [])

E("pure_run_relation", "run_relation.py", "explicit_replacement",
  "PURE run_relation.py (SpanBERT run_tacred-style relation classifier with device / n_gpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point; torch.npu.is_available()/device_count() below need torch_npu."),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")',
      "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "Unported, it silently trains on the CPU on an NPU host."),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "n_gpu = torch.npu.device_count()",
      "Only feeds logging, seeding and the DataParallel branch; 0 on an NPU host is harmless."),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "Redundant with torch.manual_seed in setseed (unconfirmed); no-op on an NPU host."),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "logger.warning('nn.DataParallel is not supported on NPU; training on %s only', device)",
      "nn.DataParallel is unsupported on NPU (Ascend 2.7.1 list); with n_gpu counting NPUs it is entered on "
      "multi-card hosts. Use a single card or move to DDP with hccl."),
])

E("pure_relation_models", "relation/models.py", "explicit_replacement",
  "PURE relation/models.py (BertForRelation / AlbertForRelation / approx variant)", [])

E("pure_requirements", "requirements.txt", "explicit_replacement",
  "PURE requirements.txt", [
    C("=torch==1.4.0", "import_torch_npu", "replace", True,
      "torch==2.1.0",
      "No torch_npu build exists for torch 1.4.0 (oldest pairs are 1.5.0/1.8.1); pin a torch that has a "
      "torch_npu wheel (2.1.0 <-> torch-npu 2.1.0.postN)."),
    C("=transformers==3.0.2", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10",
      "The Ascend adapter itself; wheel version must match the torch pin (x.y.z[.postN])."),
])

# ----------------------------------------------------------------------------------------------
# W2NER (ljynlp/W2NER): --device + torch.cuda.set_device, data.cuda() list comprehensions,
# model.cuda(), one-dataset-per-GPU launcher with CUDA_VISIBLE_DEVICES and nvidia-smi.
# ----------------------------------------------------------------------------------------------

E("w2ner_main", "main.py", "explicit_replacement",
  "W2NER main.py (Trainer class with train/eval/predict loops, argparse overrides)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point; torch.npu.set_device and Tensor.npu() need torch_npu."),
    C("data_batch = [data.cuda() for data in data_batch[:-1]]", "tensor_to_device", "replace", True,
      "data_batch = [data.npu() for data in data_batch[:-1]]",
      "Training batch placement."),
    C("data_batch = [x.cuda() for x in data_batch[:-1]]", "tensor_to_device", "replace", True,
      "data_batch = [x.npu() for x in data_batch[:-1]]",
      "Evaluation batch placement."),
    C("data_batch = [d.cuda() for d in data_batch[:-1]]", "tensor_to_device", "replace", True,
      "data_batch = [d.npu() for d in data_batch[:-1]]",
      "Prediction batch placement."),
    C("self.model.load_state_dict(torch.load(path))", "device_type", "replace", False,
      "self.model.load_state_dict(torch.load(path, map_location='npu'))",
      "Checkpoints written by the ported run hold NPU tensors and load fine; only a checkpoint trained on a GPU "
      "would fail to deserialize without map_location."),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "    if torch.npu.is_available():",
      "Unported, set_device is skipped and --device N silently lands on NPU 0."),
    C("torch.cuda.set_device(args.device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.device)",
      "Device selection."),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      "Model placement."),
])

E("w2ner_model", "model.py", "explicit_replacement",
  "W2NER model.py (conditional LayerNorm, dilated conv, biaffine + MLP co-predictor)", [])

E("w2ner_data_loader", "data_loader.py", "explicit_replacement",
  "W2NER data_loader.py (word-pair grid construction, collate_fn)", [])

E("w2ner_conll03", "config/conll03.json", "explicit_replacement",
  "W2NER config/conll03.json", [])

E("w2ner_run_all", "scripts/run_all.sh", "explicit_replacement",
  "W2NER-style multi-dataset launcher (one job per card, nohup, nvidia-smi summary)", [
    C("=set -e", "env_var", "npu_only_addition", True,
      SET_ENV,
      "CANN runtime environment (library paths, ASCEND_* vars) for the nohup'd python jobs; non-interactive "
      "shells do not read the login profile."),
    C("CUDA_VISIBLE_DEVICES=${gpu} nohup python main.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} nohup python main.py \\",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every job would see all NPUs and --device 0 "
      "would put all eight jobs on NPU 0."),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv", "device_capability_check",
      "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on an NPU host; under set -e the script aborts before the F1 summary."),
])

# ----------------------------------------------------------------------------------------------
# UIE (universal-ie/UIE): HF Seq2SeqTrainer subclass (torch.cuda.amp autocast copied from HF 4.x),
# bash launchers with CUDA_VISIBLE_DEVICES / nvidia-smi / torch.distributed.launch, predictor .cuda().
# ----------------------------------------------------------------------------------------------

E("uie_finetune", "run_uie_finetune.py", "explicit_replacement",
  "UIE run_uie_finetune.py (HfArgumentParser + ConstraintSeq2SeqTrainer fine-tuning driver)", [
    C("=import transformers", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "Device handling is inside the HF Trainer; transformers >= 4.32 imports torch_npu itself in "
      "is_torch_npu_available(), so the explicit import is belt-and-braces."),
])

E("uie_constrained_trainer", "uie/seq2seq/constrained_seq2seq.py", "explicit_replacement",
  "UIE uie/seq2seq/constrained_seq2seq.py (Seq2SeqTrainer subclass with constrained decoding, OOM skip)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", False,
      "from torch.npu.amp import autocast",
      "torch.cuda.amp.autocast on an NPU host only warns and disables itself, so --fp16 forward passes here "
      "silently run in fp32: a performance/memory loss, not a failure."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "OOM-skip path: the CUDA call is a no-op without CUDA; the NPU caching allocator keeps its blocks but "
      "they stay reusable, so this is robustness, not correctness."),
])

E("uie_inference", "inference.py", "explicit_replacement",
  "UIE inference.py (HuggingfacePredictor batch inference + SEL2Record scoring)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Standalone entry point; Module.npu() needs torch_npu."),
    C("self._model.cuda()", "tensor_to_device", "replace", True,
      "self._model.npu()",
      "Predictor placement; the tokenizer output follows self._model.device."),
])

E("uie_finetune_bash", "run_uie_finetune.bash", "explicit_replacement",
  "UIE run_uie_finetune.bash (multi-run fine-tuning launcher)", [
    C("source scripts/function_code.bash", "env_var", "npu_only_addition", True,
      SET_ENV,
      "CANN runtime environment for the training processes."),
    C("CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES} ${run_command} run_uie_finetune.py \\", "env_var",
      "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES} ${run_command} run_uie_finetune.py \\",
      "Once function_code.bash exports ASCEND_RT_VISIBLE_DEVICES the child inherits it; the stale "
      "CUDA_VISIBLE_DEVICES prefix is inert, so the edit is hygiene."),
])

E("uie_function_code", "scripts/function_code.bash", "explicit_replacement",
  "UIE scripts/function_code.bash (shared getopt parsing, GPU selection, torch.distributed.launch)", [
    C('export CUDA_VISIBLE_DEVICES="0"', "env_var", "replace", False,
      'export ASCEND_RT_VISIBLE_DEVICES="0"',
      "Default that is always overwritten below."),
    C("selected_gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)",
      "device_capability_check", "replace", True,
      "selected_gpus=$(python3 -c \"import torch, torch_npu; print(','.join(map(str, range(torch.npu.device_count()))))\")",
      "nvidia-smi does not exist; the empty list gives gpu_num=0 and a broken launch. Logical ids 0..n-1 are "
      "used because ASCEND_RT_VISIBLE_DEVICES takes logic ids, which need not equal npu-smi's NPU IDs."),
    C("export CUDA_VISIBLE_DEVICES=${selected_gpus}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${selected_gpus}",
      "Card selection is ignored otherwise: a '--gpus 2,3' run would start its ranks on NPU 0/1."),
    C("gpu_num=$(echo ${CUDA_VISIBLE_DEVICES} | awk -F ',' '{print NF}')", "env_var", "replace", True,
      "gpu_num=$(echo ${ASCEND_RT_VISIBLE_DEVICES} | awk -F ',' '{print NF}')",
      "Must read the variable that is now exported; otherwise nproc_per_node is derived from an unset value."),
    C('echo "Use GPUs: ${CUDA_VISIBLE_DEVICES} (${gpu_num} devices)"', "env_var", "replace", False,
      'echo "Use NPUs: ${ASCEND_RT_VISIBLE_DEVICES} (${gpu_num} devices)"',
      "Log line only."),
])

E("uie_requirements", "requirements.txt", "explicit_replacement",
  "UIE requirements.txt (CUDA 11.1 torch wheel, transformers 4.6)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu",
      "npu_only_addition", True,
      "torch-npu==2.1.0.post10",
      "The Ascend adapter wheel, matched to the torch pin below."),
    C("=torch==1.8.1+cu111", "import_torch_npu", "replace", True,
      "torch==2.1.0",
      "+cu111 is a CUDA build (x86 only); torch_npu pairs with the plain CPU/aarch64 torch of the same version."),
    C("=transformers==4.6.0", "device_type", "replace", True,
      "transformers>=4.32.0",
      "transformers 4.6 TrainingArguments only knows cuda/cpu, so the Trainer would silently run on the CPU; "
      "native NPU device selection (and hccl for DDP) arrives in 4.32."),
])

# ----------------------------------------------------------------------------------------------
# DyGIE++ (dwadden/dygiepp): AllenNLP-based; devices via trainer.cuda_device (framework-mediated),
# allennlp's int-device helpers copied into the coref module.
# ----------------------------------------------------------------------------------------------

E("dygiepp_coref", "dygie/models/coref.py", "device_branch_or_abstraction",
  "DyGIE++ dygie/models/coref.py (coreference module adapted from allennlp's coref model)", [
    C("util.get_device_of(span_embeddings_flat))", "tensor_to_device", "replace", True,
      "span_embeddings_flat.device)",
      "get_device_of() returns -1 for any non-CUDA tensor; pass the torch.device so the antecedent "
      "index tensors are created on the NPU."),
    C("target_indices = util.get_range_vector(num_spans_to_keep, device).unsqueeze(1)", "tensor_to_device",
      "replace", True,
      "target_indices = torch.arange(num_spans_to_keep, device=device).unsqueeze(1)",
      "get_range_vector only knows CUDA ordinals (torch.cuda.LongTensor) or CPU."),
    C("valid_antecedent_offsets = (util.get_range_vector(max_antecedents, device) + 1).unsqueeze(0)",
      "tensor_to_device", "replace", True,
      "valid_antecedent_offsets = (torch.arange(max_antecedents, device=device) + 1).unsqueeze(0)",
      "Same helper; offsets are compared with NPU span indices."),
])

E("dygiepp_template", "training_config/template.libsonnet", "device_branch_or_abstraction",
  "DyGIE++ training_config/template.libsonnet (shared jsonnet template with trainer.cuda_device)", [])

E("dygiepp_train_sh", "scripts/train.sh", "explicit_replacement",
  "DyGIE++ scripts/train.sh (allennlp train --include-package dygie)", [
    C("=config_name=$1", "env_var", "npu_only_addition", True,
      SET_ENV,
      "CANN runtime environment for allennlp train."),
])

E("dygiepp_requirements", "requirements.txt", "explicit_replacement",
  "DyGIE++ requirements.txt (allennlp 2.x stack)", [])
