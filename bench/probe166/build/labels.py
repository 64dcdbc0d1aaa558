# Labels for probe166 (Chinese NLP pre-training / fine-tuning frameworks, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter edits. See README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------------------------- UER-py / TencentPretrain

E("uer_opts", "uer/opts.py", "explicit_replacement",
  "UER-py / TencentPretrain uer/opts.py (argparse option groups, --backend, --fp16 via apex)", [
    C('parser.add_argument("--backend", choices=["nccl", "gloo"], default="nccl", type=str,',
      "dist_backend", "replace", True,
      'parser.add_argument("--backend", choices=["hccl", "nccl", "gloo"], default="hccl", type=str,',
      "Default backend feeds dist.init_process_group(backend=args.backend) and deepspeed.init_distributed; "
      "'nccl' is not available with torch_npu, and 'hccl' must be an allowed choice."),
])

E("uer_pretrain", "pretrain.py", "explicit_replacement",
  "UER-py pretrain.py (world_size / gpu_ranks mode selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; torch.npu.* calls below need the NPU backend registered (torch 2.1-era torch_npu, no autoload)."),
    C('assert torch.cuda.is_available(), "No available GPUs."', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "No available NPUs."',
      "torch.cuda.is_available() is False on an NPU host, so distributed mode aborts."),
    C('assert ranks_num <= torch.cuda.device_count(), "Started processes exceeds the available GPUs."',
      "torch_cuda_api", "replace", True,
      'assert ranks_num <= torch.npu.device_count(), "Started processes exceeds the available NPUs."',
      "torch.cuda.device_count() is 0 on an NPU host; the assertion fails."),
    C('assert torch.cuda.is_available(), "No available GPU for single-GPU mode."', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "No available NPU for single-device mode."',
      "Single-device mode aborts on an NPU host."),
    C('assert args.gpu_id < torch.cuda.device_count(), "Invalid specified GPU device."', "torch_cuda_api", "replace",
      True, 'assert args.gpu_id < torch.npu.device_count(), "Invalid specified NPU device."',
      "device_count() is 0 on an NPU host."),
])

E("uer_trainer", "uer/trainer.py", "explicit_replacement",
  "UER-py / TencentPretrain uer/trainer.py (mp.spawn workers, apex amp, DDP, deepspeed branch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Worker processes call torch.npu.set_device / .npu(); the NPU backend must be loaded in this module's process."),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW",
      "apex FusedAdam needs the CUDA extension (knowledge: Ascend apex has no FusedAdam). Reached only with "
      "--optimizer fused_adam, which no shipped script uses."),
    C("custom_optimizer = FusedAdam(optimizer_grouped_parameters, lr=args.learning_rate, bias_correction=False)",
      "fused_optimizer", "replace", False,
      "custom_optimizer = NpuFusedAdamW(optimizer_grouped_parameters, lr=args.learning_rate)",
      "NpuFusedAdamW has no bias_correction kwarg; same opt-in path as the import above."),
    C("batch[i] = batch[i].cuda(gpu_id)", "tensor_to_device", "replace", True, "batch[i] = batch[i].npu(gpu_id)",
      "Every training batch is moved with .cuda(); fails on an NPU host."),
    C("model_for_training.cuda(gpu_id)", "tensor_to_device", "replace", True, "model_for_training.npu(gpu_id)",
      "Module.cuda() fails without CUDA."),
    C("model_for_dataloader.cuda(gpu_id)", "tensor_to_device", "replace", True, "model_for_dataloader.npu(gpu_id)",
      "Same as above for the auxiliary dataloader model."),
    C("model_for_training, optimizer = amp.initialize(model_for_training, optimizer, opt_level=args.fp16_opt_level)",
      "amp", "replace", False,
      "model_for_training, optimizer = amp.initialize(model_for_training, optimizer, opt_level=args.fp16_opt_level, "
      "loss_scale='dynamic', combine_grad=True)",
      "Ascend apex keeps amp.initialize (O1/O2); combine_grad is its fused-unscale option: performance only. "
      "Installing Ascend apex instead of NVIDIA apex is labelled in the Dockerfile."),
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)",
      "torch.cuda.set_device fails on a torch build without CUDA."),
    C("(gpu_id, torch.cuda.memory_allocated(gpu_id) / 1024 / 1024))", "torch_cuda_api", "replace", False,
      "(gpu_id, torch.npu.memory_allocated(gpu_id) / 1024 / 1024))",
      "Log only: torch.cuda.memory_allocated returns 0 when CUDA is not initialised."),
])

E("uer_classifier", "finetune/run_classifier.py", "explicit_replacement",
  "UER-py finetune/run_classifier.py (args.device, apex amp, DataParallel when >1 GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; the 'npu' device string needs the backend registered."),
    C('args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'args.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Silently fine-tunes on the CPU on an NPU host."),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, loss_scale='dynamic', "
      "combine_grad=True)",
      "Works with Ascend apex as is; combine_grad is a performance option."),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "removal", False, None,
      "torch.nn.DataParallel is unsupported on NPU. Unreachable on an NPU host because torch.cuda.device_count() "
      "is 0 there; removed so a later cuda->npu rename of the guard cannot enable it (use DDP)."),
])

E("uer_generate", "scripts/generate_lm.py", "explicit_replacement",
  "UER-py scripts/generate_lm.py (top-k/top-p sampling inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; needed for the 'npu:0' device string."),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "Silently generates on the CPU on an NPU host."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "Guards a peak-memory print only; silently skipped on an NPU host."),
    C('print("Peak GPU memory: %.1f MB" % (torch.cuda.max_memory_allocated() / 2 ** 20))', "torch_cuda_api",
      "replace", False, 'print("Peak NPU memory: %.1f MB" % (torch.npu.max_memory_allocated() / 2 ** 20))',
      "Log only; would print 0 with the CUDA API."),
])

