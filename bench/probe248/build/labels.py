# Labels for probe248: text-to-SQL / table-QA training and inference (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md "How the labels were chosen".
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})

T, F = True, False

E("r01_resdsql_text2sql", "text2sql.py", "explicit_replacement",
  "RESDSQL text2sql.py (T5 fine-tuning / beam decoding, --device GPU id via CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "torch_npu must be loaded for .npu()/torch.npu (autoload only from torch_npu 2.5.1)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.device', "env_var", "replace", T,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.device',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --device would silently train on NPU 0"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", T, "if torch.npu.is_available():",
      "False on an NPU host, so the T5 model silently stays on CPU"),
    C("=model = model.cuda()", "tensor_to_device", "replace", T, "model = model.npu()", ".cuda() fails without CUDA"),
    C("if torch.cuda.is_available():  # put the batch on the GPU", "torch_cuda_api", "replace", T,
      "if torch.npu.is_available():  # put the batch on the NPU", "guard is False on NPU host: batch stays on CPU / device mismatch"),
    C("encoder_input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", T,
      "encoder_input_ids = encoder_input_ids.npu()", ".cuda() fails without CUDA"),
    C("encoder_input_attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", T,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()", ".cuda() fails without CUDA"),
    C("decoder_labels = decoder_labels.cuda()", "tensor_to_device", "replace", T,
      "decoder_labels = decoder_labels.npu()", ".cuda() fails without CUDA"),
    C("decoder_attention_mask = decoder_attention_mask.cuda()", "tensor_to_device", "replace", T,
      "decoder_attention_mask = decoder_attention_mask.npu()", ".cuda() fails without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "silent no-op on NPU host (CUDA never initialised); NPU cache not released - memory only"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(opt.device)', "env_var", "replace", T,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(opt.device)',
      "CUDA_VISIBLE_DEVICES ignored on Ascend: inference silently lands on NPU 0"),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", T, "use_gpu = torch.npu.is_available()",
      "False on NPU host: beam search silently runs on CPU"),
    C("if use_gpu: model = model.cuda()", "tensor_to_device", "replace", T, "if use_gpu: model = model.npu()",
      ".cuda() fails without CUDA"),
    C("=input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", T, "input_ids = encoder_input_ids.npu()",
      ".cuda() fails without CUDA"),
    C("=attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", T,
      "attention_mask = encoder_input_attention_mask.npu()", ".cuda() fails without CUDA"),
])

E("r02_resdsql_schema_classifier", "schema_item_classifier.py", "explicit_replacement",
  "RESDSQL schema_item_classifier.py (RoBERTa cross-encoder for schema-item ranking)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "entry script; torch_npu must be imported before using the npu device (pre-2.5.1)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", T, "if torch.npu.is_available():",
      "False on NPU host: inputs/labels stay on CPU while the classifier runs on NPU -> device mismatch"),
    C("encoder_input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", T,
      "encoder_input_ids = encoder_input_ids.npu()", ".cuda() fails without CUDA"),
    C("encoder_input_attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", T,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()", ".cuda() fails without CUDA"),
    C("[column_labels.cuda() for column_labels", "tensor_to_device", "replace", T,
      "batch_aligned_column_labels = [column_labels.npu() for column_labels in batch_aligned_column_labels]",
      ".cuda() fails without CUDA"),
    C("[table_labels.cuda() for table_labels", "tensor_to_device", "replace", T,
      "batch_aligned_table_labels = [table_labels.npu() for table_labels in batch_aligned_table_labels]",
      ".cuda() fails without CUDA"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.device', "env_var", "replace", T,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.device',
      "ignored by the Ascend runtime: --device silently ignored, every job lands on NPU 0"),
    C("if torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", T, "if torch.npu.device_count() > 0:",
      "returns 0 on NPU host: classifier silently trained on CPU"),
    C("=model = model.cuda()", "tensor_to_device", "replace", T, "model = model.npu()", ".cuda() fails without CUDA"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "{}".format(opt.device)', "env_var", "replace", T,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "{}".format(opt.device)',
      "ignored by the Ascend runtime: wrong card selected"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", T,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "falls to CPU on NPU host while the batch helper moves inputs to the accelerator"),
])

E("r03_resdsql_classifier_model", "utils/classifier_model.py", "explicit_replacement",
  "RESDSQL utils/classifier_model.py (MyClassifier: RoBERTa + BiLSTM pooling + table-column cross-attention)", [
    C('map_location = "cuda:{}".format(gpu_id)', "device_type", "replace", T,
      'state_dict = torch.load(save_path + "/dense_classifier.pt", map_location = "npu:{}".format(gpu_id))',
      "map_location cuda:N fails to deserialize without CUDA"),
])

