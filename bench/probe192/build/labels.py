# Labels for probe192 (vision-and-language pre-training / VQA research code, CUDA -> Ascend NPU).
# Target stack assumed throughout: torch 2.1.0 + torch-npu 2.1.0.postN (CANN 8.0.x), Python 3.9,
# Ascend apex ("apex patch") where the project keeps apex.amp.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


DP_NOTE = ("torch.nn.DataParallel is not supported on Ascend (✘ in Ascend's 2.7.1 API list, msFmkTransplt limitation); "
           "one process per NPU with DistributedDataParallel instead")
NPU_IMPORT = "entry script: .npu()/torch.npu/hccl need torch_npu loaded (no device-backend autoload before torch_npu 2.5.1)"
CUDA_T = "raises on a host without CUDA; torch_npu equivalent"
LOAD_GPU = ("snapshot written from a .cuda() model holds CUDA tensors; torch.load without map_location raises "
            "when CUDA is unavailable")
PIN = ("performance only: with no CUDA device torch's DataLoader silently skips pinning; pin_memory_device='npu' "
       "restores it (unconfirmed in knowledge)")
HVD = ("Horovod here is built against NCCL and has no Ascend support in the knowledge notes (unconfirmed); "
       "the port moves these collectives to torch.distributed on HCCL")
APEX_AMP = ("apex.amp keeps working once NVIDIA apex is replaced by Ascend apex (apex patch: O1/O2, loss scaling); "
            "combine_grad is its optional fused-unscale speed-up")

# ---------------------------------------------------------------- LXMERT
E("lx_entry", "src/lxrt/entry.py", "explicit_replacement", "LXMERT src/lxrt/entry.py (LXRTEncoder wrapper)", [
    C("self.model = nn.DataParallel(self.model)", "distributed_framework", "replace", True,
      "self.model = self.model  # nn.DataParallel is unsupported on NPU: one process per NPU instead", DP_NOTE),
    C("input_ids = torch.tensor([f.input_ids", "tensor_to_device", "replace", True,
      "input_ids = torch.tensor([f.input_ids for f in train_features], dtype=torch.long).npu()", CUDA_T),
    C("input_mask = torch.tensor([f.input_mask", "tensor_to_device", "replace", True,
      "input_mask = torch.tensor([f.input_mask for f in train_features], dtype=torch.long).npu()", CUDA_T),
    C("segment_ids = torch.tensor([f.segment_ids", "tensor_to_device", "replace", True,
      "segment_ids = torch.tensor([f.segment_ids for f in train_features], dtype=torch.long).npu()", CUDA_T),
    C('state_dict = torch.load("%s_LXRT.pth" % path)', "device_type", "replace", True,
      'state_dict = torch.load("%s_LXRT.pth" % path, map_location="cpu")',
      "loads the released LXMERT pre-trained snapshot; " + LOAD_GPU),
])

E("lx_modeling", "src/lxrt/modeling.py", "device_branch_or_abstraction",
  "LXMERT src/lxrt/modeling.py (BERT + cross-modality encoder)", [])

E("lx_vqa", "src/tasks/vqa.py", "explicit_replacement", "LXMERT src/tasks/vqa.py (VQA fine-tuning entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NPU_IMPORT),
    C("drop_last=drop_last, pin_memory=True", "pin_memory", "replace", False,
      "drop_last=drop_last, pin_memory=True, pin_memory_device='npu'", PIN),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()", CUDA_T),
    C("feats, boxes, target = feats.cuda(), boxes.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "feats, boxes, target = feats.npu(), boxes.npu(), target.npu()", CUDA_T),
    C("feats, boxes = feats.cuda(), boxes.cuda()", "tensor_to_device", "replace", True,
      "feats, boxes = feats.npu(), boxes.npu()", CUDA_T),
    C("self.optim = BertAdam(list(self.model.parameters()),", "fused_optimizer", "replace", False,
      "self.optim = torch_npu.optim.NpuFusedBertAdam(list(self.model.parameters()),",
      "LXMERT's BertAdam is plain PyTorch and runs on NPU; NpuFusedBertAdam (same lr/warmup/t_total/schedule args) "
      "is a performance swap"),
    C('state_dict = torch.load("%s.pth" % path)', "device_type", "replace", False,
      'state_dict = torch.load("%s.pth" % path, map_location="cpu")',
      "only fails for fine-tuned snapshots written on a GPU host; snapshots trained on NPU load fine"),
])