E("uer_layernorm", "uer/layers/layer_norm.py", "explicit_replacement",
  "UER-py uer/layers/layer_norm.py (LayerNorm / T5 / RMSNorm, guarded apex FusedLayerNorm)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Needed only for the optional fused RMSNorm below."),
    C("self.impl = FusedLayerNorm(hidden_size, eps=eps)", "custom_cuda_extension", "replace", False,
      "self.impl = nn.LayerNorm(hidden_size, eps=eps)",
      "With Ascend apex installed the guarded import succeeds, but FusedLayerNorm imports fused_layer_norm_cuda "
      "in its constructor (knowledge: not in Ascend apex) -> error. Only reachable through a config file setting "
      "layernorm='fused' (not an argparse choice), hence not required."),
    C("output = self._norm(x.float()).type_as(x)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
      "Performance: fused RMSNorm kernel instead of pow/mean/rsqrt."),
])

E("uer_seed", "uer/utils/seed.py", "explicit_replacement",
  "UER-py uer/utils/seed.py (set_seed, RNG state save/restore for resume)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "Silent no-op on an NPU host; torch.manual_seed already seeds registered accelerator backends."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "Silent no-op; same as above."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "NPU RNG state silently not saved for resume: reproducibility only."),
    C('state["cuda"] = torch.cuda.get_rng_state_all()', "torch_cuda_api", "replace", False,
      'state["npu"] = torch.npu.get_rng_state_all()', "Goes with the guard above."),
    C('if "cuda" in state and torch.cuda.is_available():', "torch_cuda_api", "replace", False,
      'if "npu" in state and torch.npu.is_available():', "Restore side of the same change."),
    C('torch.cuda.set_rng_state_all(state["cuda"])', "torch_cuda_api", "replace", False,
      'torch.npu.set_rng_state_all(state["npu"])', "Restore side of the same change."),
])

E("uer_run_sh", "scripts/run_pretrain_gpt2_zh.sh", "explicit_replacement",
  "UER-py / TencentPretrain GPT-2 Chinese pre-training launcher (8 cards, --backend nccl, apex fp16)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced, otherwise import torch_npu fails (libhccl.so / ASCEND_OPP_PATH)."),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "Ignored on NPU, but it lists every card of an 8-card box, so nothing changes; rename for clarity."),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only knob with no HCCL counterpart; ignored on NPU."),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "Logging only; CANN/HCCL log level is ASCEND_GLOBAL_LOG_LEVEL (0 debug .. 3 error)."),
    C("--master_ip tcp://localhost:23456 --backend nccl \\", "dist_backend", "replace", True,
      "--master_ip tcp://localhost:23456 --backend hccl \\",
      "Explicit --backend nccl makes init_process_group fail with torch_npu."),
    C("--master_ip tcp://localhost:23457 --backend nccl \\", "dist_backend", "replace", True,
      "--master_ip tcp://localhost:23457 --backend hccl \\", "Same for stage 2."),
])

E("tp_env", "environment.yml", "explicit_replacement",
  "TencentPretrain-style conda environment.yml (pytorch + pytorch-cuda channel pins)", [
    C("- nvidia", "device_type", "removal", False, None,
      "NVIDIA conda channel only supplies the CUDA runtime; unused once pytorch-cuda is gone."),
    C("- pytorch=1.13.1", "device_type", "replace", True, "- pytorch=2.1.0",
      "There is no torch_npu release for torch 1.13 (compatibility matrix: 1.11, 2.0.1, 2.1.0, ...)."),
    C("- pytorch-cuda=11.7", "device_type", "replace", True, "- cpuonly",
      "Pulls the CUDA build of PyTorch; torch_npu runs on the CPU build of torch."),
    C("- nccl", "dist_backend", "removal", False, None, "NCCL library is useless on NPU; HCCL ships with CANN."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "The torch_npu wheel matching torch 2.1.0 (compatibility matrix)."),
    C("- deepspeed==0.8.3", "distributed_framework", "replace", True, "- deepspeed>=0.14.0",
      "0.8.3 has no NPU accelerator (upstream npu_accelerator is newer; legacy deepspeed_npu plugin supports only "
      "0.9.2). Exact first release with NPU_Accelerator unconfirmed."),
    C("- bitsandbytes==0.37.2", "custom_cuda_extension", "removal", False, None,
      "CUDA-only 8-bit kernels in this release; nothing in the default training path imports it."),
])

E("tp_docker", "docker/Dockerfile", "explicit_replacement",
  "TencentPretrain-style training Dockerfile (nvidia/cuda base, cu117 wheels, NVIDIA apex, DeepSpeed ops)", [
    C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "Base image must carry CANN (driver mounted from the host) instead of the CUDA toolkit. Image name/tag "
      "illustrative; the apt python3.8 lines then have to follow the image's Python (left unlabelled)."),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "Only affects nvcc builds; meaningless on NPU."),
    C("ENV NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "ENV HCCL_SOCKET_IFNAME=eth0",
      "The project pins the host NIC for multi-node rendezvous; HCCL silently ignores the NCCL name and picks "
      "its own NIC (knowledge: HCCL_SOCKET_IFNAME)."),
    C("ENV NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "No HCCL counterpart; ignored."),
    C("RUN pip install torch==1.13.1+cu117 torchvision==0.14.1+cu117 --extra-index-url https://download.pytorch.org/whl/cu117",
      "device_type", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels and a torch version without a torch_npu release."),
    C('RUN python -c "import torch; print(torch.__version__, torch.version.cuda)"', "import_torch_npu",
      "npu_only_addition", True, "RUN pip install torch-npu==2.1.0.post10",
      "Install the torch_npu wheel matching torch 2.1.0 after torch."),
    C("RUN git clone https://github.com/NVIDIA/apex /tmp/apex && cd /tmp/apex && \\", "amp", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex /tmp/apex && cd /tmp/apex && \\",
      "The project's --fp16 path needs apex.amp; NVIDIA apex's CUDA build cannot be made here, Ascend apex "
      "(patched apex) provides amp.initialize for NPU."),
    C("git checkout 22.04-dev && \\", "amp", "replace", True, "bash scripts/build.sh --python=3.8 && \\",
      "Ascend apex is built with its own script (clones NVIDIA apex and applies the NPU patch)."),
    C('--global-option="--cpp_ext" --global-option="--cuda_ext" ./ && \\', "amp", "replace", True,
      "pip install apex/dist/apex-*.whl && \\",
      "--cuda_ext needs nvcc; the devel image that provided it is gone."),
    C("RUN DS_BUILD_FUSED_ADAM=1 DS_BUILD_CPU_ADAM=1 pip install deepspeed==0.8.3", "distributed_framework",
      "replace", True, "RUN pip install deepspeed>=0.14.0",
      "Prebuilding the CUDA fused-Adam op needs nvcc, and 0.8.3 has no NPU accelerator. Version floor unconfirmed."),
])

