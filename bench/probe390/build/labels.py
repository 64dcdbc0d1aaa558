"""Labels for probe390 (GUI agents / VLM web & mobile agents, CUDA -> Ascend NPU).

One entry per file under files/<id>/upstream/<path>; one C(...) per line a careful porter would edit.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------
# SeeClick (njucckevin/SeeClick): Qwen-VL based GUI grounding, HF Trainer + DeepSpeed LoRA
# ----------------------------------------------------------------------------------------------
E("seeclick_finetune", "finetune/finetune.py", "explicit_replacement",
  "njucckevin/SeeClick finetune/finetune.py (Qwen-VL finetune.py derivative, HF Trainer + DeepSpeed + LoRA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "HF Trainer/accelerate already import torch_npu through is_torch_npu_available() and pick the NPU; "
      "explicit import is hygiene (also autoloaded from torch_npu 2.5.1)."),
])

E("seeclick_lora_sh", "finetune/finetune_lora_ds.sh", "explicit_replacement",
  "njucckevin/SeeClick finetune/finetune_lora_ds.sh (torchrun + DeepSpeed ZeRO-2 launcher)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; card selection must go through ASCEND_RT_VISIBLE_DEVICES."),
    C("=DIR=`pwd`", "env_var", "npu_only_addition", False,
      SET_ENV,
      "CANN environment; often already sourced by the container image, so not counted as required."),
    C("GPUS_PER_NODE=$(python -c", "torch_cuda_api", "replace", True,
      "GPUS_PER_NODE=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "torch.cuda.device_count() is 0 on an NPU host, so torchrun would get --nproc_per_node 0."),
])

E("seeclick_ds_zero2", "finetune/ds_config_zero2.json", "explicit_replacement",
  "njucckevin/SeeClick finetune/ds_config_zero2.json (DeepSpeed ZeRO-2 config)", [])

E("seeclick_screenspot", "pretrain/screenspot_test.py", "explicit_replacement",
  "njucckevin/SeeClick pretrain/screenspot_test.py (ScreenSpot grounding evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Plain inference script; the 'npu' device string below needs the NPU backend registered "
      "(torch_npu < 2.5.1 has no autoload)."),
    C('device_map="cuda", trust_remote_code=True, bf16=True', "device_type", "replace", True,
      'model = AutoModelForCausalLM.from_pretrained(qwen_path, device_map="npu", trust_remote_code=True, bf16=True).eval()',
      "device_map='cuda' fails without CUDA."),
])

E("seeclick_mind2web", "agent_tasks/mind2web_test.py", "explicit_replacement",
  "njucckevin/SeeClick agent_tasks/mind2web_test.py (Mind2Web step evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Plain inference script using device_map='npu'."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
      "Per-split card pinning; with CUDA_VISIBLE_DEVICES the three parallel runs would all land on npu:0."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "torch.manual_seed on the line above also seeds the registered privateuse1 device (unconfirmed in "
      "knowledge for every torch version), and torch.cuda.manual_seed is silently lazy."),
    C('from_pretrained(model_path, device_map="cuda"', "device_type", "replace", True,
      'model = AutoPeftModelForCausalLM.from_pretrained(model_path, device_map="npu", trust_remote_code=True).eval()',
      "device_map='cuda' fails without CUDA."),
])

E("seeclick_process_utils", "pretrain/process_utils.py", "explicit_replacement",
  "njucckevin/SeeClick pretrain/process_utils.py (bbox/point string helpers)", [])

# ----------------------------------------------------------------------------------------------
# CogAgent (THUDM/CogVLM basic_demo + finetune_demo, SAT; THUDM/CogAgent 9B inference)
# ----------------------------------------------------------------------------------------------
E("cogagent_cli_hf", "basic_demo/cli_demo_hf.py", "explicit_replacement",
  "THUDM/CogVLM basic_demo/cli_demo_hf.py (CogAgent-chat-hf CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "torch.npu namespace used on the DEVICE line needs torch_npu imported (pre-2.5.1)."),
    C("DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "DEVICE = 'npu' if torch.npu.is_available() else 'cpu'",
      "Module-level device global; unchanged it silently runs the 18B model on CPU."),
])

E("cogagent_visual", "utils/models/eva_clip_L_hf.py", "explicit_replacement",
  "THUDM CogAgent HF remote code visual.py / cross_visual.py (EVA2-CLIP encoders with xformers attention)", [
    C("import xformers.ops as xops", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend; the import alone fails."),
    C("out = xops.memory_efficient_attention(", "attention_kernel", "replace", True,
      "out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale=self.scale).transpose(1, 2)",
      "B,L,H,D xformers layout -> SDPA on B,H,L,D (NPU FA inside SDPA); the 2-line call body collapses into this line."),
])

E("cogagent_finetune", "finetune_demo/finetune_cogagent_demo.py", "explicit_replacement",
  "THUDM/CogVLM finetune_demo/finetune_cogagent_demo.py (SwissArmyTransformer training_main)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point of the SAT/DeepSpeed job; NPU backend must be registered before SAT initialises devices."),
    C("if args.use_qlora and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.use_qlora and torch.npu.is_available():",
      "QLoRA path: unchanged the model silently stays on CPU (args.device='cpu' above)."),
    C("model = model.to('cuda')", "device_type", "replace", True,
      "model = model.to('npu')",
      "Reached once the condition above is ported."),
])

E("cogagent_lora_sh", "finetune_demo/finetune_cogagent_lora.sh", "explicit_replacement",
  "THUDM/CogVLM finetune_demo/finetune_cogagent_lora.sh (SAT + deepspeed launcher)", [
    C("--distributed-backend nccl", "dist_backend", "replace", True,
      "--distributed-backend hccl \\",
      "SAT passes this straight to torch.distributed.init_process_group."),
])

E("cogagent_requirements", "requirements.txt", "explicit_replacement",
  "THUDM/CogVLM requirements.txt", [
    C("xformers>=0.0.22", "attention_kernel", "removal", True, None,
      "No NPU build; xformers wheels pin an exact CUDA torch and would replace the torch that torch_npu pairs with."),
    C("torch>=2.1.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post17",
      "torch_npu wheel matching torch 2.1.0 (the torch pin must then be ==2.1.0)."),
])

E("cogagent9b_cli", "inference/cli_demo.py", "explicit_replacement",
  "THUDM/CogAgent inference/cli_demo.py (CogAgent-9B GLM-4V based, device_map='auto')", [])

# ----------------------------------------------------------------------------------------------
# ShowUI (showlab/ShowUI): Qwen2-VL + UI-guided token selection, LISA-style DeepSpeed trainer
# ----------------------------------------------------------------------------------------------
E("showui_train", "train.py", "explicit_replacement",
  "showlab/ShowUI train.py (LISA-derived deepspeed.initialize training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point; torch.npu.set_device below needs it (pre-2.5.1)."),
    C('parser.add_argument("--attn_imple", default="flash_attention_2"', "attention_kernel", "replace", True,
      'parser.add_argument("--attn_imple", default="sdpa", type=str,',
      "flash-attn cannot be installed on NPU; transformers raises at from_pretrained. train.sh relies on the default. "
      "SDPA dispatches to NPU FA."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", ""),
    C('deepspeed.init_distributed(dist_backend="nccl")', "dist_backend", "replace", True,
      'deepspeed.init_distributed(dist_backend="hccl")', ""),
    C('device_map=f"cuda:{args.local_rank}" if args.use_qlora else None', "device_type", "replace", True,
      'device_map=f"npu:{args.local_rank}" if args.use_qlora else None,',
      "QLoRA path only (bitsandbytes NF4 support on NPU is partial)."),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_allocated() / 1024 ** 3, curr_step)",
      "torch.cuda memory stats return 0 when CUDA was never initialised, so the logged curve is silently wrong."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "No-op rather than an error on an NPU host; only frees cached NPU memory."),
])

E("showui_utils", "utils/utils.py", "explicit_replacement",
  "showlab/ShowUI utils/utils.py (LISA AverageMeter.all_reduce, dict_to_cuda)", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "Unchanged, the meter tensor is a CPU tensor and the HCCL all_reduce rejects it."),
    C("input_dict[k] = v.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input_dict[k] = v.npu(non_blocking=True)", ""),
    C("input_dict[k] = [ele.cuda(non_blocking=True) for ele in v]", "tensor_to_device", "replace", True,
      "input_dict[k] = [ele.npu(non_blocking=True) for ele in v]", ""),
])

E("showui_modeling", "model/showui/modeling_showui.py", "explicit_replacement",
  "showlab/ShowUI model/showui/modeling_showui.py (Qwen2-VL subclass with varlen vision attention)", [
    C("from flash_attn import flash_attn_varlen_func", "attention_kernel", "replace", False,
      "import torch_npu",
      "Inside a try/except ImportError; only matters if the flash path is kept and rewritten (below)."),
    C("attn_output = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen)",
      "attention_kernel", "replace", False,
      "attn_output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"TND\", scale=q.shape[-1] ** -0.5, "
      "actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0].reshape(",
      "With --attn_imple sdpa this class is not selected; porting it avoids the dense S x S block mask of the SDPA "
      "class (performance/memory)."),
])

E("showui_train_sh", "scripts/train.sh", "explicit_replacement",
  "showlab/ShowUI scripts/train.sh (deepspeed --include launcher)", [
    C("export WANDB_MODE=", "env_var", "npu_only_addition", False,
      SET_ENV,
      "CANN environment; often already sourced by the image."),
])

E("showui_eval", "main/eval_screenspot.py", "explicit_replacement",
  "showlab/ShowUI main/eval_screenspot.py (ScreenSpot validation inside training)", [
    C('.to(f"cuda:{local_args.local_rank}")', "tensor_to_device", "replace", True,
      'tensor = torch.tensor([value], dtype=torch.float32).to(f"npu:{local_args.local_rank}")',
      "HCCL broadcast needs an NPU tensor; 'cuda:N' fails outright."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "No-op on an NPU host; performance/memory only."),
    C("torch.cuda.synchronize()  # the H2D copies", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # the H2D copies in dict_to_cuda are non_blocking",
      "torch.cuda.synchronize lazily initialises CUDA and raises on an NPU host."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "Same; also makes the latency measurement meaningful (NPU launches are async)."),
])

E("showui_dset", "data/dset_screenspot.py", "explicit_replacement",
  "showlab/ShowUI data/dset_screenspot.py (dataset, device-agnostic)", [])

E("showui_requirements", "requirements.txt", "explicit_replacement",
  "showlab/ShowUI requirements.txt", [
    C("torch==2.1.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post17", "torch_npu wheel paired with torch 2.1.0."),
    C("flash-attn==2.6.3", "attention_kernel", "removal", True, None,
      "flash-attn needs nvcc/CUDA to build; pip install -r fails on an NPU host."),
])

E("showui_merge", "merge_weight.py", "explicit_replacement",
  "showlab/ShowUI merge_weight.py (LISA merge_lora_weights_and_save_hf_model derivative, CPU merge)", [])

# ----------------------------------------------------------------------------------------------
# OS-Atlas (OS-Copilot/OS-Atlas): InternVL2 / Qwen2-VL grounding foundation models
# ----------------------------------------------------------------------------------------------
E("osatlas_internvl", "inference/os_atlas_internvl2.py", "explicit_replacement",
  "OS-Copilot/OS-Atlas README InternVL2 example (OS-Atlas-Base-4B, load_image + .cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Tensor.npu / Module.npu come from torch_npu."),
    C("trust_remote_code=True).eval().cuda()", "tensor_to_device", "replace", True,
      "trust_remote_code=True).eval().npu()", ""),
    C("pixel_values = load_image(args.image, max_num=args.max_num).to(torch.bfloat16).cuda()",
      "tensor_to_device", "replace", True,
      "pixel_values = load_image(args.image, max_num=args.max_num).to(torch.bfloat16).npu()", ""),
])

E("osatlas_qwen2vl", "inference/os_atlas_qwen2vl.py", "explicit_replacement",
  "OS-Copilot/OS-Atlas README Qwen2-VL example (OS-Atlas-Base-7B)", [
    C('inputs = inputs.to("cuda")', "tensor_to_device", "replace", True,
      'inputs = inputs.to("npu")',
      "device_map='auto' already placed the model on the NPU (accelerate imports torch_npu)."),
])

E("osatlas_eval", "evaluation/eval_screenspot_multi_gpu.py", "explicit_replacement",
  "OS-Atlas style ScreenSpot evaluation, one spawned process per GPU", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Needed in the spawned workers too (module is re-imported)."),
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(gpu_id)", ""),
    C('device = torch.device(f"cuda:{gpu_id}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{gpu_id}")', ""),
    C("torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
      "dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "torch.cuda.is_bf16_supported() raises (or returns False -> silently fp16) on an NPU host."),
    C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
      'attn_implementation="sdpa",', "flash-attn not installable on NPU."),
    C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(device) / 2 ** 30",
      "torch.cuda stats silently report 0 for an uninitialised CUDA context."),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count() if args.num_gpus < 0 else args.num_gpus",
      "0 on an NPU host -> assertion 'no GPU found'."),
])

E("osatlas_intern_vit", "models/internvl/modeling_intern_vit.py", "explicit_replacement",
  "OpenGVLab InternVL modeling_intern_vit.py (vision tower of OS-Atlas-Base-4B; flash-attn + apex FusedRMSNorm guarded)", [
    C("assert qkv.is_cuda", "device_type", "replace", False,
      "assert qkv.is_npu",
      "Only on the flash path, which is dead on NPU (has_flash_attn=False -> naive attention); needed if the "
      "flash path is rewritten below."),
    C("                output = flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", False,
      "output = torch_npu.npu_fusion_attention(qkv[:, 0], qkv[:, 1], qkv[:, 2], qkv.shape[-2], \"TND\", "
      "scale=self.softmax_scale or qkv.shape[-1] ** -0.5, actual_seq_qlen=cu_seqlens[1:].tolist(), "
      "actual_seq_kvlen=cu_seqlens[1:].tolist())[0]",
      "Performance: restores a fused attention for the 6-tile 448px inputs instead of the naive fallback."),
    C("input_dtype = hidden_states.dtype", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(hidden_states, self.weight, epsilon=self.variance_epsilon)[0]",
      "apex FusedRMSNorm import fails/falls back on NPU; npu_rms_norm is the fused equivalent (performance only)."),
])

E("osatlas_eval_sh", "scripts/run_eval.sh", "explicit_replacement",
  "OS-Atlas style evaluation launcher (bash, set -euo pipefail)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", False,
      SET_ENV, "CANN environment; often already sourced by the image."),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "Card selection on Ascend."),
    C("NUM_GPUS=$(echo ${CUDA_VISIBLE_DEVICES}", "env_var", "replace", True,
      "NUM_GPUS=$(echo ${ASCEND_RT_VISIBLE_DEVICES} | tr ',' '\\n' | wc -l)",
      "With set -u, an unset CUDA_VISIBLE_DEVICES aborts the script once the export above is ported."),
    C('echo "GPUs: ${CUDA_VISIBLE_DEVICES}', "env_var", "replace", True,
      'echo "NPUs: ${ASCEND_RT_VISIBLE_DEVICES} (${NUM_GPUS})"',
      "Same unbound-variable abort under set -u."),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "Under set -e a missing nvidia-smi ends the script."),
])

# ----------------------------------------------------------------------------------------------
# UI-TARS (bytedance/UI-TARS): action parser, HF inference, vLLM deployment
# ----------------------------------------------------------------------------------------------
E("uitars_action_parser", "codes/ui_tars/action_parser.py", "explicit_replacement",
  "bytedance/UI-TARS codes/ui_tars/action_parser.py (smart_resize, action -> pyautogui)", [])

E("uitars_hf_infer", "codes/ui_tars/inference_hf.py", "explicit_replacement",
  "bytedance/UI-TARS README transformers inference (Qwen2.5-VL, flash_attention_2)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above already seeds the privateuse1 device (unconfirmed in knowledge); "
      "default decoding is greedy anyway."),
    C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
      'attn_implementation="sdpa",', "flash-attn not installable on NPU; transformers raises."),
])

E("uitars_vllm_sh", "deploy/serve_vllm.sh", "explicit_replacement",
  "bytedance/UI-TARS vLLM OpenAI-compatible deployment script", [
    C("=set -e", "env_var", "npu_only_addition", False,
      SET_ENV, "CANN environment; the vllm-ascend image sources it already."),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0}", "Card selection on Ascend."),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True,
      "npu-smi info", "Under set -e a missing nvidia-smi ends the script before the server starts."),
])

E("uitars_dockerfile", "deploy/Dockerfile", "explicit_replacement",
  "UI-TARS vLLM serving Dockerfile (vllm/vllm-openai base image)", [
    C("FROM vllm/vllm-openai:v0.6.6", "distributed_framework", "replace", True,
      "FROM quay.io/ascend/vllm-ascend:v0.13.0",
      "CUDA vLLM image has no CANN/torch_npu; the vllm-ascend plugin image provides the NPU platform."),
])

E("uitars_client", "codes/ui_tars/openai_client.py", "explicit_replacement",
  "UI-TARS OpenAI-client agent loop (talks to the vLLM server; no device code)", [])

# ----------------------------------------------------------------------------------------------
# Mobile-Agent (X-PLUG/MobileAgent): Mobile-Agent-v2 with local Qwen-VL captioner, GroundingDINO, OCR
# ----------------------------------------------------------------------------------------------
E("mobileagent_run", "Mobile-Agent-v2/run.py", "explicit_replacement",
  "X-PLUG/MobileAgent Mobile-Agent-v2/run.py (ADB loop, local Qwen-VL-Chat icon captioner, modelscope pipelines)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "device_map='npu' below needs the backend registered."),
    C('device = "cuda"', "device_type", "replace", True,
      'device = "npu"', "Module-level device global passed as device_map to the local captioner."),
])

E("mobileagent_crop", "Mobile-Agent-v2/MobileAgent/crop.py", "explicit_replacement",
  "X-PLUG/MobileAgent MobileAgent/crop.py (icon crops + CLIP matching)", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", False,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "Falls back to CPU correctly (clip_for_icon follows the model's device); performance only."),
])

E("mobileagent_gdino_setup", "Mobile-Agent-v2/GroundingDINO/setup.py", "explicit_replacement",
  "IDEA-Research/GroundingDINO setup.py as vendored for Mobile-Agent's icon detector (CUDAExtension ms_deform_attn)", [])