E("lx_qa_table", "src/pretrain/qa_answer_table.py", "explicit_replacement",
  "LXMERT src/pretrain/qa_answer_table.py (load_lxmert_qa)", [
    C('loaded_state_dict = torch.load("%s_LXRT.pth" % path)', "device_type", "replace", True,
      'loaded_state_dict = torch.load("%s_LXRT.pth" % path, map_location="cpu")',
      "--loadLXMERTQA points at the released pre-trained snapshot; " + LOAD_GPU),
])

E("lx_pretrain", "src/pretrain/lxmert_pretrain.py", "explicit_replacement",
  "LXMERT src/pretrain/lxmert_pretrain.py (pre-training loop, --multiGPU, --fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NPU_IMPORT),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()", CUDA_T),
    C("self.optim = BertAdam(self.model.parameters()", "fused_optimizer", "replace", False,
      "self.optim = torch_npu.optim.NpuFusedBertAdam(self.model.parameters(), lr=args.lr, warmup=warmup_ratio, t_total=t_total)",
      "BertAdam runs on NPU as is; NpuFusedBertAdam is the fused (performance) equivalent"),
    C("self.model, self.optim = amp.initialize(self.model, self.optim, opt_level='O1')", "amp", "replace", False,
      "self.model, self.optim = amp.initialize(self.model, self.optim, opt_level='O1', combine_grad=True)", APEX_AMP),
    C("self.model = nn.DataParallel(self.model)", "distributed_framework", "replace", True,
      "self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[torch.npu.current_device()])",
      DP_NOTE + " (the pre-training launcher then starts one process per NPU and initialises HCCL)"),
    C("input_ids = torch.tensor([f.input_ids for f in train_features], dtype=torch.long).cuda()", "tensor_to_device",
      "replace", True, "input_ids = torch.tensor([f.input_ids for f in train_features], dtype=torch.long).npu()", CUDA_T),
    C("input_mask = torch.tensor([f.input_mask", "tensor_to_device", "replace", True,
      "input_mask = torch.tensor([f.input_mask for f in train_features], dtype=torch.long).npu()", CUDA_T),
    C("segment_ids = torch.tensor([f.segment_ids", "tensor_to_device", "replace", True,
      "segment_ids = torch.tensor([f.segment_ids for f in train_features], dtype=torch.long).npu()", CUDA_T),
    C("feats = torch.from_numpy(np.stack([f.visual_feats[0]", "tensor_to_device", "replace", True,
      "feats = torch.from_numpy(np.stack([f.visual_feats[0] for f in train_features])).npu()", CUDA_T),
    C("pos = torch.from_numpy(np.stack([f.visual_feats[1]", "tensor_to_device", "replace", True,
      "pos = torch.from_numpy(np.stack([f.visual_feats[1] for f in train_features])).npu()", CUDA_T),
    C("lm_labels = torch.tensor([f.lm_label_ids", "tensor_to_device", "replace", True,
      "lm_labels = torch.tensor([f.lm_label_ids for f in train_features], dtype=torch.long).npu()", CUDA_T),
    C("visn_labels = torch.from_numpy(", "tensor_to_device", "replace", True,
      "visn_labels = torch.from_numpy(np.stack([f.obj_labels[key][0] for f in train_features])).npu()", CUDA_T),
    C("visn_mask = torch.from_numpy(", "tensor_to_device", "replace", True,
      "visn_mask = torch.from_numpy(np.stack([f.obj_labels[key][1] for f in train_features])).npu()", CUDA_T),
    C("matched_labels = torch.tensor([f.is_matched", "tensor_to_device", "replace", True,
      "matched_labels = torch.tensor([f.is_matched for f in train_features], dtype=torch.long).npu()", CUDA_T),
    C("ans = torch.from_numpy(np.stack([f.ans", "tensor_to_device", "replace", True,
      "ans = torch.from_numpy(np.stack([f.ans for f in train_features])).npu()", CUDA_T),
    C('torch.load("%s_LXRT.pth" % path)', "device_type", "replace", False,
      'state_dict = torch.load("%s_LXRT.pth" % path, map_location="cpu")',
      "--load resumes from this project's own snapshots; only GPU-era snapshots fail (load_lxmert already maps to CPU)"),
])

