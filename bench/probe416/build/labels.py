# Labels for probe416 (Text-to-SQL / table QA: RESDSQL, PICARD, TAPEX / TAPAS, DAIL-SQL, CodeS).
# One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
VIS = "ASCEND_RT_VISIBLE_DEVICES"

# ----------------------------------------------------------------------------------------------- RESDSQL
E("resdsql_classifier", "schema_item_classifier.py", "explicit_replacement",
  "RUCKBReasoning/RESDSQL schema_item_classifier.py (RoBERTa cross-encoder schema-item ranker)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script calls torch.npu.* once ported; pinned torch predates torch_npu autoload (2.5.1)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "guard around moving the batch; False on an NPU host, batch would stay on CPU while the model is on NPU"),
    C("=encoder_input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_ids = encoder_input_ids.npu()", "batch tensor to device"),
    C("=encoder_input_attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()", "batch tensor to device"),
    C("[column_labels.cuda() for", "tensor_to_device", "replace", True,
      "batch_aligned_column_labels = [column_labels.npu() for column_labels in batch_aligned_column_labels]",
      "labels feed the focal loss together with NPU logits"),
    C("[table_labels.cuda() for", "tensor_to_device", "replace", True,
      "batch_aligned_table_labels = [table_labels.npu() for table_labels in batch_aligned_table_labels]",
      "labels feed the focal loss together with NPU logits"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.device', "env_var", "replace", True,
      f'os.environ["{VIS}"] = opt.device',
      "--device picks the card; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so every run would land on npu:0"),
    C("if torch.cuda.is_available():  # model to GPU", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # model to NPU", "training model placement guard"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "training model to NPU"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(opt.device)', "env_var", "replace", True,
      f'os.environ["{VIS}"] = str(opt.device)', "test/eval mode device selection"),
    C("if torch.cuda.is_available():  # eval on GPU", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # eval on NPU", "inference model placement guard"),
    C("model = model.cuda()  # inference copy", "tensor_to_device", "replace", True,
      "model = model.npu()  # inference copy", "inference model to NPU"),
])

E("resdsql_text2sql", "text2sql.py", "explicit_replacement",
  "RUCKBReasoning/RESDSQL text2sql.py (T5 / mT5 fine-tuning and beam-search decoding with execution-guided filtering)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script; torch.npu namespace needed before torch_npu autoload era"),
    C('=os.environ["CUDA_VISIBLE_DEVICES"] = opt.device', "env_var", "replace", True,
      f'os.environ["{VIS}"] = opt.device', "training card selection via --device"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "T5-3B would silently train on CPU"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model to NPU"),
    C("# put the batch on the GPU", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # put the batch on the NPU", "batch placement guard"),
    C("=encoder_input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_ids = encoder_input_ids.npu()", "train batch"),
    C("=encoder_input_attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()", "train batch"),
    C("decoder_labels = decoder_labels.cuda()", "tensor_to_device", "replace", True,
      "decoder_labels = decoder_labels.npu()", "train batch"),
    C("decoder_attention_mask = decoder_attention_mask.cuda()", "tensor_to_device", "replace", True,
      "decoder_attention_mask = decoder_attention_mask.npu()", "train batch"),
    C("# inference card", "env_var", "replace", True,
      f'os.environ["{VIS}"] = opt.device  # inference card', "inference card selection"),
    C("# single-GPU inference", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # single-NPU inference", "inference placement guard"),
    C("# move the fine-tuned T5", "tensor_to_device", "replace", True,
      "model = model.npu()  # move the fine-tuned T5 to the accelerator", "inference model to NPU"),
    C("# batch to GPU", "torch_cuda_api", "replace", True, "if torch.npu.is_available():  # batch to NPU",
      "eval batch guard"),
    C("encoder_input_ids = encoder_input_ids.cuda()  # eval batch", "tensor_to_device", "replace", True,
      "encoder_input_ids = encoder_input_ids.npu()  # eval batch", "eval batch"),
    C("encoder_input_attention_mask.cuda()  # eval batch", "tensor_to_device", "replace", True,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()  # eval batch", "eval batch"),
])

E("resdsql_cls_model", "utils/classifier_model.py", "explicit_replacement",
  "RUCKBReasoning/RESDSQL utils/classifier_model.py (RoBERTa + BiLSTM pooling + table-column cross-attention)", [])

E("resdsql_cls_loss", "utils/classifier_loss.py", "explicit_replacement",
  "RUCKBReasoning/RESDSQL utils/classifier_loss.py (focal loss with alpha class weights)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "class-weight tensor placement; a CPU weight with NPU logits makes nll_loss fail with a device mismatch"),
    C("weight = weight.cuda()", "tensor_to_device", "replace", True, "weight = weight.npu()",
      "class weights must live on the logits' device"),
])

E("resdsql_preproc", "preprocessing.py", "explicit_replacement",
  "RUCKBReasoning/RESDSQL preprocessing.py (Spider schema / db-content preprocessing; CPU only)", [])

E("resdsql_train_sh", "scripts/train/text2sql/train_text2sql_t5_3b.sh", "explicit_replacement",
  "RUCKBReasoning/RESDSQL scripts/train/text2sql/train_text2sql_t5_3b.sh", [])

E("resdsql_infer_sh", "scripts/inference/infer_text2sql.sh", "explicit_replacement",
  "RUCKBReasoning/RESDSQL scripts/inference/infer_text2sql.sh", [])

E("resdsql_requirements", "requirements.txt", "explicit_replacement",
  "RUCKBReasoning/RESDSQL requirements.txt (CUDA 11.3 torch wheel)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu wants the CPU torch build on x86; with an unsuffixed pin the cu113 index simply has no match"),
    C("torch==1.11.0+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu113 is a CUDA build; torch_npu needs a matching plain torch (2.1.0 is an active torch_npu line)"),
    C("tqdm==4.63.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "add the adapter next to torch (2.1.0.post12 pairs with CANN 8.1.RC1 per the version matrix)"),
])

