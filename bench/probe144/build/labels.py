# Labels for probe144: DeepSpeed example training pipelines (DeepSpeed-Chat, DeepSpeedExamples).
# One C(...) per line a careful porter would edit to run (and run well) on Ascend NPU with torch_npu.
# See ../README.md "How the labels were chosen" for the policy behind required / not required.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


DSCHAT = "applications/DeepSpeed-Chat/"
TRAIN = DSCHAT + "training/"

IMPORT_NPU_ENTRY = ("entry script whose ported lines call torch.npu / use 'npu' device strings; the explicit "
                    "import registers the backend (mandatory before torch_npu 2.5.1, e.g. the 2.1.0.postN line "
                    "still in the active matrix; recommended after)")
IMPORT_NPU_DS_ONLY = ("entry script that only reaches the device through deepspeed.get_accelerator(); DeepSpeed's "
                      "accelerator auto-detection imports torch_npu itself (unconfirmed in knowledge) and "
                      "torch_npu>=2.5.1 autoloads, so the explicit import is belt-and-braces")
SET_ENV = ("CANN environment must be sourced before torch_npu can load (libhccl.so / ASCEND_OPP_PATH); "
           "not required when the login shell or container image already exports it")
FUSED_ADAM_DS = ("deepspeed.ops.adam.FusedAdam is built through get_accelerator()'s op builder; the CUDA "
                 "multi_tensor_adam kernel is unavailable on NPU, DeepSpeed's NPU builder may cover it "
                 "(unconfirmed) - torch_npu.optim.NpuFusedAdamW is the documented NPU fused optimizer")

# ---------------------------------------------------------------- DeepSpeed-Chat: step 1
E("dschat_step1_main", TRAIN + "step1_supervised_finetuning/main.py", "explicit_replacement",
  "DeepSpeed-Chat step1_supervised_finetuning/main.py (older torch.cuda layout)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('device = torch.device("cuda")', "device_type", "replace", True,
        'device = torch.device("npu")', "hard-coded CUDA device; batches moved with to_device(batch, device) would fail"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "torch.cuda.set_device raises on a host without CUDA"),
      C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", args.local_rank)', "per-rank CUDA device object used for every batch"),
      C("AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam", "fused_optimizer", "replace", False,
        "AdamOptimizer = DeepSpeedCPUAdam if args.offload else torch_npu.optim.NpuFusedAdamW", FUSED_ADAM_DS),
  ])

E("dschat_step1_prompt_eval", TRAIN + "step1_supervised_finetuning/prompt_eval.py", "explicit_replacement",
  "DeepSpeed-Chat step1 prompt_eval.py (baseline vs finetuned generation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('device = torch.device("cuda:0")', "device_type", "replace", True,
        'device = torch.device("npu:0")', "both models and tokenized prompts are moved to this CUDA device"),
  ])

E("dschat_step1_run_sh", TRAIN + "step1_supervised_finetuning/training_scripts/opt/single_node/run_1.3b.sh",
  "explicit_replacement", "DeepSpeed-Chat step1 training_scripts/opt/single_node/run_1.3b.sh", [
      C("=mkdir -p $OUTPUT", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
        "ignored on NPU: the job would silently take NPUs 0-3 and collide with the concurrent step2 job"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "NCCL log level has no effect under HCCL; CANN logging is controlled by ASCEND_GLOBAL_LOG_LEVEL "
        "(3 is the value msprof-analyze treats as normal)"),
  ])

# ---------------------------------------------------------------- DeepSpeed-Chat: step 2
E("dschat_step2_main", TRAIN + "step2_reward_model_finetuning/main.py", "device_branch_or_abstraction",
  "DeepSpeed-Chat step2_reward_model_finetuning/main.py (get_accelerator() layout)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NPU_DS_ONLY),
      C("AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam", "fused_optimizer", "replace", False,
        "AdamOptimizer = DeepSpeedCPUAdam if args.offload else torch_npu.optim.NpuFusedAdamW", FUSED_ADAM_DS),
  ])

E("dschat_step2_rw_eval", TRAIN + "step2_reward_model_finetuning/rw_eval.py", "explicit_replacement",
  "DeepSpeed-Chat step2 rw_eval.py (reward model pair scoring)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('device = torch.device("cuda:{}".format(args.gpu_id))', "device_type", "replace", True,
        'device = torch.device("npu:{}".format(args.gpu_id))',
        "run_pair_comparison (the default entry) puts the reward model on a CUDA device"),
  ])