# --------------------------------------------------------------------------------------------- CPM-Bee / BMTrain

E("cpmbee_finetune", "src/finetune_cpm_bee.py", "explicit_replacement",
  "OpenBMB CPM-Bee src/finetune_cpm_bee.py (BMTrain, AdamOffloadOptimizer, OptimManager, delta tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; everything below is moved to torch.npu."),
    C("optimizer = bmt.optim.AdamOffloadOptimizer(", "fused_optimizer", "replace", True,
      "optimizer = torch_npu.optim.NpuFusedAdamW(",
      "BMTrain optimizers run kernels from BMTrain's C++/CUDA extension (built with CUDAExtension + NCCL), which "
      "cannot be built for NPU; no NPU build of BMTrain is known to me."),
    C("bmt.init_distributed(seed=args.seed)", "distributed_framework", "replace", True,
      'torch.distributed.init_process_group(backend="hccl"); torch.npu.set_device(int(os.environ["LOCAL_RANK"]))',
      "BMTrain sets the CUDA device and builds its own NCCL communicator; the process group has to come from "
      "torch.distributed with HCCL."),
    C("res = torch.cuda.memory_summary()", "torch_cuda_api", "replace", False, "res = torch.npu.memory_summary()",
      "Debug output only (detail=True path)."),
    C("round(torch.cuda.memory_allocated() / (1024 * 1024 * 1024), 2),", "torch_cuda_api", "replace", False,
      "round(torch.npu.memory_allocated() / (1024 * 1024 * 1024), 2),",
      "Log only: returns 0 without CUDA."),
    C("round(torch.cuda.max_memory_allocated() / (1024 * 1024 * 1024), 2),", "torch_cuda_api", "replace", False,
      "round(torch.npu.max_memory_allocated() / (1024 * 1024 * 1024), 2),", "Log only."),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "Called every step via add_mem_time; without a device argument it resolves the current CUDA device -> error."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Called every step; lazily initialises CUDA -> error on an NPU host."),
    C("return torch.from_numpy(data[key]).cuda().to(torch.int32)", "tensor_to_device", "replace", True,
      "return torch.from_numpy(data[key]).npu().to(torch.int32)", "Evaluation batches."),
    C('input_ids = torch.from_numpy(data["inputs"]).cuda().to(torch.int32)', "tensor_to_device", "replace", True,
      'input_ids = torch.from_numpy(data["inputs"]).npu().to(torch.int32)', "Training batch."),
    C('input_ids_sub = torch.from_numpy(data["inputs_sub"]).cuda().to(torch.int32)', "tensor_to_device", "replace",
      True, 'input_ids_sub = torch.from_numpy(data["inputs_sub"]).npu().to(torch.int32)', "Training batch."),
    C('input_length = torch.from_numpy(data["length"]).cuda().to(torch.int32)', "tensor_to_device", "replace", True,
      'input_length = torch.from_numpy(data["length"]).npu().to(torch.int32)', "Training batch."),
    C('input_context = torch.from_numpy(data["context"]).cuda().bool()', "tensor_to_device", "replace", True,
      'input_context = torch.from_numpy(data["context"]).npu().bool()', "Training batch."),
    C('input_sample_ids = torch.from_numpy(data["sample_ids"]).cuda().to(torch.int32)', "tensor_to_device",
      "replace", True, 'input_sample_ids = torch.from_numpy(data["sample_ids"]).npu().to(torch.int32)',
      "Training batch."),
    C('input_num_segments = torch.from_numpy(data["num_segments"]).cuda().to(torch.int32)', "tensor_to_device",
      "replace", True, 'input_num_segments = torch.from_numpy(data["num_segments"]).npu().to(torch.int32)',
      "Training batch."),
    C('input_segment_ids = torch.from_numpy(data["segment_ids"]).cuda().to(torch.int32)', "tensor_to_device",
      "replace", True, 'input_segment_ids = torch.from_numpy(data["segment_ids"]).npu().to(torch.int32)',
      "Training batch."),
    C('torch.from_numpy(data["segment_rel_offset"]).cuda().to(torch.int32)', "tensor_to_device", "replace", True,
      'torch.from_numpy(data["segment_rel_offset"]).npu().to(torch.int32)', "Training batch."),
    C('input_segment_rel = torch.from_numpy(data["segment_rel"]).cuda().to(torch.int32)', "tensor_to_device",
      "replace", True, 'input_segment_rel = torch.from_numpy(data["segment_rel"]).npu().to(torch.int32)',
      "Training batch."),
    C('input_span = torch.from_numpy(data["spans"]).cuda().to(torch.int32)', "tensor_to_device", "replace", True,
      'input_span = torch.from_numpy(data["spans"]).npu().to(torch.int32)', "Training batch."),
    C('targets = torch.from_numpy(data["target"]).cuda().to(torch.int32)', "tensor_to_device", "replace", True,
      'targets = torch.from_numpy(data["target"]).npu().to(torch.int32)', "Training batch."),
    C('ext_table_ids = torch.from_numpy(data["ext_ids"]).cuda().to(torch.int32)', "tensor_to_device", "replace",
      True, 'ext_table_ids = torch.from_numpy(data["ext_ids"]).npu().to(torch.int32)', "Training batch."),
    C('ext_table_sub = torch.from_numpy(data["ext_sub"]).cuda().to(torch.int32)', "tensor_to_device", "replace",
      True, 'ext_table_sub = torch.from_numpy(data["ext_sub"]).npu().to(torch.int32)', "Training batch."),
    C('task_ids = torch.from_numpy(data["task_ids"]).cuda().to(torch.int32)', "tensor_to_device", "replace", True,
      'task_ids = torch.from_numpy(data["task_ids"]).npu().to(torch.int32)', "Training batch."),
    C("loss_func = bmt.loss.FusedCrossEntropy(ignore_index=-100, loss_scale=args.loss_scale)",
      "custom_cuda_extension", "replace", True, "loss_func = torch.nn.CrossEntropyLoss(ignore_index=-100)",
      "BMTrain's fused CE is a CUDA kernel from its extension; fp16 loss scaling moves to the AMP scaler."),
    C("loss_func = bmt.loss.FusedCrossEntropy(ignore_index=-100)", "custom_cuda_extension", "replace", True,
      "loss_func = torch.nn.CrossEntropyLoss(ignore_index=-100)", "Same CUDA kernel for the fp32 config."),
    C('task = torch.arange(task_num, dtype=torch.int32, device="cuda")[:, None, None]', "device_type", "replace",
      True, 'task = torch.arange(task_num, dtype=torch.int32, device="npu")[:, None, None]',
      "Hard-coded 'cuda' device string."),
    C('torch.scalar_tensor(-100, dtype=torch.int32, device="cuda"),', "device_type", "replace", True,
      'torch.scalar_tensor(-100, dtype=torch.int32, device="npu"),', "Hard-coded 'cuda' device string."),
    C("local_total_rate = torch.Tensor([input_length.float().mean() / args.max_length]).cuda()", "tensor_to_device",
      "replace", True, "local_total_rate = torch.Tensor([input_length.float().mean() / args.max_length]).npu()",
      ".cuda() on a metrics tensor that is then all-reduced."),
])

