# Labels for probe135 (LLM / VLM modeling code with CUDA-only fast paths -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md "How the labels were chosen".

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Notes reused by several entries
RMS = ("hand-written RMSNorm; torch_npu.npu_rms_norm is the fused NPU kernel. Performance only: the torch "
       "version runs correctly on NPU")
ROPE = ("rotate_half RoPE; torch_npu.npu_rotary_mul(x, cos, sin) (rotary_mode='half') is the fused equivalent. "
        "Performance only")
IMPORT_OPT = ("import torch_npu is only needed by the optional fused-op rewrites in this file; the model code is "
              "otherwise device-agnostic")
SET_ENV = ("the launcher needs CANN's environment (LD_LIBRARY_PATH, ASCEND_* paths) before torch_npu can load; "
           "source set_env.sh at the top")

# ---------------------------------------------------------------------------------------------------------------
E("p135-01-hf-llama-modeling", "src/transformers/models/llama/modeling_llama.py", "kernel_rewrite",
  "huggingface/transformers modeling_llama.py (v4.38-4.39: FA2 / SDPA / eager classes, _update_causal_mask)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_OPT),
    C("if is_flash_attn_2_available():", "attention_kernel", "add_branch", False,
      "elif is_torch_npu_available(): from ...integrations.npu_flash_attention import npu_flash_attn_func as flash_attn_func, npu_flash_attn_varlen_func as flash_attn_varlen_func",
      "flash-attn cannot be installed on Ascend; the guard is False there so the module imports and sdpa/eager are "
      "used. An NPU branch (npu_fusion_attention, TND layout for the varlen call, plus pure-torch "
      "pad_input/unpad_input/index_first_axis) restores the FA2 path. Performance only"),
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", "npu_fused_op", "replace",
      False, "return torch_npu.npu_rms_norm(hidden_states, self.weight, epsilon=self.variance_epsilon)[0]", RMS),
    C("q_embed = (q * cos) + (rotate_half(q) * sin)", "npu_fused_op", "replace", False,
      "q_embed = torch_npu.npu_rotary_mul(q, cos, sin)", ROPE),
    C("k_embed = (k * cos) + (rotate_half(k) * sin)", "npu_fused_op", "replace", False,
      "k_embed = torch_npu.npu_rotary_mul(k, cos, sin)", ROPE),
    C("if torch.is_autocast_enabled():", "amp", "replace", False,
      "if torch.is_autocast_enabled() or torch_npu.npu.is_autocast_enabled():",
      "FA2 class only: torch.is_autocast_enabled() reports CUDA autocast, so under NPU autocast the inputs are cast "
      "to the weight dtype instead of the autocast dtype (fp32 into the NPU FA kernel: slower, still correct)"),
    C("target_dtype = torch.get_autocast_gpu_dtype()", "amp", "replace", False,
      "target_dtype = torch_npu.npu.get_autocast_dtype()",
      "CUDA autocast dtype query; on NPU ask torch_npu.npu.get_autocast_dtype(). Only reached in the FA2 class"),
])

E("p135-02-hf-qwen2-modeling", "src/transformers/models/qwen2/modeling_qwen2.py", "kernel_rewrite",
  "huggingface/transformers modeling_qwen2.py (v4.37: sliding-window FA2, _prepare_4d_causal_attention_mask)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_OPT),
    C("if is_flash_attn_2_available():", "attention_kernel", "add_branch", False,
      "elif is_torch_npu_available(): from ...integrations.npu_flash_attention import npu_flash_attn_func as flash_attn_func, npu_flash_attn_varlen_func as flash_attn_varlen_func; _flash_supports_window_size = False",
      "guarded flash-attn import is skipped on Ascend (sdpa/eager work). NPU FA branch is a performance add; "
      "sliding window would map to npu_fusion_attention band mode (sparse_mode=4, pre/next_tockens)"),
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", "npu_fused_op", "replace",
      False, "return torch_npu.npu_rms_norm(hidden_states, self.weight, epsilon=self.variance_epsilon)[0]", RMS),
    C("q_embed = (q * cos) + (rotate_half(q) * sin)", "npu_fused_op", "replace", False,
      "q_embed = torch_npu.npu_rotary_mul(q, cos, sin)", ROPE),
    C("k_embed = (k * cos) + (rotate_half(k) * sin)", "npu_fused_op", "replace", False,
      "k_embed = torch_npu.npu_rotary_mul(k, cos, sin)", ROPE),
])