E("lx_run_vqa", "run/vqa_finetune.bash", "explicit_replacement", "LXMERT run/vqa_finetune.bash", [
    C("# See Readme.md for option details.", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu imports; not needed when the login shell/container already exports it"),
    C("CUDA_VISIBLE_DEVICES=$1", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$1 PYTHONPATH=$PYTHONPATH:./src \\",
      "torch_npu ignores CUDA_VISIBLE_DEVICES, so the job silently lands on NPU 0 instead of the card passed as $1"),
])

E("lx_run_pretrain", "run/lxmert_pretrain.bash", "explicit_replacement", "LXMERT run/lxmert_pretrain.bash", [
    C("# usage: bash run/lxmert_pretrain.bash", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu imports; not needed when the shell/container already exports it"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL-only debug switch, silently ignored on NPU; CANN log level is the nearest counterpart"),
    C("CUDA_VISIBLE_DEVICES=$1", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$1 PYTHONPATH=$PYTHONPATH:./src \\",
      "device list in $1 is ignored by torch_npu: the job uses the wrong / all NPUs"),
])

E("lx_requirements", "requirements.txt", "explicit_replacement", "LXMERT requirements.txt (CUDA 10.0 wheels, apex)", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; on x86 the NPU stack takes the CPU torch wheel from whl/cpu (aarch64: plain PyPI)"),
    C("torch==1.4.0+cu100", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA 10.0 build of torch 1.4; torch_npu only exists for torch >= 1.5 and its wheel must match torch exactly"),
    C("torchvision==0.5.0+cu100", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "+cu100 build pins CUDA torch 1.4; torchvision 0.16 pairs with torch 2.1"),
    C("=matplotlib", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the torch_npu wheel (version = torch version + .postN)"),
    C("git+https://github.com/NVIDIA/apex.git", "custom_cuda_extension", "replace", True,
      "apex @ file:///opt/ascend-apex/apex-0.1+ascend-cp39-cp39-linux_aarch64.whl",
      "--cuda_ext/--cpp_ext build needs nvcc and fails on an NPU host; Ascend apex (apex patch, built by scripts/build.sh) "
      "provides amp for --fp16"),
])

# ---------------------------------------------------------------- ViLBERT multi-task
E("vb_vilbert", "vilbert/vilbert.py", "explicit_replacement", "vilbert-multi-task vilbert/vilbert.py", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as BertLayerNorm", "custom_cuda_extension",
      "replace", True, "from torch.nn import LayerNorm as BertLayerNorm",
      "the guard only catches ImportError: with Ascend apex installed (needed for amp) the import succeeds, but "
      "FusedLayerNorm() loads fused_layer_norm_cuda at construction, which Ascend apex does not ship"),
])

E("vb_train_tasks", "train_tasks.py", "explicit_replacement", "vilbert-multi-task train_tasks.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NPU_IMPORT),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "torch.cuda.is_available() is False on an NPU host, so training silently falls back to CPU"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
      "returns 0 on an NPU host: batch-size / multi-device logic silently wrong"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", CUDA_T),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "CUDA device for every later .to(device)/.cuda(device=device)"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL is unavailable; HCCL is the Ascend collective backend"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdam",
      "apex FusedAdam needs the fused_adam CUDA kernels (not in Ascend apex; must be edited by hand per msFmkTransplt notes)"),
    C("optimizer = FusedAdam(optimizer_grouped_parameters, lr=base_lr, bias_correction=False)", "fused_optimizer",
      "replace", True, "optimizer = NpuFusedAdam(optimizer_grouped_parameters, lr=base_lr)",
      "follows the import; NpuFusedAdam has no bias_correction argument"),
    C("state[k] = v.cuda()", "tensor_to_device", "replace", True, "state[k] = v.to(device)", CUDA_T),
    C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", "replace", False,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "apex.parallel DDP is CUDA/NCCL-oriented and Ascend apex only advertises amp + fused optimizers; "
      "failure on NPU unconfirmed in knowledge"),
    C("model = DDP(model, delay_allreduce=True)", "distributed_framework", "replace", False,
      "model = DDP(model, device_ids=[args.local_rank], find_unused_parameters=True)",
      "follows the DDP swap (torch DDP has no delay_allreduce); unconfirmed like the import"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel is unsupported on NPU: use --local_rank + torch.distributed.launch", DP_NOTE),
])