E("cpmbee_generate", "src/text_generation.py", "explicit_replacement",
  "OpenBMB CPM-Bee src/text_generation.py (CPMBeeTorch + beam search, single-GPU inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; torch.npu.* used below."),
    C("free, total = torch.cuda.mem_get_info(gpu)", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(gpu)",
      "Runs by default (--memory-limit 22); torch.cuda.mem_get_info needs the CUDA runtime."),
    C('delta_state = torch.load(args.delta, map_location="cuda:%d" % args.gpu)', "device_type", "replace", True,
      'delta_state = torch.load(args.delta, map_location="npu:%d" % args.gpu)',
      "map_location names a CUDA device."),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() fails without CUDA."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "Fails without CUDA."),
    C('print("Model loaded, %.2f GiB allocated" % (torch.cuda.memory_allocated() / 2 ** 30))', "torch_cuda_api",
      "replace", False, 'print("Model loaded, %.2f GiB allocated" % (torch.npu.memory_allocated() / 2 ** 30))',
      "Log only."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Silent no-op without CUDA; memory hygiene only."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Lazily initialises CUDA -> error at the end of every run."),
    C('print("Peak memory: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))', "torch_cuda_api", "replace",
      False, 'print("Peak memory: %.2f GiB" % (torch.npu.max_memory_allocated() / 2 ** 30))', "Log only."),
])

E("cpmbee_attention", "src/cpm_live/layers/attention.py", "explicit_replacement",
  "OpenBMB CPM-Live / CPM-Bee cpm_live/layers/attention.py (bmt.DistributedModule attention, optional flash-attn)", [
    C("from flash_attn.flash_attn_interface import flash_attn_unpadded_func", "attention_kernel", "replace", False,
      "from torch_npu import npu_fusion_attention as flash_attn_unpadded_func  # call site adapted below",
      "flash-attn cannot be installed on NPU; the guarded import then disables the packed path and the eager "
      "attention still runs, so this is performance only."),
    C("score = flash_attn_unpadded_func(", "attention_kernel", "replace", False,
      'score = flash_attn_unpadded_func(h_q, h_k, h_v, self.num_heads, "TND", scale=1.0, '
      'keep_prob=1.0 - (self.dropout_p if self.training else 0.0), actual_seq_qlen=cu_seqlens[1:].tolist(), '
      'actual_seq_kvlen=cu_seqlens[1:].tolist())[0]',
      "Varlen flash-attn -> npu_fusion_attention with TND layout and cumulative lengths; only with "
      "use_flash_attn=True configs."),
])

E("cpmbee_sh", "src/scripts/finetune_cpm_bee.sh", "explicit_replacement",
  "OpenBMB CPM-Bee src/scripts/finetune_cpm_bee.sh (torchrun launcher on cards 4-7)", [
    C("=#! /bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before torchrun starts the workers."),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "Ignored on NPU: the 4 workers would land on cards 0-3, which the comment says the inference service owns."),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob; ignored by HCCL."),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=bond0",
      "Single node (NNODES=1): HCCL's own NIC choice still reaches the local root, so not required."),
])

E("cpmbee_req", "requirements.txt", "explicit_replacement",
  "OpenBMB CPM-Bee requirements.txt (cu116 torch, bmtrain, cpm_kernels, opendelta)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu116", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index."),
    C("torch==1.13.1+cu116", "device_type", "replace", True, "torch==2.1.0",
      "CUDA build, and torch 1.13 has no torch_npu release."),
    C("numpy>=1.21", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0 (the line after torch is itself replaced, so it is added here)."),
    C("bmtrain>=0.2.1", "distributed_framework", "replace", True, "deepspeed>=0.14.0",
      "BMTrain builds a CUDA/NCCL C++ extension at install time; there is no NPU build. Replacement framework "
      "and version are the porter's choice (unconfirmed)."),
    C("cpm_kernels>=1.0.11", "custom_cuda_extension", "removal", False, None,
      "Pure-Python wheel that drives CUDA kernels through libcuda; installs, but nothing can use it on NPU."),
])