# ---------------------------------------------------------------- DeepSpeed-Chat: step 3
E("dschat_step3_main", TRAIN + "step3_rlhf_finetuning/main.py", "explicit_replacement",
  "DeepSpeed-Chat step3_rlhf_finetuning/main.py (PPO loop, older torch.cuda layout)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('device = torch.device("cuda")', "device_type", "replace", True,
        'device = torch.device("npu")', "hard-coded CUDA device for prompt/unsupervised batches"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises on a host without CUDA"),
      C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", args.local_rank)', "per-rank CUDA device object"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize lazily initialises CUDA and raises; NPU kernels are async too, so keep the sync"),
      C("torch.cuda.synchronize()  # wait for the last optimizer step", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the last optimizer step", "same as above, end of the PPO timing window"),
      C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", True,
        'f"peak device memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GB",',
        "torch.cuda memory stats return {} when CUDA is uninitialised, so the log silently reports 0 GB"),
  ])

E("dschat_rlhf_engine", TRAIN + "step3_rlhf_finetuning/rlhf_engine.py", "device_branch_or_abstraction",
  "DeepSpeed-Chat step3 rlhf_engine.py (DeepSpeedRLHFEngine: actor/ref/ema/critic/reward init)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "needed only for the optional torch_npu.optim swap below"),
      C("return DeepSpeedCPUAdam if offload else FusedAdam", "fused_optimizer", "replace", False,
        "return DeepSpeedCPUAdam if offload else torch_npu.optim.NpuFusedAdamW", FUSED_ADAM_DS),
  ])

E("dschat_ppo_trainer", TRAIN + "step3_rlhf_finetuning/ppo_trainer.py", "explicit_replacement",
  "DeepSpeed-Chat step3 ppo_trainer.py (DeepSpeedPPOTrainer / Unsupervised)", [
      C("all_tensor = torch.zeros(world_size, dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
        "all_tensor = torch.zeros(world_size, dtype=torch.float32).npu()",
        ".cuda() fails on NPU; the tensor must live on the NPU for the HCCL all_reduce"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU (torch.cuda.empty_cache returns when CUDA is uninitialised); memory only"),
  ])

E("dschat_step3_run_llama2_sh", TRAIN + "step3_rlhf_finetuning/training_scripts/llama2/run_llama2_7b_multinode.sh",
  "explicit_replacement", "DeepSpeed-Chat step3 llama2 launcher (multi-node, hostfile, hybrid engine)", [
      C("=mkdir -p $OUTPUT", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("export NCCL_SOCKET_IFNAME=bond0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=bond0",
        "HCCL_SOCKET_IFNAME only selects the host NIC for root-info negotiation (data goes over the NPUs' own "
        "RoCE ports); HCCL's default NIC order would also pick bond0 before eth0"),
      C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", "removal", False, None,
        "Mellanox HCA selection is meaningless for HCCL (NPU-integrated RoCE NICs configured via hccn_tool)"),
      C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "NCCL-only RoCE GID selection; ignored"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "NCCL log level has no effect under HCCL (ASCEND_GLOBAL_LOG_LEVEL numbering for 'info' unconfirmed)"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog counterpart; knowledge says its default is already 1"),
      C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "CUDA allocator setting is ignored; NPU caching allocator has the same option (needs HDK >= 23.0.0)"),
      C("--enable_hybrid_engine \\", "unsupported_op_workaround", "removal", False, None,
        "hybrid engine swaps the actor into DeepSpeed inference-kernel containers (CUDA InferenceBuilder); "
        "knowledge says DeepSpeed's CUDA inference kernels are unavailable on NPU, coverage by DeepSpeed's NPU "
        "builder unconfirmed - the safe port drops the flag (and --inference_tp_size)"),
  ])