E("p135-03-hf-mixtral-moe", "src/transformers/models/mixtral/modeling_mixtral.py", "kernel_rewrite",
  "huggingface/transformers modeling_mixtral.py (sparse MoE block, load_balancing_loss_func)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_OPT),
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", "npu_fused_op", "replace",
      False, "return torch_npu.npu_rms_norm(hidden_states, self.weight, epsilon=self.variance_epsilon)[0]", RMS),
])

E("p135-04-llava-flash-attn-patch", "llava/train/llama_flash_attn_monkey_patch.py", "kernel_rewrite",
  "haotian-liu/LLaVA llava/train/llama_flash_attn_monkey_patch.py (FastChat-derived FA monkey patch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the rewritten forward calls torch_npu.npu_fusion_attention"),
    C("=from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func", "attention_kernel",
      "removal", True, None, "unguarded flash-attn import: ImportError on Ascend, the whole module fails to load"),
    C("flash_attn_varlen_qkvpacked_func as flash_attn_unpadded_qkvpacked_func", "attention_kernel", "removal", True,
      None, "fallback import of the same CUDA-only package; fails too"),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "replace", True,
      "from llava.train.npu_padding import unpad_input, pad_input  # pure-torch copies",
      "bert_padding helpers are plain torch, but they ship inside the flash-attn package that cannot be installed"),
    C("output = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      "output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"TND\", scale=1.0 / math.sqrt(self.head_dim), atten_mask=causal_mask, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]",
      "CUDA flash-attn varlen packed-QKV kernel -> NPU FlashAttention (TND layout, cumulative seq lengths, causal via sparse_mode)"),
    C("output_unpad = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      "output_unpad = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"TND\", scale=1.0 / math.sqrt(self.head_dim), atten_mask=causal_mask, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]",
      "padded-batch call site of the same CUDA kernel"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "cuda_major, cuda_minor = (8, 0)  # Ascend: no SM capability; the A100 head-dim limit does not apply",
      "torch.cuda.get_device_capability() initialises CUDA and raises on an Ascend host (CPU torch build)"),
])

E("p135-05-llava-model-builder", "llava/model/builder.py", "explicit_replacement",
  "haotian-liu/LLaVA llava/model/builder.py (load_pretrained_model)", [
    C("def load_pretrained_model(", "device_type", "replace", False,
      "def load_pretrained_model(model_path, model_base, model_name, load_8bit=False, load_4bit=False, device_map=\"auto\", device=\"npu\", use_flash_attn=False, **kwargs):",
      "default device='cuda' is only compared against 'cuda'; with device_map='auto' accelerate already places "
      "the model on the NPU, so the default is harmless; changed for clarity"),
    C("kwargs['load_in_8bit'] = True", "custom_cuda_extension", "replace", True,
      "raise NotImplementedError('bitsandbytes LLM.int8 has no Ascend backend; load in fp16 instead')",
      "--load-8bit path: bitsandbytes int8 kernels are CUDA-only (not listed for NPU)"),
    C("kwargs['quantization_config'] = BitsAndBytesConfig(", "custom_cuda_extension", "replace", False,
      "kwargs['quantization_config'] = BitsAndBytesConfig(  # needs the multi-backend bitsandbytes build with NPU NF4 support",
      "--load-4bit path: NF4 on Ascend exists only in bitsandbytes' multi-backend branch; unconfirmed for the "
      "installed version"),
    C("kwargs['attn_implementation'] = 'flash_attention_2'", "attention_kernel", "replace", True,
      "kwargs['attn_implementation'] = 'sdpa'",
      "--use-flash-attn path: transformers raises ImportError for flash_attention_2 without the flash-attn "
      "package; on NPU sdpa dispatches to the NPU FA kernel"),
])

E("p135-06-llava-finetune-lora-sh", "scripts/v1_5/finetune_lora.sh", "explicit_replacement",
  "haotian-liu/LLaVA scripts/v1_5/finetune_lora.sh (deepspeed launcher)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      SET_ENV),
    C("--tf32 True \\", "device_capability_check", "replace", True, "    --tf32 False \\",
      "HF TrainingArguments raises 'requires Ampere or a newer GPU arch' when tf32=True and CUDA TF32 is "
      "unavailable, which is the case on an Ascend host"),
])