# --------------------------------------------------------------------------------------------- MOSS

E("moss_cli", "moss_cli_demo.py", "explicit_replacement",
  "OpenLMLab MOSS moss_cli_demo.py (--gpu -> CUDA_VISIBLE_DEVICES, accelerate dispatch, .half().cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; .npu() below needs the backend."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "--gpu selects the cards; ignored on NPU, so --gpu 1 runs on card 0 and device_map='auto' spreads over "
      "every visible card."),
    C("model = MossForCausalLM.from_pretrained(model_path).half().cuda()", "tensor_to_device", "replace", True,
      "model = MossForCausalLM.from_pretrained(model_path).half().npu()", "Module.cuda() fails without CUDA."),
    C("inputs.input_ids.cuda(),", "tensor_to_device", "replace", True, "inputs.input_ids.npu(),",
      "Tensor.cuda() fails without CUDA."),
    C("attention_mask=inputs.attention_mask.cuda(),", "tensor_to_device", "replace", True,
      "attention_mask=inputs.attention_mask.npu(),", "Tensor.cuda() fails without CUDA."),
])

E("moss_quant", "models/quantization.py", "kernel_rewrite",
  "OpenLMLab MOSS models/quantization.py (GPTQ int4/int8 Triton kernels with custom autotune)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "With the CUDA decorators, cast_inputs=float16 is silently skipped under NPU autocast; the kernel itself "
      "stores fp16, so only matters for mixed-dtype callers."),
    C("triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=4, num_warps=4),",
      "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}),",
      "Unconfirmed: with triton-ascend, warps/stages are GPU scheduling knobs and the tile sizes need retuning "
      "for the Ascend cube unit."),
    C("triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 128, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=4, num_warps=4),",
      "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 128, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}),",
      "Unconfirmed retuning for triton-ascend (see first config)."),
    C("triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 128, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=4, num_warps=4),",
      "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 128, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}),",
      "Unconfirmed retuning for triton-ascend."),
    C("triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=4, num_warps=4),",
      "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}),",
      "Unconfirmed retuning for triton-ascend."),
    C("triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 64, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=4, num_warps=4),",
      "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 64, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}),",
      "Unconfirmed retuning for triton-ascend."),
    C("triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 128, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=2, num_warps=8),",
      "triton_kernel_tuning", "removal", False, None,
      "Unconfirmed: differs from the third config only in warps/stages, so it becomes a duplicate."),
    C("triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 256, 'GROUP_SIZE_M': 8}, num_stages=4, num_warps=4),",
      "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 256, 'GROUP_SIZE_M': 8}),",
      "Unconfirmed retuning for triton-ascend (backward kernel)."),
    C("triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 128, 'GROUP_SIZE_M': 8}, num_stages=4, num_warps=4),",
      "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 128, 'GROUP_SIZE_M': 8}),",
      "Unconfirmed retuning for triton-ascend (backward kernel)."),
    C("triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 128, 'GROUP_SIZE_M': 8}, num_stages=4, num_warps=4),",
      "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 128, 'GROUP_SIZE_M': 8}),",
      "Unconfirmed retuning for triton-ascend (backward kernel)."),
    C("triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=3, num_warps=4),",
      "triton_kernel_tuning", "replace", False,
      "triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 32, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}),",
      "Unconfirmed retuning for triton-ascend (backward kernel)."),
    C("with torch.cuda.device(input.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(input.device):",
      "torch.cuda.device() rejects an npu device (expects a cuda device) -> error on every quantized matmul."),
    C("with torch.cuda.device(grad_output.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(grad_output.device):", "Same for the backward matmul."),
    C("kn_values[(k, n)] = (m.qweight.cuda(), m.scales.cuda(), m.qzeros.cuda(), m.g_idx.cuda(), m.bits, m.maxq)",
      "tensor_to_device", "replace", True,
      "kn_values[(k, n)] = (m.qweight.npu(), m.scales.npu(), m.qzeros.npu(), m.g_idx.npu(), m.bits, m.maxq)",
      "autotune_warmup copies the buffers with .cuda()."),
    C("a = torch.randn(m, k, dtype=torch.float16, device='cuda')", "device_type", "replace", True,
      "a = torch.randn(m, k, dtype=torch.float16, device='npu')", "Hard-coded 'cuda' warm-up input."),
    C("a = torch.randn(m, n, dtype=torch.float16, device='cuda')", "device_type", "replace", True,
      "a = torch.randn(m, n, dtype=torch.float16, device='npu')", "Hard-coded 'cuda' warm-up input (transpose)."),
])

E("moss_finetune", "finetune_moss.py", "explicit_replacement",
  "OpenLMLab MOSS finetune_moss.py (accelerate + DeepSpeed SFT loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; torch.npu.* below (accelerate alone would not expose torch.npu to this module on older "
      "torch_npu)."),
    C("collate_fn=train_dataset.collate_fn, num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
      "collate_fn=train_dataset.collate_fn, num_workers=4, pin_memory=True, pin_memory_device='npu')",
      "Without a pin_memory_device torch only pins when CUDA is available, so pinning is silently off: "
      "performance only."),
    C("metric = SFTMetric(device=torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "metric = SFTMetric(device=accelerator.device)",
      "torch.cuda.current_device() initialises CUDA -> error before the first step."),
    C("torch.cuda.empty_cache()  # drop the cached blocks from the first (longest) step", "torch_cuda_api",
      "replace", False, "torch.npu.empty_cache()  # drop the cached blocks from the first (longest) step",
      "Silent no-op without CUDA; memory hygiene only."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Silent no-op; memory hygiene only."),
    C("val_metric = SFTMetric(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "val_metric = SFTMetric(accelerator.device)", "Same as the training metric."),
])