E("r04_resdsql_classifier_loss", "utils/classifier_loss.py", "explicit_replacement",
  "RESDSQL utils/classifier_loss.py (focal loss with class weights)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", T, "if torch.npu.is_available():",
      "False on NPU host: class-weight tensor stays on CPU while logits are on NPU -> nll_loss device mismatch"),
    C("weight = weight.cuda()", "tensor_to_device", "replace", T, "weight = weight.npu()", ".cuda() fails without CUDA"),
])

E("r05_resdsql_train_sh", "scripts/train/text2sql/train_text2sql_t5_3b.sh", "explicit_replacement",
  "RESDSQL scripts/train/text2sql/train_text2sql_t5_3b.sh (classifier + T5-3B training pipeline)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", T, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or torch_npu cannot load libascendcl/libhccl"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", T, "npu-smi info",
      "nvidia-smi absent on an Ascend host; under set -e the whole pipeline aborts (exit 127)"),
    C("# export CUDA_LAUNCH_BLOCKING=1", "env_var", "replace", F, "# export ASCEND_LAUNCH_BLOCKING=1",
      "commented-out debug switch; Ascend counterpart only matters when debugging"),
])

E("r06_resdsql_infer_sh", "scripts/inference/infer_text2sql.sh", "explicit_replacement",
  "RESDSQL scripts/inference/infer_text2sql.sh (classifier -> data generator -> T5 beam search)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", T, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before the python stages"),
])

E("r07_resdsql_requirements", "requirements.txt", "explicit_replacement",
  "RESDSQL requirements (torch 1.11 from the cu113 index)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", F,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 NPU hosts take CPU torch from the cpu index; unconfirmed that a CUDA build breaks torch_npu (aarch64 falls back to PyPI anyway)"),
    C("=torch==1.11.0", "import_torch_npu", "npu_only_addition", T, "torch-npu==1.11.0.post14",
      "torch_npu wheel matching torch 1.11.0 (EOL branch v1.11.0-6.0.rc2, CANN 8.0.RC2)"),
])

E("p01_picard_run_seq2seq", "seq2seq/run_seq2seq.py", "transfer_to_npu",
  "PICARD seq2seq/run_seq2seq.py (T5 + Seq2SeqTrainer, fp16 from the JSON config, Picard launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "PICARD pins a pre-NPU transformers whose TrainingArguments pick cuda:0 via torch.cuda.is_available(); "
      "transfer_to_npu redirects that and the torch.cuda.* calls below (empty_cache, max_memory_allocated)"),
])

E("p02_picard_model_wrapper", "seq2seq/utils/picard_model_wrapper.py", "device_branch_or_abstraction",
  "PICARD seq2seq/utils/picard_model_wrapper.py (thrift client, PicardLogitsProcessor, with_picard)", [
])

E("p03_picard_serve", "seq2seq/serve_seq2seq.py", "explicit_replacement",
  "PICARD seq2seq/serve_seq2seq.py (FastAPI text-to-SQL service around a HF pipeline)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "needed before an npu device can be named (pre-2.5.1 torch_npu)"),
    C("default=0 if torch.cuda.is_available() else -1,", "torch_cuda_api", "replace", T,
      "default=0 if torch.npu.is_available() else -1,",
      "False on NPU host: service silently falls back to CPU (-1)"),
    C("device=backend_args.device,", "device_type", "replace", T,
      'device=torch.device("npu", backend_args.device) if backend_args.device >= 0 else -1,',
      "the transformers version PICARD pins maps an int device to cuda:N; pass an explicit npu device"),
])

E("p04_picard_dockerfile", "Dockerfile", "explicit_replacement",
  "PICARD Dockerfile (haskell picard build stage + pytorch/pytorch CUDA runtime stage)", [
    C("ARG BASE_IMAGE=pytorch/pytorch:1.9.0-cuda11.1-cudnn8-devel", "device_type", "replace", T,
      "ARG BASE_IMAGE=ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA base image; torch 1.9 has no torch_npu release at all (1.8.1 / 1.11.0 / 2.x only)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", F, None,
      "nvidia-container-runtime hint; Ascend Docker Runtime mounts devices from ASCEND_VISIBLE_DEVICES at docker run"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", F, None,
      "nvidia-container-runtime hint, ignored on Ascend"),
    C("&& pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", T,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post12",
      "the CANN base image carries no torch; torch and the matching torch_npu wheel must be installed"),
])