# ---------------------------------------------------------------- DeepSpeed-Chat: utils
E("dschat_utils", TRAIN + "utils/utils.py", "explicit_replacement",
  "DeepSpeed-Chat utils/utils.py (print_rank_0, to_device, set_random_seed, save_zero_three_model)", [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "queued no-op on NPU, but transformers.set_seed and torch.manual_seed on the lines above already seed "
        "the NPU generator"),
      C("alloc = torch.cuda.memory_allocated() / (1024**3)", "torch_cuda_api", "replace", True,
        "alloc = torch.npu.memory_allocated() / (1024**3)", "silently reports 0 on NPU (CUDA never initialised)"),
      C("peak = torch.cuda.max_memory_allocated() / (1024**3)", "torch_cuda_api", "replace", True,
        "peak = torch.npu.max_memory_allocated() / (1024**3)", "silently reports 0 on NPU"),
      C("reserved = torch.cuda.memory_reserved() / (1024**3)", "torch_cuda_api", "replace", True,
        "reserved = torch.npu.memory_reserved() / (1024**3)", "silently reports 0 on NPU"),
  ])

E("dschat_ds_utils", TRAIN + "utils/ds_utils.py", "explicit_replacement",
  "DeepSpeed-Chat utils/ds_utils.py (get_train_ds_config / get_eval_ds_config)", [
      C('if dtype == "bf16" and not torch.cuda.is_bf16_supported():', "device_capability_check", "replace", True,
        'if dtype == "bf16" and not torch.npu.is_bf16_supported():',
        "torch.cuda.is_bf16_supported() raises or returns False without CUDA, silently downgrading bf16 runs "
        "to fp16 on Atlas A2 which supports bf16"),
  ])

E("dschat_model_utils", TRAIN + "utils/model/model_utils.py", "device_branch_or_abstraction",
  "DeepSpeed-Chat utils/model/model_utils.py (create_hf_model / create_critic_model)", [
      C('return "flash_attention_2"', "attention_kernel", "replace", False, 'return "sdpa"',
        "flash-attn cannot be installed on NPU so the guarded path falls back to eager; SDPA dispatches to the "
        "NPU fused attention kernel (transformers PR #36383 guidance) - performance only"),
  ])

E("dschat_data_utils", TRAIN + "utils/data/data_utils.py", "explicit_replacement",
  "DeepSpeed-Chat utils/data/data_utils.py (create_prompt_dataset, collators, MiniDataset)", [
      C("buf_create_cache = torch.ByteTensor([not cache_found]).cuda()", "tensor_to_device", "replace", True,
        "buf_create_cache = torch.ByteTensor([not cache_found]).npu()",
        ".cuda() fails; the flag tensor must be on the NPU for the HCCL all_reduce that follows"),
  ])

E("dschat_perf", TRAIN + "utils/perf.py", "explicit_replacement",
  "DeepSpeed-Chat utils/perf.py (print_throughput / calculate_flops, with an MFU column)", [
      C("name = torch.cuda.get_device_name()", "torch_cuda_api", "replace", True, "name = torch.npu.get_device_name()",
        "raises without CUDA; print_throughput runs every step on rank 0 so step1 training would crash"),
  ])

E("dschat_chatbot", DSCHAT + "inference/chatbot.py", "explicit_replacement",
  "DeepSpeed-Chat inference/chatbot.py (HF pipeline REPL)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('device="cuda:0")', "device_type", "replace", True, 'device="npu:0")',
        "HF pipeline would try to move the model to CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU; memory only"),
  ])

E("dschat_e2e_rlhf", DSCHAT + "e2e_rlhf.py", "explicit_replacement",
  "DeepSpeed-Chat e2e_rlhf.py (runs the three step launchers)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "returns False on an NPU host, so the script refuses to launch any step"),
      C("n_visible = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "n_visible = torch.npu.device_count()", "returns 0 on NPU; wrong device-count warning"),
  ])

E("dschat_requirements", DSCHAT + "requirements.txt", "explicit_replacement",
  "DeepSpeed-Chat requirements.txt", [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu pairs with the CPU torch build on x86 (aarch64 uses plain PyPI). Whether a "
        "+cu118 torch still works under torch_npu is unconfirmed"),
      C("torch>=2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "torch_npu must be installed; its version must equal torch's exactly (so torch gets pinned to 2.1.0 too)"),
      C("flash-attn>=2.3.3", "attention_kernel", "removal", True, None,
        "flash-attn cannot be built/installed on NPU; pip install -r would fail"),
  ])

