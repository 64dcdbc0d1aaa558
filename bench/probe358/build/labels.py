"""Labels for probe358 (code-LLM fine-tuning and code-generation evaluation harnesses).

One C(...) per upstream line a careful porter would edit for Ascend NPU (explicit torch_npu port).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch.npu.* is only reachable once torch_npu is loaded; mandatory on torch_npu < 2.5.1 "
               "(autoload makes it optional later, but explicit import is still recommended)")

# ---------------------------------------------------------------- Code Llama (meta-llama/codellama)
E("codellama_generation", "llama/generation.py", "explicit_replacement",
  "meta-llama/codellama llama/generation.py (Llama.build / generate, fairscale model parallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_bf16_supported():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_bf16_supported():",
      "module-level; torch.cuda.is_bf16_supported() needs a CUDA device (CPU torch build on NPU hosts raises)"),
    C("torch.set_default_tensor_type(torch.cuda.BFloat16Tensor)", "torch_cuda_api", "replace", True,
      'torch.set_default_dtype(torch.bfloat16); torch.set_default_device("npu")',
      "Ascend's 2.7.1 API list: set_default_tensor_type does not accept torch.npu.<Dtype>Tensor, so the "
      "naive torch.npu.BFloat16Tensor port fails; split into default dtype + default device"),
    C("torch.set_default_tensor_type(torch.cuda.HalfTensor)", "torch_cuda_api", "replace", True,
      'torch.set_default_dtype(torch.float16); torch.set_default_device("npu")',
      "same as the bf16 branch: torch.npu.HalfTensor is not accepted by set_default_tensor_type"),
    C('torch.distributed.init_process_group("nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group("hccl")', "NCCL does not exist on Ascend; HCCL backend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "per-rank device binding"),
    C('tokens = torch.full((bsz, total_len), pad_id, dtype=torch.long, device="cuda")', "tensor_to_device",
      "replace", True,
      'tokens = torch.full((bsz, total_len), pad_id, dtype=torch.long, device="npu")',
      "explicit device string overrides the default device"),
    C('tokens[k, : len(t)] = torch.tensor(t, dtype=torch.long, device="cuda")', "tensor_to_device", "replace",
      True, 'tokens[k, : len(t)] = torch.tensor(t, dtype=torch.long, device="npu")', "prompt token upload"),
    C('stop_reached = torch.tensor([False] * bsz, device="cuda")', "tensor_to_device", "replace", True,
      'stop_reached = torch.tensor([False] * bsz, device="npu")', "stop mask must live with the tokens"),
])

E("codellama_model", "llama/model.py", "device_branch_or_abstraction",
  "meta-llama/codellama llama/model.py (module-level device global with mps/cuda/cpu fallback, complex RoPE)", [
    C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True, "elif torch.npu.is_available():",
      "otherwise the module-level device silently becomes cpu (KV cache and masks on CPU)"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "module-level device global used by .to(device) calls below"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "MPS workaround (no complex ops): unchanged it ships q/k to CPU for every layer on NPU; "
      "view_as_complex/polar are supported for fp32 on NPU per Ascend's API list, so the NPU keeps them"),
    C('self.freqs_cis = self.freqs_cis.to("cuda" if device.type == "cuda" else "cpu")', "tensor_to_device",
      "replace", True, 'self.freqs_cis = self.freqs_cis.to("npu" if device.type == "npu" else "cpu")',
      "unchanged, freqs_cis stays on CPU while q/k are on the NPU -> device mismatch in apply_rotary_emb"),
])

E("codellama_tokenizer", "llama/tokenizer.py", "explicit_replacement",
  "meta-llama/codellama llama/tokenizer.py (sentencepiece, infilling ids)", [])

E("codellama_example_completion", "example_completion.py", "explicit_replacement",
  "meta-llama/codellama example_completion.py (fire entry point, torchrun)", [])

E("codellama_example_infilling", "example_infilling.py", "explicit_replacement",
  "meta-llama/codellama example_infilling.py (with CUDA-event timing added)", [
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "torch.cuda.Event cannot be created without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "paired timing event"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() lazily initialises CUDA and raises on an NPU host"),
])

E("codellama_requirements", "requirements.txt", "explicit_replacement",
  "meta-llama/codellama requirements.txt", [
    C("=torch", "import_torch_npu", "npu_only_addition", True, "torch_npu",
      "torch_npu wheel must be installed (and its version must match the torch version exactly)"),
])

# ---------------------------------------------------------------- bigcode-evaluation-harness
E("harness_main", "main.py", "device_branch_or_abstraction",
  "bigcode-project/bigcode-evaluation-harness main.py (argparse, accelerate, 8/4-bit and max_memory_per_gpu paths)", [])

E("harness_generation", "bigcode_eval/generation.py", "device_branch_or_abstraction",
  "bigcode-project/bigcode-evaluation-harness bigcode_eval/generation.py (parallel_generations)", [])

E("harness_utils", "bigcode_eval/utils.py", "device_branch_or_abstraction",
  "bigcode-project/bigcode-evaluation-harness bigcode_eval/utils.py (TokenizedDataset, complete_code)", [])

E("harness_execute", "bigcode_eval/tasks/custom_metrics/execute.py", "device_branch_or_abstraction",
  "bigcode-project/bigcode-evaluation-harness custom_metrics/execute.py (human-eval sandbox)", [])

E("harness_dockerfile", "Dockerfile", "explicit_replacement",
  "bigcode-project/bigcode-evaluation-harness Dockerfile (CPU-only execution image)", [])

E("harness_accelerate_config", "configs/multi_gpu.yaml", "device_branch_or_abstraction",
  "accelerate config file used with `accelerate launch main.py` for multi-GPU generation", [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", True, "distributed_type: MULTI_NPU",
      "accelerate has a separate MULTI_NPU distributed type (HCCL); MULTI_GPU drives the CUDA/NCCL path"),
])

# ---------------------------------------------------------------- bigcode StarCoder repo
E("starcoder_finetune", "finetune/finetune.py", "explicit_replacement",
  "bigcode-project/starcoder finetune/finetune.py (PEFT LoRA on 8-bit weights, HF Trainer)", [
    C('adapters_weights = torch.load(best_model_path, map_location="cuda")', "tensor_to_device", "replace", True,
      'adapters_weights = torch.load(best_model_path, map_location="npu")',
      "deserialising onto a CUDA device fails on an NPU host"),
    C("load_in_8bit=True,", "unsupported_op_workaround", "replace", True, "torch_dtype=torch.bfloat16,",
      "bitsandbytes LLM.int8 is not available for Ascend (only NF4 quant/dequant in the multi-backend work); "
      "load LoRA base weights in bf16 instead"),
    C("model = prepare_model_for_int8_training(model)", "unsupported_op_workaround", "replace", False,
      "model.enable_input_require_grads()",
      "without 8-bit weights this helper upcasts every bf16 parameter to fp32 (memory, not correctness); "
      "keep only the input-grad hook gradient checkpointing needs"),
])

E("starcoder_merge", "finetune/merge_peft_adapters.py", "explicit_replacement",
  "bigcode-project/starcoder finetune/merge_peft_adapters.py (CPU merge of LoRA adapters)", [])

E("starcoder_chat_generate", "chat/generate.py", "explicit_replacement",
  "bigcode-project/starcoder chat/generate.py (StarChat smoke test with throughput/memory report)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('default="cuda" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
      'default="npu" if torch.npu.is_available() else "cpu",',
      "argparse default decides where the model and batches go; unchanged it silently runs on CPU"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device -> raises on the CPU torch build used with torch_npu"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; also needed for a correct timing start"),
    C("torch.cuda.synchronize()  # make sure all kernels finished", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure all kernels finished before stopping the clock",
      "NPU ops are asynchronous; tok/s is only right after an NPU sync"),
    C('print(f"Device: {torch.cuda.get_device_name(0)}")', "torch_cuda_api", "replace", True,
      'print(f"Device: {torch.npu.get_device_name(0)}")', "get_device_name initialises CUDA -> raises"),
    C('print(f"Peak memory allocated: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")', "torch_cuda_api",
      "replace", False,
      'print(f"Peak memory allocated: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")',
      "log only: torch.cuda memory stats return 0 when CUDA was never initialised (no crash)"),
])

E("starcoder_requirements", "requirements.txt", "explicit_replacement",
  "bigcode-project/starcoder requirements.txt", [
    C("torch>=1.13", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post12",
      "add the torch_npu wheel; torch must then be pinned to the same x.y.z (2.1.0 here)"),
    C("=bitsandbytes", "unsupported_op_workaround", "removal", False, None,
      "unused once the 8-bit load is dropped; no LLM.int8 on Ascend"),
])

# ---------------------------------------------------------------- DeepSeek-Coder
E("dsc_finetune", "finetune/finetune_deepseekcoder.py", "explicit_replacement",
  "deepseek-ai/DeepSeek-Coder finetune/finetune_deepseekcoder.py (HF Trainer + DeepSpeed ZeRO-3)", [
    C('attn_implementation="flash_attention_2" if model_args.use_flash_attention else "eager",',
      "attention_kernel", "replace", True, 'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU; transformers recommends sdpa on NPU (dispatches to NPU FA)"),
])

E("dsc_ds_config", "finetune/configs/ds_config_zero3.json", "device_branch_or_abstraction",
  "deepseek-ai/DeepSeek-Coder finetune/configs/ds_config_zero3.json", [])

E("dsc_ft_requirements", "finetune/requirements.txt", "explicit_replacement",
  "deepseek-ai/DeepSeek-Coder finetune/requirements.txt", [
    C("torch>=2.0.1", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post12",
      "add the torch_npu wheel paired with the torch version"),
    C("flash-attn>=2.3.0", "attention_kernel", "removal", True, None,
      "flash-attn needs nvcc/CUDA to build; pip install -r fails on an NPU host"),
])

E("dsc_humaneval", "Evaluation/HumanEval/humaneval.py", "explicit_replacement",
  "deepseek-ai/DeepSeek-Coder Evaluation/HumanEval/humaneval.py (accelerate data-parallel HumanEval)", [
    C("mem = torch.cuda.max_memory_allocated() / (1 << 30)", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / (1 << 30)",
      "progress log only; returns 0 without CUDA rather than failing"),
])

E("dsc_eval_pal", "Evaluation/HumanEval/eval_pal.py", "device_branch_or_abstraction",
  "deepseek-ai/DeepSeek-Coder Evaluation/HumanEval/eval_pal.py", [])

E("dsc_eval_sh", "Evaluation/HumanEval/eval.sh", "explicit_replacement",
  "deepseek-ai/DeepSeek-Coder Evaluation/HumanEval eval command (accelerate launch on 2 GPUs)", [
    C('MODEL_NAME_OR_PATH="deepseek-ai/deepseek-coder-1.3b-base"', "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN libraries (libhccl, libascendcl) must be on the path before torch_npu imports, "
      "unless the shell/container already sources it"),
    C("nvidia-smi --query-gpu=name,memory.total --format=csv", "device_capability_check", "replace", False,
      "npu-smi info", "informational; nvidia-smi is absent, the script goes on"),
    C("CUDA_VISIBLE_DEVICES=0,1 python -m accelerate.commands.launch", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1 python -m accelerate.commands.launch --main_process_port 888 --num_processes=2 eval_pal.py --logdir ${MODEL_NAME_OR_PATH} --language ${LANGUAGE} --dataroot ${DATASET_ROOT}",
      "ignored on NPU, but with 2 processes accelerate already uses npu:0 and npu:1, i.e. the same devices"),
])

E("dsc_eval_instruct", "Evaluation/HumanEval/eval_instruct.py", "device_branch_or_abstraction",
  "deepseek-ai/DeepSeek-Coder Evaluation/HumanEval/eval_instruct.py (device_map=auto)", [])

E("dsc_demo", "demo/app.py", "explicit_replacement",
  "deepseek-ai/DeepSeek-Coder demo/app.py (gradio chat demo, HF Spaces)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "banner only, but paired with the load guard below"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unchanged the model is never loaded and generate() raises NameError"),
    C('os.system("nvidia-smi")', "device_capability_check", "replace", False, 'os.system("npu-smi info")',
      "debug print per request; prints 'command not found' and continues"),
])

# ---------------------------------------------------------------- EvalPlus
E("evalplus_hf", "evalplus/provider/hf.py", "explicit_replacement",
  "evalplus/evalplus evalplus/provider/hf.py (HuggingFaceDecoder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace",
      True, 'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "unchanged the decoder silently generates on CPU"),
])

E("evalplus_vllm", "evalplus/provider/vllm.py", "explicit_replacement",
  "evalplus/evalplus evalplus/provider/vllm.py (VllmDecoder; runs on vllm-ascend plugin)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("tensor_parallel_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "tensor_parallel_size = torch.npu.device_count()",
      "returns 0 on an NPU host -> tensor_parallel_size=0 is rejected by vLLM"),
])

E("evalplus_codegen", "evalplus/codegen.py", "device_branch_or_abstraction",
  "evalplus/evalplus evalplus/codegen.py (run_codegen entry, backend/attn_implementation options)", [])

# ---------------------------------------------------------------- WizardCoder (nlpxucan/WizardLM)
E("wizard_humaneval_gen", "WizardCoder/src/humaneval_gen.py", "device_branch_or_abstraction",
  "nlpxucan/WizardLM WizardCoder/src/humaneval_gen.py (module-level device string, cuda/mps branches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "device selection"),
    C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "module-level device string"),
    C('if device == "cuda":', "device_type", "replace", True, 'if device == "npu":',
      "string comparison gates model loading; unchanged no branch matches and `model` is unbound"),
])

E("wizard_humaneval_vllm", "WizardCoder/src/humaneval_gen_vllm.py", "explicit_replacement",
  "nlpxucan/WizardLM WizardCoder/src/humaneval_gen_vllm.py (vLLM tensor parallel generation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("default=torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "    parser.add_argument('--num_gpus', type=int, default=torch.npu.device_count(), help='tensor parallel size')",
      "default TP size would be 0 on an NPU host"),
])

E("wizard_train", "WizardCoder/src/train_wizardcoder.py", "device_branch_or_abstraction",
  "nlpxucan/WizardLM WizardCoder/src/train_wizardcoder.py (Alpaca-style HF Trainer SFT)", [])

E("wizard_gen_sh", "WizardCoder/scripts/humaneval_gen.sh", "explicit_replacement",
  "nlpxucan/WizardLM WizardCoder README HumanEval generation loop (one process per GPU)", [
    C('model="/path/to/your/model"', "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for the python workers, unless already sourced by the shell/container"),
    C("gpu_num=$(nvidia-smi --list-gpus | wc -l)", "device_capability_check", "replace", True,
      'gpu_num=$(npu-smi info -l | grep -c "NPU ID")',
      "nvidia-smi missing -> gpu_num=0 -> loop never runs and nothing is generated; counts cards "
      "(multi-chip cards like A3 need the chip count instead)"),
    C("CUDA_VISIBLE_DEVICES=$gpu python src/humaneval_gen.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpu python src/humaneval_gen.py --model ${model} \\",
      "ignored on NPU: every worker would load the model onto npu:0 (OOM/serialised)"),
])

E("wizard_train_sh", "WizardCoder/scripts/train_wizardcoder.sh", "explicit_replacement",
  "nlpxucan/WizardLM WizardCoder training command (deepspeed launcher, ZeRO-3)", [
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "inert on NPU; closest documented knob turns on INFO plog (HCCL logs go to ~/ascend/log)"),
    C("DATA_PATH=data/code_evol_instruct_80k.json", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for the deepspeed workers, unless already sourced by the shell/container"),
])