E("t01_tapas_finetune", "tapas_finetune.py", "explicit_replacement",
  "HF TAPAS fine-tuning loop (SQA / WTQ weak supervision) with DataParallel and torch.cuda.amp", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "entry script; torch.npu / npu device need torch_npu (pre-2.5.1)"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed_all(args.seed)",
      "queued no-op without CUDA; torch.manual_seed above already seeds registered accelerators (unconfirmed for old torch)"),
    C("pin_memory=True,", "pin_memory", "replace", F, 'pin_memory=True, pin_memory_device="npu",',
      "without CUDA the loader silently skips pinning (perf only; pin_memory_device='npu' unconfirmed)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", F,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "CUDA GradScaler disables itself with a warning when CUDA is absent; with autocast also off training is fp32 - perf only"),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", T,
      'logger.warning("torch.nn.DataParallel is not supported on Ascend NPU; training on one NPU (use torchrun + DDP for more)")',
      "torch.nn.DataParallel is marked unsupported on Ascend (mstt list / support table)"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", F,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "cuda autocast is silently disabled on an NPU host: runs fp32 (perf/memory only)"),
    C('args.device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", T, 'args.device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "evaluates to cpu on NPU host: whole fine-tune silently runs on CPU"),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", T,
      "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()",
      "0 on NPU host: batch sizing / multi-device logic silently wrong"),
])

E("t02_tapex_inference", "tapex_inference.py", "explicit_replacement",
  "TAPEX / OmniTab batch table-QA inference (BartForConditionalGeneration, model.to('cuda'), CUDA events)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu", "entry script"),
    C('model = model.to("cuda")', "tensor_to_device", "replace", T, 'model = model.to("npu")', "cuda device unavailable"),
    C('encoding = {k: v.to("cuda", non_blocking=True)', "tensor_to_device", "replace", T,
      'encoding = {k: v.to("npu", non_blocking=True) for k, v in encoding.items()}', "cuda device unavailable"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", T,
      'logger.info("loaded %s on %s (%s)", args.model, torch.npu.get_device_name(0), model.dtype)',
      "lazy CUDA init raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", T,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", T,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", F,
      'except RuntimeError:  # NPU OOM ("NPU out of memory")',
      "unconfirmed which exception type torch_npu raises on OOM; if not this class the per-example retry is skipped"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()",
      "lazy CUDA init raises without CUDA"),
    C("torch.cuda.max_memory_allocated() / 1024**3,", "torch_cuda_api", "replace", F,
      "torch.npu.max_memory_allocated() / 1024**3,", "returns 0 without CUDA; log value only"),
])

E("c01_codes_train_causallm", "train_causallm.py", "explicit_replacement",
  "CodeS train_causallm.py (Accelerate + DeepSpeed pre-training / SFT of StarCoder-based CodeS)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", F, "import torch_npu",
      "accelerate's is_npu_available() already imports torch_npu before any torch.npu call; explicit import is just recommended practice"),
    C('attn_implementation = "flash_attention_2" if opt.use_flash_attention else "eager"', "attention_kernel", "replace", T,
      'attn_implementation = "sdpa" if opt.use_flash_attention else "eager"',
      "the train script passes --use_flash_attention; flash-attn cannot be installed on NPU and transformers of this era raises; SDPA dispatches to NPU FA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "silent no-op on NPU host; memory only"),
    C("torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", F,
      'accelerator.print("GPU 0, step {}, peak memory {:.2f} GB".format(global_completed_steps, torch.npu.max_memory_allocated() / 1024**3))',
      "returns 0 without CUDA; log only"),
])

E("c02_codes_few_shot", "text2sql_few_shot.py", "explicit_replacement",
  "CodeS text2sql_few_shot.py (SimCSE demonstration retrieval + device_map='auto' LLM + execution-guided pick)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "SimCSE is placed on npu:0 before any HF/accelerate import could load torch_npu"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C('SimCSE("princeton-nlp/sup-simcse-roberta-base", device = "cuda:0")', "device_type", "replace", T,
      'simsce_model = SimCSE("princeton-nlp/sup-simcse-roberta-base", device = "npu:0")', "cuda:0 unavailable"),
    C("torch.cuda.empty_cache()  # make room for the LLM", "torch_cuda_api", "replace", F,
      "torch.npu.empty_cache()  # make room for the LLM", "silent no-op without CUDA"),
])