E("p135-07-llava-pyproject", "pyproject.toml", "explicit_replacement",
  "haotian-liu/LLaVA pyproject.toml", [
    C("\"torch==2.1.2\", \"torchvision==0.16.2\",", "import_torch_npu", "replace", True,
      "\"torch==2.1.0\", \"torch-npu==2.1.0.post12\", \"torchvision==0.16.0\",",
      "no torch_npu wheel exists for torch 2.1.2 (wheel version must equal the torch version); pin 2.1.0 and add "
      "the torch-npu pin"),
    C("\"accelerate==0.21.0\", \"peft\", \"bitsandbytes\",", "custom_cuda_extension", "replace", False,
      "\"accelerate==0.21.0\", \"peft\",",
      "bitsandbytes is only used by --bits 4/8; its CUDA build is useless on Ascend (NPU support only in the "
      "multi-backend build) - unconfirmed whether the default wheel even installs on aarch64"),
    C("flash = [\"flash-attn==2.5.2\"]", "attention_kernel", "removal", False, None,
      "optional extra; flash-attn needs nvcc and cannot be built for Ascend"),
])

E("p135-08-minigpt4-qformer", "minigpt4/models/Qformer.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 minigpt4/models/Qformer.py (LAVIS BLIP-2 Q-Former)", [
])

E("p135-09-minigpt4-model", "minigpt4/models/mini_gpt4.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 minigpt4/models/mini_gpt4.py (MiniGPT4 + maybe_autocast)", [
    C("return torch.cuda.amp.autocast(dtype=dtype)", "amp", "replace", True,
      "return torch.autocast(device_type=\"npu\", dtype=dtype)",
      "torch.cuda.amp.autocast is disabled (with a warning) when CUDA is absent, so the fp16 ViT/Q-Former/LLaMA "
      "path silently runs without autocast on the NPU"),
    C("load_in_8bit=True,", "custom_cuda_extension", "replace", True,
      "load_in_8bit=False,  # bitsandbytes LLM.int8 has no Ascend backend; low_resource keeps fp16",
      "low_resource path: 8-bit loading needs bitsandbytes CUDA kernels"),
])

E("p135-10-minigpt4-demo", "demo.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 demo.py (gradio demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; registers the npu device before 'npu:N' strings are used"),
    C("model = model_cls.from_config(model_config).to('cuda:{}'.format(args.gpu_id))", "tensor_to_device",
      "replace", True, "model = model_cls.from_config(model_config).to('npu:{}'.format(args.gpu_id))",
      "hard-coded CUDA device string"),
    C("chat = Chat(model, vis_processor, device='cuda:{}'.format(args.gpu_id))", "device_type", "replace", True,
      "chat = Chat(model, vis_processor, device='npu:{}'.format(args.gpu_id))",
      "device string handed to Chat, which moves images/token ids with it"),
])

E("p135-11-minigpt4-conversation", "minigpt4/conversation/conversation.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 minigpt4/conversation/conversation.py (Chat, StoppingCriteriaSub)", [
    C("def __init__(self, model, vis_processor, device='cuda:0'):", "device_type", "replace", True,
      "def __init__(self, model, vis_processor, device='npu:0'):",
      "default device; any caller that omits device= moves the stop-word tensors to cuda:0 and fails"),
])

E("p135-12-minigpt4-dist-utils", "minigpt4/common/dist_utils.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 minigpt4/common/dist_utils.py (LAVIS init_distributed_mode)", [
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an Ascend host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "CUDA device selection raises without CUDA"),
    C("args.dist_backend = \"nccl\"", "dist_backend", "replace", True, "args.dist_backend = \"hccl\"",
      "NCCL backend is not available; HCCL is the Ascend collective backend"),
])

E("p135-13-minigpt4-base-task", "minigpt4/tasks/base_task.py", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 minigpt4/tasks/base_task.py (LAVIS BaseTask train loop)", [
    C("return tensor.cuda()", "tensor_to_device", "replace", True, "return tensor.to(\"npu\")",
      "batch tensors moved with .cuda(); raises on an Ascend host"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.autocast(device_type=\"npu\", enabled=use_amp):",
      "CUDA autocast silently disables itself without CUDA: amp: True in the config would train in fp32 on NPU "
      "while the GradScaler still scales"),
])

E("p135-14-minigpt4-runner", "minigpt4/runners/runner_base.py", "device_branch_or_abstraction",
  "Vision-CAIR/MiniGPT-4 minigpt4/runners/runner_base.py (LAVIS RunnerBase)", [
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself (warning) when CUDA is absent: no loss scaling for fp16 on NPU"),
    C("return self.device.type == \"cuda\"", "device_type", "replace", True,
      "return self.device.type in (\"cuda\", \"npu\")",
      "device-type test: on NPU cuda_enabled is False, samples are never moved to the device and the first "
      "forward fails with a CPU/NPU device mismatch"),
])