# --------------------------------------------------------------------------------------------- ChatGLM

E("chatglm_api", "api.py", "explicit_replacement",
  "THUDM ChatGLM-6B api.py (FastAPI server, DEVICE/CUDA_DEVICE constants, torch_gc)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; .npu() below needs the backend."),
    C('DEVICE = "cuda"', "device_type", "replace", False, 'DEVICE = "npu"',
      "Only used by torch_gc, which is a silent no-op on an NPU host until its guard is ported."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "False on an NPU host: cache is never released after a request (memory hygiene, not correctness)."),
    C("with torch.cuda.device(CUDA_DEVICE):", "torch_cuda_api", "replace", False,
      "with torch.npu.device(CUDA_DEVICE):",
      "Unreached while the guard stays CUDA; must change together with it (torch.cuda.device on 'npu:0' errors)."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Part of the same torch_gc block."),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", False, "torch.npu.ipc_collect()",
      "Part of the same torch_gc block (torch.npu.ipc_collect exists)."),
    C('model = AutoModel.from_pretrained("THUDM/chatglm-6b", trust_remote_code=True).half().cuda()',
      "tensor_to_device", "replace", True,
      'model = AutoModel.from_pretrained("THUDM/chatglm-6b", trust_remote_code=True).half().npu()',
      "Module.cuda() fails without CUDA."),
])

E("chatglm_utils", "utils.py", "explicit_replacement",
  "THUDM ChatGLM2-6B utils.py (auto_configure_device_map / load_model_on_gpus)", [
    C("model = AutoModel.from_pretrained(checkpoint_path, trust_remote_code=True, **kwargs).half().cuda()",
      "tensor_to_device", "replace", True,
      "model = AutoModel.from_pretrained(checkpoint_path, trust_remote_code=True, **kwargs).half().npu()",
      "Single-card path; Module.cuda() fails without CUDA."),
])

E("chatglm_quant", "quantization.py", "kernel_rewrite",
  "THUDM ChatGLM-6B quantization.py (int4/int8 weight-only quantization with cpm_kernels CUDA kernels)", [
    C("from cpm_kernels.kernels.base import LazyKernelCModule, KernelFunction, round_up", "custom_cuda_extension",
      "removal", False, None,
      "The rewrite below no longer needs cpm_kernels (CUDA kernels via libcuda); the import is guarded, so "
      "leaving it only costs a warning."),
    C("with torch.cuda.device(weight.device):", "torch_cuda_api", "removal", True, None,
      "torch.cuda.device() rejects an npu device; the torch-op rewrite needs no device context."),
    C('out = torch.empty(n, m, dtype=torch.int8, device="cuda")', "device_type", "replace", True,
      "out = torch.empty(n, m, dtype=torch.int8, device=weight.device)", "Hard-coded 'cuda'."),
    C("stream = torch.cuda.current_stream()", "torch_cuda_api", "removal", True, None,
      "CUDA stream handle for the kernel launch; initialises CUDA -> error."),
    C("kernels.int4WeightCompression(", "custom_cuda_extension", "replace", True,
      "out = ((weight[:, 0::2].to(torch.int16) & 0xF) << 4 | (weight[:, 1::2].to(torch.int16) & 0xF)).to(torch.int8)",
      "cpm_kernels CUDA kernel; rewritten as bitwise torch ops (pack two int4 per byte)."),
    C("func = kernels.int8WeightExtractionHalf", "custom_cuda_extension", "removal", True, None,
      "kernels is None (or a CUDA module) on NPU; the dequantisation is rewritten below."),
    C("func = kernels.int4WeightExtractionHalf", "custom_cuda_extension", "removal", True, None,
      "Same as above."),
    C("with torch.cuda.device(device):", "torch_cuda_api", "removal", True, None,
      "torch.cuda.device() rejects an npu device."),
    C('out = torch.empty(n, m * (8 // source_bit_width), dtype=torch.half, device="cuda")', "device_type",
      "replace", True, "out = torch.empty(n, m * (8 // source_bit_width), dtype=torch.half, device=device)",
      "Hard-coded 'cuda'."),
    C("stream = torch.cuda.current_stream(device)", "torch_cuda_api", "removal", True, None,
      "CUDA stream for the kernel launch; errors with an npu device."),
    C("=func(", "custom_cuda_extension", "replace", True,
      "out = _dequant_to_half(weight, scale_list, source_bit_width)  # int8: w*s; int4: unpack nibbles then *s",
      "cpm_kernels CUDA launch replaced by torch ops (unpack, cast to half, multiply by per-row scale)."),
    C("weight_tensor=layer.attention.query_key_value.weight.to(torch.cuda.current_device()),", "torch_cuda_api",
      "replace", True,
      "weight_tensor=layer.attention.query_key_value.weight.to(torch.npu.current_device()),",
      "torch.cuda.current_device() initialises CUDA -> error."),
    C("weight_tensor=layer.attention.dense.weight.to(torch.cuda.current_device()),", "torch_cuda_api", "replace",
      True, "weight_tensor=layer.attention.dense.weight.to(torch.npu.current_device()),", "Same."),
    C("weight_tensor=layer.mlp.dense_h_to_4h.weight.to(torch.cuda.current_device()),", "torch_cuda_api", "replace",
      True, "weight_tensor=layer.mlp.dense_h_to_4h.weight.to(torch.npu.current_device()),", "Same."),
    C("weight_tensor=layer.mlp.dense_4h_to_h.weight.to(torch.cuda.current_device()),", "torch_cuda_api", "replace",
      True, "weight_tensor=layer.mlp.dense_4h_to_h.weight.to(torch.npu.current_device()),", "Same."),
])