# ----------------------------------------------------------------------------------------------- PICARD
E("picard_run_seq2seq", "seq2seq/run_seq2seq.py", "device_branch_or_abstraction",
  "ServiceNow/picard seq2seq/run_seq2seq.py (HF Seq2SeqTrainer entry point)", [])

E("picard_model_wrapper", "seq2seq/utils/picard_model_wrapper.py", "device_branch_or_abstraction",
  "ServiceNow/picard seq2seq/utils/picard_model_wrapper.py (PicardLogitsProcessor, thrift client)", [])

E("picard_dockerfile", "Dockerfile", "explicit_replacement",
  "ServiceNow/picard Dockerfile (haskell builder + pytorch/pytorch CUDA runtime stages)", [
    C("ARG BASE_IMAGE=pytorch/pytorch:1.9.0-cuda11.1-cudnn8-devel", "device_type", "replace", True,
      "ARG BASE_IMAGE=ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA base image carries a CUDA torch and no CANN toolkit; image tag illustrative"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by the container runtime only; inert without the Ascend Docker Runtime"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime knob, inert on Ascend"),
    C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post12",
      "the CANN image has no torch; upstream relied on the pytorch/pytorch base image for it"),
])

E("picard_makefile", "Makefile", "explicit_replacement",
  "ServiceNow/picard Makefile (docker buildx + docker run targets)", [
    C("BASE_IMAGE := pytorch/pytorch:1.9.0-cuda11.1-cudnn8-devel", "device_type", "replace", True,
      "BASE_IMAGE := ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "passed as --build-arg, so it overrides the Dockerfile default; both must change"),
    C("--gpus all", "device_type", "replace", True,
      "--device=/dev/davinci0 --device=/dev/davinci_manager --device=/dev/devmm_svm --device=/dev/hisi_hdc "
      "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro \\",
      "docker --gpus needs the NVIDIA runtime (fails on an Ascend host); NPUs are exposed as /dev/davinci* plus driver mount"),
    C("--runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=0", "device_type", "replace", True,
      "--runtime=ascend -e ASCEND_VISIBLE_DEVICES=0 \\", "eval target uses the nvidia runtime explicitly"),
])

E("picard_train_config", "configs/train.json", "device_branch_or_abstraction",
  "ServiceNow/picard configs/train.json (T5-3B Spider training config)", [])

E("picard_serve", "seq2seq/serve_seq2seq.py", "explicit_replacement",
  "ServiceNow/picard seq2seq/serve_seq2seq.py (FastAPI text-to-SQL server over a HF pipeline)", [
    C("device: int = field(default=0", "device_type", "replace", False,
      'device: str = field(default="npu:0", metadata={"help": "Device to run on, e.g. cpu or npu:0."})',
      "an int pipeline device means cuda:N in older transformers; recent releases map it to npu:N when torch_npu "
      "is present (unconfirmed for the pinned version)"),
])

E("picard_requirements", "requirements.txt", "explicit_replacement",
  "ServiceNow/picard requirements.txt (pinned HF stack)", [
    C("transformers==4.9.2", "device_type", "replace", True, "transformers==4.32.0",
      "Trainer device setup in 4.9 only knows CUDA, so training would silently run on CPU; NPU support in "
      "Trainer arrived in 4.32 (the generation_utils imports in picard_model_wrapper then need updating too)"),
])

# ----------------------------------------------------------------------------------------------- TAPEX / TAPAS
E("tapex_run_model", "examples/tableqa/run_model.py", "explicit_replacement",
  "microsoft/Table-Pretraining examples/tableqa/run_model.py (fairseq-train / fairseq-generate wrapper)", [
    C("CUDA_VISIBLE_DEVICES={args.gpus} fairseq-train", "env_var", "replace", True,
      f"{VIS}={{args.gpus}} fairseq-train {{args.dataset_dir}} \\",
      "card selection for the fairseq subprocess (assumes an NPU-enabled fairseq, out of scope here)"),
])

E("tapex_model_interface", "tapex/model_interface.py", "explicit_replacement",
  "microsoft/Table-Pretraining tapex/model_interface.py (BART hub interface for online prediction)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "module makes the device decision; needs torch.npu"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise BART-large decodes on CPU"),
    C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()",
      "fairseq hub interface derives its device from a registered buffer, so .npu() carries the inputs along"),
])