E("vb_task_utils", "vilbert/task_utils.py", "explicit_replacement", "vilbert-multi-task vilbert/task_utils.py", [
    C("=batch = tuple(t.cuda(device=device, non_blocking=True) for t in batch)", "tensor_to_device", "replace", True,
      "batch = tuple(t.to(device=device, non_blocking=True) for t in batch)", CUDA_T),
    C("for t in batch)  # to the GPU of this rank", "tensor_to_device", "replace", True,
      "batch = tuple(t.to(device=device, non_blocking=True) for t in batch)", CUDA_T),
    C("for t in batch)  # eval: single device", "tensor_to_device", "replace", True,
      "batch = tuple(t.to(device=device, non_blocking=True) for t in batch)", CUDA_T),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN),
    C("pin_memory=True,  # same as train", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',", PIN),
])

# ---------------------------------------------------------------- Oscar / VinVL
E("os_run_vqa", "oscar/run_vqa.py", "explicit_replacement", "Oscar oscar/run_vqa.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NPU_IMPORT),
    C("one_hots = torch.zeros(*labels.size()).cuda()", "tensor_to_device", "replace", True,
      "one_hots = torch.zeros(*labels.size(), device=labels.device)", CUDA_T),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, combine_grad=True)", APEX_AMP),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel is unsupported on NPU: launch one process per NPU (torch.distributed.launch)",
      DP_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "silently selects CPU on an NPU host"),
    C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.n_gpu = torch.npu.device_count()", "0 on an NPU host: batch size and seeding logic silently wrong"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", CUDA_T),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "CUDA device used for every batch"),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')", "NCCL unavailable on Ascend; use HCCL"),
])

E("os_run_captioning", "oscar/run_captioning.py", "explicit_replacement",
  "Oscar/VinVL oscar/run_captioning.py (torch.cuda.amp variant)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NPU_IMPORT),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "without CUDA the CUDA GradScaler warns and disables itself; once autocast runs on NPU, fp16 would train "
      "without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "CUDA autocast is silently disabled when CUDA is unavailable: --fp16 runs in fp32"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", CUDA_T),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)", CUDA_T),
    C("backend='nccl', init_method='env://'", "dist_backend", "replace", True,
      "backend='hccl', init_method='env://'", "NCCL unavailable on Ascend; use HCCL"),
    C("args.device = torch.device('cuda')", "device_type", "replace", True, "args.device = torch.device('npu')",
      "device for the model and every batch"),
    C("if args.fp16 and torch.cuda.get_device_capability(args.device)[0] < 7:", "device_capability_check", "removal",
      True, None,
      "torch.cuda.get_device_capability raises without CUDA (and the NPU version returns None); the tensor-core "
      "check has no NPU meaning, drop it with its warning"),
])

E("os_misc", "oscar/utils/misc.py", "explicit_replacement", "Oscar oscar/utils/misc.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy call, silently does nothing without CUDA; torch.manual_seed above should already seed the NPU "
      "generator (unconfirmed), so kept optional"),
])

E("os_modeling", "oscar/modeling/modeling_bert.py", "device_branch_or_abstraction",
  "Oscar oscar/modeling/modeling_bert.py (BertImgModel, captioning head)", [])