# ---------------------------------------------------------------- DeepSpeedExamples: cifar
E("cifar10_deepspeed", "training/cifar/cifar10_deepspeed.py", "explicit_replacement",
  "DeepSpeedExamples training/cifar/cifar10_deepspeed.py (MoE option, inline ds_config)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NPU_DS_ONLY),
      C("inputs, labels = data[0].to(local_rank), data[1].to(local_rank)", "tensor_to_device", "replace", True,
        "inputs, labels = data[0].to(local_device), data[1].to(local_device)",
        "an integer ordinal in .to() resolves to a CUDA device (msFmkTransplt rewrites it to f'npu:{x}')"),
  ])

E("cifar_run_ds_moe", "training/cifar/run_ds_moe.sh", "explicit_replacement",
  "DeepSpeedExamples training/cifar/run_ds_moe.sh", [
      C("export CUDA_HOME=/usr/local/cuda-11.8", "import_torch_npu", "replace", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "no CUDA toolkit on the NPU host; " + SET_ENV),
      C("export PATH=$CUDA_HOME/bin:$PATH", "env_var", "removal", False, None, "CUDA toolkit path; harmless but dead"),
  ])

# ---------------------------------------------------------------- DeepSpeedExamples: bing_bert
E("bing_bert_train", "training/bing_bert/deepspeed_train.py", "explicit_replacement",
  "DeepSpeedExamples training/bing_bert/deepspeed_train.py (BERT pretraining with LAMB)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("logger = Logger(cuda=torch.cuda.is_available() and not args.no_cuda)", "torch_cuda_api", "replace", True,
        "logger = Logger(cuda=torch.npu.is_available() and not args.no_cuda)",
        "is_available() is False on NPU, so the Logger stops filtering to rank 0 and every rank logs"),
      C("model_parameters=optimizer_grouped_parameters)", "fused_optimizer", "replace", True,
        "model_parameters=optimizer_grouped_parameters, optimizer=torch_npu.optim.NpuFusedLamb(optimizer_grouped_parameters, lr=11e-3, weight_decay=0.01))",
        "the DS-config Lamb optimizer is FusedLamb (CUDA-only op builder); pass an NPU optimizer from the client"),
      C("deepspeed.init_distributed(dist_backend='nccl')", "dist_backend", "replace", True,
        "deepspeed.init_distributed(dist_backend='hccl')", "NCCL is not available on NPU"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU; memory only"),
  ])

E("bing_bert_modelingpreln", "training/bing_bert/nvidia/modelingpreln.py", "kernel_rewrite",
  "DeepSpeedExamples bing_bert nvidia/modelingpreln.py (pre-LN BERT with DeepSpeed transformer kernel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "needed only for the optional npu_fusion_attention rewrite below"),
      C("from deepspeed.ops.sparse_attention import BertSparseSelfAttention, SparsityConfig", "attention_kernel",
        "replace", True,
        "BertSparseSelfAttention = SparsityConfig = None  # NPU: import deepspeed.ops.sparse_attention lazily, only under --deepspeed_sparse_attention",
        "DeepSpeed sparse attention imports triton (CUDA block-sparse kernels) at module import; unguarded it "
        "breaks importing the whole model file on an NPU host"),
      C("BertLayerNorm = apex.normalization.FusedLayerNorm", "unsupported_op_workaround", "replace", False,
        "BertLayerNorm = torch.nn.LayerNorm",
        "only bites if Ascend's apex patch is installed: the import then succeeds but FusedLayerNorm needs the "
        "fused_layer_norm_cuda extension (not available); without apex the ImportError fallback already works"),
      C("attention_scores = torch.matmul(query_layer, key_layer)", "npu_fused_op", "replace", False,
        "context_layer = torch_npu.npu_fusion_attention(q, k, v, self.num_attention_heads, 'BNSD', atten_mask=mask.bool(), scale=1.0 / math.sqrt(self.attention_head_size), keep_prob=1.0 - self.dropout.p)[0]",
        "hand-written softmax attention; the NPU fused attention kernel is the performance path"),
      C("copy.deepcopy(DeepSpeedTransformerLayer(cuda_config))", "custom_cuda_extension", "replace", True,
        "copy.deepcopy(BertLayer(config))",
        "DeepSpeedTransformerLayer JIT-loads the CUDA TransformerBuilder kernels (no NPU build); reached whenever "
        "--deepspeed_transformer_kernel is passed, as the shipped launcher does"),
  ])