E("chatglm_webdemo", "web_demo.py", "transfer_to_npu",
  "THUDM ChatGLM-6B web_demo.py (gradio chat UI, .half().cuda(), optional quantize)", [
    C("from transformers import AutoModel, AutoTokenizer", "import_torch_npu", "npu_only_addition", True,
      "import torch, torch_npu; from torch_npu.contrib import transfer_to_npu",
      "Ported with transfer_to_npu: Module.cuda is redirected to npu, so the .cuda() lines stay as they are."),
])

E("chatglm_ptuning", "ptuning/main.py", "explicit_replacement",
  "THUDM ChatGLM-6B ptuning/main.py (HF Seq2SeqTrainer, P-Tuning v2 prefix encoder, quantization_bit)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "HF Trainer (transformers >= 4.32) detects and loads torch_npu itself (unconfirmed that it imports it in "
      "every version); the explicit import is the recommended form."),
    C('prefix_state_dict = torch.load(os.path.join(model_args.ptuning_checkpoint, "pytorch_model.bin"))',
      "tensor_to_device", "replace", True,
      'prefix_state_dict = torch.load(os.path.join(model_args.ptuning_checkpoint, "pytorch_model.bin"), '
      'map_location="cpu")',
      "P-tuning checkpoints trained on the GPU cluster hold cuda tensors; torch.load without map_location fails "
      "on a host without CUDA."),
])

E("chatglm_train_sh", "ptuning/train.sh", "explicit_replacement",
  "THUDM ChatGLM-6B ptuning/train.sh + ds_train_finetune.sh (single card P-Tuning, DeepSpeed full finetune)", [
    C("PRE_SEQ_LEN=128", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "The script has no shebang; sourcing CANN goes at the top."),
    C("CUDA_VISIBLE_DEVICES=0 python3 main.py \\", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 main.py \\",
      "Selects card 0, which the HF Trainer uses by default on NPU anyway (unconfirmed that it never wraps "
      "extra visible NPUs); rename for intent."),
    C("NCCL_DEBUG=INFO NCCL_ASYNC_ERROR_HANDLING=1 deepspeed --num_gpus=4 --master_port $MASTER_PORT main.py \\",
      "env_var", "replace", False,
      "ASCEND_GLOBAL_LOG_LEVEL=1 HCCL_ASYNC_ERROR_HANDLING=1 deepspeed --num_gpus=4 --master_port $MASTER_PORT "
      "main.py \\",
      "Debug / watchdog settings only; HCCL_ASYNC_ERROR_HANDLING is the torch_npu counterpart."),
])

# --------------------------------------------------------------------------------------------- Chinese-LLaMA-Alpaca

E("llama_pt", "scripts/training/run_clm_pt_with_peft.py", "explicit_replacement",
  "ymcui Chinese-LLaMA-Alpaca-2 scripts/training/run_clm_pt_with_peft.py (HF Trainer + peft LoRA, k-bit, flash-attn)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Trainer/accelerate load torch_npu themselves (unconfirmed for every version); explicit import recommended."),
    C("from flash_attn_patch import replace_llama_attn_with_flash_attn", "attention_kernel", "replace", True,
      "from npu_flash_attn_patch import replace_llama_attn_with_npu_fusion_attention",
      "run_pt.sh passes --flash_attn; the patch imports flash-attn, which cannot be installed on NPU. Replacement "
      "patch (npu_fusion_attention, BSND, sparse_mode=3) is the porter's own module."),
    C("replace_llama_attn_with_flash_attn()", "attention_kernel", "replace", True,
      "replace_llama_attn_with_npu_fusion_attention()", "Same change at the call site."),
    C("load_in_8bit=training_args.load_in_kbits == 8,", "unsupported_op_workaround", "replace", False,
      "load_in_8bit=False,  # LLM.int8 kernels not available on NPU",
      "bitsandbytes 8-bit is not supported on NPU; only --load_in_kbits 8 reaches it and the shipped script uses 16."),
    C('device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}', "tensor_to_device", "replace", False,
      'device_map = {"": torch.device("npu", int(os.environ.get("LOCAL_RANK") or 0))}',
      "Unconfirmed: accelerate >= 0.22 is believed to map an int device to npu:<i> when torch_npu is present; "
      "the explicit npu device is the safe edit."),
])

E("llama_pt_sh", "scripts/training/run_pt.sh", "explicit_replacement",
  "ymcui Chinese-LLaMA-Alpaca-2 scripts/training/run_pt.sh (torchrun + DeepSpeed ZeRO-2 LoRA pre-training)", [
    C("## Read the wiki(https://github.com/ymcui/Chinese-LLaMA-Alpaca-2/wiki/pt_scripts_en) carefully before running the script",
      "import_torch_npu", "npu_only_addition", True, SET_ENV, "Source CANN before launching."),
    C("export CUDA_VISIBLE_DEVICES=2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=2,3",
      "Ignored on NPU: the two workers land on cards 0-1, which the comment reserves for the inference service."),
])

E("llama_patches", "scripts/attn_and_long_ctx_patches.py", "explicit_replacement",
  "ymcui Chinese-LLaMA-Alpaca-2 scripts/attn_and_long_ctx_patches.py (xformers attention + NTK RoPE scaling)", [
    C("from xformers import ops as xops", "attention_kernel", "replace", False,
      "import torch_npu as xops  # xformers has no NPU backend; branch below uses npu_fusion_attention",
      "Guarded import: without xformers the eager attention path runs, so performance only."),
    C("attn_bias = None if (query_states.size(1) == 1 and key_states.size(1) > 1) else xops.LowerTriangularMask()",
      "attention_kernel", "replace", False,
      "atten_mask = None if (query_states.size(1) == 1 and key_states.size(1) > 1) else "
      "torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=query_states.device), diagonal=1)",
      "npu_fusion_attention takes a bool 2048x2048 upper-triangular mask with sparse_mode=3 for causal."),
    C("attn_output = xops.memory_efficient_attention(", "attention_kernel", "replace", False,
      'attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, "BSND", '
      "atten_mask=atten_mask, scale=1.0 / math.sqrt(self.head_dim), sparse_mode=3 if atten_mask is not None else 0)[0]",
      "Memory-efficient attention -> NPU flash attention (BSND layout matches the transposed q/k/v)."),
])