E("os_env", "environment.yml", "explicit_replacement", "Oscar/VinVL conda environment (CUDA 10.1)", [
    C("- python=3.7", "import_torch_npu", "replace", True, "- python=3.9",
      "torch 2.1 / torch_npu 2.1 support Python 3.8-3.11 only"),
    C("- cudatoolkit=10.1", "import_torch_npu", "removal", False, None,
      "CUDA runtime package; useless on an Ascend host (CANN provides the runtime)"),
    C("- pytorch=1.4.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0=*cpu*",
      "CUDA build of torch 1.4 from the pytorch channel; torch_npu needs the matching CPU torch 2.1.0"),
    C("- torchvision=0.5.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "0.5.0 is tied to torch 1.4"),
    C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "the torch_npu wheel matching torch 2.1.0"),
])

E("os_run_sh", "scripts/run_vqa_8gpu.sh", "explicit_replacement", "Oscar VQA fine-tuning launcher (8 GPU)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu; optional if the shell/container already exports it"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "ignored by torch_npu: a restricted device list silently maps ranks to the wrong NPUs"),
    C("NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "NUM_GPUS=$(echo $ASCEND_RT_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)",
      "process count must follow the renamed device list"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL-only logging knob, ignored on NPU"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only transport switch; HCCL ignores it"),
    C("nvidia-smi > $OUTPUT_DIR/nvidia-smi.txt", "device_type", "replace", True,
      "npu-smi info > $OUTPUT_DIR/npu-smi.txt",
      "nvidia-smi does not exist on an Ascend host and `set -e` aborts the launcher"),
])

# ---------------------------------------------------------------- scene_graph_benchmark (VinVL detector)
E("sg_setup", "setup.py", "kernel_rewrite", "microsoft/scene_graph_benchmark setup.py (maskrcnn_benchmark._C)", [
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", "replace", False,
      "if False:  # no nvcc on Ascend: NMS/ROIAlign come from torchvision(+torchvision_npu), _C keeps the CPU kernels",
      "on an NPU host CUDA is unavailable and CUDA_HOME is None, so the CPU-only extension builds unless FORCE_CUDA=1 "
      "(see the Dockerfile); the real fix is at the _C call sites"),
])

E("sg_nms", "maskrcnn_benchmark/layers/nms.py", "kernel_rewrite", "maskrcnn-benchmark layers/nms.py", [
    C("from maskrcnn_benchmark import _C", "custom_cuda_extension", "replace", True,
      "import torchvision, torchvision_npu  # noqa: F401",
      "replacement ops come from torchvision; torchvision_npu registers native NPU nms (else torch_npu CPU fallback)"),
    C("nms = amp.float_function(_C.nms)", "custom_cuda_extension", "replace", True,
      "nms = amp.float_function(torchvision.ops.nms)",
      "_C is a pybind11 extension (CPU-only on the NPU host): no dispatcher, so no torch_npu fallback; nms_cpu would "
      "read NPU memory through host pointers"),
    C("ml_nms = amp.float_function(_C.ml_nms)", "custom_cuda_extension", "replace", True,
      "ml_nms = amp.float_function(torchvision.ops.batched_nms)",
      "same pybind11 CPU kernel problem; batched_nms has the (boxes, scores, labels, thresh) signature"),
])

E("sg_roi_align", "maskrcnn_benchmark/layers/roi_align.py", "kernel_rewrite", "maskrcnn-benchmark layers/roi_align.py", [
    C("from maskrcnn_benchmark import _C", "custom_cuda_extension", "replace", True,
      "import torchvision, torchvision_npu  # noqa: F401",
      "roi_align moves to torchvision.ops (native NPU kernel via torchvision_npu)"),
    C("output = _C.roi_align_forward(", "custom_cuda_extension", "replace", True,
      "output = torchvision.ops.roi_align(input, roi, output_size, spatial_scale, sampling_ratio)",
      "pybind11 _C built without CUDA cannot take NPU tensors"),
    C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", "removal", True, None,
      "torchvision's roi_align has its own autograd; the hand-written backward (and the Function) goes"),
])