E("bing_bert_run_sh", "training/bing_bert/ds_train_bert_bsz64k_seq128.sh", "explicit_replacement",
  "DeepSpeedExamples bing_bert ds_train_bert_bsz64k_seq128.sh", [
      C("=mkdir -p $OUTPUT_DIR", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("NCCL_TREE_THRESHOLD=0 NCCL_IB_DISABLE=0 deepspeed \\", "env_var", "replace", False, "deepspeed \\",
        "NCCL tuning knobs are ignored by HCCL"),
      C("--deepspeed_transformer_kernel \\", "custom_cuda_extension", "removal", True, None,
        "selects the CUDA-only DeepSpeed transformer kernel; without it the model uses the PyTorch BertLayer"),
  ])

E("bing_bert_lamb_config", "training/bing_bert/deepspeed_bsz64k_lamb_config_seq128.json", "explicit_replacement",
  "DeepSpeedExamples bing_bert deepspeed_bsz64k_lamb_config_seq128.json", [
      C('"type": "Lamb",', "fused_optimizer", "removal", True, None,
        "DeepSpeed maps 'Lamb' to FusedLamb, a CUDA op builder unavailable on NPU; drop the optimizer block and "
        "let deepspeed_train.py pass torch_npu.optim.NpuFusedLamb as the client optimizer"),
  ])

# ---------------------------------------------------------------- DeepSpeedExamples: pipeline parallelism
E("pipeline_train", "training/pipeline_parallelism/train.py", "explicit_replacement",
  "DeepSpeedExamples training/pipeline_parallelism/train.py (AlexNet PipelineModule)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("default='nccl',", "dist_backend", "replace", True, "default='hccl',",
        "default backend handed to deepspeed.init_distributed"),
      C("f'{torch.cuda.max_memory_allocated() / 2**20:.1f} MiB')", "torch_cuda_api", "replace", True,
        "f'{torch.npu.max_memory_allocated() / 2**20:.1f} MiB')", "silently reports 0 MiB on NPU"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
  ])

E("pipeline_run_sh", "training/pipeline_parallelism/run.sh", "explicit_replacement",
  "DeepSpeedExamples training/pipeline_parallelism/run.sh", [
      C("# The launcher translates --include", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("deepspeed --include localhost:0,1 train.py", "dist_backend", "replace", True,
        "deepspeed --include localhost:0,1 train.py --deepspeed_config=ds_config.json -p 2 --steps=200 --backend hccl",
        "explicit --backend nccl overrides the script default"),
  ])

# ---------------------------------------------------------------- DeepSpeedExamples: HelloDeepSpeed
E("hello_ds_train_bert", "training/HelloDeepSpeed/train_bert_ds.py", "explicit_replacement",
  "DeepSpeedExamples training/HelloDeepSpeed/train_bert_ds.py (RoBERTa MLM, fire CLI)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C('device = (torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = (torch.device("npu", local_rank)', "batches are moved to this device each step"),
      C("if (local_rank > -1) and torch.cuda.is_available() else", "torch_cuda_api", "replace", True,
        "if (local_rank > -1) and torch.npu.is_available() else",
        "False on NPU: batches would silently stay on CPU while the engine's model is on the NPU"),
      C('deepspeed.init_distributed(dist_backend="nccl")', "dist_backend", "replace", True,
        'deepspeed.init_distributed(dist_backend="hccl")', "NCCL is not available on NPU"),
  ])

# ---------------------------------------------------------------- DeepSpeedExamples: comm benchmarks
E("comm_bench_utils", "benchmarks/communication/utils.py", "explicit_replacement",
  "DeepSpeedExamples benchmarks/communication/utils.py (older torch.cuda version)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "every benchmark entry star-imports this module; ported lines below call torch.npu"),
      C("if backend == 'nccl':", "dist_backend", "replace", True, "if backend in ('nccl', 'hccl'):",
        "backend-string comparisons are not rewritten by any tool; with 'hccl' the branch is skipped and every "
        "rank stays on device 0"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C("torch.cuda.set_device(int(os.environ['LOCAL_RANK']))", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(int(os.environ['LOCAL_RANK']))", "raises without CUDA"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; the timing relies on it"),
      C("max_memory_per_gpu = torch.cuda.get_device_properties(", "torch_cuda_api", "replace", True,
        "max_memory_per_gpu = torch.npu.get_device_properties(",
        "raises without CUDA; total_memory is one of the properties NPU does report"),
      C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True, "return torch.npu.device_count()",
        "returns 0 on NPU"),
      C("choices=['nccl', 'ccl', 'mpi'],", "dist_backend", "replace", True, "choices=['nccl', 'hccl', 'ccl', 'mpi'],",
        "argparse would reject --backend hccl"),
  ])

