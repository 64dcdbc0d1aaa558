"""Labels for probe240: radiology report generation / medical vision-language models (CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit.  `sub` must match exactly one line
("=text" matches a line whose stripped text equals text).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN environment must be sourced before torch_npu can be imported "
                "(otherwise ImportError libhccl.so / ASCEND_OPP_PATH not set)")

# ---------------------------------------------------------------- R2Gen ----------------------------------
E("r2gen-main-train", "main_train.py", "explicit_replacement",
  "R2Gen main_train.py (argparse with --n_gpu, seeds, Trainer)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; the project pins torch 1.x/2.1 where the NPU backend is only registered by an explicit import"),
  ])

E("r2gen-trainer", "modules/trainer.py", "explicit_replacement",
  "R2Gen modules/trainer.py (BaseTrainer._prepare_device counting torch.cuda.device_count, DataParallel)",
  [
      C("self.model = torch.nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "replace", True,
        "self.model = model  # torch.nn.DataParallel is unsupported on NPU; use one NPU or DDP",
        "torch.nn.DataParallel is marked unsupported (✘) in Ascend's API list; reached whenever --n_gpu > 1"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "n_gpu = torch.npu.device_count()",
        "returns 0 on an NPU host, so the trainer prints the 'no GPU' warning and silently trains on CPU"),
      C("device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu:0' if n_gpu_use > 0 else 'cpu')",
        "hard-coded CUDA device string"),
      C("checkpoint = torch.load(resume_path)", "tensor_to_device", "replace", False,
        "checkpoint = torch.load(resume_path, map_location=self.device)",
        "resumes checkpoints written by this trainer; only a checkpoint written on a GPU box needs the map_location "
        "(torch refuses to deserialize CUDA storages without CUDA)"),
  ])

E("r2gen-att-model", "modules/att_model.py", "explicit_replacement",
  "R2Gen / self-critical.pytorch modules/att_model.py (sampling with trigram blocking)",
  [
      C("mask = torch.zeros(logprobs.size(), requires_grad=False).cuda()  # batch_size x vocab_size",
        "tensor_to_device", "replace", True,
        "mask = torch.zeros(logprobs.size(), requires_grad=False).to(logprobs.device)  # batch_size x vocab_size",
        ".cuda() raises without CUDA; reached in greedy/sample decoding with block_trigrams=1 (the R2Gen default)"),
      C("=mask = torch.zeros(logprobs.size(), requires_grad=False).cuda()", "tensor_to_device", "replace", True,
        "mask = torch.zeros(logprobs.size(), requires_grad=False).to(logprobs.device)",
        "same trigram mask in the diverse-sampling path"),
  ])

E("r2gen-run-mimic", "run_mimic_cxr.sh", "explicit_replacement",
  "R2Gen run_mimic_cxr.sh with a lab wrapper (GPU pinning, nvidia-smi log)",
  [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=1", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=1",
        "ignored on NPU: the job would silently run on device 0 instead of the reserved device 1"),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False,
        "npu-smi info > ${SAVE_DIR}/npu_info.txt",
        "only logs hardware info; nvidia-smi is absent on Ascend hosts (script has no set -e, so it just prints an error)"),
  ])

E("r2gen-requirements", "requirements.txt", "explicit_replacement",
  "R2Gen requirements (torch 1.7.1 / torchvision 0.8.2)",
  [
      C("torch==1.7.1", "import_torch_npu", "replace", True, "torch==2.1.0",
        "no torch_npu release exists for torch 1.7.1 (matrix starts at 1.5.0/1.8.1 and continues with 1.11, 2.x)"),
      C("torchvision==0.8.2", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "torchvision must match the new torch pin"),
      C("=pycocoevalcap", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch_npu wheel paired with torch 2.1.0 (v2.1.0-7.0.0, CANN 8.1.RC1)"),
  ])

# ---------------------------------------------------------------- CheXzero -------------------------------
E("chexzero-zero-shot", "zero_shot.py", "explicit_replacement",
  "CheXzero zero_shot.py (CLIP zero-shot CXR evaluation, ensembles)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "module is driven directly from notebooks / run scripts and must register the NPU backend"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "silently falls back to CPU on an NPU host"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
        "load_clip picks its own device; silently CPU on NPU"),
      C("zeroshot_weights = torch.stack(zeroshot_weights, dim=1).cuda()", "tensor_to_device", "replace", True,
        "zeroshot_weights = torch.stack(zeroshot_weights, dim=1).to(device)",
        ".cuda() raises without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised; NPU cache is simply not released between ensemble members"),
  ])

E("chexzero-train", "train.py", "explicit_replacement",
  "CheXzero train.py / run_train.py (load_data with torch.cuda.set_device, CrossEntropyLoss().cuda())",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script (__main__)"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "decides the training device; False on NPU, so training silently runs on CPU"),
      C('dev = "cuda:0"', "device_type", "replace", True, 'dev = "npu:0"', "CUDA device string"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "torch.cuda.set_device raises on a build without CUDA"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
        "load_clip picks its own device independently of load_data"),
      C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", True,
        "criterion = nn.CrossEntropyLoss().to(device)", "Module.cuda() raises without CUDA"),
      C("torch.cuda.manual_seed_all(config.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(config.seed)",
        "silently a no-op without CUDA; torch.manual_seed on the line above already seeds the NPU generator"),
  ])

E("chexzero-clip-load", "clip/clip.py", "explicit_replacement",
  "OpenAI CLIP clip.py as vendored by CheXzero (clip.load with a CUDA default device)",
  [
      C('def load(name: str, device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu",',
        "device_type", "replace", True,
        'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu",',
        "default device silently resolves to CPU on an NPU host for callers that omit device="),
  ])

E("chexzero-environment", "environment.yml", "explicit_replacement",
  "conda environment.yml of CheXzero-style projects (pytorch + cudatoolkit from the pytorch/nvidia channels)",
  [
      C("=- nvidia", "device_type", "removal", False, None, "CUDA-only channel; harmless once no CUDA package is requested"),
      C("=- pytorch=1.10.1", "device_type", "removal", True, None,
        "CUDA conda build of a torch version with no torch_npu release; torch moves to the pip section"),
      C("=- torchvision=0.11.2", "import_torch_npu", "removal", True, None,
        "must match the new torch; installed from pip with it"),
      C("=- cudatoolkit=11.3", "device_type", "removal", False, None,
        "CUDA runtime is dead weight on Ascend (unconfirmed whether it even resolves on aarch64)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch==2.1.0",
        "CPU/aarch64 torch wheel from PyPI that torch_npu 2.1.0 pairs with"),
      C("=- ftfy", "import_torch_npu", "npu_only_addition", True, "      - torchvision==0.16.0",
        "torchvision matching torch 2.1.0"),
      C("=- regex", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
        "the Ascend backend itself"),
  ])

# ---------------------------------------------------------------- MedCLIP --------------------------------
E("medclip-modeling", "medclip/modeling_medclip.py", "explicit_replacement",
  "MedCLIP medclip/modeling_medclip.py (MedCLIPModel / PromptClassifier with .cuda() in forward)",
  [
      C("state_dict = torch.load(os.path.join(checkpoint, constants.WEIGHTS_NAME))", "tensor_to_device", "replace",
        False, "state_dict = torch.load(os.path.join(checkpoint, constants.WEIGHTS_NAME), map_location='cpu')",
        "user-supplied vision checkpoint; only GPU-written files need map_location"),
      C("medclip_state = torch.load(os.path.join(checkpoint, constants.WEIGHTS_NAME))", "tensor_to_device",
        "replace", True,
        "medclip_state = torch.load(os.path.join(checkpoint, constants.WEIGHTS_NAME), map_location='cpu')",
        "loads the released MedCLIP weights, which were saved from a CUDA model; torch cannot deserialize CUDA "
        "storages without CUDA"),
      C("state_dict = torch.load(os.path.join(checkpoint, 'pytorch_model.bin'))", "tensor_to_device", "replace",
        False, "state_dict = torch.load(os.path.join(checkpoint, 'pytorch_model.bin'), map_location='cpu')",
        "user checkpoint of this codebase; fine if it was written on NPU, fails if written on GPU"),
      C("pretrained_state = torch.load(os.path.join(input_dir, constants.WEIGHTS_NAME))", "tensor_to_device",
        "replace", True,
        "pretrained_state = torch.load(os.path.join(input_dir, constants.WEIGHTS_NAME), map_location='cpu')",
        "from_pretrained() loads the downloaded GPU-saved release weights"),
      C("input_ids = input_ids.to('cuda')", "tensor_to_device", "replace", True, "input_ids = input_ids.to('npu')",
        "hard-coded CUDA device"),
      C("attention_mask = attention_mask.to('cuda')", "tensor_to_device", "replace", True,
        "attention_mask = attention_mask.to('npu')", "hard-coded CUDA device"),
      C("=input_ids = input_ids.cuda()", "tensor_to_device", "replace", True, "input_ids = input_ids.npu()",
        ".cuda() raises without CUDA"),
      C("=attention_mask = attention_mask.cuda()", "tensor_to_device", "replace", True,
        "attention_mask = attention_mask.npu()", ".cuda() raises without CUDA"),
      C("=pixel_values = pixel_values.cuda()", "tensor_to_device", "replace", True,
        "pixel_values = pixel_values.npu()", ".cuda() raises without CUDA"),
      C("pixel_values = pixel_values.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "pixel_values = pixel_values.npu(non_blocking=True)", "zero-shot PromptClassifier path"),
      C("for k in cls_text.keys(): inputs[k] = cls_text[k].cuda()", "tensor_to_device", "replace", True,
        "for k in cls_text.keys(): inputs[k] = cls_text[k].npu()", "prompt tensors moved with .cuda()"),
      C("pixel_values = pixel_values.to('cuda')", "tensor_to_device", "replace", True,
        "pixel_values = pixel_values.to('npu')", "supervised classifier path"),
      C("labels = labels.cuda().float()", "tensor_to_device", "replace", True, "labels = labels.npu().float()",
        ".cuda() raises without CUDA"),
  ])

E("medclip-trainer", "medclip/trainer.py", "explicit_replacement",
  "MedCLIP medclip/trainer.py (sentence-transformers style fit loop with torch.cuda.amp)",
  [
      C("=from torch.cuda.amp import autocast", "amp", "replace", True, "from torch_npu.npu.amp import autocast",
        "torch.cuda.amp.autocast is disabled (with a warning) when CUDA is unavailable, so use_amp=True silently "
        "trains in fp32"),
      C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
        "CUDA GradScaler disables itself without CUDA; pairs with the autocast change"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "Module.cuda() raises without CUDA"),
  ])

E("medclip-pretrain-example", "examples/run_medclip_pretrain.py", "explicit_replacement",
  "MedCLIP examples/run_medclip_pretrain.py (CUDA_VISIBLE_DEVICES in os.environ, model.cuda(), use_amp)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("os.environ['CUDA_VISIBLE_DEVICES']='0'", "env_var", "replace", False,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES']='0'",
        "pins device 0, which is what the NPU runtime picks anyway"),
      C('device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", False,
        'device = "npu:0" if torch.npu.is_available() else "cpu"',
        "variable is never used; placement happens through .cuda() below"),
      C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
        "performance only: torch 2.1's DataLoader pins only when CUDA is available unless pin_memory_device is "
        "given (unconfirmed in the knowledge notes)"),
      C("shuffle=False, pin_memory=True, num_workers=4)", "pin_memory", "replace", False,
        "shuffle=False, pin_memory=True, pin_memory_device='npu', num_workers=4)",
        "same as the train loader (performance only, unconfirmed)"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA"),
      C("=loss_model.cuda()", "tensor_to_device", "replace", True, "loss_model.npu()",
        "Module.cuda() raises without CUDA"),
  ])

# ---------------------------------------------------------------- LLaVA-Med ------------------------------
E("llavamed-train-mem", "llava/train/train_mem.py", "explicit_replacement",
  "LLaVA-Med llava/train/train_mem.py (flash-attn monkey patch before importing transformers)",
  [
      C("=# Need to call this before importing transformers.", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401  register the NPU backend before transformers picks a device",
        "entry point for torchrun/deepspeed; the pinned torch 2.0.1 has no backend autoload"),
  ])

E("llavamed-flash-attn-patch", "llava/train/llama_flash_attn_monkey_patch.py", "kernel_rewrite",
  "FastChat/LLaVA llama_flash_attn_monkey_patch.py (flash_attn_unpadded_qkvpacked_func, unpad/pad_input)",
  [
      C("from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func", "attention_kernel",
        "replace", True, "import torch_npu",
        "flash-attn cannot be installed on Ascend; the NPU FlashAttention is torch_npu.npu_fusion_attention"),
      C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "removal", True, None,
        "flash_attn padding helpers are gone with the package; varlen handled by TND layout + actual_seq_qlen"),
      C("output = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
        "output = torch_npu.npu_fusion_attention(q, k, v, nheads, 'TND', atten_mask=causal_mask, "
        "scale=1.0 / math.sqrt(head_dim), actual_seq_qlen=cu_q_lens[1:].tolist(), "
        "actual_seq_kvlen=cu_q_lens[1:].tolist(), sparse_mode=3)[0]",
        "packed varlen causal FA on CUDA -> npu_fusion_attention (TND, cumulative lengths, causal mask + sparse_mode)"),
      C("x_unpad, indices, cu_q_lens, max_s = unpad_input(x, key_padding_mask)", "attention_kernel", "replace",
        True,
        "indices = torch.nonzero(key_padding_mask.flatten(), as_tuple=False).flatten(); "
        "x_unpad = rearrange(x, 'b s d -> (b s) d')[indices]; "
        "cu_q_lens = F.pad(key_padding_mask.sum(-1, dtype=torch.int32).cumsum(0, dtype=torch.int32), (1, 0))",
        "unpad_input came from flash_attn; rebuild indices and cumulative lengths with torch ops"),
      C("output_unpad = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
        "output_unpad = torch_npu.npu_fusion_attention(q_unpad, k_unpad, v_unpad, nheads, 'TND', "
        "atten_mask=causal_mask, scale=1.0 / math.sqrt(head_dim), actual_seq_qlen=cu_q_lens[1:].tolist(), "
        "actual_seq_kvlen=cu_q_lens[1:].tolist(), sparse_mode=3)[0]",
        "padded-batch path of the same kernel"),
      C("output = rearrange(pad_input(rearrange(output_unpad, 'nnz h d -> nnz (h d)'),", "attention_kernel",
        "replace", True,
        "output = rearrange(torch.zeros(bsz * q_len, nheads * head_dim, dtype=output_unpad.dtype, "
        "device=output_unpad.device).index_copy_(0, indices, rearrange(output_unpad, 'nnz h d -> nnz (h d)')).view(bsz, q_len, -1),",
        "pad_input came from flash_attn; scatter back with index_copy_"),
      C("query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin, position_ids)",
        "npu_fused_op", "replace", False,
        "cos, sin = cos.squeeze(1).squeeze(0)[position_ids].unsqueeze(1), sin.squeeze(1).squeeze(0)[position_ids].unsqueeze(1); "
        "query_states, key_states = torch_npu.npu_rotary_mul(query_states, cos, sin), torch_npu.npu_rotary_mul(key_states, cos, sin)",
        "performance only: fused RoPE while the attention is being rewritten anyway"),
      C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "removal",
        True, None,
        "sm80 check is meaningless on Ascend; torch.cuda.get_device_capability raises without CUDA "
        "(and returns None under transfer_to_npu, breaking the tuple unpacking)"),
      C("if cuda_major < 8:", "device_capability_check", "replace", True, "if not torch.npu.is_available():",
        "the A100/H100 head-dim warning has no NPU equivalent; keep only an availability warning"),
  ])

E("llavamed-train", "llava/train/train.py", "explicit_replacement",
  "LLaVA / LLaVA-Med llava/train/train.py (HF Trainer, DeepSpeed ZeRO-3 save path, LoRA / bnb options)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "train.py is also launched directly (`python llava/train/train.py`, has a __main__ block)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "DeepSpeed save path; torch.cuda.synchronize raises without CUDA"),
  ])

E("llavamed-builder", "llava/model/builder.py", "explicit_replacement",
  "LLaVA(-Med) llava/model/builder.py load_pretrained_model(device='cuda', load_8bit, use_flash_attn)",
  [
      C('device_map="auto", device="cuda", use_flash_attn=False, **kwargs):', "device_type", "replace", True,
        'device_map="auto", device="npu", use_flash_attn=False, **kwargs):',
        "default device used by every eval/CLI caller; vision tower and projector are moved to it"),
      C("kwargs['load_in_8bit'] = True", "unsupported_op_workaround", "replace", False,
        "raise ValueError('--load-8bit (bitsandbytes LLM.int8) is not available on Ascend NPU')",
        "only with --load-8bit; bitsandbytes' NPU port covers NF4 4-bit, LLM.int8 is not listed for NPU"),
      C("kwargs['attn_implementation'] = 'flash_attention_2'", "attention_kernel", "replace", False,
        "kwargs['attn_implementation'] = 'sdpa'",
        "only with --use-flash-attn; flash-attn cannot be installed on NPU, SDPA dispatches to the NPU FA kernel"),
  ])

E("llavamed-model-vqa", "llava/eval/model_vqa_med.py", "explicit_replacement",
  "LLaVA-Med llava/eval/model_vqa_med.py (chunked VQA evaluation, .cuda() inputs)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("return_tensors='pt').unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
        "input_ids = tokenizer_image_token(prompt, tokenizer, IMAGE_TOKEN_INDEX, return_tensors='pt').unsqueeze(0).npu()",
        ".cuda() raises without CUDA"),
      C("images=image_tensor.unsqueeze(0).half().cuda(),", "tensor_to_device", "replace", True,
        "images=image_tensor.unsqueeze(0).half().npu(),", ".cuda() raises without CUDA"),
  ])

E("llavamed-model-worker", "llava/serve/model_worker.py", "explicit_replacement",
  "LLaVA(-Med) llava/serve/model_worker.py (FastAPI worker, --device cuda)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("except torch.cuda.CudaError as e:", "torch_cuda_api", "replace", False, "except RuntimeError as e:",
        "never matches an NPU failure; the generic `except Exception` below still answers the request "
        "(which NPU exception type is raised is unconfirmed)"),
      C('parser.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
        'parser.add_argument("--device", type=str, default="npu")',
        "default device handed to load_pretrained_model and used for input_ids"),
  ])

E("llavamed-pretrain-sh", "scripts/pretrain_llava_med_7b.sh", "explicit_replacement",
  "LLaVA-Med stage-1 launch script (torchrun --nproc_per_node=8, FSDP, --tf32)",
  [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
      C("--tf32 True \\", "amp", "removal", True, None,
        "HF TrainingArguments raises ValueError('--tf32 requires Ampere or a newer GPU arch...') when "
        "is_torch_tf32_available() is False, which it is without CUDA"),
      C('--fsdp "full_shard auto_wrap" \\', "distributed_framework", "replace", False,
        "--deepspeed ./scripts/zero2.json \\",
        "unconfirmed: Ascend's 2.7.1 API table marks FullyShardedDataParallel ✘ while transfer_to_npu patches it; "
        "DeepSpeed ZeRO is the safer choice"),
  ])

E("llavamed-finetune-sh", "scripts/finetune_lora_zero3.sh", "explicit_replacement",
  "LLaVA-Med v1.5 LoRA + DeepSpeed ZeRO-3 fine-tune script",
  [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None,
        "NVLink P2P tuning; ignored by HCCL"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "NCCL logging knob; HCCL/CANN logging is controlled by ASCEND_GLOBAL_LOG_LEVEL"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL reads its own variable; on this single-node (--include localhost) run the NIC choice does not matter, "
        "multi-node it would"),
      C("--tf32 True \\", "amp", "removal", True, None,
        "HF TrainingArguments raises ValueError for --tf32 without CUDA (is_torch_tf32_available() is False)"),
  ])

E("llavamed-eval-batch-sh", "scripts/eval_vqa_batch.sh", "explicit_replacement",
  "LLaVA-style sharded evaluation script (one process per GPU via CUDA_VISIBLE_DEVICES)",
  [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
      C('gpu_list="${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}"', "env_var", "replace", False,
        'gpu_list="${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}"',
        "only the default list is used on NPU hosts, which is usually right"),
      C("CUDA_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m llava.eval.model_vqa_med \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m llava.eval.model_vqa_med \\",
        "ignored on NPU: all shards load the 7B model onto NPU 0 (OOM / serialised) instead of one per device"),
  ])

E("llavamed-pyproject", "pyproject.toml", "explicit_replacement",
  "LLaVA(-Med) pyproject.toml (torch 2.0.1, transformers 4.31, accelerate 0.21, bitsandbytes, deepspeed extra)",
  [
      C('"torch==2.0.1",', "import_torch_npu", "npu_only_addition", True, '    "torch-npu==2.0.1.post1",',
        "torch 2.0.1 itself has a torch_npu release (v2.0.1-5.0.0, CANN 7.0.0), so only the backend is added"),
      C('"transformers==4.31.0",', "distributed_framework", "replace", True, '"transformers==4.37.2",',
        "native NPU support in transformers starts at 4.32.0; 4.31's TrainingArguments only know CUDA/CPU, "
        "so the Trainer silently places the model on CPU"),
      C('"accelerate==0.21.0",', "distributed_framework", "replace", True, '"accelerate==0.26.1",',
        "native NPU support in accelerate starts at 0.22.0"),
      C('"peft==0.4.0",', "distributed_framework", "replace", False, '"peft==0.7.1",',
        "peft is NPU-aware from 0.5.0; LoRA wrapping itself is device-agnostic, bump for consistency"),
      C('"bitsandbytes==0.41.0",', "unsupported_op_workaround", "removal", False, None,
        "CUDA-only build in this version; only used by the optional 4/8-bit paths (unconfirmed whether the "
        "install/import fails on Ascend hosts)"),
      C('"deepspeed==0.9.5",', "distributed_framework", "replace", True, '"deepspeed==0.14.4",',
        "0.9.5 predates a selectable/auto-detected 'npu' accelerator (DeepSpeed PR #3831) and the legacy "
        "deepspeed_npu plugin supports only 0.9.2; newer DeepSpeed ships accelerator/npu_accelerator.py (hccl)"),
  ])

E("llavamed-dockerfile", "Dockerfile", "explicit_replacement",
  "LLaVA-Med Dockerfile (nvidia/cuda base, cu117 wheels, flash-attn build)",
  [
      C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
        "FROM ascendai/cann:7.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image; the Ascend image must carry CANN (its ENV lines replace sourcing set_env.sh)"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "only used by nvcc extension builds"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "points at a CUDA toolkit that is not there"),
      C("RUN pip install torch==2.0.1+cu117", "device_type", "replace", True,
        "RUN pip install torch==2.0.1 torchvision==0.15.2 --index-url https://download.pytorch.org/whl/cpu",
        "+cu117 wheels and the cu117 index; torch_npu needs the CPU torch build"),
      C('RUN pip install -e ".[train]"', "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch-npu==2.0.1.post1 pyyaml decorator attrs",
        "installs the Ascend backend (and its Python deps) next to the CPU torch"),
      C("RUN pip install flash-attn==1.0.9 --no-build-isolation", "attention_kernel", "removal", True, None,
        "flash-attn needs nvcc/CUDA to build; the image build fails"),
      C("ENV NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob; ignored by HCCL"),
  ])

# ---------------------------------------------------------------- BiomedCLIP / open_clip -----------------
E("biomedclip-zero-shot", "biomedclip_zero_shot.py", "device_branch_or_abstraction",
  "BiomedCLIP model-card style zero-shot script on open_clip (create_model_from_pretrained(device=...))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C('def load_biomedclip(device: str = "cuda", precision: str = "fp32"):', "device_type", "replace", False,
        'def load_biomedclip(device: str = "npu", precision: str = "fp32"):',
        "default only; main() always passes the detected device"),
      C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
        "torch_cuda_api", "replace", True,
        "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
        "raises without CUDA whenever --benchmark is given"),
      C("with torch.cuda.amp.autocast(enabled=amp_enabled):", "amp", "replace", True,
        "with torch.autocast(device_type=device.type, enabled=amp_enabled):",
        "--precision amp would silently run in fp32 (CUDA autocast disables itself without CUDA)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA under --benchmark"),
      C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
        "replace", True,
        'device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
        "silently CPU on an NPU host"),
  ])

E("openclip-distributed", "src/training/distributed.py", "device_branch_or_abstraction",
  "open_clip src/training/distributed.py init_distributed_device (pre-NPU version used by BiomedCLIP fine-tuning)",
  [
      C("=if torch.cuda.is_available():", "device_type", "add_branch", True,
        "elif torch.npu.is_available(): device = 'npu:%d' % args.local_rank if args.distributed and not "
        "args.no_set_device_rank else 'npu:0'; torch.npu.set_device(device)",
        "without an NPU branch the device falls through to 'cpu' (and DDP would run on CPU tensors)"),
  ])

E("openclip-precision", "src/training/precision.py", "explicit_replacement",
  "open_clip src/training/precision.py get_autocast",
  [
      C("return torch.cuda.amp.autocast", "amp", "replace", True,
        "return lambda: torch.autocast(device_type='npu', dtype=torch.float16)",
        "default --precision amp: CUDA autocast is disabled without CUDA, so training silently runs fp32"),
      C("return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", "replace", True,
        "return lambda: torch.autocast(device_type='npu', dtype=torch.bfloat16)", "amp_bf16 path, same problem"),
  ])

E("openclip-main", "src/training/main.py", "explicit_replacement",
  "open_clip src/training/main.py (GradScaler from torch.cuda.amp, tf32 flags, DDP)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
        "default precision is amp; the CUDA GradScaler disables itself without CUDA so fp16 grads are not scaled"),
  ])

# ---------------------------------------------------------------- XrayGPT (MiniGPT-4 / LAVIS) ------------
E("xraygpt-dist-utils", "xraygpt/common/dist_utils.py", "explicit_replacement",
  "XrayGPT / MiniGPT-4 / LAVIS common/dist_utils.py init_distributed_mode",
  [
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()",
        "device_count() is 0 on NPU -> ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
        "NCCL is not available on Ascend; HCCL is the collective backend"),
  ])

E("xraygpt-mini-gpt4", "xraygpt/models/mini_gpt4.py", "explicit_replacement",
  "XrayGPT xraygpt/models/mini_gpt4.py (BLIP-2 Q-Former + Vicuna, maybe_autocast, low_resource 8-bit)",
  [
      C("load_in_8bit=True,", "unsupported_op_workaround", "replace", False, "torch_dtype=torch.float16,",
        "only with low_resource=True; bitsandbytes LLM.int8 is not listed for NPU"),
      C("return torch.cuda.amp.autocast(dtype=dtype)", "amp", "replace", True,
        "return torch.autocast(device_type=self.device.type, dtype=dtype)",
        "on NPU self.device is not cpu, so this CUDA autocast is entered but disabled; the fp16 EVA ViT then "
        "receives fp32 images and the conv fails with a dtype mismatch"),
  ])

E("xraygpt-runner-base", "xraygpt/runners/runner_base.py", "explicit_replacement",
  "XrayGPT / LAVIS runners/runner_base.py (device from config, cuda_enabled, GradScaler, PrefetchLoader)",
  [
      C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
        "self._scaler = torch.npu.amp.GradScaler()",
        "run.amp: True -> CUDA scaler disables itself without CUDA"),
      C('return self.device.type == "cuda"', "device_type", "replace", True,
        'return self.device.type in ("cuda", "npu")',
        "cuda_enabled=False on NPU means prepare_sample() never moves batches to the device -> device mismatch"),
      C("loader = iter(DataLoader(dataset, batch_size=bsz, num_workers=num_workers, pin_memory=True))", "pin_memory",
        "replace", False,
        "loader = iter(DataLoader(dataset, batch_size=bsz, num_workers=num_workers, pin_memory=True, pin_memory_device='npu'))",
        "performance only (unconfirmed): pinning is skipped when CUDA is unavailable and no pin_memory_device is set"),
      C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
        "performance only (unconfirmed), map-style loader"),
  ])

E("xraygpt-dataloader-utils", "xraygpt/datasets/datasets/dataloader_utils.py", "explicit_replacement",
  "LAVIS / XrayGPT datasets/dataloader_utils.py PrefetchLoader on a side CUDA stream",
  [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "creating a CUDA stream raises without CUDA"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "CUDA stream context"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "CUDA stream sync"),
      C("batch.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "batch.record_stream(torch.npu.current_stream())", "record_stream needs the NPU stream"),
  ])

E("xraygpt-train-config", "train_configs/xraygpt_mimic_pretrain.yaml", "explicit_replacement",
  "XrayGPT train_configs/*.yaml (run.device: cuda, amp, distributed)",
  [
      C('device: "cuda"', "device_type", "replace", True, 'device: "npu"',
        "RunnerBase builds torch.device(run_cfg.device) from this value"),
  ])