E("p135-15-minigpt4-train-config", "train_configs/minigpt4_stage2_finetune.yaml", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 train_configs/minigpt4_stage2_finetune.yaml", [
    C("device: \"cuda\"", "device_type", "replace", True, "device: \"npu\"",
      "RunnerBase builds torch.device(run_cfg.device) from this value"),
])

E("p135-16-minigpt4-environment", "environment.yml", "explicit_replacement",
  "Vision-CAIR/MiniGPT-4 environment.yml (conda env)", [
    C("- cudatoolkit", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime from conda is useless on Ascend (CANN comes from the host / image); may not resolve on "
      "aarch64 - unconfirmed"),
    C("- torch==2.0.0", "import_torch_npu", "replace", True, "- torch==2.1.0",
      "no torch_npu wheel for torch 2.0.0; move to 2.1.0 and add '- torch-npu==2.1.0.post12' on the next line"),
    C("- bitsandbytes==0.37.0", "custom_cuda_extension", "removal", False, None,
      "CUDA-only bitsandbytes release; only used by the low_resource 8-bit path"),
])

E("p135-17-qwen-vl-visual", "visual.py", "explicit_replacement",
  "QwenLM/Qwen-VL visual.py (ViT + cross-attention Resampler)", [
])

E("p135-18-qwen-vl-modeling", "modeling_qwen.py", "device_branch_or_abstraction",
  "QwenLM/Qwen-VL modeling_qwen.py (trust_remote_code model: SUPPORT_* checks, optional flash-attn kernels)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "remote-code module queries torch.npu at import time (SUPPORT_* below); nothing guarantees the caller "
      "imported torch_npu first"),
    C("SUPPORT_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "SUPPORT_CUDA = torch.cuda.is_available() or torch.npu.is_available()",
      "False on NPU, so autoset precision silently falls back to fp32 (2x memory, much slower) and warns "
      "about the device"),
    C("SUPPORT_BF16 = SUPPORT_CUDA and torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
      "SUPPORT_BF16 = SUPPORT_CUDA and (torch.npu.is_bf16_supported() if torch.npu.is_available() else torch.cuda.is_bf16_supported())",
      "bf16 capability probe is CUDA-only: short-circuits to False unchanged, raises once SUPPORT_CUDA is true"),
    C("SUPPORT_FP16 = SUPPORT_CUDA and torch.cuda.get_device_capability(0)[0] >= 7", "device_capability_check",
      "replace", True,
      "SUPPORT_FP16 = SUPPORT_CUDA and (torch.npu.is_available() or torch.cuda.get_device_capability(0)[0] >= 7)",
      "SM-capability probe; Ascend has no SM version (get_device_capability is a configurable stub)"),
    C("and query.is_cuda", "attention_kernel", "add_branch", False,
      "elif query.is_npu and not self.is_fp32: context_layer = torch_npu.npu_fusion_attention(query, key, value, self.num_heads, \"BSND\", atten_mask=npu_causal_mask, scale=1.0 / math.sqrt(self.head_dim), sparse_mode=2)[0].flatten(2, 3)",
      "flash-attn import is try/except-guarded and the path also checks is_cuda, so NPU falls back to the eager "
      "_attn; NPU FlashAttention branch is performance only"),
    C("if apply_rotary_emb_func is not None and t.is_cuda:", "npu_fused_op", "add_branch", False,
      "elif t.is_npu: return torch_npu.npu_rotary_mul(t.float(), cos, sin).type_as(t)",
      "flash-attn rotary kernel is CUDA-only; torch fallback is correct, npu_rotary_mul is the fused option"),
    C("if rms_norm is not None and x.is_cuda:", "npu_fused_op", "add_branch", False,
      "elif x.is_npu: return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]", RMS),
])

E("p135-19-qwen-vl-finetune", "finetune.py", "explicit_replacement",
  "QwenLM/Qwen-VL finetune.py (HF Trainer + LoRA / Q-LoRA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "entry script, but transformers' TrainingArguments device setup (is_torch_npu_available) already imports "
      "torch_npu before any NPU use; explicit import recommended"),
    C("quantization_config=GPTQConfig(", "custom_cuda_extension", "replace", True,
      "quantization_config=None,  # Q-LoRA via GPTQ (auto-gptq CUDA kernels) is not available on Ascend",
      "--q_lora path: GPTQ loading needs auto-gptq/optimum CUDA kernels"),
])