E("comm_bench_constants", "benchmarks/communication/constants.py", "explicit_replacement",
  "DeepSpeedExamples benchmarks/communication/constants.py", [
      C("DEFAULT_BACKEND = 'nccl'", "dist_backend", "replace", True, "DEFAULT_BACKEND = 'hccl'",
        "default --backend for every benchmark"),
  ])

E("comm_bench_all_reduce", "benchmarks/communication/all_reduce.py", "explicit_replacement",
  "DeepSpeedExamples benchmarks/communication/all_reduce.py", [
      C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_event = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_event = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("dtype=getattr(torch, args.dtype)).cuda(local_rank)", "tensor_to_device", "replace", True,
        "dtype=getattr(torch, args.dtype)).npu(local_rank)", ".cuda() fails on NPU"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU; memory only"),
      C('args.dtype)).to(f"cuda:{local_rank}")', "tensor_to_device", "replace", True,
        'args.dtype)).to(f"npu:{local_rank}")', "CUDA device string"),
  ])

# ---------------------------------------------------------------- DeepSpeedExamples: inference (transfer_to_npu)
E("ds_inference_test", "inference/huggingface/text-generation/inference-test.py", "transfer_to_npu",
  "DeepSpeedExamples inference/huggingface/text-generation/inference-test.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "ported with transfer_to_npu: torch.cuda.synchronize, .cuda(), 'cuda:N' in .to() (here and in utils.py) "
        "are redirected at runtime, so only the import is added"),
      C("replace_with_kernel_inject=args.use_kernel,", "unsupported_op_workaround", "replace", False,
        "replace_with_kernel_inject=False,",
        "--use_kernel (off by default) selects DeepSpeed's CUDA inference kernels, unavailable on NPU per "
        "knowledge; whether DeepSpeed's NPU builder covers kernel injection is unconfirmed"),
  ])

E("ds_inference_utils", "inference/huggingface/text-generation/utils.py", "transfer_to_npu",
  "DeepSpeedExamples inference/huggingface/text-generation/utils.py (DSPipeline)", [])

# ---------------------------------------------------------------- Docker
E("ds_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "DeepSpeed docker/Dockerfile (CUDA base image, MLNX OFED, DS_BUILD_OPS)", [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image; the NPU image must carry CANN (toolkit + set_env exports)"),
      C("wget -q -O - http://www.mellanox.com/downloads/ofed", "distributed_framework", "removal", False, None,
        "Mellanox OFED userland only serves NCCL over IB/RoCE; HCCL uses the NPUs' integrated RoCE ports "
        "(and the x86_64 tarball would not install on an aarch64 Ascend host)"),
      C("ENV PYTORCH_VERSION=2.1.2", "import_torch_npu", "replace", True, "ENV PYTORCH_VERSION=2.1.0",
        "torch_npu wheels exist only for exact torch versions (2.1.0, not 2.1.2)"),
      C("RUN pip install torch==${PYTORCH_VERSION} torchvision --index-url https://download.pytorch.org/whl/cu118",
        "import_torch_npu", "replace", True,
        "RUN pip install torch==${PYTORCH_VERSION} torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post17",
        "CUDA wheel index and no torch_npu"),
      C("RUN MAX_JOBS=8 pip install flash-attn==2.3.6 --no-build-isolation", "attention_kernel", "removal", True, None,
        "flash-attn needs nvcc/CUDA to build; the docker build would fail"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0"', "custom_cuda_extension", "removal", False, None,
        "CUDA arch list for nvcc builds; ignored"),
      C("ENV NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only; ignored by HCCL"),
      C("DS_BUILD_OPS=1 DS_BUILD_SPARSE_ATTN=0", "custom_cuda_extension", "replace", True,
        "DS_BUILD_OPS=0 pip install . --global-option=\"build_ext\" --global-option=\"-j8\"",
        "pre-building all DeepSpeed ops compiles CUDA kernels with nvcc and fails; NPU builders load at runtime"),
  ])