E("c03_codes_schema_filter", "schema_item_filter.py", "explicit_replacement",
  "CodeS schema_item_filter.py (schema item classifier inference + top-k table/column filtering)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "has a __main__ coverage check that builds the classifier on the accelerator"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", T, "if torch.npu.is_available():",
      "False on NPU host: inputs stay on CPU"),
    C("encoder_input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", T,
      "encoder_input_ids = encoder_input_ids.npu()", ".cuda() fails without CUDA"),
    C("encoder_input_attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", T,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()", ".cuda() fails without CUDA"),
    C("if torch.cuda.is_available():  # keep the classifier resident on the GPU", "torch_cuda_api", "replace", T,
      "if torch.npu.is_available():  # keep the classifier resident on the NPU", "False on NPU host: classifier stays on CPU"),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", T, "self.model = self.model.npu()",
      ".cuda() fails without CUDA"),
])

E("c04_llama_flash_attn_patch", "sft/utils/llama_flash_attn_patch.py", "kernel_rewrite",
  "FastChat-style llama_flash_attn_monkey_patch vendored in a CodeLlama/DeepSeek-Coder text-to-SQL SFT repo", [
    C("from flash_attn import __version__ as flash_attn_version", "attention_kernel", "replace", T, "import torch_npu",
      "flash-attn cannot be installed on NPU (ImportError); torch_npu provides npu_fusion_attention"),
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", "replace", T,
      "from .bert_padding import pad_input, unpad_input  # torch-only copy of the flash_attn helpers",
      "ImportError without flash-attn; the padding helpers are plain torch and can be vendored"),
    C("from flash_attn.flash_attn_interface import flash_attn_func, flash_attn_varlen_kvpacked_func", "attention_kernel",
      "removal", T, None, "ImportError without flash-attn"),
    C('assert flash_attn_version >= "2.1.0"', "attention_kernel", "removal", T, None,
      "references the removed flash_attn version"),
    C("output = flash_attn_func(q, k, v, 0.0, softmax_scale=None, causal=True)", "attention_kernel", "replace", T,
      'output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=q.device), 1), scale=1.0 / math.sqrt(self.head_dim), keep_prob=1.0, sparse_mode=3)[0].view(bsz, q_len, -1)',
      "flash_attn_func is CUDA-only; npu_fusion_attention BSND + causal sparse_mode=3 (GQA ok: Nq/Nkv integer)"),
    C("output_unpad = flash_attn_varlen_kvpacked_func(", "attention_kernel", "replace", T,
      'output_unpad = torch_npu.npu_fusion_attention(q, kv[:, 0], kv[:, 1], self.num_heads, "TND", atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=q.device), 1), scale=1.0 / math.sqrt(self.head_dim), sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_k_lens[1:].tolist())[0]',
      "varlen path: TND layout with cumulative actual_seq_qlen/kvlen"),
    C("if torch.cuda.get_device_capability()[0] < 8:", "device_capability_check", "replace", T,
      "if not torch.npu.is_available():",
      "get_device_capability lazily initialises CUDA and raises on an NPU host; the sm80 check is meaningless there"),
    C('device = torch.device("cuda")', "device_type", "replace", T, 'device = torch.device("npu")',
      "test entry point allocates on cuda"),
])

E("c05_codes_accelerate_cfg", "configs/accelerate_config_multi_gpu.yaml", "explicit_replacement",
  "CodeS-style accelerate config for plain multi-GPU DDP", [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", F, "distributed_type: MULTI_NPU",
      "unconfirmed whether accelerate's MULTI_GPU launch path auto-switches to HCCL on NPU; MULTI_NPU is the explicit setting"),
])

E("c06_codes_train_sh", "scripts/train_codes_sft.sh", "explicit_replacement",
  "CodeS SFT launcher (accelerate launch --multi_gpu, NCCL env, CUDA_VISIBLE_DEVICES)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", T, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before launching"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", T, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "ignored on Ascend: the 4 ranks would land on devices 0-3, which the comment says are taken by the demo service"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", F, None, "NCCL-only knob, no effect with HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", F, None, "NCCL-only knob, no effect with HCCL"),
    C("accelerate launch --multi_gpu --num_processes 4", "distributed_framework", "replace", F,
      "accelerate launch --num_processes 4 --config_file $ACC_CONFIG train_causallm.py \\",
      "unconfirmed: accelerate probably still selects HCCL via is_npu_available(); the distributed type belongs in the config"),
])