E("tapex_linearize", "tapex/processor/table_linearize.py", "explicit_replacement",
  "microsoft/Table-Pretraining tapex/processor/table_linearize.py (table flattening; pure Python)", [])

E("tapas_finetune", "fine_tune_tapas_wtq.py", "explicit_replacement",
  "NielsRogge/Transformers-Tutorials TAPAS WTQ fine-tuning notebook as a script (weak supervision, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "module-level device global uses torch.npu at import time"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level device global; everything .to(device) follows it"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "seeding guard; torch.manual_seed already seeds registered custom devices (unconfirmed for every torch_npu version)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "no-op without CUDA; reproducibility only"),
    C("torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      'logger.info("device: %s, n_npu: %d", device, torch.npu.device_count())', "log line only (would print 0)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "the CUDA GradScaler disables itself without CUDA: fp16 runs unscaled and gradients underflow"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "CUDA autocast on NPU tensors is a no-op with a warning; --fp16 would silently train in fp32 with an fp16 scaler"),
    C("torch.cuda.max_memory_allocated() / 2**30)", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 2**30)", "log value only (reads 0 without CUDA)"),
])

E("tapas_requirements", "requirements.txt", "explicit_replacement",
  "TAPAS (HF transformers) fine-tuning requirements with torch-scatter CUDA wheels", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CPU torch build for torch_npu on x86"),
    C("torch==1.10.0+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA build; no torch_npu for 1.10"),
    C("transformers==4.21.3", "unsupported_op_workaround", "replace", True, "transformers==4.32.0",
      "old TAPAS calls torch_scatter's compiled segment ops, which have no NPU kernels; later releases use native "
      "scatter_reduce (exact cut-over release unconfirmed; 4.32 also brings NPU-aware Trainer)"),
    C("-f https://data.pyg.org/whl/torch-1.10.0+cu113.html", "custom_cuda_extension", "removal", False, None,
      "CUDA wheel index of the compiled extension; not needed once transformers no longer imports it"),
    C("torch-scatter==2.0.9", "custom_cuda_extension", "removal", False, None,
      "compiled CUDA/CPU extension, unused after the transformers bump"),
    C("pandas==1.3.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "install the adapter"),
])

