"""Labels for probe368 (chart, table-image and infographic understanding models).

One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu
(explicit port: torch.npu.*, 'npu', hccl; no transfer_to_npu). See README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"
B = "device_branch_or_abstraction"

# ---------------------------------------------------------------- microsoft/table-transformer (TATR)
E("tatr_main", "src/main.py", X, "microsoft/table-transformer src/main.py (DETR train/eval driver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; the environment pins torch 1.11, long before the torch_npu 2.5.1 backend autoload"),
    C("parser.add_argument('--device', default=\"cuda\")", "device_type", "replace", True,
      "parser.add_argument('--device', default=\"npu\")",
      "default device feeds torch.device(args.device), model.to(device) and torch.load(map_location=device)"),
])
E("tatr_engine", "detr/engine.py", X, "microsoft/table-transformer detr/engine.py (vendored DETR train_one_epoch/evaluate)", [])
E("tatr_misc", "detr/util/misc.py", X, "microsoft/table-transformer detr/util/misc.py (DETR distributed helpers, MetricLogger)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "device must be npu for HCCL; Ascend's 2.7.1 list gives all_reduce only bf16/fp16/fp32/int32/int64/bool, so fp64 becomes fp32"),
    C("tensor = torch.ByteTensor(storage).to(\"cuda\")", "tensor_to_device", "replace", True,
      "tensor = torch.ByteTensor(storage).view(torch.int8).to(\"npu\")",
      "all_gather of pickled bytes; Ascend's list gives all_gather only bf16/fp16/fp32/int8/int32/bool, so the bytes are reinterpreted as int8 (tobytes() is unchanged)"),
    C("local_size = torch.tensor([tensor.numel()], device=\"cuda\")", "tensor_to_device", "replace", True,
      "local_size = torch.tensor([tensor.numel()], dtype=torch.int32, device=\"npu\")",
      "NPU device; int64 is not in the all_gather dtype list, so int32"),
    C("size_list = [torch.tensor([0], device=\"cuda\") for _ in range(world_size)]", "tensor_to_device", "replace", True,
      "size_list = [torch.tensor([0], dtype=torch.int32, device=\"npu\") for _ in range(world_size)]",
      "receive buffers must match local_size (npu, int32)"),
    C("tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"cuda\"))", "tensor_to_device", "replace", True,
      "tensor_list.append(torch.empty((max_size,), dtype=torch.int8, device=\"npu\"))",
      "receive buffers on npu; uint8 is not in the all_gather dtype list"),
    C("padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"cuda\")", "tensor_to_device", "replace", True,
      "padding = torch.empty(size=(max_size - local_size,), dtype=torch.int8, device=\"npu\")",
      "torch.cat with the npu int8 tensor needs the same device and dtype"),
    C("also report peak GPU memory", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # also report peak NPU memory",
      "left alone, log_msg just drops the 'max mem' field; the later format() call passes memory= as an extra kwarg, which is ignored"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "once the log_msg branch above is ported, this stays False, the else branch formats a message containing {memory} without memory= and raises KeyError"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "torch.cuda memory stats return 0 when CUDA was never initialised: a wrong log value, not a failure"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "bind each rank to its NPU"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL does not exist on Ascend"),
])
E("tatr_inference", "src/inference.py", X, "microsoft/table-transformer src/inference.py (TableExtractionPipeline)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "stand-alone entry point (torch 1.11 era: no autoload)"),
    C("parser.add_argument('--detection_device', default=\"cuda\")", "device_type", "replace", True,
      "parser.add_argument('--detection_device', default=\"npu\")",
      "used for torch.load map_location, model.to() and the input tensor"),
    C("parser.add_argument('--structure_device', default=\"cuda\")", "device_type", "replace", True,
      "parser.add_argument('--structure_device', default=\"npu\")", "same for the structure model"),
])
E("tatr_grits", "src/grits.py", X, "microsoft/table-transformer src/grits.py (GriTS metric, numpy only)", [])
E("tatr_config", "src/structure_config.json", X, "microsoft/table-transformer src/structure_config.json", [
    C("\"device\":\"cuda\",", "device_type", "replace", False, "\"device\":\"npu\",",
      "inert: main.py overwrites config keys with every non-None CLI value, and --device always has a default; edited for consistency"),
])
E("tatr_env", "environment.yml", X, "microsoft/table-transformer environment.yml (conda env)", [
    C("- cudatoolkit=11.3", "custom_cuda_extension", "removal", False, None,
      "not needed on Ascend (CANN replaces it); harmless on x86; whether the conda package even exists for aarch64 Ascend hosts is unconfirmed"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==1.11.0.post14",
      "torch_npu wheel matching pytorch=1.11.0 (matrix: 1.11.0.post14 / CANN 8.0.RC2, Python <=3.10)"),
])
E("tatr_train_sh", "scripts/train_structure.sh", X, "table-transformer style launcher (README training commands)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; not needed if the container/profile already sources it"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "the job must avoid the detection job's devices 0-3; torch_npu ignores CUDA_VISIBLE_DEVICES, so unchanged it silently lands on npu:0"),
])

# ---------------------------------------------------------------- vis-nlp/UniChart (Donut-based, PyTorch Lightning)
E("unichart_finetune", "finetune_chartqa.py", X, "vis-nlp/UniChart finetune_chartqa.py (Lightning Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point; torch 2.0.1 (no autoload)"),
    C("accelerator=\"gpu\",", "device_type", "replace", True,
      "accelerator=NPUAccelerator(),",
      "the 'gpu' accelerator needs CUDA devices and fails on an NPU host; Lightning 1.9 has no built-in NPU accelerator, so a small custom Accelerator subclass over torch.npu is needed (exact class unconfirmed in knowledge)"),
    C("devices=args.gpus_num,", "dist_backend", "npu_only_addition", False,
      "strategy=DDPStrategy(process_group_backend=\"hccl\"),",
      "multi-device only: Lightning picks nccl for cuda and gloo otherwise, so NPU DDP needs an explicit hccl backend (Lightning internals unconfirmed)"),
    C("precision=16,  # we'll use mixed precision", "amp", "replace", False,
      "precision=16, plugins=[MixedPrecisionPlugin(\"16\", \"npu\", scaler=torch.npu.amp.GradScaler())],",
      "Lightning's native AMP plugin assumes a cuda autocast device for non-CPU accelerators; unported it silently trains fp32 (performance; unconfirmed)"),
])
E("unichart_model", "model/chartqa_model.py", X, "vis-nlp/UniChart model/chartqa_model.py (LightningModule)", [
    C("self.config.get(\"train_batch_sizes\")[0] * torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "self.config.get(\"train_batch_sizes\")[0] * torch.npu.device_count() * self.config.get(\"num_nodes\", 1)",
      "max_epochs path: device_count() is 0 on an NPU host -> ZeroDivisionError in the scheduler length"),
])
E("unichart_data", "data/chartqa_data.py", X, "vis-nlp/UniChart data/chartqa_data.py", [])
E("unichart_app", "app.py", X, "UniChart Gradio demo (HF Space app.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
      "device = \"npu\" if torch.npu.is_available() else \"cpu\"",
      "unchanged the demo silently runs on the CPU"),
])
E("unichart_reqs", "requirements.txt", X, "UniChart requirements", [
    C("=torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.0.1.post1",
      "torch_npu wheel for torch 2.0.1 (branch v2.0.1-5.0.0, CANN 7.0.0)"),
])

# ---------------------------------------------------------------- X-PLUG/mPLUG-DocOwl TinyChart (LLaVA-style, DeepSpeed, HF Trainer)
E("tinychart_train_mem", "tinychart/train/train_mem.py", X, "mPLUG-DocOwl TinyChart tinychart/train/train_mem.py", [
    C("from tinychart.train.train import train", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "recommended but not required: transformers' is_torch_npu_available() and DeepSpeed's accelerator probe import torch_npu before any device work (unconfirmed in knowledge)"),
    C("train(attn_implementation=\"flash_attention_2\")", "attention_kernel", "replace", True,
      "train(attn_implementation=\"sdpa\")",
      "flash-attn cannot be installed on NPU; transformers then raises at from_pretrained. SDPA dispatches to the NPU FA kernel (transformers PR #36383)"),
])
E("tinychart_train", "tinychart/train/train.py", X, "mPLUG-DocOwl TinyChart tinychart/train/train.py", [])
E("tinychart_builder", "tinychart/model/builder.py", X, "mPLUG-DocOwl TinyChart tinychart/model/builder.py (load_pretrained_model)", [
    C("device=\"cuda\", use_flash_attn=False, **kwargs):", "device_type", "replace", True,
      "device=\"npu\", use_flash_attn=False, **kwargs):",
      "eval_model.py relies on this default; it also picks the vision tower's device"),
    C("kwargs['attn_implementation'] = 'flash_attention_2'", "attention_kernel", "replace", True,
      "kwargs['attn_implementation'] = 'sdpa'",
      "reachable through use_flash_attn=True; flash-attn cannot be installed on NPU"),
])
E("tinychart_run", "tinychart/eval/run_tiny_chart.py", X, "mPLUG-DocOwl TinyChart tinychart/eval/run_tiny_chart.py (CLI demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point; torch 2.1 (no autoload)"),
    C("=.cuda()", "tensor_to_device", "replace", True, ".npu()", "prompt token ids"),
    C("parser.add_argument(\"--device\", type=str, default=\"cuda\")", "device_type", "replace", True,
      "parser.add_argument(\"--device\", type=str, default=\"npu\")", "passed to load_pretrained_model"),
])
E("tinychart_eval", "tinychart/eval/eval_model.py", X, "mPLUG-DocOwl TinyChart tinychart/eval/eval_model.py (chunked benchmark eval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point (python -m)"),
    C("input_ids = input_ids.to(device='cuda', non_blocking=True)", "tensor_to_device", "replace", True,
      "input_ids = input_ids.to(device='npu', non_blocking=True)", ""),
    C("images=image_tensor.to(dtype=torch.float16, device='cuda', non_blocking=True),", "tensor_to_device", "replace", True,
      "images=image_tensor.to(dtype=torch.float16, device='npu', non_blocking=True),", ""),
])
E("tinychart_merge", "tinychart/model/multimodal_encoder/merge.py", X, "mPLUG-DocOwl TinyChart visual token merging (ToMe) module", [
    C("dst = dst.scatter_reduce(-2, dst_idx.expand(n, r, c), src, reduce=mode)", "unsupported_op_workaround", "replace", False,
      "dst = dst.scatter_add(-2, dst_idx.expand(n, r, c), src) if mode == \"sum\" else dst.scatter_reduce(-2, dst_idx.expand(n, r, c), src, reduce=mode)",
      "torch.scatter_reduce is unsupported in Ascend's 2.7.1 list and msFmkTransplt's list, with no NPU kernel, so it falls back to CPU in every merging layer. merge_wavg only uses mode='sum', which maps to scatter_add. Performance only"),
])
E("tinychart_train_sh", "scripts/train.sh", X, "mPLUG-DocOwl TinyChart scripts/train.sh (deepspeed launcher)", [
    C("--tf32 True \\", "device_capability_check", "replace", True, "--tf32 False \\",
      "TrainingArguments raises ValueError when tf32 is requested and is_torch_tf32_available() is False (CUDA Ampere check); transfer_to_npu patches exactly that helper"),
])
E("tinychart_eval_sh", "scripts/eval_chartqa.sh", X, "LLaVA/TinyChart style multi-GPU chunked eval script", [
    C("gpu_list=\"${CUDA_VISIBLE_DEVICES:-0}\"", "env_var", "replace", False,
      "gpu_list=\"${ASCEND_RT_VISIBLE_DEVICES:-0}\"",
      "only the name of the shell variable the device list is read from; works either way"),
    C("CUDA_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m tinychart.eval.eval_model \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m tinychart.eval.eval_model \\",
      "unchanged every chunk process lands on npu:0 (OOM or serialised)"),
])
E("tinychart_pyproject", "pyproject.toml", X, "mPLUG-DocOwl TinyChart pyproject.toml (LLaVA-derived)", [
    C("\"torch==2.1.2\", \"torchvision==0.16.2\",", "import_torch_npu", "replace", True,
      "\"torch==2.1.0\", \"torchvision==0.16.0\", \"torch-npu==2.1.0.post12\",",
      "torch_npu wheels exist only for torch x.y.z exactly (2.1.0, not 2.1.2); torchvision follows torch"),
    C("\"accelerate==0.21.0\", \"peft==0.4.0\", \"bitsandbytes==0.41.0\",", "distributed_framework", "replace", True,
      "\"accelerate==0.22.0\", \"peft==0.5.0\", \"bitsandbytes==0.41.0\",",
      "native NPU support starts at accelerate 0.22.0 and peft 0.5.0; the HF Trainer device setup goes through accelerate"),
    C("\"flash-attn==2.5.2\",", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built or installed on NPU; pip install .[train] would fail"),
])

# ---------------------------------------------------------------- LingyvKong/OneChart (Vary-based OPT-125m + SAM)
E("onechart_demo", "OneChart_code/vary/demo/run_opt_v1.py", X, "LingyvKong/OneChart OneChart_code/vary/demo/run_opt_v1.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("model.to(device='cuda', dtype=torch.bfloat16)", "tensor_to_device", "replace", True,
      "model.to(device='npu', dtype=torch.bfloat16)", ""),
    C("input_ids = torch.as_tensor(inputs.input_ids).cuda()", "tensor_to_device", "replace", True,
      "input_ids = torch.as_tensor(inputs.input_ids).npu()", ""),
    C("with torch.autocast(\"cuda\", dtype=torch.bfloat16):", "amp", "replace", True,
      "with torch.autocast(\"npu\", dtype=torch.bfloat16):",
      "the image tensors are fp16 while the model is bf16; without NPU autocast the SAM convs get mixed dtypes and fail"),
    C("images=[(image_tensor_1.unsqueeze(0).half().cuda(), image_tensor_1.unsqueeze(0).half().cuda())],", "tensor_to_device", "replace", True,
      "images=[(image_tensor_1.unsqueeze(0).half().npu(), image_tensor_1.unsqueeze(0).half().npu())],", ""),
])
E("onechart_model", "OneChart_code/vary/model/vary_opt.py", X, "LingyvKong/OneChart vary/model/vary_opt.py (varyOPT + number decoder)", [
    C("=device=\"cuda\"", "device_type", "replace", False, "device=\"npu\"",
      "default of initialize_vision_modules; train_opt.py always passes device=training_args.device"),
    C("gt_locs = torch.zeros(pred_locs.shape, device='cuda', dtype=pred_locs.dtype)", "tensor_to_device", "replace", True,
      "gt_locs = torch.zeros(pred_locs.shape, device=pred_locs.device, dtype=pred_locs.dtype)",
      "auxiliary number-loss target; a hard-coded cuda device fails on NPU"),
])
E("onechart_train", "OneChart_code/vary/train/train_opt.py", X, "LingyvKong/OneChart vary/train/train_opt.py (HF Trainer + DeepSpeed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "recommended; HF Trainer/DeepSpeed import torch_npu themselves when they probe for NPU (unconfirmed)"),
])
E("onechart_sam", "OneChart_code/vary/model/vision_encoder/sam.py", X, "LingyvKong/OneChart vary/model/vision_encoder/sam.py (SAM ViT-B)", [])
E("onechart_zero", "OneChart_code/zero_config/zero2.json", X, "LingyvKong/OneChart zero_config/zero2.json", [])

# ---------------------------------------------------------------- OpenGVLab/ChartAst (LLaMA2-Accessory / SPHINX)
E("chartast_main", "accessory/main_finetune.py", X, "OpenGVLab/ChartAst accessory/main_finetune.py (FSDP + fairscale MP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point (torchrun)"),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", False,
      "parser.add_argument('--device', default='npu',",
      "inert: the resulting `device` variable is never used; placement goes through default_tensor_type and FSDP device_id"),
    C("with default_tensor_type(dtype=mixed_precision_dtype, device=\"cpu\" if args.only_save_trainable else \"cuda\"):", "device_type", "replace", True,
      "with default_tensor_type(dtype=mixed_precision_dtype, device=\"cpu\" if args.only_save_trainable else \"npu\"):",
      "model is materialised directly on the accelerator"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "only_save_trainable path"),
    C("device_id=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
      "device_id=torch.npu.current_device(),", "FSDP placement"),
])
E("chartast_engine", "accessory/engine_finetune.py", X, "OpenGVLab/ChartAst accessory/engine_finetune.py", [
    C("imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "imgs = imgs.npu(non_blocking=True)", ""),
    C("examples = examples.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "examples = examples.npu(non_blocking=True)", ""),
    C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "labels = labels.npu(non_blocking=True)", ""),
    C("\"bf16\": torch.cuda.amp.autocast(dtype=torch.bfloat16),", "amp", "replace", True,
      "\"bf16\": torch.npu.amp.autocast(dtype=torch.bfloat16),",
      "CUDA autocast is disabled on an NPU host: FSDP MixedPrecision still casts the params, but fp32-sensitive ops lose their autocast policy"),
    C("\"fp16\": torch.cuda.amp.autocast(dtype=torch.float16),", "amp", "replace", True,
      "\"fp16\": torch.npu.amp.autocast(dtype=torch.float16),", "same for --precision fp16"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() tries to initialise CUDA and raises on an NPU host"),
])
E("chartast_misc", "accessory/util/misc.py", X, "OpenGVLab/ChartAst accessory/util/misc.py (MAE/DeiT-derived)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "npu device for HCCL; fp64 is not in all_reduce's supported dtypes in Ascend's list"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path; 0 devices -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", ""),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'", ""),
    C("self._scaler = ShardedGradScaler(enabled=args.precision in [\"fp16\"])", "amp", "replace", True,
      "self._scaler = ShardedGradScaler(device=\"npu\", enabled=args.precision in [\"fp16\"])",
      "the scaler defaults to device='cuda'; with --precision fp16 it is enabled and would build CUDA tensors. Inactive for the default bf16"),
    C("x_reduce = x.clone().cuda()", "tensor_to_device", "replace", True, "x_reduce = x.clone().npu()", "HCCL needs npu tensors"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True, "x_reduce = torch.tensor(x).npu()", ""),
])
E("chartast_tensor_type", "accessory/util/tensor_type.py", X, "OpenGVLab/ChartAst accessory/util/tensor_type.py (default_tensor_type)", [
    C("assert device is None or device in [\"cpu\", \"cuda\"]", "device_type", "replace", True,
      "assert device is None or device in [\"cpu\", \"npu\"]", "callers now pass 'npu'"),
    C("torch.set_default_tensor_type(default_tensor_type.get_tensor_type(dtype, device))", "unsupported_op_workaround", "replace", True,
      "torch.set_default_dtype(dtype); torch.set_default_device(device)",
      "Ascend's 2.7.1 list says torch.set_default_tensor_type does not accept torch.npu.<Dtype>Tensor types, so use the dtype/device APIs (torch>=2.0)"),
    C("torch.set_default_tensor_type(default_tensor_type.get_tensor_type(*default_tensor_type._tensor_type_stack[-1]))", "unsupported_op_workaround", "replace", True,
      "torch.set_default_dtype(default_tensor_type._tensor_type_stack[-1][0]); torch.set_default_device(default_tensor_type._tensor_type_stack[-1][1])",
      "restore path of the same context manager"),
    C("(torch.float, \"cuda\"): torch.cuda.FloatTensor,", "torch_cuda_api", "replace", False,
      "(torch.float, \"npu\"): torch.npu.FloatTensor,", "no longer used once the two set_default_tensor_type calls are rewritten; changed to keep the table consistent"),
    C("(torch.bfloat16, \"cuda\"): torch.cuda.BFloat16Tensor,", "torch_cuda_api", "replace", False,
      "(torch.bfloat16, \"npu\"): torch.npu.BFloat16Tensor,", "as above"),
    C("(torch.half, \"cuda\"): torch.cuda.HalfTensor,", "torch_cuda_api", "replace", False,
      "(torch.half, \"npu\"): torch.npu.HalfTensor,", "as above"),
])
E("chartast_llama", "accessory/model/LLM/llama_ens.py", X, "OpenGVLab/ChartAst accessory/model/LLM/llama_ens.py (SPHINX LLaMA-2 with visual tokens)", [
    C("from flash_attn import flash_attn_func", "attention_kernel", "replace", True, "import torch_npu",
      "flash-attn cannot be installed on NPU, so the module-level import raises ImportError"),
    C("output = flash_attn_func(xq, keys, values, dropout_p=0.0, causal=mask == \"causal\")", "attention_kernel", "replace", True,
      "output = torch_npu.npu_fusion_attention(xq, keys, values, self.n_local_heads, \"BSND\", atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=xq.device), diagonal=1) if mask == \"causal\" else None, scale=1.0 / math.sqrt(self.head_dim), keep_prob=1.0, sparse_mode=3 if mask == \"causal\" else 0)[0]",
      "BSND layout matches flash-attn's (B,S,N,D); GQA with an integer Nq/Nkv ratio is supported; causal = 2048x2048 triu mask + sparse_mode=3 (bottom-right aligned, like flash-attn with a KV cache)"),
    C("with torch.cuda.amp.autocast(enabled=False):  # build CLIP weights outside autocast", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):  # build CLIP weights outside autocast",
      "inert: the model is built outside any autocast region"),
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "runs inside the training step's NPU autocast; a CUDA-autocast opt-out does not disable NPU autocast, so the fp16 CLIP path would silently be re-cast to bf16"),
])
E("chartast_components", "accessory/model/components.py", X, "OpenGVLab/ChartAst accessory/model/components.py (apex RMSNorm fallback)", [])
E("chartast_sh", "accessory/exps/finetune/mm/chartast_stage2.sh", X, "ChartAst/LLaMA2-Accessory exps finetune launcher", [
    C("GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", True,
      "GPUS_PER_NODE=$(python -c \"import torch, torch_npu; print(torch.npu.device_count())\")",
      "nvidia-smi is missing on Ascend hosts, so the count is 0 and torchrun --nproc_per_node=0 fails"),
])