E("c07_codes_requirements", "requirements.txt", "explicit_replacement",
  "CodeS / LLM SFT requirements (flash-attn, xformers, faiss-gpu, nvidia-ml-py)", [
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", T, "torch-npu==2.1.0.post12",
      "matching torch_npu wheel for torch 2.1.0"),
    C("=flash-attn==2.4.2", "attention_kernel", "removal", T, None,
      "source build needs nvcc/CUDA: pip install -r fails on an Ascend host"),
    C("=xformers==0.0.23", "attention_kernel", "removal", F, None,
      "no NPU backend and unused at runtime here; unconfirmed whether its exact torch pin breaks the 2.1.0 pairing"),
    C("=faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", F, "faiss-cpu==1.7.4",
      "GPU index needs CUDA; unconfirmed: x86-only wheels fail on aarch64, on x86 it still works as CPU faiss"),
    C("=nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", F, None,
      "pure-python wheel installs anywhere; useless without the NVIDIA driver"),
])

E("d01_dail_local_llm", "llm/local_llm.py", "explicit_replacement",
  "DAIL-SQL-style open-source LLM backend for ask_llm.py (device_map='auto', bitsandbytes 8-bit, stop criteria)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "has a __main__; .npu() / torch.npu used before any HF import would load torch_npu"),
    C("[torch.tensor(ids, dtype=torch.long).cuda() for ids in stop_token_ids]", "tensor_to_device", "replace", T,
      "self.stop_token_ids = [torch.tensor(ids, dtype=torch.long).npu() for ids in stop_token_ids]", ".cuda() fails without CUDA"),
    C("for i in range(torch.cuda.device_count())}", "torch_cuda_api", "replace", T,
      'return {i: f"{max_gpu_memory_gib}GiB" for i in range(torch.npu.device_count())}',
      "empty max_memory on NPU host when --max_gpu_memory is given: accelerate has no accelerator budget"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed(seed)",
      "lazy no-op without CUDA; torch.manual_seed on the line above covers registered devices (unconfirmed on old torch)"),
    C("BitsAndBytesConfig(load_in_8bit=True) if load_8bit else None", "unsupported_op_workaround", "replace", T,
      "quantization_config = None  # LLM.int8 has no Ascend backend: load bf16/fp16 and shard with device_map",
      "bitsandbytes LLM.int8 is not available on NPU (only NF4 work in progress)"),
    C('.to("cuda")', "tensor_to_device", "replace", T,
      'inputs = self.tokenizer(texts, return_tensors="pt", padding=True).to("npu")', "cuda device unavailable"),
    C('with torch.autocast("cuda", dtype=torch.float16):', "amp", "replace", F,
      'with torch.autocast("npu", dtype=torch.float16):', "cuda autocast silently disabled; weights already fp16 - perf only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("torch.cuda.empty_cache()  # drop the failed batch", "torch_cuda_api", "replace", F,
      "torch.npu.empty_cache()  # drop the failed batch's activations", "silent no-op; the OOM retry then likely OOMs again"),
])

E("d02_dail_example_selector", "prompt/ExampleSelector.py", "explicit_replacement",
  "DAIL-SQL prompt/ExampleSelector.py (random / cosine / masked-question Euclidean example selection)", [
    C('EMBEDDING_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", T,
      'EMBEDDING_DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "silently falls to CPU on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "silent no-op without CUDA"),
])

E("d03_dts_finetune_ddp", "finetune_ddp.py", "explicit_replacement",
  "DTS-SQL-style two-stage SFT with torchrun + DDP (apex FusedAdam if present, NCCL)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu", "entry script"),
    C("from apex.optimizers import FusedAdam as AdamW", "fused_optimizer", "replace", F,
      "from torch_npu.optim import NpuFusedAdamW as AdamW",
      "guarded import falls back to torch AdamW on NPU; fused NPU optimizer is a perf choice"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", F,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")', "NCCL knob ignored by HCCL; HCCL watchdog equivalent"),
    C('dist.init_process_group(backend="nccl"', "dist_backend", "replace", T,
      'dist.init_process_group(backend="hccl", timeout=datetime.timedelta(minutes=60))', "NCCL unavailable on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", T, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", T, 'device = torch.device("npu", local_rank)',
      "cuda device unavailable"),
    C("pin_memory=True,", "pin_memory", "replace", F, 'pin_memory=True, pin_memory_device="npu",',
      "pinning silently skipped without CUDA (perf only; unconfirmed)"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.bf16):', "amp", "replace", F,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16, enabled=args.bf16):',
      "cuda autocast silently disabled; model already loaded in bf16 - perf only"),
    C("mem = torch.cuda.max_memory_reserved(device) / 2**30", "torch_cuda_api", "replace", F,
      "mem = torch.npu.max_memory_reserved(device) / 2**30", "log only"),
])