E("sg_comm", "maskrcnn_benchmark/utils/comm.py", "explicit_replacement",
  "maskrcnn-benchmark / scene_graph_benchmark utils/comm.py", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "HCCL all_gather needs device tensors; 'cuda' raises"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', CUDA_T),
    C('size_list = [torch.LongTensor([0]).to("cuda")', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', CUDA_T),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', CUDA_T),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', CUDA_T),
    C('data_tensor = torch.tensor(data + [0], device="cuda")', "device_type", "replace", True,
      'data_tensor = torch.tensor(data + [0], device="npu")', CUDA_T),
    C('data_tensor = torch.tensor(data + [1], device="cuda")', "device_type", "replace", True,
      'data_tensor = torch.tensor(data + [1], device="npu")', CUDA_T),
])

E("sg_inference", "maskrcnn_benchmark/engine/inference.py", "explicit_replacement",
  "maskrcnn-benchmark engine/inference.py (VinVL tsv output)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "guarded only by device.type != 'cpu', so with device 'npu' it calls the CUDA API and raises"),
    C('device="cuda",', "device_type", "replace", False, 'device="npu",',
      "default argument only; tools/test_sg_net.py always passes cfg.MODEL.DEVICE"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA (the NPU cache is simply not released)"),
])

E("sg_test_net", "tools/test_sg_net.py", "explicit_replacement", "scene_graph_benchmark tools/test_sg_net.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NPU_IMPORT),
    C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # TODO check if it helps", "silent no-op without CUDA"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", CUDA_T),
    C('backend="nccl", init_method="env://"', "dist_backend", "replace", True, 'backend="hccl", init_method="env://"',
      "NCCL unavailable on Ascend; use HCCL"),
])

E("sg_yaml", "sgg_configs/vgattr/vinvl_x152c4.yaml", "explicit_replacement",
  "scene_graph_benchmark sgg_configs/vgattr/vinvl_x152c4.yaml", [
    C('DEVICE: "cuda"', "device_type", "replace", True, 'DEVICE: "npu"',
      "model.to(cfg.MODEL.DEVICE) and inference(device=...) take the device from this config"),
])

E("sg_dockerfile", "docker/Dockerfile", "explicit_replacement", "maskrcnn-benchmark / scene_graph_benchmark docker/Dockerfile", [
    C("FROM nvidia/cuda:${CUDA}-cudnn${CUDNN}-devel-ubuntu16.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
      "CUDA base image; the NPU image needs the CANN toolkit (driver mounted from the host)"),
    C("conda create -y --name py37 python=3.7", "import_torch_npu", "replace", True,
      " && /miniconda/bin/conda create -y --name py37 python=3.9 \\",
      "torch 2.1 / torch_npu 2.1 need Python 3.8-3.11"),
    C("RUN conda install -y pytorch=1.4.0 torchvision=0.5.0 cudatoolkit=${CUDA} -c pytorch", "import_torch_npu",
      "replace", True, "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 \\",
      "CUDA build of torch 1.4 + cudatoolkit; NPU needs CPU torch 2.1 plus the matching torch_npu wheel"),
    C("RUN git clone https://github.com/NVIDIA/apex.git", "custom_cuda_extension", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex.git \\",
      "the NPU apex patch lives in Ascend/apex (gitee/gitcode); its build script is used in the next step"),
    C("&& python setup.py install --cuda_ext --cpp_ext", "custom_cuda_extension", "replace", True,
      " && bash scripts/build.sh --python=3.9 && pip install dist/apex-*.whl",
      "NVIDIA apex CUDA extensions need nvcc; Ascend apex (clone from Ascend/apex) builds the NPU apex patch"),
    C('ARG FORCE_CUDA="1"', "env_var", "replace", True, 'ARG FORCE_CUDA="0"',
      "forces CUDAExtension in setup.py, which fails without nvcc/CUDA_HOME on the CANN image"),
])