E("llama_infer", "scripts/inference/inference_hf.py", "explicit_replacement",
  "ymcui Chinese-LLaMA-Alpaca-2 scripts/inference/inference_hf.py (--gpus, device_map='auto', vLLM option)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "Card selection is ignored on NPU, and --only_cpu relies on emptying it: device_map='auto' would still put "
      "the model on the NPUs while inputs stay on the CPU."),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Needed for torch.npu below; placed after the visible-devices variable is set."),
    C("from flash_attn_patch_for_inference import replace_llama_attn_with_flash_attn", "attention_kernel",
      "replace", False, "from npu_flash_attn_patch import replace_llama_attn_with_npu_fusion_attention",
      "Only with --use_flash_attention_2 (not default); flash-attn cannot be installed on NPU."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "On an NPU host inputs would go to the CPU while accelerate places the model on NPU -> device mismatch."),
    C("device = torch.device(0)", "device_type", "replace", True, 'device = torch.device("npu", 0)',
      "A bare index means cuda:0."),
])

E("llama_req", "requirements.txt", "explicit_replacement",
  "ymcui Chinese-LLaMA-Alpaca-2 requirements.txt", [
    C("torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.0.1.post1",
      "torch 2.0.1 itself can stay (torch_npu 2.0.1.post1 exists for it, branch v2.0.1-5.0.0, EOL)."),
    C("bitsandbytes==0.41.1", "custom_cuda_extension", "removal", False, None,
      "CUDA-only in this release; only the k-bit paths import it and no shipped script enables them."),
    C("xformers==0.0.22", "attention_kernel", "removal", False, None,
      "No NPU backend; its import is guarded. Unconfirmed whether pip install itself fails on aarch64 hosts."),
    C("flash-attn==2.3.3", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU (needs nvcc), which aborts pip install -r."),
])

# --------------------------------------------------------------------------------------------- HanLP / LTP

E("hanlp_torch_util", "hanlp/utils/torch_util.py", "device_branch_or_abstraction",
  "hankcs HanLP hanlp/utils/torch_util.py (gpus_available via pynvml, cuda_devices, set_seed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # wrapped in try/except ImportError so CPU/GPU installs keep working",
      "Guarded import so the NPU branch below can see torch.npu on torch_npu without autoload."),
    C("if not torch.cuda.is_available():", "device_type", "add_branch", True,
      "if hasattr(torch, 'npu') and torch.npu.is_available(): return {i: torch.npu.mem_get_info(i)[0] / "
      "torch.npu.mem_get_info(i)[1] for i in range(torch.npu.device_count())}",
      "Otherwise gpus_available() returns {} on an NPU host and every component silently runs on the CPU."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "add_branch", False,
      "if hasattr(torch, 'npu'): torch.npu.manual_seed_all(seed)",
      "torch.manual_seed already seeds registered accelerator backends; explicit for symmetry."),
])

E("hanlp_component", "hanlp/common/torch_component.py", "device_branch_or_abstraction",
  "hankcs HanLP hanlp/common/torch_component.py (TorchComponent.to(devices), fit, DataParallel)", [
    C("self.model = self.model.to(devices[0])", "tensor_to_device", "add_branch", True,
      "self.model = self.model.to(torch.device('npu', devices[0]) if isinstance(devices[0], int) and "
      "hasattr(torch, 'npu') and torch.npu.is_available() else devices[0])",
      "cuda_devices() returns integer ids; Module.to(int) means cuda:<id>."),
    C("module.to(device)", "tensor_to_device", "add_branch", False,
      "module.to(torch.device('npu', device) if isinstance(device, int) and hasattr(torch, 'npu') else device)",
      "Only for explicit per-module device maps with integer ids."),
    C("return nn.DataParallel(self.model, device_ids=devices)", "unsupported_op_workaround", "replace", False,
      "raise NotImplementedError('DataParallel is not supported on NPU; pass a single device')",
      "Only when several devices are passed explicitly; DataParallel is unsupported on NPU."),
    C("return torch.zeros(16, 16, device=device)", "tensor_to_device", "add_branch", False,
      "return torch.zeros(16, 16, device=torch.device('npu', device) if hasattr(torch, 'npu') else device)",
      "Integer device = cuda; only with the private _device_placeholder flag."),
])

E("ltp_frontend", "ltp/frontend.py", "device_branch_or_abstraction",
  "HIT-SCIR LTP 4.1 ltp/frontend.py (LTP(path, device) with device=-1 for CPU, fp16 autocast)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # wrapped in try/except ImportError so CPU/GPU installs keep working",
      "_resolve_device below checks torch.npu."),
    C('return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "add_branch", True,
      'return torch.device("npu") if hasattr(torch, "npu") and torch.npu.is_available() else '
      '(torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu"))',
      "device=None (the default) silently picks the CPU on an NPU host."),
    C('return torch.device(f"cuda:{device}")', "device_type", "add_branch", True,
      'return torch.device(f"npu:{device}") if hasattr(torch, "npu") and torch.npu.is_available() else '
      'torch.device(f"cuda:{device}")',
      "An integer device id is turned into a cuda device."),
    C('self.fp16 = fp16 and self.device.type == "cuda"', "amp", "replace", False,
      'self.fp16 = fp16 and self.device.type in ("cuda", "npu")', "fp16 silently disabled on NPU: performance."),
    C("with torch.cuda.amp.autocast(enabled=self.fp16):", "amp", "replace", False,
      "with torch.autocast(device_type=self.device.type, dtype=torch.float16, enabled=self.fp16):",
      "CUDA autocast is disabled (with a warning) on an NPU host: results are fp32, only slower."),
])
