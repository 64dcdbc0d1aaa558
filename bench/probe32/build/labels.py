"""Labels for probe32 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"


# ---------------------------------------------------------------- LLaVA: training

E("llava_train", "llava/train/train.py", "explicit_replacement",
  "haotian-liu/LLaVA llava/train/train.py (HF Trainer + DeepSpeed ZeRO, QLoRA args; train_mem folded in)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script; torch.npu.synchronize() below needs torch_npu loaded and LLaVA pins torch 2.1.x (no backend autoload before 2.5.1)"),
    C('optim: str = field(default="adamw_torch")', "fused_optimizer", R, False,
      'optim: str = field(default="adamw_torch_npu_fused")',
      "performance only: fused AdamW (torch_npu NpuFusedAdamW) through the HF optimizer name; the transformers option name is not in the knowledge files (unconfirmed)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "reached on every ZeRO run's final save; torch.cuda.synchronize() raises without a CUDA build"),
    C('train(attn_implementation="flash_attention_2")', "attention_kernel", R, True,
      'train(attn_implementation="sdpa")',
      "flash-attn cannot be installed on NPU and transformers raises for flash_attention_2; SDPA dispatches to the NPU fused attention (transformers PR #36383)"),
])

E("llava_flash_attn_patch", "llava/train/llama_flash_attn_monkey_patch.py", "kernel_rewrite",
  "haotian-liu/LLaVA llava/train/llama_flash_attn_monkey_patch.py (packed-qkv varlen flash-attn for LLaMA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the rewritten forward calls torch_npu.npu_fusion_attention"),
    C("from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU; the try/except only switches between two flash-attn names, both fail"),
    C("flash_attn_varlen_qkvpacked_func as flash_attn_unpadded_qkvpacked_func", "attention_kernel", X, True, None,
      "fallback import from the same missing package; removed with the try block"),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", R, True,
      "from llava.train.padding_utils import unpad_input, pad_input  # pure-torch copies",
      "bert_padding is plain PyTorch but only ships inside the flash-attn wheel"),
    C("=output = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", R, True,
      'output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "TND", atten_mask=causal_mask, scale=self.head_dim ** -0.5, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]',
      "varlen flash kernel -> npu_fusion_attention TND layout with cumulative lengths and a causal sparse_mode (mapping as in transformers' npu_flash_attention)"),
    C("=output_unpad = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", R, True,
      'output_unpad = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "TND", atten_mask=causal_mask, scale=self.head_dim ** -0.5, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]',
      "same kernel on the padded-batch path (after unpad_input)"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", X, True, None,
      "Ampere-only warning; get_device_capability raises without a CUDA build (and returns None under transfer_to_npu, so the unpacking fails) — drop the check"),
])

E("llava_builder", "llava/model/builder.py", "explicit_replacement",
  "haotian-liu/LLaVA llava/model/builder.py (load_pretrained_model: 8-bit/4-bit bitsandbytes, flash-attn switch)", [
    C('device_map="auto", device="cuda", use_flash_attn=False', "device_type", R, False,
      'device_map="auto", device="npu", use_flash_attn=False',
      "in this function `device` only chooses the device_map: the default keeps device_map='auto', which accelerate (>=0.22) places on NPUs (unconfirmed); change it so callers forwarding the default get a usable device"),
    C("kwargs['load_in_8bit'] = True", "unsupported_op_workaround", R, False,
      "raise NotImplementedError('LLM.int8 has no Ascend backend; use --load-4bit or fp16')",
      "--load-8bit: bitsandbytes' NPU support covers NF4 only, LLM.int8 is not listed for NPU (failure unconfirmed)"),
    C("kwargs['quantization_config'] = BitsAndBytesConfig(", "unsupported_op_workaround", R, False,
      "kwargs['quantization_config'] = BitsAndBytesConfig(  # requires the multi-backend bitsandbytes build with the Ascend backend",
      "--load-4bit: NF4 on NPU only with bitsandbytes' multi-backend build (PR #1422); works or not depending on the installed build (unconfirmed)"),
    C("kwargs['attn_implementation'] = 'flash_attention_2'", "attention_kernel", R, True,
      "kwargs['attn_implementation'] = 'sdpa'",
      "--use-flash-attn: flash-attn cannot be installed on NPU, transformers raises ImportError"),
])

# ---------------------------------------------------------------- LLaVA: serving / eval

E("llava_model_worker", "llava/serve/model_worker.py", "explicit_replacement",
  "haotian-liu/LLaVA llava/serve/model_worker.py (FastAPI streaming worker, FastChat-style --gpus)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script using the 'npu' device; torch 2.1.x needs the explicit import"),
    C('parser.add_argument("--device", type=str, default="cuda")', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu")',
      "input_ids are moved with .to(self.device); 'cuda' raises without a CUDA build"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "the NPU runtime selects devices by ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES leaves every worker on all NPUs"),
    C("except torch.cuda.CudaError as e:", "torch_cuda_api", R, False,
      "except RuntimeError as e:  # NPU runtime errors surface as RuntimeError",
      "never matches on NPU, but the next `except Exception` sends the same reply: harmless"),
])

E("llava_gradio_web_server", "llava/serve/gradio_web_server.py", "device_branch_or_abstraction",
  "haotian-liu/LLaVA llava/serve/gradio_web_server.py (controller client UI; no device code)", [])

E("llava_cli", "llava/serve/cli.py", "explicit_replacement",
  "haotian-liu/LLaVA llava/serve/cli.py (interactive single-image chat)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script using the NPU device"),
    C(".unsqueeze(0).cuda()", "tensor_to_device", R, True,
      "input_ids = tokenizer_image_token(prompt, tokenizer, IMAGE_TOKEN_INDEX, return_tensors='pt').unsqueeze(0).to(model.device)",
      "hard-coded .cuda() on the prompt ids"),
    C('parser.add_argument("--device", type=str, default="cuda")', "device_type", R, False,
      'parser.add_argument("--device", type=str, default="npu")',
      "only forwarded to load_pretrained_model, where 'cuda' keeps device_map='auto' (works via accelerate, unconfirmed)"),
])

E("llava_clip_encoder", "llava/model/multimodal_encoder/clip_encoder.py", "device_branch_or_abstraction",
  "haotian-liu/LLaVA clip_encoder.py (CLIPVisionTower + S2 multi-scale wrapper; device follows the weights)", [])

E("llava_vqa_loader", "llava/eval/model_vqa_loader.py", "explicit_replacement",
  "haotian-liu/LLaVA llava/eval/model_vqa_loader.py (chunked batch VQA eval with a DataLoader)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script using the NPU device"),
    C("input_ids = input_ids.to(device='cuda', non_blocking=True)", "tensor_to_device", R, True,
      "input_ids = input_ids.to(device=model.device, non_blocking=True)", "hard-coded CUDA device"),
    C("images=image_tensor.to(dtype=torch.float16, device='cuda', non_blocking=True)", "tensor_to_device", R, True,
      "images=image_tensor.to(dtype=torch.float16, device=model.device, non_blocking=True),", "hard-coded CUDA device"),
])

E("llava_eval_sh", "scripts/v1_5/eval/run_vqa_suite.sh", "explicit_replacement",
  "LLaVA scripts/v1_5/eval/*.sh (one process per GPU via CUDA_VISIBLE_DEVICES, answers merged)", [
    C('gpu_list="${CUDA_VISIBLE_DEVICES:-0}"', "env_var", R, True, 'gpu_list="${ASCEND_RT_VISIBLE_DEVICES:-0}"',
      "the list of devices to shard over must come from the NPU variable"),
    C("=CUDA_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m llava.eval.model_vqa_loader \\", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m llava.eval.model_vqa_loader \\",
      "CUDA_VISIBLE_DEVICES does not pin NPUs: every chunk process would load its model onto npu:0"),
    C('=CUDA_VISIBLE_DEVICES="${GPULIST[$IDX]}" python -m llava.eval.model_vqa_loader \\', "env_var", R, True,
      'ASCEND_RT_VISIBLE_DEVICES="${GPULIST[$IDX]}" python -m llava.eval.model_vqa_loader \\', "same, TextVQA"),
    C("=CUDA_VISIBLE_DEVICES=${GPULIST[IDX]} python3 -m llava.eval.model_vqa_loader \\", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPULIST[IDX]} python3 -m llava.eval.model_vqa_loader \\", "same, VQAv2"),
])

E("llava_finetune_sh", "scripts/v1_5/finetune_task_lora.sh", "explicit_replacement",
  "LLaVA scripts/v1_5/finetune_task_lora.sh (deepspeed launcher, NCCL env, --tf32)", [
    C("NUM_GPUS=${1:-$(nvidia-smi --list-gpus | wc -l)}", "device_type", R, True,
      'NUM_GPUS=${1:-$(python -c "import torch, torch_npu; print(torch.npu.device_count())")}',
      "nvidia-smi does not exist on an NPU host; under set -euo pipefail the script aborts here"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS-1)))}",
      "device selection variable of the NPU runtime"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", X, False, None, "NCCL tuning, ignored by HCCL"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL tuning, ignored by HCCL (HCCL_* variables cover RoCE)"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL logging, ignored by HCCL"),
    C('echo "Training on ${NUM_GPUS} GPU(s): ${CUDA_VISIBLE_DEVICES}"', "env_var", R, True,
      'echo "Training on ${NUM_GPUS} NPU(s): ${ASCEND_RT_VISIBLE_DEVICES}"',
      "once the export is renamed, CUDA_VISIBLE_DEVICES is unset and `set -u` aborts on this line"),
    C("--tf32 True", "device_capability_check", R, True, "--tf32 False \\",
      "TrainingArguments raises ('--tf32 requires Ampere or a newer GPU arch') when is_torch_tf32_available() is False, which it is on NPU (transformers 4.37 behaviour, from memory); Ascend's HF32 is torch.npu.matmul.allow_hf32"),
])

E("llava_zero3_json", "scripts/zero3_offload.json", "device_branch_or_abstraction",
  "LLaVA scripts/zero3_offload.json (DeepSpeed ZeRO-3 with CPU offload; no device-specific key)", [])

E("llava_pyproject", "pyproject.toml", "explicit_replacement",
  "haotian-liu/LLaVA pyproject.toml (torch 2.1.2 pin, bitsandbytes, train/flash extras)", [
    C("dependencies = [", "import_torch_npu", A, True, '"torch-npu==2.1.0.post12",',
      "the NPU backend package, pinned to the torch version"),
    C('"torch==2.1.2",', "device_type", R, True, '"torch==2.1.0",',
      "torch_npu is released per torch version (wheel = torch version + .postN): the 2.1 line exists for torch 2.1.0, not 2.1.2"),
    C('"torchvision==0.16.2",', "device_type", R, True, '"torchvision==0.16.0",',
      "0.16.2 requires torch==2.1.2; 0.16.0 is the release for torch 2.1.0"),
    C('"accelerate==0.21.0",', "distributed_framework", R, True, '"accelerate>=0.22.0",',
      "accelerate knows NPUs from 0.22.0 (device_map='auto', launcher, state)"),
    C('"bitsandbytes",', "unsupported_op_workaround", R, False,
      '"bitsandbytes; platform_machine == \'x86_64\'",  # NPU: multi-backend build, NF4 only',
      "needed only for --bits 4/8 and --load-4bit/8bit; the default CUDA build does nothing useful on NPU (unconfirmed which release)"),
    C('flash = ["flash-attn>=2.5.0"]', "attention_kernel", X, True, None,
      "`pip install -e .[flash]` fails on NPU: flash-attn cannot be built there; SDPA replaces it"),
])

E("llava_dockerfile", "Dockerfile", "explicit_replacement",
  "LLaVA-style serving Dockerfile (nvidia/cuda base, cu118 wheels, flash-attn, nvidia-smi healthcheck)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; an NPU container needs a CANN image (tag illustrative) and the Ascend driver mounts"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (devices can also be passed with --device at run time)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA runtime only; harmless"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", X, False, None, "only affects nvcc builds; harmless"),
    C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64", "env_var", R, False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> /root/.bashrc",
      "dangling CUDA path (harmless); CANN's set_env.sh must be sourced instead, usually already done by the CANN base image"),
    C("RUN pip install --no-cache-dir torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
      "device_type", R, True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels of a torch version torch_npu does not exist for; torch_npu builds against the CPU wheel"),
    C("RUN pip install --no-cache-dir flash-attn==2.5.2 --no-build-isolation", "attention_kernel", X, True, None,
      "build fails without CUDA and aborts docker build"),
    C("=ENV CUDA_VISIBLE_DEVICES=0", "env_var", R, True, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "device selection variable of the NPU runtime"),
    C("CMD nvidia-smi > /dev/null", "device_type", R, True,
      "CMD npu-smi info > /dev/null && curl -sf http://localhost:${GRADIO_PORT}/ > /dev/null || exit 1",
      "nvidia-smi is missing, so the container would always be reported unhealthy"),
])

# ---------------------------------------------------------------- MiniGPT-4 / BLIP-2 (LAVIS runner)

E("minigpt4_dist_utils", "minigpt4/common/dist_utils.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 minigpt4/common/dist_utils.py (LAVIS init_distributed_mode)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "module calls torch.npu.set_device / device_count"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: 0 CUDA devices -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "raises without a CUDA build"),
    C('args.dist_backend = "nccl"', "dist_backend", R, True, 'args.dist_backend = "hccl"', "NCCL is not available on NPU"),
])

E("minigpt4_runner", "minigpt4/runners/runner_base.py", "device_branch_or_abstraction",
  "Vision-CAIR/MiniGPT-4 runners/runner_base.py (LAVIS RunnerBase: GradScaler, cuda_enabled, DDP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "module uses torch.npu.amp.GradScaler after the port"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself when CUDA is unavailable: amp=True trains fp16 without loss scaling"),
    C('return self.device.type == "cuda"', "device_type", B, True,
      'return self.device.type in ("cuda", "npu")',
      "False on NPU, so prepare_sample() never moves the batch to the device while the model sits on the NPU"),
])

E("minigpt4_base_task", "minigpt4/tasks/base_task.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 tasks/base_task.py + LAVIS data_utils move_to_cuda (inner train loop with autocast)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "uses the npu device (tensor.npu(), autocast 'npu'); the entry script already imports torch_npu"),
    C("return tensor.cuda()", "tensor_to_device", R, True, "return tensor.npu()", "moves every batch to CUDA"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=use_amp):',
      "CUDA autocast does not cover NPU tensors: amp=True runs the fp16 ViT/LLaMA mix without autocast"),
])

E("minigpt4_blip2", "minigpt4/models/blip2.py", "device_branch_or_abstraction",
  "Vision-CAIR/MiniGPT-4 models/blip2.py (LAVIS Blip2Base.maybe_autocast, GatherLayer, sim matrix)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "autocast on the npu device type; torch_npu is loaded by the entry script"),
    C("return torch.cuda.amp.autocast(dtype=dtype)", "amp", R, True,
      "return torch.autocast(device_type=self.device.type, dtype=dtype)",
      "autocast is enabled for every non-CPU device but only as CUDA autocast: inactive on NPU, so fp16/fp32 modules mix without casts"),
])

E("minigpt4_model", "minigpt4/models/mini_gpt4.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 models/mini_gpt4.py (low_resource 8-bit LLaMA, ViT on CPU)", [
    C("from torch.cuda.amp import autocast as autocast", "amp", X, False, None,
      "unused import; imports fine on NPU (torch.cuda.amp exists in every build) — removed so CUDA autocast is not used by accident"),
    C("load_in_8bit=True,", "unsupported_op_workaround", R, False,
      "quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16),",
      "low_resource path: LLM.int8 is not in bitsandbytes' NPU support (NF4 only) — unconfirmed"),
    C("device_map={'': device_8bit}", "tensor_to_device", R, False, "device_map={'': f'npu:{device_8bit}'}",
      "bare int device in device_map; whether accelerate maps it to an NPU is unconfirmed, so spell it out"),
])

E("minigpt4_demo", "demo.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 demo.py (gradio demo, --gpu-id)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script using the npu device"),
    C(".to('cuda:{}'.format(args.gpu_id))", "tensor_to_device", R, True,
      "model = model_cls.from_config(model_config).to('npu:{}'.format(args.gpu_id))", "hard-coded CUDA device"),
    C("chat = Chat(model, vis_processor, device='cuda:{}'.format(args.gpu_id))", "device_type", R, True,
      "chat = Chat(model, vis_processor, device='npu:{}'.format(args.gpu_id))",
      "Chat moves image tensors and stop-word ids to this device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA (never initialised): cached NPU memory of the last session is not released"),
])

E("minigpt4_yaml", "train_configs/minigpt4_stage2_finetune.yaml", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 train_configs/minigpt4_stage2_finetune.yaml (LAVIS run config)", [
    C('device: "cuda"', "device_type", R, True, 'device: "npu"',
      "RunnerBase builds torch.device(run_cfg.device) and moves the model there"),
])

E("blip2_lora_caption", "examples/blip2_lora_captioning.py", "explicit_replacement",
  "huggingface/peft BLIP-2 int8 + LoRA captioning notebook as a script", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script; torch.npu.* after the port"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "an NPU host takes the CPU branch: inputs stay on the CPU while device_map='auto' put the model on the NPU"),
    C('pin_memory_device="cuda",', "pin_memory", R, True, 'pin_memory_device="npu",',
      "the DataLoader's pinning thread calls torch.cuda.current_device() for a 'cuda' pin device and fails without a CUDA build"),
    C("quant_config = BitsAndBytesConfig(load_in_8bit=True)", "unsupported_op_workaround", R, False,
      "quant_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type='nf4', bnb_4bit_compute_dtype=torch.float16)",
      "LLM.int8 is not in bitsandbytes' NPU support (NF4 only) — unconfirmed"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "the CUDA GradScaler disables itself without CUDA: --fp16 trains without loss scaling"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.fp16):',
      "CUDA autocast does not apply to NPU tensors"),
])

# ---------------------------------------------------------------- Qwen-VL

E("qwen_vl_modeling", "modeling_qwen.py", "device_branch_or_abstraction",
  "Qwen/Qwen-VL-Chat modeling_qwen.py (SUPPORT_CUDA/BF16/FP16 precision autoset, optional flash-attn rotary/rms_norm)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "remote-code module calls torch.npu.is_available()/is_bf16_supported() after the port"),
    C("from torch.cuda.amp import autocast", "amp", X, False, None, "unused import; harmless on NPU"),
    C("SUPPORT_CUDA = torch.cuda.is_available()", "torch_cuda_api", B, True,
      "SUPPORT_CUDA = torch.cuda.is_available() or torch.npu.is_available()",
      "False on NPU: precision autoset falls through to fp32 (no bf16, flash path off) — silently twice the memory and slow"),
    C("SUPPORT_BF16 = SUPPORT_CUDA and torch.cuda.is_bf16_supported()", "torch_cuda_api", B, True,
      "SUPPORT_BF16 = SUPPORT_CUDA and (torch.npu.is_bf16_supported() if torch.npu.is_available() else torch.cuda.is_bf16_supported())",
      "must query the NPU once SUPPORT_CUDA is true there"),
    C("SUPPORT_FP16 = SUPPORT_CUDA and torch.cuda.get_device_capability(0)[0] >= 7", "device_capability_check", B, True,
      "SUPPORT_FP16 = SUPPORT_CUDA and (torch.npu.is_available() or torch.cuda.get_device_capability(0)[0] >= 7)",
      "get_device_capability returns None on NPU (documented limitation) -> TypeError once SUPPORT_CUDA is true"),
    C("assert all((i.is_cuda for i in (q, k, v)))", "attention_kernel", R, False,
      "assert all((i.is_npu for i in (q, k, v)))",
      "only reached if the flash path is re-enabled on an NPU kernel (FlashSelfAttention is never built while flash_attn is missing)"),
    C("and query.is_cuda", "attention_kernel", R, False,
      "and query.is_npu  # core_attention_flash rebuilt on torch_npu.npu_fusion_attention",
      "flash_attn_unpadded_func is None on NPU so the eager path runs correctly; routing to npu_fusion_attention is a speed-up"),
    C("if apply_rotary_emb_func is not None and t.is_cuda:", "npu_fused_op", R, False,
      "if t.is_npu:  # output = torch_npu.npu_rotary_mul(t, cos, sin)",
      "fallback rotary path is correct; npu_rotary_mul is a speed-up only"),
    C("if rms_norm is not None and x.is_cuda:", "npu_fused_op", R, False,
      "if x.is_npu:  # return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
      "fallback RMSNorm is correct; npu_rms_norm is a speed-up only"),
])

E("qwen_vl_web_demo", "web_demo_mm.py", "explicit_replacement",
  "QwenLM/Qwen-VL web_demo_mm.py (gradio demo, --cpu-only, _gc)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script; torch.npu.* after the port"),
    C('device_map = "cuda"', "device_type", R, True, 'device_map = "npu"',
      "from_pretrained(device_map='cuda') dispatches weights to a CUDA device"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "False on NPU: the cache is never emptied between sessions (memory only)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "see the guard above"),
])

# ---------------------------------------------------------------- InternVL

E("internvl_dist_utils", "internvl_chat/internvl/dist_utils.py", "explicit_replacement",
  "OpenGVLab/InternVL internvl_chat/internvl/dist_utils.py (mmcv-style init_dist over DeepSpeed: pytorch/mpi/slurm)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "module calls torch.npu.* after the port"),
    C("def init_dist(launcher, backend='nccl'", "dist_backend", R, True, "def init_dist(launcher, backend='hccl', **kwargs):",
      "default backend of every launcher path"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "0 on an NPU host -> ZeroDivisionError in rank % num_gpus"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", R, True, "torch.npu.set_device(rank % num_gpus)", ""
      "raises without a CUDA build"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", "MPI path"),
    C("num_gpus = torch.cuda.device_count()  # GPUs visible on this node", "torch_cuda_api", R, True,
      "num_gpus = torch.npu.device_count()  # NPUs visible on this node", "SLURM path: 0 devices -> ZeroDivisionError"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", R, True, "torch.npu.set_device(proc_id % num_gpus)",
      "SLURM path"),
])

E("internvl_finetune", "internvl_chat/internvl/train/internvl_chat_finetune.py", "explicit_replacement",
  "OpenGVLab/InternVL internvl_chat_finetune.py (HF Trainer + DeepSpeed, flash_attention_2 forced for the LLM)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "entry script; dist_utils already imports torch_npu and HF/DeepSpeed pick the NPU accelerator from it — explicit import recommended"),
    C("init_dist(launcher=launcher, backend='nccl')", "dist_backend", R, True, "init_dist(launcher=launcher, backend='hccl')",
      "deepspeed.init_distributed(dist_backend='nccl') fails on NPU"),
    C("from liger_kernel.transformers import (apply_liger_kernel_to_llama,", "npu_fused_op", R, False,
      "# liger kernels are Triton/CUDA; on NPU keep --use_liger False (torch_npu npu_rms_norm / npu_swiglu / npu_rotary_mul instead)",
      "only with --use_liger; whether liger's Triton kernels run on triton-ascend is unconfirmed"),
    C("=config.llm_config.attn_implementation = 'flash_attention_2'  # for InternLM", "attention_kernel", R, True,
      "config.llm_config.attn_implementation = 'eager'  # InternLM2 remote code: flash or eager only",
      "InternLM2's remote code imports flash_attn for 'flash_attention_2' and raises when it is missing"),
    C("=config.llm_config._attn_implementation = 'flash_attention_2'  # for LLaMA", "attention_kernel", R, True,
      "config.llm_config._attn_implementation = 'sdpa'  # for LLaMA",
      "transformers raises for flash_attention_2 without flash-attn; SDPA uses the NPU fused attention"),
    C("=llm_config.attn_implementation = 'flash_attention_2'  # for InternLM", "attention_kernel", R, True,
      "llm_config.attn_implementation = 'eager'  # InternLM2 remote code: flash or eager only", "same, ViT+LLM assembly path"),
    C("=llm_config._attn_implementation = 'flash_attention_2'  # for LLaMA", "attention_kernel", R, True,
      "llm_config._attn_implementation = 'sdpa'  # for LLaMA", "same, ViT+LLM assembly path"),
])

E("internvl_chat_infer", "internvl_chat/examples/chat_quickstart.py", "explicit_replacement",
  "OpenGVLab/InternVL2 model-card quick start as a script (dynamic tiling, split_model device_map, video via decord)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script; torch.npu.* after the port"),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", R, True, "world_size = torch.npu.device_count()",
      "--multi-gpu: 0 devices -> nonsense layer split (negative divisor)"),
    C("trust_remote_code=True).eval().cuda()", "tensor_to_device", R, True, "trust_remote_code=True).eval().npu()",
      "hard-coded CUDA placement"),
    C("=pixel_values = load_image(args.image, max_num=12).to(torch.bfloat16).cuda()", "tensor_to_device", R, True,
      "pixel_values = load_image(args.image, max_num=12).to(torch.bfloat16).to(model.device)", "hard-coded CUDA placement"),
    C("pixel_values1 = load_image(args.image, max_num=12).to(torch.bfloat16).cuda()", "tensor_to_device", R, True,
      "pixel_values1 = load_image(args.image, max_num=12).to(torch.bfloat16).to(model.device)", "hard-coded CUDA placement"),
    C("pixel_values2 = load_image(args.image2, max_num=12).to(torch.bfloat16).cuda()", "tensor_to_device", R, True,
      "pixel_values2 = load_image(args.image2, max_num=12).to(torch.bfloat16).to(model.device)", "hard-coded CUDA placement"),
])

# ---------------------------------------------------------------- vision towers / kernels

E("eva_clip_vit", "eva_clip/eva_vit_model.py", "kernel_rewrite",
  "baaivision/EVA EVA-CLIP eva_vit_model.py (xformers memory_efficient_attention, apex FusedLayerNorm, rope)", [
    C("import xformers.ops as xops", "attention_kernel", X, False, None,
      "guarded (xops=None on NPU); dead once the call below is replaced"),
    C("x = xops.memory_efficient_attention(", "attention_kernel", R, True,
      "x = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), dropout_p=self.xattn_drop if self.training else 0.0, scale=self.scale).transpose(1, 2)",
      "MLLMs build this tower with xattn=True; xops is None on NPU -> AttributeError. SDPA (NPU FA inside) or npu_fusion_attention BSND"),
])

E("cobra_selective_scan", "mamba_ssm/ops/selective_scan_interface.py", "kernel_rewrite",
  "state-spaces/mamba selective_scan_interface.py as vendored by Mamba-backbone MLLMs (Cobra / VL-Mamba)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", R, False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "decorators only used by the fused MambaInnerFn, which is not reached on NPU; they track CUDA autocast state"),
    C("=import selective_scan_cuda", "custom_cuda_extension", R, True,
      "selective_scan_cuda = None  # nvcc extension; fall back to selective_scan_ref or an Ascend C / triton-ascend scan",
      "unguarded module-level import of an nvcc-built extension: the whole Mamba LLM backbone fails to import"),
    C("out, x, *rest = selective_scan_cuda.fwd(", "custom_cuda_extension", R, True,
      "return selective_scan_ref(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state)",
      "the non-fused path (taken when causal_conv1d is missing) still calls the CUDA kernel"),
    C("du, ddelta, dA, dB, dC, dD, ddelta_bias, *rest = selective_scan_cuda.bwd(", "custom_cuda_extension", R, True,
      "# backward comes from autograd through selective_scan_ref (or the NPU kernel's backward)",
      "CUDA kernel backward"),
    C("=conv1d_out = causal_conv1d_cuda.causal_conv1d_fwd(x, conv1d_weight, conv1d_bias, None, True)",
      "custom_cuda_extension", R, False,
      "conv1d_out = F.conv1d(x, conv1d_weight.unsqueeze(1), conv1d_bias, padding=conv1d_weight.shape[-1] - 1, groups=x.shape[1])[..., :L]",
      "fused path only: the Mamba block uses it only when causal_conv1d imported, which it does not on NPU"),
    C("out, scan_intermediates, out_z = selective_scan_cuda.fwd(", "custom_cuda_extension", R, False,
      "out_z = selective_scan_ref(conv1d_out, delta, A, B, C, D, z, delta_bias, delta_softplus)",
      "fused path only (not reached on NPU)"),
    C("causal_conv1d_fwd(x, conv1d_weight, conv1d_bias, None, True)  # recompute", "custom_cuda_extension", R, False,
      "conv1d_out = F.conv1d(x, conv1d_weight.unsqueeze(1), conv1d_bias, padding=conv1d_weight.shape[-1] - 1, groups=x.shape[1])[..., :L]  # recompute",
      "fused path only (not reached on NPU)"),
    C("dconv1d_out, ddelta, dA, dB, dC, dD, ddelta_bias, dz, out_z = selective_scan_cuda.bwd(", "custom_cuda_extension", R, False,
      "# fused backward replaced by autograd through the reference ops", "fused path only (not reached on NPU)"),
    C("dx, dconv1d_weight, dconv1d_bias, *_ = causal_conv1d_cuda.causal_conv1d_bwd(", "custom_cuda_extension", R, False,
      "# fused backward replaced by autograd through F.conv1d", "fused path only (not reached on NPU)"),
])

E("vlm_fused_ce_triton", "llava/kernels/cross_entropy.py", "kernel_rewrite",
  "unsloth/liger-style Triton fused cross-entropy used by VLM fine-tuning forks (chunked for 150k vocabularies)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "module uses torch.npu.device after the port"),
    C("=MAX_FUSED_SIZE = 65536", "triton_kernel_tuning", R, False,
      "MAX_FUSED_SIZE = 8192  # keep one row tile inside a vector core's on-chip buffer",
      "a 64K fp32 tile is sized for NVIDIA registers/shared memory; triton-ascend on-chip limits are not in the knowledge files (unconfirmed)"),
    C("num_warps = 32", "triton_kernel_tuning", R, False, "num_warps = 4",
      "warp counts tuned for NVIDIA SMs; their meaning on triton-ascend is unconfirmed"),
    C('losses = torch.empty(n_rows, dtype=torch.float32, device="cuda")', "device_type", R, True,
      "losses = torch.empty(n_rows, dtype=torch.float32, device=logits.device)", "hard-coded CUDA allocation"),
    C('logsumexp = torch.empty(n_rows, dtype=torch.float32, device="cuda")', "device_type", R, True,
      "logsumexp = torch.empty(n_rows, dtype=torch.float32, device=logits.device)", "hard-coded CUDA allocation"),
    C("=with torch.cuda.device(logits.device):", "torch_cuda_api", R, True, "with torch.npu.device(logits.device):",
      "torch.cuda.device() rejects an NPU device (and needs a CUDA build)"),
    C("_cross_entropy_forward[(n_rows,)](", "triton_kernel_tuning", R, False,
      "_cross_entropy_forward[(min(n_rows, num_vector_cores),)](  # loop over rows inside the kernel",
      "one program per token row; triton-ascend guidance is to size the grid to the physical core count (unconfirmed)"),
    C('logsumexp = torch.empty((n_rows, n_chunks), dtype=torch.float32, device="cuda")', "device_type", R, True,
      "logsumexp = torch.empty((n_rows, n_chunks), dtype=torch.float32, device=logits.device)", "hard-coded CUDA allocation"),
    C("with torch.cuda.device(logits.device):  # chunked path", "torch_cuda_api", R, True,
      "with torch.npu.device(logits.device):  # chunked path", "same, large-vocabulary path (Qwen / InternLM2)"),
    C("with torch.cuda.device(dlosses.device):", "torch_cuda_api", R, True, "with torch.npu.device(dlosses.device):",
      "same, backward"),
])

# ---------------------------------------------------------------- video-LLMs / benchmarks / packaging

E("videollava_infer", "videollava/eval/video/run_inference_video_qa.py", "transfer_to_npu",
  "PKU-YuanGroup/Video-LLaVA eval/video/run_inference_video_qa.py (chunked video QA inference)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "entry script; with transfer_to_npu the strings and cache calls below are redirected at run time"),
    C("default='cuda:0'", "device_type", R, True, "default='npu:0'",
      "model.to(args.device) and every input follow this default"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; the NPU cache is not released (memory only)"),
])

E("videollava_requirements", "requirements.txt", "explicit_replacement",
  "Video-LLaVA-style requirements.txt (cu118 index, transformers 4.31, DeepSpeed 0.9.5, flash-attn, xformers)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; torch_npu runs on the CPU torch wheel (x86: whl/cpu, aarch64: PyPI)"),
    C("=torch==2.1.0", "import_torch_npu", A, True, "torch_npu==2.1.0.post12",
      "the NPU backend package, wheel version = torch version + .postN"),
    C("transformers==4.31.0", "device_type", R, True, "transformers>=4.32.0",
      "transformers supports NPUs from 4.32.0; 4.31's Trainer picks CUDA or CPU, i.e. trains on the CPU"),
    C("accelerate==0.21.0", "distributed_framework", R, True, "accelerate>=0.22.0", "accelerate supports NPUs from 0.22.0"),
    C("peft==0.4.0", "distributed_framework", R, False, "peft>=0.5.0",
      "peft lists NPU support from 0.5.0; LoRA layers themselves are device-agnostic (unconfirmed that 0.4.0 fails)"),
    C("bitsandbytes==0.41.0", "unsupported_op_workaround", R, False,
      "# bitsandbytes: multi-backend build with the Ascend backend (NF4 only), only for --bits 4",
      "used only by the QLoRA paths; the CUDA build does nothing useful on NPU (unconfirmed which release works)"),
    C("deepspeed==0.9.5", "distributed_framework", R, False, "deepspeed>=0.12.6",
      "0.9.5 is neither the 0.9.2 that deepspeed_npu patches nor known to ship the native NPU accelerator (first version unconfirmed)"),
    C("flash-attn==2.0.4", "attention_kernel", X, True, None,
      "cannot be built on NPU; the failure aborts the whole pip install -r"),
    C("xformers==0.0.22", "attention_kernel", X, True, None,
      "no NPU backend; the pinned wheel also drags in a CUDA torch build"),
])

E("mllm_bench_latency", "scripts/bench_latency.py", "explicit_replacement",
  "LLaVA-NeXT / lmms-style latency benchmark (CUDA events, NVTX ranges, torch.profiler, peak memory)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script; torch.npu.* / torch_npu.profiler after the port"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "needs a CUDA build"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True, "end = torch.npu.Event(enable_timing=True)",
      "needs a CUDA build"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without a CUDA build"),
    C('torch.cuda.nvtx.range_push("prefill")', "torch_cuda_api", R, True,
      'range_id = torch_npu.npu.mstx.range_start("prefill")',
      "torch.cuda.nvtx is not redirected by torch_npu; mstx is the NPU counterpart (exact method names unconfirmed)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "see range_push"),
    C("torch.cuda.synchronize()  # wait for end event", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for end event", "raises without a CUDA build"),
    C("torch.cuda.synchronize()  # drain queued work", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # drain queued work before starting the clock",
      "raises without a CUDA build; NPU ops are queued asynchronously, so the sync is needed for wall-clock timing"),
    C("torch.cuda.synchronize()  # generation finished", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # generation finished on device", "raises without a CUDA build"),
    C('device_map="cuda:0")', "device_type", R, True,
      'args.model_path, args.model_base, model_name, device_map="npu:0")', "hard-coded CUDA device map"),
    C('vt.vision_tower = torch.compile(vt.vision_tower, mode="max-autotune")', "compile_mode", R, False,
      'vt.vision_tower = torch.compile(vt.vision_tower, backend="npugraphs")',
      "--compile only; max-autotune relies on Triton/CUDA-graph autotuning that transfer_to_npu disables for NPU (has_triton=False); behaviour without it unconfirmed"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "lazy CUDA init raises without a CUDA build"),
    C("from torch.profiler import profile, ProfilerActivity, tensorboard_trace_handler", "torch_cuda_api", R, True,
      "from torch_npu.profiler import profile, ProfilerActivity, tensorboard_trace_handler",
      "--profile: torch.profiler records no NPU kernels; torch_npu.profiler is the NPU profiler (transfer_to_npu maps these names)"),
    C("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", R, True,
      "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "CUDA activity -> NPU activity"),
    C('sort_by="cuda_time_total"', "torch_cuda_api", R, False,
      'print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20))',
      "CUDA time column is empty for an NPU trace; which device-time key torch_npu's table offers is unconfirmed"),
    C("peak_gib = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", R, True,
      "peak_gib = torch.npu.max_memory_allocated() / 2 ** 30",
      "CUDA memory stats of a never-initialised CUDA context read as empty: peak memory silently reported as 0"),
    C('"device": torch.cuda.get_device_name(0),', "torch_cuda_api", R, True, '"device": torch.npu.get_device_name(0),',
      "raises without a CUDA build"),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", R, True,
      '"peak_reserved_gib": round(torch.npu.max_memory_reserved() / 2 ** 30, 2),',
      "silently 0, as max_memory_allocated above"),
])
