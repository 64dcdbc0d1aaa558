"""Labels for probe385 (temporal action localization: ActionFormer, TriDet, BMN, G-TAD, TadTR).

One C(...) per upstream line a careful porter would edit for Ascend/torch_npu (explicit port).
`required` = complete-port counterfactual (see README.md).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: register the NPU backend before any device use; mandatory for torch_npu < 2.5.1 "
               "(autoloaded since 2.5.1, still recommended)")
DP_NOTE = ("torch.nn.DataParallel is marked unsupported (✘) on Atlas A2/A3 in Ascend's 2.7.1 API list; "
           "run on the single configured NPU (or move to DDP+hccl)")

# ---------------------------------------------------------------- ActionFormer
E("af_train", "train.py", "explicit_replacement",
  "happyharrycn/actionformer_release train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = nn.DataParallel(model, device_ids=cfg['devices'])", "distributed_framework", "replace", True,
      "model = model.to(cfg['devices'][0])", DP_NOTE + "; checkpoints then carry no 'module.' prefix"),
    C("map_location = lambda storage, loc: storage.cuda(", "tensor_to_device", "replace", True,
      "map_location = lambda storage, loc: storage.npu(",
      "storage.cuda() needs a CUDA runtime; torch_npu generates .npu() for storages (privateuse1 methods)"),
])

E("af_eval", "eval.py", "explicit_replacement",
  "happyharrycn/actionformer_release eval.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = nn.DataParallel(model, device_ids=cfg['devices'])", "distributed_framework", "replace", True,
      "model = model.to(cfg['devices'][0])", DP_NOTE),
    C("map_location = lambda storage, loc: storage.cuda(cfg['devices'][0])", "tensor_to_device", "replace", True,
      "map_location = lambda storage, loc: storage.npu(cfg['devices'][0])",
      "restoring onto a CUDA storage fails on an NPU host"),
])

E("af_config", "libs/core/config.py", "explicit_replacement",
  "happyharrycn/actionformer_release libs/core/config.py (DEFAULTS dict)", [
    C("\"devices\": ['cuda:0']", "device_type", "replace", True,
      "\"devices\": ['npu:0'], # default: single npu",
      "default device list drives DataParallel/.to()/map_location in train.py and eval.py"),
])

E("af_train_utils", "libs/utils/train_utils.py", "explicit_replacement",
  "happyharrycn/actionformer_release libs/utils/train_utils.py", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed(seed) two lines above already seeds the privateuse1 device in recent torch "
      "(_seed_custom_device); torch.cuda.manual_seed is queued lazily and does not raise. Unconfirmed in knowledge"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same as above: redundant with torch.manual_seed; unconfirmed"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "train loop timing: torch.cuda.synchronize() lazily initialises CUDA and raises on an NPU host"),
    C("torch.cuda.synchronize()  # results are pulled back to cpu below", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # results are pulled back to cpu below",
      "validation loop timing: same failure as in train_one_epoch"),
])

E("af_meta_archs", "libs/modeling/meta_archs.py", "explicit_replacement",
  "happyharrycn/actionformer_release libs/modeling/meta_archs.py (PtTransformer)", [])

E("af_blocks", "libs/modeling/blocks.py", "explicit_replacement",
  "happyharrycn/actionformer_release libs/modeling/blocks.py", [])

E("af_nms", "libs/utils/nms.py", "explicit_replacement",
  "happyharrycn/actionformer_release libs/utils/nms.py (CPU 1D NMS wrapper)", [])

E("af_setup", "libs/utils/setup.py", "explicit_replacement",
  "happyharrycn/actionformer_release libs/utils/setup.py (CppExtension nms_1d_cpu)", [])

E("af_nms_cpp", "libs/utils/csrc/nms_cpu.cpp", "explicit_replacement",
  "happyharrycn/actionformer_release libs/utils/csrc/nms_cpu.cpp", [])

E("af_yaml", "configs/thumos_i3d.yaml", "explicit_replacement",
  "happyharrycn/actionformer_release configs/thumos_i3d.yaml", [])

# ---------------------------------------------------------------- TriDet
E("tridet_train", "train.py", "explicit_replacement",
  "dingfengshi/TriDet train.py (ActionFormer-derived, with in-loop validation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = nn.DataParallel(model, device_ids=cfg['devices'])", "distributed_framework", "replace", True,
      "model = model.to(cfg['devices'][0])", DP_NOTE),
    C("map_location=lambda storage, loc: storage.cuda(", "tensor_to_device", "replace", True,
      "map_location=lambda storage, loc: storage.npu(", "resume: storage.cuda() fails on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene only: torch.cuda.empty_cache() is a silent no-op when CUDA is not initialised"),
])

E("tridet_blocks", "libs/modeling/blocks.py", "explicit_replacement",
  "dingfengshi/TriDet libs/modeling/blocks.py (SGP layer)", [])

E("tridet_data_utils", "libs/datasets/data_utils.py", "explicit_replacement",
  "dingfengshi/TriDet libs/datasets/data_utils.py", [])

E("tridet_reqs", "requirements.txt", "explicit_replacement",
  "dingfengshi/TriDet requirements (torch 1.12 era)", [
    C("torch==1.12.1", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu wheel pairs with torch 1.12.1 (matrix has 1.11.0 and 2.1.0+); torch_npu requires the exact torch version"),
    C("torchvision==0.13.1", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "torchvision 0.13.1 pins torch 1.12.1; 0.16.0 pairs with torch 2.1 (torchvision_npu table)"),
    C("=tensorboard", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "the torch_npu wheel itself (inserted next to the torch pins; 2.1.0.post17 = v2.1.0-7.2.0, CANN 8.3.RC1)"),
])

E("tridet_sh", "tools/run_thumos.sh", "explicit_replacement",
  "dingfengshi/TriDet single-GPU train/eval launcher", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced in the login shell or container, so not strictly required"),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", True, "npu-smi info -t board -i ${GPU}",
      "nvidia-smi does not exist on an Ascend host; with set -e the script aborts here"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python train.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python train.py ./configs/thumos_i3d.yaml --output ${EXP}",
      "card is a script argument; CUDA_VISIBLE_DEVICES is ignored by the NPU runtime, so a non-zero GPU silently runs on npu:0"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python eval.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python eval.py ./configs/thumos_i3d.yaml ${CKPT_DIR}",
      "same as the training line"),
])

# ---------------------------------------------------------------- BMN
E("bmn_main", "main.py", "explicit_replacement",
  "JJBOY/BMN-Boundary-Matching-Network main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("input_data = input_data.cuda()", "tensor_to_device", "replace", True, "input_data = input_data.npu()",
      "train loop batch to device"),
    C("label_start = label_start.cuda()", "tensor_to_device", "replace", True, "label_start = label_start.npu()", "train loop"),
    C("label_end = label_end.cuda()", "tensor_to_device", "replace", True, "label_end = label_end.npu()", "train loop"),
    C("label_confidence = label_confidence.cuda()", "tensor_to_device", "replace", True,
      "label_confidence = label_confidence.npu()", "train loop"),
    C("label_start, label_end, bm_mask.cuda())", "tensor_to_device", "replace", True,
      "loss = bmn_loss_func(confidence_map, start, end, label_confidence, label_start, label_end, bm_mask.npu())",
      "BM mask must live on the same device as the confidence map"),
    C("bm_mask = bm_mask.cuda()", "tensor_to_device", "replace", True, "bm_mask = bm_mask.npu()", "validation"),
    C("input_data, label_confidence = input_data.cuda(), label_confidence.cuda()", "tensor_to_device", "replace", True,
      "input_data, label_confidence = input_data.npu(), label_confidence.npu()", "validation"),
    C("label_start, label_end = label_start.cuda(), label_end.cuda()", "tensor_to_device", "replace", True,
      "label_start, label_end = label_start.npu(), label_end.npu()", "validation"),
    C("if epoch_loss < model.module.tem_best_loss:", "distributed_framework", "replace", True,
      "if epoch_loss < model.tem_best_loss:",
      "consequence of dropping DataParallel: the bare model has no .module"),
    C("model.module.tem_best_loss = epoch_loss", "distributed_framework", "replace", True,
      "model.tem_best_loss = epoch_loss", "consequence of dropping DataParallel"),
    C("=model = torch.nn.DataParallel(model, device_ids=[0, 1]).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()", DP_NOTE + " (upstream hard-codes two GPUs)"),
    C("cuda()  # inference", "distributed_framework", "replace", True, "model = model.npu()  # inference",
      DP_NOTE + "; must match the training-side wrapping so state_dict keys agree"),
    C("checkpoint = torch.load(opt[\"checkpoint_path\"] + \"/BMN_best.pth.tar\")", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(opt[\"checkpoint_path\"] + \"/BMN_best.pth.tar\", map_location='npu')",
      "checkpoint written by the ported training restores to npu as-is; map_location only needed for GPU-saved checkpoints"),
    C("input_data = input_data.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input_data = input_data.npu(non_blocking=True)", "inference loop"),
])

E("bmn_models", "models.py", "explicit_replacement",
  "JJBOY/BMN-Boundary-Matching-Network models.py (BM layer as matmul with a fixed sample mask)", [])

E("bmn_loss", "loss_function.py", "explicit_replacement",
  "JJBOY/BMN-Boundary-Matching-Network loss_function.py", [
    C("u_smmask = torch.Tensor(np.random.rand(*gt_iou_map.shape)).cuda()", "tensor_to_device", "replace", True,
      "u_smmask = torch.Tensor(np.random.rand(*gt_iou_map.shape)).npu()", "random sampling mask must be on the NPU"),
    C("u_slmask = torch.Tensor(np.random.rand(*gt_iou_map.shape)).cuda()", "tensor_to_device", "replace", True,
      "u_slmask = torch.Tensor(np.random.rand(*gt_iou_map.shape)).npu()", "same"),
    C("torch.ones(*weights.shape).cuda()", "tensor_to_device", "replace", True,
      "loss = 0.5 * torch.sum(loss * torch.ones(*weights.shape).npu()) / torch.sum(weights)", "same"),
])

E("bmn_opts", "opts.py", "explicit_replacement", "JJBOY/BMN-Boundary-Matching-Network opts.py", [])
E("bmn_dataset", "dataset.py", "explicit_replacement", "JJBOY/BMN-Boundary-Matching-Network dataset.py", [])
E("bmn_post", "post_processing.py", "explicit_replacement",
  "JJBOY/BMN-Boundary-Matching-Network post_processing.py (multiprocess soft-NMS on CPU)", [])

# ---------------------------------------------------------------- G-TAD
E("gtad_train", "gtad_train.py", "explicit_replacement", "frostinassiky/gtad gtad_train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "redundant with torch.manual_seed(seed) on the line above; silently queued without CUDA. Unconfirmed"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same; unconfirmed"),
    C("checkpoint = torch.load(checkpoint)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(checkpoint, map_location='npu')",
      "resume from an NPU-written checkpoint works as-is; needed only for GPU-saved checkpoints"),
    C("confidence_map, start, end = model(input_data.cuda())", "tensor_to_device", "replace", True,
      "confidence_map, start, end = model(input_data.npu())", "train loop"),
    C("label_start = label_start.cuda()", "tensor_to_device", "replace", True, "label_start = label_start.npu()", "train loop"),
    C("label_end = label_end.cuda()", "tensor_to_device", "replace", True, "label_end = label_end.npu()", "train loop"),
    C("label_confidence = label_confidence.cuda()", "tensor_to_device", "replace", True,
      "label_confidence = label_confidence.npu()", "train loop"),
    C("input_data = input_data.cuda()", "tensor_to_device", "replace", True, "input_data = input_data.npu()", "validation"),
    C("subgraph_loss_func(confidence_map, label_confidence.cuda(), bm_mask)", "tensor_to_device", "replace", True,
      "subgraph_loss = subgraph_loss_func(confidence_map, label_confidence.npu(), bm_mask)", "validation"),
    C("node_loss_func(start, end, label_start.cuda(), label_end.cuda())", "tensor_to_device", "replace", True,
      "node_loss = node_loss_func(start, end, label_start.npu(), label_end.npu())", "validation"),
    C("model = torch.nn.DataParallel(model, device_ids=list(range(opt['n_gpu']))).cuda()", "distributed_framework",
      "replace", True, "model = model.npu()", DP_NOTE),
    C("bm_mask = mask.cuda()", "tensor_to_device", "replace", True, "bm_mask = mask.npu()", "BM mask used in the losses"),
])

E("gtad_inference", "gtad_inference.py", "explicit_replacement", "frostinassiky/gtad gtad_inference.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = torch.nn.DataParallel(model, device_ids=list(range(opt['n_gpu']))).cuda()", "distributed_framework",
      "replace", True, "model = model.npu()", DP_NOTE + "; must match training-side wrapping (state_dict keys)"),
    C("checkpoint = torch.load(opt[\"output\"] + \"/GTAD_best.pth.tar\")", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(opt[\"output\"] + \"/GTAD_best.pth.tar\", map_location='npu')",
      "NPU-written checkpoint restores as-is; needed only for GPU-saved (e.g. released) checkpoints"),
    C("input_data = input_data.cuda()", "tensor_to_device", "replace", True, "input_data = input_data.npu()", "inference loop"),
])

E("gtad_models", "gtad_lib/models.py", "explicit_replacement",
  "frostinassiky/gtad gtad_lib/models.py (GCNeXt, SGAlign)", [
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "DGCNN-style knn index base: hard-coded CUDA device, mixed with NPU idx_knn it fails"),
    C("if not self.anchors.is_cuda:", "device_type", "replace", False, "if not self.anchors.is_npu:",
      "inert once the next line is ported: .npu() on an NPU tensor returns it unchanged, so the guard only saves a no-op call"),
    C("self.anchors = self.anchors.cuda()", "tensor_to_device", "replace", True,
      "self.anchors = self.anchors.npu()", "anchors (RoIs for Align1D) must be on the feature's device"),
])

E("gtad_align", "gtad_lib/align.py", "kernel_rewrite",
  "frostinassiky/gtad gtad_lib/align.py (autograd wrapper of the Align1D CUDA op)", [
    C("import Align1D as _align_1d", "custom_cuda_extension", "replace", True,
      "from gtad_lib.align1d_torch import align1d_torch  # pure-PyTorch 1D RoIAlign (new file)",
      "the Align1D extension is CUDA-only (nvcc build); replaced by linear-interpolation sampling written in torch ops"),
    C("align1d = _Align1D.apply", "custom_cuda_extension", "replace", True, "align1d = align1d_torch",
      "route Align1DLayer to the torch implementation (autograd handles backward); _Align1D becomes dead code"),
    C("input = torch.tensor([[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10.]]]).cuda()", "tensor_to_device", "replace", False,
      "input = torch.tensor([[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10.]]]).npu()", "__main__ self-test only"),
    C("proposal = torch.tensor([[0, -0.5, 9.5], [0, 0.2, 9.2]]).cuda()", "tensor_to_device", "replace", False,
      "proposal = torch.tensor([[0, -0.5, 9.5], [0, 0.2, 9.2]]).npu()", "__main__ self-test only"),
])

E("gtad_setup", "gtad_lib/setup.py", "kernel_rewrite",
  "frostinassiky/gtad gtad_lib/setup.py (CUDAExtension Align1D)", [
    C("CUDAExtension(", "custom_cuda_extension", "removal", False, None,
      "with the pure-PyTorch Align1D nothing needs building; drop the ext_modules entry (nvcc build fails on an NPU host, "
      "but the ported code never imports it)"),
])

# ---------------------------------------------------------------- TadTR
E("tadtr_main", "main.py", "explicit_replacement", "xlliu7/TadTR main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "torch.device(args.device) drives model.to / prefetcher / eval tensors"),
])

E("tadtr_misc", "util/misc.py", "explicit_replacement",
  "xlliu7/TadTR util/misc.py (DETR distributed helpers)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "device must change; dtype too: fp64 is not in the listed all_reduce dtypes on NPU (bf16/fp16/fp32/int32/int64/bool)"),
    C("tensor = torch.ByteTensor(storage).to(\"cuda\")", "tensor_to_device", "replace", True,
      "tensor = torch.ByteTensor(storage).to(\"npu\")",
      "pickled all_gather buffer; note uint8 is not in the listed all_gather dtypes (unconfirmed whether it works)"),
    C("local_size = torch.tensor([tensor.numel()], device=\"cuda\")", "device_type", "replace", True,
      "local_size = torch.tensor([tensor.numel()], device=\"npu\")", "HCCL collectives need NPU tensors"),
    C("size_list = [torch.tensor([0], device=\"cuda\") for _ in range(world_size)]", "device_type", "replace", True,
      "size_list = [torch.tensor([0], device=\"npu\") for _ in range(world_size)]", "same"),
    C("tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"cuda\"))", "device_type", "replace", True,
      "tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"npu\"))", "same"),
    C("padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"cuda\")", "device_type",
      "replace", True, "padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"npu\")", "same"),
    C("with_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False, "with_mem = torch.npu.is_available()",
      "unported it is False on an NPU host: the log line just omits the memory column"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "once with_mem is true, the CUDA counter reports 0 MB for an uninitialised CUDA context (silently wrong)"),
    C("os.environ['LOCAL_SIZE'] = str(torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "os.environ['LOCAL_SIZE'] = str(torch.npu.device_count())",
      "would record 0; only read by get_local_size(), which nothing on the training path calls"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "SLURM branch: 0 devices -> proc_id % 0 raises ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "binds the process to its local NPU"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is unavailable; HCCL is the Ascend collective backend"),
])

E("tadtr_engine", "engine.py", "explicit_replacement", "xlliu7/TadTR engine.py", [])

E("tadtr_prefetch", "datasets/data_prefetcher.py", "explicit_replacement",
  "xlliu7/TadTR datasets/data_prefetcher.py (from Deformable DETR)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "side copy stream; torch.cuda.Stream() initialises CUDA and fails"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "an NPU stream cannot be entered through torch.cuda.stream"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "compute stream must wait for the copy stream"),
    C("samples.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "samples.record_stream(torch.npu.current_stream())", "caching-allocator bookkeeping across streams"),
    C("v.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "v.record_stream(torch.npu.current_stream())", "same"),
])

E("tadtr_tda", "models/ops/temporal_deform_attn/temporal_deform_attn.py", "kernel_rewrite",
  "xlliu7/TadTR temporal deformable attention module (Deformable-DETR MSDeformAttn in 1D)", [
    C("import TDA as TDA_cuda", "custom_cuda_extension", "removal", True, None,
      "compiled CUDA op cannot be built on Ascend; module-level import raises ImportError. The forward already "
      "falls back to deform_attn_core_pytorch (grid_sample) when the query is not a CUDA tensor"),
])

E("tadtr_ops_setup", "models/ops/setup.py", "kernel_rewrite",
  "xlliu7/TadTR models/ops/setup.py (Deformable-DETR style CUDAExtension build)", [
    C("raise NotImplementedError('Cuda is not availabel')", "custom_cuda_extension", "replace", False,
      "return []  # no TDA kernels on Ascend: temporal_deform_attn.py uses deform_attn_core_pytorch",
      "build step is not needed once the TDA import is dropped; edit only so the install instructions do not abort"),
])

E("tadtr_opts", "opts.py", "explicit_replacement", "xlliu7/TadTR opts.py (EasyDict defaults)", [])

E("tadtr_sh", "scripts/run_parallel.sh", "explicit_replacement",
  "xlliu7/TadTR scripts/run_parallel.sh (torch.distributed.launch)", [
    C("=set -x", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; commonly already sourced"),
    C("if [ -z \"${CUDA_VISIBLE_DEVICES}\" ]; then", "env_var", "replace", False,
      "if [ -z \"${ASCEND_RT_VISIBLE_DEVICES}\" ]; then",
      "default selection equals the first NGPU cards the launcher uses anyway; a caller's ASCEND_RT_VISIBLE_DEVICES is still honoured"),
    C("export CUDA_VISIBLE_DEVICES=$(seq", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU-1)))",
      "same selection as the default (cards 0..NGPU-1); inert unported"),
])