# ---------------------------------------------------------------- UNITER
E("un_train_vqa", "train_vqa.py", "explicit_replacement", "UNITER train_vqa.py (horovod + apex amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NPU_IMPORT),
    C("from horovod import torch as hvd", "distributed_framework", "replace", False, "import torch.distributed as dist",
      HVD),
    C("pin_memory=opts.pin_mem, collate_fn=collate_fn)", "pin_memory", "replace", False,
      "pin_memory=opts.pin_mem, pin_memory_device='npu', collate_fn=collate_fn)", PIN),
    C("=hvd.init()", "distributed_framework", "replace", False, 'dist.init_process_group(backend="hccl")', HVD),
    C('device = torch.device("cuda", hvd.local_rank())', "device_type", "replace", True,
      'device = torch.device("npu", hvd.local_rank())', "model.to(device) would target CUDA"),
    C("torch.cuda.set_device(hvd.local_rank())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(hvd.local_rank())", CUDA_T),
    C("model, optimizer = amp.initialize(model, optimizer,", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, combine_grad=True,", APEX_AMP),
])

E("un_loader", "data/loader.py", "explicit_replacement", "UNITER data/loader.py (PrefetchLoader)", [
    C("return batch.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "return batch.npu(non_blocking=True)", CUDA_T),
    C("batch.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "batch.record_stream(torch.npu.current_stream())", CUDA_T),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "constructed for every loader: raises at start-up without CUDA"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", CUDA_T),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", CUDA_T),
])

E("un_distributed", "utils/distributed.py", "explicit_replacement", "UNITER utils/distributed.py (Horovod helpers)", [
    C("from horovod import torch as hvd", "distributed_framework", "replace", False, "import torch.distributed as dist",
      HVD),
    C("hvd.allreduce_(buffer_t[:offset])", "distributed_framework", "replace", False,
      "dist.all_reduce(buffer_t[:offset]); buffer_t[:offset].div_(dist.get_world_size())",
      HVD + "; note hvd.allreduce_ averages by default while dist.all_reduce sums"),
    C("hvd.allreduce_(buffer_t[:offset], name='grad_chunk')", "distributed_framework", "replace", False,
      "dist.all_reduce(buffer_t[:offset]); buffer_t[:offset].div_(dist.get_world_size())", HVD),
    C("hvd.allreduce_(t)", "distributed_framework", "replace", False,
      "dist.all_reduce(t); t.div_(dist.get_world_size())", HVD),
    C("hvd.broadcast_(buffer_t[:offset], root_rank)", "distributed_framework", "replace", False,
      "dist.broadcast(buffer_t[:offset], root_rank)", HVD),
    C("hvd.broadcast_(t, root_rank)", "distributed_framework", "replace", False, "dist.broadcast(t, root_rank)", HVD),
    C("buffer_ = torch.cuda.ByteTensor(max_size+enc_byte)", "torch_cuda_api", "replace", True,
      "buffer_ = torch.empty(max_size+enc_byte, dtype=torch.uint8, device='npu')",
      "legacy CUDA tensor type; raises without CUDA"),
    C("buffer_ = torch.cuda.ByteTensor(enc_size+enc_byte)", "torch_cuda_api", "replace", True,
      "buffer_ = torch.empty(enc_size+enc_byte, dtype=torch.uint8, device='npu')",
      "legacy CUDA tensor type; raises without CUDA"),
    C("max_size = hvd.allgather(torch.tensor([enc_size]).cuda()).max().item()", "tensor_to_device", "replace", True,
      "max_size = hvd.allgather(torch.tensor([enc_size]).npu()).max().item()", CUDA_T),
    C("out_buffer = hvd.allgather(in_buffer[:enc_byte+enc_size])", "distributed_framework", "replace", False,
      "out_buffer = torch.cat(_all_gather_padded(in_buffer[:enc_byte+enc_size]))",
      HVD + "; dist.all_gather needs equal sizes, hence a padded helper"),
    C("max_size = hvd.allgather(torch.tensor([len(enc)]).cuda()).max().item()", "tensor_to_device", "replace", True,
      "max_size = hvd.allgather(torch.tensor([len(enc)]).npu()).max().item()", CUDA_T),
    C("hvd.broadcast_(buffer_, root_rank)", "distributed_framework", "replace", False,
      "dist.broadcast(buffer_, root_rank)", HVD),
])

E("un_model", "model/model.py", "explicit_replacement", "UNITER model/model.py", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm", "custom_cuda_extension", "replace", True,
      "from torch.nn import LayerNorm as FusedLayerNorm",
      "unguarded: NVIDIA apex cannot be built without nvcc and Ascend apex has no fused_layer_norm_cuda, so the "
      "import or FusedLayerNorm() construction fails"),
])