# ----------------------------------------------------------------------------------------------- DAIL-SQL
E("dail_example_selector", "prompt/ExampleSelectorTemplate.py", "explicit_replacement",
  "BeachWang/DAIL-SQL prompt/ExampleSelectorTemplate.py (question-similarity / masked-question example selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "SELECTOR_DEVICE is evaluated at import time, before any HF library could import torch_npu"),
    C('SELECTOR_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", False,
      'SELECTOR_DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "only the sentence-embedding retriever; on CPU it is slower but gives the same examples"),
])

E("dail_ask_llm", "ask_llm.py", "explicit_replacement",
  "BeachWang/DAIL-SQL ask_llm.py (OpenAI API driver; torch DataLoader only for batching)", [])

E("dail_local_llm", "llm/local_llm.py", "explicit_replacement",
  "DAIL-SQL open-source LLM evaluation runner (HF generate / vLLM backends)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script uses torch.npu"),
    C('device="cuda:0"):', "device_type", "replace", True,
      'def __init__(self, model_path, dtype="fp16", max_new_tokens=200, device="npu:0"):',
      "default device string; .to('cuda:0') raises on an NPU host"),
    C("tensor_parallel_size=torch.cuda.device_count(),", "torch_cuda_api", "replace", True,
      "tensor_parallel_size=torch.npu.device_count(),",
      "returns 0 without CUDA, vLLM rejects tensor_parallel_size=0 (backend itself must be vllm-ascend)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      f'os.environ["{VIS}"] = args.gpu', "--gpu selects the card, and the vLLM TP size is derived from what is visible"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; only releases cached NPU memory between batches"),
    C("torch.cuda.max_memory_allocated() / 2**30:.1f} GB", "torch_cuda_api", "replace", False,
      'f"{torch.npu.max_memory_allocated() / 2**30:.1f} GB")', "report line only"),
])

E("dail_sft", "finetune/sft_lora.py", "device_branch_or_abstraction",
  "DAIL-SQL open-source LLM LoRA SFT (alpaca-lora style peft + Trainer under torchrun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
      "transformers/accelerate import torch_npu themselves once they probe for NPUs; explicit import is belt and braces "
      "(unconfirmed for this call order)"),
    C('device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}', "device_type", "replace", False,
      'device_map = {"": f"npu:{int(os.environ.get(\'LOCAL_RANK\') or 0)}"}',
      "int device ids in device_map mean CUDA in older accelerate; newer accelerate maps them to npu (unconfirmed)"),
    C("load_in_8bit=load_8bit,", "unsupported_op_workaround", "replace", True, "load_in_8bit=False,",
      "bitsandbytes LLM.int8 has no Ascend backend (only NF4 in the multi-backend branch); load fp16 LoRA instead"),
    C('adapters_weights = torch.load(checkpoint_name, map_location="cuda")', "device_type", "replace", True,
      'adapters_weights = torch.load(checkpoint_name, map_location="npu")',
      "deserialising onto CUDA raises when CUDA is unavailable"),
    C("if not ddp and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if not ddp and torch.npu.device_count() > 1:",
      "naive model-parallel hint; recent Trainer also detects a multi-device hf_device_map by itself"),
    C("model = torch.compile(model)", "compile_mode", "removal", False, None,
      "Inductor on NPU needs a recent torch_npu; with a torch 2.1 stack safer to skip (unconfirmed)"),
])

E("dail_sft_sh", "finetune/run_sft.sh", "explicit_replacement",
  "DAIL-SQL LoRA SFT torchrun launcher", [
    C("=nvidia-smi", "device_capability_check", "replace", False, "npu-smi info",
      "diagnostic only; script has no set -e"),
    C("CUDA_VISIBLE_DEVICES=4,5,6,7 torchrun", "env_var", "replace", True,
      f"{VIS}=4,5,6,7 torchrun --nproc_per_node=4 --master_port=29501 finetune/sft_lora.py \\",
      "without it the four ranks land on NPUs 0-3 instead of 4-7"),
])