E("u01_dbgpt_hub_misc", "dbgpt_hub/llm_base/model_utils.py", "explicit_replacement",
  "DB-GPT-Hub / LLaMA-Efficient-Tuning style llm_base misc utils (dtype inference, torch_gc, dispatch_model, NVML report)", [
    C("_is_bf16_available = torch.cuda.is_bf16_supported()", "torch_cuda_api", "replace", F,
      "_is_bf16_available = torch.npu.is_bf16_supported()",
      "raises inside try -> False: bf16 silently not chosen (dtype/perf only)"),
    C("_is_fp16_available = torch.cuda.is_available()", "torch_cuda_api", "replace", F,
      "_is_fp16_available = torch.npu.is_available()", "False on NPU host: compute dtype silently fp32 (perf/memory only)"),
    C('return "cuda:{}".format(local_rank) if torch.cuda.is_available() else "cpu"', "device_type", "replace", T,
      'return "npu:{}".format(local_rank) if torch.npu.is_available() else "cpu"',
      "returns cpu on NPU host: models placed with this device silently run on CPU"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", F, "if torch.npu.is_available():",
      "guard False on NPU host: torch_gc silently frees nothing"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "memory only"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", F, "torch.npu.ipc_collect()", "memory only"),
    C("=import pynvml", "torch_cuda_api", "removal", F, None, "import itself works (pure python)"),
    C("pynvml.nvmlInit()", "torch_cuda_api", "removal", T, None, "NVMLError: libnvidia-ml not present on an Ascend host"),
    C("for i in range(pynvml.nvmlDeviceGetCount()):", "torch_cuda_api", "replace", T,
      "for i in range(torch.npu.device_count()):", "NVML unavailable"),
    C("info = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i))", "torch_cuda_api", "replace", T,
      "free, total = torch.npu.mem_get_info(i)", "NVML unavailable; mem_get_info is in torch_npu.npu"),
    C('report[i] = {"used_gb": info.used / 2**30, "total_gb": info.total / 2**30}', "torch_cuda_api", "replace", T,
      'report[i] = {"used_gb": (total - free) / 2**30, "total_gb": total / 2**30}', "follows the mem_get_info rewrite"),
    C("pynvml.nvmlShutdown()", "torch_cuda_api", "removal", T, None, "NVML unavailable"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", T, "if torch.npu.device_count() > 1:",
      "0 on NPU host: multi-device dispatch never taken"),
    C("return model.cuda()", "tensor_to_device", "replace", T, "return model.npu()", ".cuda() fails without CUDA"),
])

E("v01_vllm_batch_infer", "infer/vllm_batch_infer.py", "explicit_replacement",
  "OmniSQL-style vLLM batch inference (LLM(tensor_parallel_size, gpu_memory_utilization), self-consistency)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", F, "import torch_npu",
      "vllm-ascend depends on torch_npu >= 2.5.1 whose autoload registers torch.npu; explicit import is defensive"),
    C('os.environ.setdefault("VLLM_ATTENTION_BACKEND", "FLASH_ATTN")', "attention_kernel", "removal", F, None,
      "CUDA attention backend name; vllm-ascend selects its own backend (unconfirmed whether it errors or ignores it)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.visible_devices', "env_var", "replace", T,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.visible_devices',
      "ignored on Ascend: --visible_devices silently has no effect"),
    C("tensor_parallel_size = opt.tensor_parallel_size or torch.cuda.device_count()", "torch_cuda_api", "replace", T,
      "tensor_parallel_size = opt.tensor_parallel_size or torch.npu.device_count()",
      "0 on NPU host -> LLM(tensor_parallel_size=0) fails"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "silent no-op without CUDA"),
])