E("un_launch", "launch_container.sh", "explicit_replacement", "UNITER launch_container.sh", [
    C("if [ -z $CUDA_VISIBLE_DEVICES ]; then", "env_var", "replace", False, "if [ -z $ASCEND_VISIBLE_DEVICES ]; then",
      "host-side selector variable, renamed so the NPU list drives the container"),
    C("CUDA_VISIBLE_DEVICES='all'", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "'all' is an NVIDIA-runtime value; an explicit NPU list is used instead (unconfirmed that Ascend accepts 'all')"),
    C("docker run --gpus", "device_type", "replace", True,
      "docker run --device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc --ipc=host --rm -it \\",
      "--gpus needs the NVIDIA container toolkit; Ascend containers get /dev/davinci* plus the management devices"),
    C("--mount src=$(pwd),dst=/src,type=bind", "device_type", "npu_only_addition", True,
      "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi \\",
      "torch_npu inside the container needs the host driver libraries mounted"),
    C("-e NVIDIA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES", "env_var", "replace", False,
      "-e ASCEND_VISIBLE_DEVICES=$ASCEND_VISIBLE_DEVICES \\",
      "read only by the NVIDIA runtime; redundant with explicit --device mounts (Ascend Docker Runtime reads "
      "ASCEND_VISIBLE_DEVICES)"),
    C("-w /src chenrocks/uniter", "import_torch_npu", "replace", True, "-w /src uniter-npu:cann8.0-torch2.1",
      "the published image carries CUDA torch + NVIDIA apex + horovod; run the NPU image built from the ported Dockerfile"),
])

E("un_dockerfile", "Dockerfile", "explicit_replacement", "UNITER Dockerfile (NGC PyTorch + Horovod)", [
    C("FROM nvcr.io/nvidia/pytorch:19.05-py3", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
      "NGC image = CUDA torch + NVIDIA apex + NCCL; the NPU image needs CANN, then torch 2.1 + torch_npu + Ascend apex"),
    C("RUN pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch==2.1.0 torch-npu==2.1.0.post10 && git clone https://gitee.com/ascend/apex.git /tmp/apex && cd /tmp/apex && bash scripts/build.sh --python=3.9 && pip install dist/apex-*.whl",
      "the CANN base image has no torch; torch_npu and Ascend apex (amp for --fp16) replace what NGC bundled"),
    C("RUN HOROVOD_GPU_ALLREDUCE=NCCL", "distributed_framework", "removal", True, None,
      "HOROVOD_GPU_ALLREDUCE=NCCL needs CUDA/NCCL at build time, so pip install fails on the CANN image; the port uses "
      "torch.distributed + HCCL"),
    C("ENV NCCL_SOCKET_IFNAME=^docker0,lo", "env_var", "replace", False, "ENV HCCL_SOCKET_IFNAME=^docker0,lo",
      "NCCL NIC selection is ignored by HCCL; HCCL_SOCKET_IFNAME takes the same ^prefix exclusion syntax"),
    C("ENV NCCL_DEBUG=INFO", "env_var", "replace", False, "ENV ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL-only logging knob"),
])

# ---------------------------------------------------------------- bottom-up-attention feature extraction
E("bu_extract", "demo/detectron2_mscoco_proposal_maxnms.py", "transfer_to_npu",
  "py-bottom-up-attention (detectron2) demo/detectron2_mscoco_proposal_maxnms.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "one-off extraction script ported with automatic migration: torch_npu first"),
    C("=import tqdm", "import_torch_npu", "npu_only_addition", True, "from torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu maps detectron2's default MODEL.DEVICE='cuda' (Module.to/torch.device rewriting) and "
      "torch.cuda.empty_cache onto the NPU, so those lines stay"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
      "not covered by transfer_to_npu: --gpus is silently ignored and the extractor runs on NPU 0 "
      "(may need to move above the torch_npu import; unconfirmed when the runtime reads it)"),
])