E("dail_requirements", "requirements.txt", "explicit_replacement",
  "BeachWang/DAIL-SQL requirements.txt extended with the local-LLM stack", [
    C("torch==2.0.1", "import_torch_npu", "replace", False, "torch==2.1.0",
      "torch_npu 2.0.1 exists but is end-of-life; 2.1.0 is the active line"),
    C("transformers==4.33.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "install the adapter next to torch/transformers"),
    C("bitsandbytes==0.41.1", "unsupported_op_workaround", "removal", False, None,
      "only needed for load_in_8bit, which the port turns off"),
    C("vllm==0.2.1", "distributed_framework", "removal", True, None,
      "vLLM 0.2.1 pins CUDA torch/xformers and has no NPU path; vllm-ascend needs a newer torch stack"),
])

# ----------------------------------------------------------------------------------------------- CodeS
E("codes_train", "train_causal_lm.py", "device_branch_or_abstraction",
  "RUCKBReasoning/codes train_causal_lm.py (Accelerate + DeepSpeed incremental pre-training / SFT of StarCoder-based CodeS)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
      "Accelerator() already imports torch_npu when it detects NPUs"),
    C('attn_implementation = "flash_attention_2"', "attention_kernel", "replace", True,
      'attn_implementation = "sdpa"',
      "flash-attn cannot be installed on NPU; SDPA dispatches to the NPU fused attention"),
    C("torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
      'accelerator.print("max memory allocated: {:.2f} GB".format(torch.npu.max_memory_allocated() / 1024**3))',
      "log only"),
])

E("codes_accel_config", "accelerate_config_bf16.yaml", "device_branch_or_abstraction",
  "RUCKBReasoning/codes accelerate_config_bf16.yaml (DeepSpeed ZeRO-2, bf16)", [])

E("codes_train_sh", "train_codes_1b_bird.sh", "device_branch_or_abstraction",
  "RUCKBReasoning/codes train_codes_*.sh (accelerate launch)", [])

E("codes_eval_sh", "run_few_shot_evaluations.sh", "explicit_replacement",
  "RUCKBReasoning/codes few-shot evaluation launcher", [
    C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, f"export {VIS}=$GPU",
      "device_map='auto' spreads the LLM over every visible device; without the Ascend variable all NPUs are used"),
])

E("codes_requirements", "requirements.txt", "explicit_replacement",
  "RUCKBReasoning/codes requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CPU torch build on x86"),
    C("torch==2.1.0+cu118", "import_torch_npu", "replace", True, "torch==2.1.0", "CUDA local-version build"),
    C("transformers==4.36.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "install the adapter"),
    C("flash-attn==2.3.6", "attention_kernel", "removal", True, None,
      "needs nvcc/CUDA to build; the install fails on an Ascend host"),
])

E("codes_schema_filter", "schema_item_filter.py", "explicit_replacement",
  "RUCKBReasoning/codes schema_item_filter.py (RESDSQL-style schema item classifier inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "runs standalone (__main__) and is the first importer in text2sql_few_shot.py"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "input placement guard"),
    C("encoder_input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_ids = encoder_input_ids.npu()", "inputs to NPU"),
    C("encoder_input_attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()", "inputs to NPU"),
    C("# the classifier is small, one GPU is enough", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # the classifier is small, one NPU is enough", "model placement guard"),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
      "classifier to NPU"),
])

E("codes_few_shot", "text2sql_few_shot.py", "explicit_replacement",
  "RUCKBReasoning/codes text2sql_few_shot.py (SimCSE demonstration retrieval + beam search with execution check)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
      "schema_item_filter (imported at the top) already imports torch_npu after the port"),
    C("torch.cuda.empty_cache()  # free the classifier", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free the classifier before loading SimCSE", "memory hygiene only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene only"),
    C('simsce_model = SimCSE("princeton-nlp/sup-simcse-roberta-base")', "device_type", "replace", False,
      'simsce_model = SimCSE("princeton-nlp/sup-simcse-roberta-base", device="npu")',
      "SimCSE picks cuda-or-cpu internally; on NPU hosts retrieval silently runs on CPU (slower, same result)"),
])

E("codes_sft_data", "utils/load_sft_dataset.py", "explicit_replacement",
  "RUCKBReasoning/codes utils/load_sft_dataset.py (prompt building / label masking)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene after the schema classifier"),
])