E("v02_vllm_serve_sh", "scripts/serve_vllm.sh", "explicit_replacement",
  "vLLM OpenAI-server launcher for a text-to-SQL model (nvidia-smi GPU count, NCCL env)", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", T,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh && source /usr/local/Ascend/nnal/atb/set_env.sh",
      "vllm-ascend needs the CANN toolkit and NNAL/ATB environments"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", T,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "ignored on Ascend: a user-chosen device set is silently not applied"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", F,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}", "single-node TP: NIC choice matters only multi-node"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", F, None, "NCCL-only"),
    C("NUM_GPUS=$(nvidia-smi", "torch_cuda_api", "replace", T,
      'NUM_GPUS=$(npu-smi info -l | grep -c "NPU ID")',
      "nvidia-smi missing: with set -euo pipefail the script aborts here"),
    C('if [ -n "${CUDA_VISIBLE_DEVICES}" ]; then', "env_var", "replace", T,
      'if [ -n "${ASCEND_RT_VISIBLE_DEVICES}" ]; then', "follows the variable rename (set -u would abort on an unset name)"),
    C('NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", T,
      """NUM_GPUS=$(echo "${ASCEND_RT_VISIBLE_DEVICES}" | tr ',' '\\n' | wc -l)""", "follows the variable rename"),
])

E("v03_vllm_environment", "environment.yml", "explicit_replacement",
  "conda environment for vLLM text-to-SQL inference (nvidia channel, cu121 index, vllm + CUDA wheels)", [
    C("=- nvidia", "device_type", "removal", F, None, "CUDA channel no longer needed"),
    C("- cuda-nvcc=12.1", "device_type", "removal", F, None, "only for CUDA builds; unconfirmed whether it resolves on aarch64"),
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", F,
      "- --extra-index-url https://download.pytorch.org/whl/cpu", "unconfirmed that the CUDA build itself breaks torch_npu"),
    C("- torch==2.3.0", "device_type", "replace", T, "- torch==2.9.0",
      "torch_npu wheels exist for 2.3.1, not 2.3.0; vllm-ascend v0.13.0 pairs with torch 2.9.0 + torch-npu 2.9.0.post2"),
    C("- vllm==0.5.0.post1", "distributed_framework", "replace", T, "- vllm==0.13.0",
      "CUDA build of vLLM; must match the vllm-ascend plugin version"),
    C("- vllm-flash-attn==2.5.9", "attention_kernel", "removal", T, None,
      "CUDA-only wheel pinned to torch 2.3.0: conflicts once torch is 2.9.0"),
    C("- xformers==0.0.26.post1", "attention_kernel", "removal", T, None,
      "CUDA-only, pinned to torch 2.3.0: conflicts once torch is 2.9.0"),
    C("- ray==2.24.0", "distributed_framework", "npu_only_addition", T,
      "- vllm-ascend==0.13.0  # pulls torch-npu==2.9.0.post2",
      "the Ascend hardware plugin (placed after the next unchanged dependency)"),
    C("- transformers==4.41.2", "distributed_framework", "replace", F, "- transformers>=4.56",
      "unconfirmed minimum for vllm 0.13; pip would report the conflict"),
])

E("v04_vllm_dockerfile", "docker/Dockerfile.infer", "explicit_replacement",
  "inference image for vLLM text-to-SQL serving (nvidia/cuda base, cu121 torch, flash-attn build)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "device_type", "replace", T,
      "FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11", "CUDA base image; CANN 8.5.0 matches vllm-ascend v0.13.0"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", "removal", F, None, "only used by CUDA extension builds"),
    C("ENV CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", "removal", F, None, "CUDA runtime knob, ignored"),
    C("RUN pip install torch==2.3.0 --index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", T,
      "RUN pip install torch==2.9.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel; vllm-ascend v0.13.0 needs torch 2.9.0 (+ torch-npu 2.9.0.post2)"),
    C("RUN pip install vllm==0.5.0.post1", "distributed_framework", "replace", T,
      "RUN VLLM_TARGET_DEVICE=empty pip install vllm==0.13.0 && pip install vllm-ascend==0.13.0",
      "CUDA vLLM build; Ascend needs vllm + the vllm-ascend plugin"),
    C("RUN MAX_JOBS=8 pip install flash-attn==2.5.8 --no-build-isolation", "attention_kernel", "removal", T, None,
      "flash-attn build requires nvcc/CUDA: docker build fails"),
])