E("p135-20-qwen-vl-finetune-sh", "finetune/finetune_lora_ds.sh", "explicit_replacement",
  "QwenLM/Qwen-VL finetune/finetune_lora_ds.sh (torchrun + deepspeed launcher)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      SET_ENV),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
      "CUDA stream-connection knob; no effect on Ascend (nothing here is Megatron, which would assert on it)"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "NCCL-only switch, silently ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL reads HCCL_SOCKET_IFNAME for the host NIC; only matters for multi-node runs (NNODES=1 here)"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "NCCL logging knob; HCCL/CANN logging is configured differently"),
])

E("p135-21-internlm-rotary-embedding", "internlm/model/embedding.py", "kernel_rewrite",
  "InternLM/InternLM internlm/model/embedding.py (rotary_emb CUDA extension from flash-attn csrc/rotary)", [
    C("=import rotary_emb", "custom_cuda_extension", "removal", True, None,
      "nvcc-built rotary_emb extension (flash-attention csrc/rotary) does not exist on Ascend; ImportError"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the rewritten autograd function calls torch_npu.npu_rotary_mul"),
    C("from flash_attn.layers.rotary import ApplyRotaryEmbQKV_ as LegacyApplyRotaryEmbQKV_",
      "custom_cuda_extension", "removal", True, None, "flash-attn rotary layer (CUDA/Triton) cannot be installed"),
    C("rotary_emb.apply_rotary(q1, q2,", "custom_cuda_extension", "replace", True,
      "qkv[:, 0, :, :rotary_dim] = torch_npu.npu_rotary_mul(qkv[:, 0, :, :rotary_dim].unsqueeze(0), cos_full, sin_full).squeeze(0)",
      "call into the CUDA rotary kernel (forward, q)"),
    C("rotary_emb.apply_rotary(k1, k2,", "custom_cuda_extension", "replace", True,
      "qkv[:, 1, :, :rotary_dim] = torch_npu.npu_rotary_mul(qkv[:, 1, :, :rotary_dim].unsqueeze(0), cos_k_full, sin_k_full).squeeze(0)",
      "call into the CUDA rotary kernel (forward, k)"),
    C("rotary_emb.apply_rotary(dq1, dq2,", "custom_cuda_extension", "replace", True,
      "dqkv[:, 0, :, :rotary_dim] = torch_npu.npu_rotary_mul(dqkv[:, 0, :, :rotary_dim].unsqueeze(0), cos_full, -sin_full).squeeze(0)",
      "call into the CUDA rotary kernel (backward, conj=True)"),
    C("rotary_emb.apply_rotary(dk1, dk2,", "custom_cuda_extension", "replace", True,
      "dqkv[:, 1, :, :rotary_dim] = torch_npu.npu_rotary_mul(dqkv[:, 1, :, :rotary_dim].unsqueeze(0), cos_k_full, -sin_k_full).squeeze(0)",
      "call into the CUDA rotary kernel (backward, conj=True)"),
    C("legacy_apply_rotary_embed_qkv = LegacyApplyRotaryEmbQKV_.apply", "custom_cuda_extension", "replace", True,
      "legacy_apply_rotary_embed_qkv = NpuApplyRotaryEmbQKVBatched_.apply",
      "eval_forward used flash-attn's batched-layout rotary function; needs an NPU equivalent"),
])

E("p135-22-internlm-utils-common", "internlm/utils/common.py", "device_branch_or_abstraction",
  "InternLM/InternLM internlm/utils/common.py (get_current_device, move_norm_to_cuda)", [
    C("if torch.is_tensor(norm) and norm.device.type != \"cuda\":", "device_type", "replace", True,
      "if torch.is_tensor(norm) and norm.device.type != get_current_device().type:",
      "device-type test: on NPU every grad norm (device 'npu') is treated as misplaced and moved to CUDA"),
    C("norm = norm.to(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "norm = norm.to(get_current_device())", "torch.cuda.current_device() raises on an Ascend host"),
    C("norm = norm.to(device=torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "norm = norm.to(device=get_current_device())", "same, in get_tensor_norm(move_to_cuda=True)"),
    C("if torch.cuda.is_available():", "device_type", "add_branch", True,
      "elif torch.npu.is_available(): return torch.device(f\"npu:{torch.npu.current_device()}\")",
      "device helper falls back to CPU on an NPU host; every move_to_device() then keeps batches on the CPU"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silent no-op without CUDA; torch.manual_seed above should already seed the NPU generator (unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA (see above)"),
])

E("p135-23-internlm-launch", "internlm/initialize/launch.py", "explicit_replacement",
  "InternLM/InternLM internlm/initialize/launch.py (slurm / torchrun launch helpers)", [
    C("parser.add_argument(\"--backend\", type=str, default=\"nccl\"", "dist_backend", "replace", False,
      "parser.add_argument(\"--backend\", type=str, default=\"hccl\", help=\"backend for distributed communication\")",
      "parsed but not forwarded by initialize_distributed_env (the launch_from_* defaults below are used)"),
    C("gpc.config.model._add_item(\"use_flash_attn\", True)", "attention_kernel", "replace", True,
      "gpc.config.model._add_item(\"use_flash_attn\", False)",
      "default routes internlm.model to flash_attn CUDA modules (multi_head_attention.py, not in this probe) "
      "unless those are ported too"),
    C("=backend: str = \"nccl\",", "dist_backend", "replace", False, "backend: str = \"hccl\",",
      "default of launch(); both callers always pass backend explicitly"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: set_device is skipped and every rank lands on npu:0"),
    C("local_rank = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "local_rank = rank % torch.npu.device_count()", "CUDA device count (0 on Ascend)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "CUDA device selection"),
    C("def launch_from_slurm(", "dist_backend", "replace", True,
      "def launch_from_slurm(config: Union[str, Path, Config, Dict], host: str, port: int, backend: str = \"hccl\", seed: int = 1024):",
      "default backend actually used by initialize_distributed_env for slurm launches; NCCL unavailable"),
    C("def launch_from_torch(", "dist_backend", "replace", True,
      "def launch_from_torch(config: Union[str, Path, Config, Dict], backend: str = \"hccl\", seed: int = 1024):",
      "default backend used for torchrun launches"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA, and nothing is allocated yet at this point"),
])

E("p135-24-internlm-train", "train.py", "explicit_replacement",
  "InternLM/InternLM train.py (training entry with torch.profiler hook)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; also needed for torch_npu.profiler"),
    C("llm_profile = torch.profiler.profile", "torch_cuda_api", "replace", True,
      "llm_profile = torch_npu.profiler.profile",
      "--profiling path: torch.profiler has no NPU activity; Ascend's list maps it to torch_npu.profiler.profile"),
    C("activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],", "device_type",
      "replace", True,
      "activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
      "ProfilerActivity.CUDA; torch.profiler.ProfilerActivity is marked unsupported (NPU form in torch_npu.profiler)"),
    C("schedule=torch.profiler.schedule(", "torch_cuda_api", "replace", False,
      "schedule=torch_npu.profiler.schedule(skip_first=5, wait=1, warmup=1, active=1, repeat=1),",
      "Ascend lists torch_npu.profiler.schedule as the NPU form; whether torch's schedule works with "
      "torch_npu.profiler.profile is unconfirmed"),
    C("on_trace_ready=torch.profiler.tensorboard_trace_handler(", "torch_cuda_api", "replace", False,
      "on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(",
      "NPU form is torch_npu.profiler.tensorboard_trace_handler (Ascend trace layout); mixing is unconfirmed"),
    C("device=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
      "device=torch.npu.current_device(),", "metric buffers placed on the current CUDA device; raises on Ascend"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA: cached NPU memory is never released (memory-pressure only)"),
    C("max allocated {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "f\"step {batch_count}: max allocated {torch.npu.max_memory_allocated() / 1024**3:.2f} GB, \"",
      "log line only: CUDA memory stats read 0 on an Ascend host"),
    C("reserved {torch.cuda.memory_reserved()", "torch_cuda_api", "replace", False,
      "f\"reserved {torch.npu.memory_reserved() / 1024**3:.2f} GB\"", "log line only"),
])

E("p135-25-internlm-requirements", "requirements/torch.txt", "explicit_replacement",
  "InternLM/InternLM requirements/torch.txt", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "the page mixes CUDA and CPU wheels; x86 Ascend hosts should take CPU torch from the cpu index, aarch64 "
      "uses plain PyPI"),
    C("torch==2.1.0+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu118 build has no aarch64 wheel and is the wrong build for torch_npu; pin plain 2.1.0 and add "
      "'torch-npu==2.1.0.post12' after it"),
    C("torchvision==0.16.0+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "CUDA-local-version pin"),
    C("torchaudio==2.1.0+cu118", "torch_cuda_api", "replace", True, "torchaudio==2.1.0",
      "CUDA-local-version pin"),
])

E("p135-26-internlm-dockerfile", "docker/Dockerfile", "explicit_replacement",
  "InternLM/InternLM docker/Dockerfile (CUDA devel image building flash-attn and apex extensions)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; the NPU image must carry the CANN toolkit (driver mounted from the host) for torch_npu"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "nvcc arch list; meaningless on Ascend"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "no CUDA toolkit in the NPU image"),
    C("RUN cd ./third_party/flash-attention && \\", "custom_cuda_extension", "removal", True, None,
      "builds flash-attn and its rotary/xentropy/fused_dense/layer_norm CUDA extensions with nvcc; fails on "
      "an Ascend image"),
    C("RUN cd ./third_party/apex && \\", "custom_cuda_extension", "removal", True, None,
      "apex --cuda_ext build needs nvcc; Ascend apex is a separate patched build without CUDA kernels"),
    C("ENV NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "NCCL-only; ignored by HCCL"),
    C("ENV CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None, "CUDA-only knob; no effect on Ascend"),
])

E("p135-27-internlm2-modeling", "modeling_internlm2.py", "kernel_rewrite",
  "internlm/internlm2-chat-7b modeling_internlm2.py (trust_remote_code, lazy flash-attn import)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_OPT),
    C("from flash_attn import flash_attn_func as _flash_attn_func", "attention_kernel", "replace", False,
      "from .npu_flash_attention import npu_flash_attn_func as _flash_attn_func, npu_flash_attn_varlen_func as _flash_attn_varlen_func",
      "only reached when attn_implementation='flash_attention_2' (config default is eager; the guard below "
      "also falls back to eager without CUDA). NPU FA shim is performance only"),
    C("from flash_attn.bert_padding import pad_input as _pad_input", "attention_kernel", "replace", False,
      "from .npu_flash_attention import pad_input as _pad_input, index_first_axis as _index_first_axis, unpad_input as _unpad_input",
      "pure-torch padding helpers shipped inside flash-attn"),
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", "npu_fused_op", "replace",
      False, "return torch_npu.npu_rms_norm(hidden_states, self.weight, epsilon=self.variance_epsilon)[0]", RMS),
    C("with torch.autocast(device_type=\"cuda\", enabled=False):", "amp", "replace", True,
      "with torch.autocast(device_type=x.device.type, enabled=False):",
      "hard-coded CUDA autocast region: on NPU it does not disable the active NPU autocast, so the rotary "
      "frequencies are computed in bf16/fp16 - the precision loss the fp32 block exists to avoid"),
    C("q_embed = (q * cos) + (rotate_half(q) * sin)", "npu_fused_op", "replace", False,
      "q_embed = torch_npu.npu_rotary_mul(q, cos, sin)", ROPE),
    C("k_embed = (k * cos) + (rotate_half(k) * sin)", "npu_fused_op", "replace", False,
      "k_embed = torch_npu.npu_rotary_mul(k, cos, sin)", ROPE),
    C("return torch.cuda.is_available()", "device_capability_check", "replace", False,
      "return torch.cuda.is_available() or torch.npu.is_available()",
      "only meaningful once the NPU FA shim above exists; until then the eager fallback is the right answer"),
])

E("p135-28-chatglm3-modeling", "modeling_chatglm.py", "kernel_rewrite",
  "THUDM/ChatGLM3 modeling_chatglm.py (jit-scripted rotary, SDPA CoreAttention, quantize hook)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_OPT),
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.eps)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(hidden_states, self.weight, epsilon=self.eps)[0]", RMS),
])

E("p135-29-chatglm3-quantization", "quantization.py", "kernel_rewrite",
  "THUDM/ChatGLM3 quantization.py (cpm_kernels CUDA fatbin for int4/int8 weight-only quantization)", [
    C("from cpm_kernels.kernels.base import LazyKernelCModule, KernelFunction, round_up", "custom_cuda_extension",
      "removal", False, None,
      "guarded by try/except (kernels = None); the failures surface at the kernel call sites below"),
    C("=with torch.cuda.device(weight.device):", "torch_cuda_api", "removal", True, None,
      "CUDA device context in compress_int4_weight; raises for an NPU tensor"),
    C("out = torch.empty(n, m, dtype=torch.int8, device=\"cuda\")", "device_type", "replace", True,
      "out = torch.empty(n, m, dtype=torch.int8, device=weight.device)", "hard-coded CUDA allocation"),
    C("=stream = torch.cuda.current_stream()", "torch_cuda_api", "removal", True, None,
      "CUDA stream handed to the cpm_kernels launch"),
    C("kernels.int4WeightCompression(", "custom_cuda_extension", "replace", True,
      "out = ((weight[:, 0::2] & 0x0F) << 4 | (weight[:, 1::2] & 0x0F)).to(torch.int8)",
      "CUDA fatbin kernel launch; pack two int4 values per byte with torch ops instead"),
    C("kernels.int4WeightExtractionHalf if scale_list.dtype == torch.half", "custom_cuda_extension", "replace", True,
      "return _unpack_int4(weight).to(scale_list.dtype) * scale_list[:, None]",
      "4-bit path selects a CUDA kernel (kernels is None on Ascend -> AttributeError)"),
    C("run the extraction kernel on the weight's own GPU", "torch_cuda_api", "removal", True, None,
      "CUDA device context in extract_weight_to_half"),
    C("out = torch.empty(n, m * (8 // source_bit_width), dtype=scale_list.dtype, device=\"cuda\")", "device_type",
      "replace", True, "out = torch.empty(n, m * (8 // source_bit_width), dtype=scale_list.dtype, device=weight.device)",
      "hard-coded CUDA allocation"),
    C("same stream as the matmul that consumes", "torch_cuda_api", "removal", True, None,
      "CUDA stream for the extraction kernel"),
    C("=func(", "custom_cuda_extension", "removal", True, None,
      "CUDA kernel launch replaced by the torch unpack above"),
    C("weight=layer.self_attention.query_key_value.weight.to(torch.cuda.current_device()),", "torch_cuda_api",
      "replace", True, "weight=layer.self_attention.query_key_value.weight.to(torch.npu.current_device()),",
      "weights staged on the current CUDA device before quantizing"),
    C("weight=layer.self_attention.dense.weight.to(torch.cuda.current_device()),", "torch_cuda_api", "replace", True,
      "weight=layer.self_attention.dense.weight.to(torch.npu.current_device()),", "same"),
    C("weight=layer.mlp.dense_h_to_4h.weight.to(torch.cuda.current_device()),", "torch_cuda_api", "replace", True,
      "weight=layer.mlp.dense_h_to_4h.weight.to(torch.npu.current_device()),", "same"),
    C("weight=layer.mlp.dense_4h_to_h.weight.to(torch.cuda.current_device()),", "torch_cuda_api", "replace", True,
      "weight=layer.mlp.dense_4h_to_h.weight.to(torch.npu.current_device()),", "same"),
])

E("p135-30-deepseek-moe-modeling", "modeling_deepseek.py", "kernel_rewrite",
  "deepseek-ai/deepseek-moe-16b modeling_deepseek.py (MoEGate with scatter_add_ aux loss, moe_infer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_OPT),
    C("if is_flash_attn_2_available():", "attention_kernel", "add_branch", False,
      "elif is_torch_npu_available(): from transformers.integrations.npu_flash_attention import npu_flash_attn_func as flash_attn_func, npu_flash_attn_varlen_func as flash_attn_varlen_func",
      "guarded flash-attn import is skipped on Ascend; NPU FA branch is performance only"),
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", "npu_fused_op", "replace",
      False, "return torch_npu.npu_rms_norm(hidden_states, self.weight, epsilon=self.variance_epsilon)[0]", RMS),
    C("expert_cache.scatter_reduce_(0, exp_token_idx.view(-1, 1).repeat(1, x.shape[-1]), expert_out, reduce='sum')",
      "unsupported_op_workaround", "replace", False, "expert_cache.index_add_(0, exp_token_idx, expert_out)",
      "scatter_reduce is marked unsupported in Ascend's 2.7.1 list and has no NPU kernel, so it runs through the "
      "CPU fallback once per expert; index_add_ (native) is the equivalent sum. Unconfirmed whether the "
      "fallback is exact for reduce='sum'"),
])

E("p135-31-fastchat-model-adapter", "fastchat/model/model_adapter.py", "device_branch_or_abstraction",
  "lm-sys/FastChat fastchat/model/model_adapter.py (load_model with cpu/cuda/mps/xpu/npu branches)", [
    C("device: str = \"cuda\",", "device_type", "replace", False, "device: str = \"npu\",",
      "default only; the npu branch already exists and callers pass the CLI --device value"),
    C("elif device == \"npu\":", "device_type", "add_branch", False,
      "elif device == \"npu\": kwargs = {\"torch_dtype\": torch.float16}; if num_gpus != 1: kwargs[\"device_map\"] = \"auto\"",
      "the existing npu branch ignores --num-gpus: a model larger than one NPU is loaded whole and moved to npu:0"),
    C("default=\"cuda\",", "device_type", "replace", False, "default=\"npu\",",
      "CLI default; --device npu already works"),
])