E("g01_grammar_triton_bitmask", "sqlgrammar/kernels/apply_token_bitmask.py", "kernel_rewrite",
  "xgrammar-style token-bitmask kernels (Triton persistent kernel + torch.compile fallback) for grammar-constrained SQL decoding", [
    C('NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count', "triton_kernel_tuning", "replace", T,
      "NUM_SMS = torch.npu.get_device_properties(logits.device).vector_core_num",
      "reached for every non-CPU tensor when triton is importable; NPU properties have no multi_processor_count (cube/vector core counts instead)"),
    C("num_warps=BLOCK_SIZE // 32 // (16 // logits.element_size()),", "triton_kernel_tuning", "removal", F, None,
      "warp count is a CUDA launch parameter; unconfirmed how triton-ascend treats it"),
    C("@torch.compile(dynamic=True)", "compile_mode", "replace", F, '@torch.compile(dynamic=True, backend="npugraphs")',
      "unconfirmed: Inductor on NPU needs torch_npu >= 2.6; otherwise drop the decorator"),
])

E("g02_grammar_setup", "setup.py", "kernel_rewrite",
  "setup.py building a CUDAExtension (.cu bitmask kernel) for the SQL grammar package", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", F,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "the import itself works on CPU torch; changed together with the call site"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", "removal", F, None, "CUDA-build knob only"),
    C('"csrc/token_bitmask_cuda.cu",', "custom_cuda_extension", "replace", T, '"csrc/ascendc/token_bitmask_npu.cpp",',
      ".cu needs nvcc; kernel must be rewritten in Ascend C"),
    C('"nvcc": ["-O3"', "custom_cuda_extension", "removal", F, None, "nvcc flags unused once there are no .cu sources"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", T, "NpuExtension(",
      "CUDAExtension fails without CUDA_HOME/nvcc: pip install -e . aborts"),
    C('"triton>=2.1.0",', "triton_kernel_tuning", "replace", T, '"triton-ascend",',
      "stock triton has no Ascend driver; importing it routes NPU logits to a kernel that cannot launch"),
])

E("g03_grammar_logits_processor", "sqlgrammar/logits_processor.py", "kernel_rewrite",
  "HF LogitsProcessor for grammar-constrained SQL generation (pinned host bitmask, NVTX ranges, CUDA kernel branch)", [
    C("allocate_token_bitmask(batch_beams, self.vocab_size).pin_memory()", "pin_memory", "replace", F,
      'self.host_bitmask = allocate_token_bitmask(batch_beams, self.vocab_size).pin_memory(device="npu")',
      "unconfirmed: older torch pins through the CUDA host allocator by default and may raise without CUDA"),
    C('torch.cuda.nvtx.range_push("sqlgrammar.fill_bitmask")', "torch_cuda_api", "replace", T,
      '_range_id = torch.npu.mstx.range_start("sqlgrammar.fill_bitmask")',
      "torch.cuda.nvtx has no NPU redirect; the NVTX stub raises without a CUDA build (with SQLGRAMMAR_PROFILE=1)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", T, "torch.npu.mstx.range_end(_range_id)",
      "same as range_push"),
    C("if self.use_cuda_kernel and scores.is_cuda:", "custom_cuda_extension", "add_branch", F,
      'elif _HAS_NPU_KERNEL and scores.device.type == "npu": _C.apply_token_bitmask_inplace_npu(scores, self.device_bitmask, self.vocab_size)',
      "on NPU is_cuda is False and the generic path runs; a native NPU kernel branch is a perf addition"),
])

E("x01_sqlcoder_deepspeed_train", "sft/train_deepspeed.py", "explicit_replacement",
  "SQLCoder-style full-parameter SFT with deepspeed.initialize (ZeRO-3, FusedAdam / DeepSpeedCPUAdam)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", F, "import torch_npu",
      "DeepSpeed's accelerator auto-detection imports torch_npu at import time; explicit import is defensive"),
    C('device = torch.device("cuda")', "device_type", "replace", T, 'device = torch.device("npu")',
      "single-process path: cuda device unavailable"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", T, "torch.npu.set_device(args.local_rank)",
      "raises without CUDA"),
    C('deepspeed.init_distributed(dist_backend="nccl")', "dist_backend", "replace", T,
      'deepspeed.init_distributed(dist_backend="hccl")', "NCCL unavailable on Ascend"),
    C("AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam", "fused_optimizer", "replace", F,
      "AdamOptimizer = DeepSpeedCPUAdam if args.offload else torch_npu.optim.NpuFusedAdamW",
      "unconfirmed whether the pinned DeepSpeed's NPU op builder provides FusedAdam; NpuFusedAdamW is the documented fused optimizer"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()", "raises without CUDA"),
    C("torch.cuda.synchronize()  # include the optimizer step", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize()  # include the optimizer step in the timing", "raises without CUDA"),
])
