"""Labels for probe479 (scene-graph generation / visual relationship detection, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# --------------------------------------------------------------------------------------------
# rowanz/neural-motifs (PyTorch 0.3-era, cffi CUDA kernels, hand-rolled multi-GPU via Blob)
# --------------------------------------------------------------------------------------------
E("motifs_train_rels", "models/train_rels.py", "explicit_replacement",
  "rowanz/neural-motifs models/train_rels.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script: registers the npu device before the detector is built"),
    C("ckpt = torch.load(conf.ckpt)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(conf.ckpt, map_location='cpu')",
      "detector checkpoints were saved from CUDA tensors; without map_location torch.load tries to restore "
      "them on a CUDA device and fails on an NPU host"),
    C("=detector.cuda()", "tensor_to_device", "replace", True, "detector.npu()", "model placement"),
])

E("motifs_rel_model", "lib/rel_model.py", "explicit_replacement",
  "rowanz/neural-motifs lib/rel_model.py (LinearizedContext / RelModel)", [
    C("from lib.fpn.roi_align.functions.roi_align import RoIAlignFunction", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import roi_align",
      "RoIAlignFunction wraps a cffi-built CUDA kernel (_ext.roi_align) that cannot be built without nvcc; "
      "torchvision roi_align (torchvision_npu provides the NPU kernel)"),
    C("from lib.lstm.highway_lstm_cuda.alternating_highway_lstm import AlternatingHighwayLSTM", "custom_cuda_extension",
      "replace", True,
      "from lib.lstm.highway_lstm_torch import AlternatingHighwayLSTM",
      "the alternating highway LSTM is a CUDA-only cffi kernel; needs a pure-PyTorch re-implementation"),
    C("inds = torch.LongTensor(inds).cuda(im_inds.get_device())", "tensor_to_device", "replace", True,
      "inds = torch.LongTensor(inds).npu(im_inds.get_device())", "index tensor must live with im_inds"),
    C("scores = torch.FloatTensor(np.random.rand(batch_idx.size(0))).cuda(batch_idx.get_device())",
      "tensor_to_device", "replace", True,
      "scores = torch.FloatTensor(np.random.rand(batch_idx.size(0))).npu(batch_idx.get_device())",
      "only on the -order random path, but a reachable configuration"),
    C("feature_pool = RoIAlignFunction(self.pooling_size, self.pooling_size, spatial_scale=1 / 16)(features, rois)",
      "custom_cuda_extension", "replace", True,
      "feature_pool = roi_align(features, rois, output_size=(self.pooling_size, self.pooling_size), spatial_scale=1 / 16, sampling_ratio=0)",
      "call site of the CUDA-only RoIAlign; rois are (batch_idx, x1, y1, x2, y2) as torchvision expects"),
    C("replicas = nn.parallel.replicate(self, devices=list(range(self.num_gpus)))", "unsupported_op_workaround",
      "replace", True,
      "raise NotImplementedError('in-process multi-device replicate is not supported on NPU; use -ngpu 1')",
      "nn.parallel.replicate broadcasts through torch.cuda.comm (DataParallel machinery, marked unsupported "
      "in Ascend's API list); the -ngpu default of the project is >1, so this path is live"),
])

E("motifs_pytorch_misc", "lib/pytorch_misc.py", "explicit_replacement",
  "rowanz/neural-motifs lib/pytorch_misc.py", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "False on an NPU host, so the BOS token row would silently stay on the CPU and clash with NPU tensors"),
    C("input_tok = input_tok.cuda()", "tensor_to_device", "replace", True, "input_tok = input_tok.npu()", ""),
    C("v = v.cuda()", "tensor_to_device", "replace", True, "v = v.npu()", "np_to_variable(is_cuda=True) default"),
    C("rand_idx = torch.LongTensor(rand_idx).cuda(tensor.get_device())", "tensor_to_device", "replace", True,
      "rand_idx = torch.LongTensor(rand_idx).npu(tensor.get_device())", ""),
])

E("motifs_decoder_rnn", "lib/lstm/decoder_rnn.py", "explicit_replacement",
  "rowanz/neural-motifs lib/lstm/decoder_rnn.py", [
    C("from .highway_lstm_cuda.alternating_highway_lstm import block_orthogonal", "custom_cuda_extension", "replace",
      True, "from .highway_lstm_torch import block_orthogonal",
      "block_orthogonal itself is pure Python, but importing it pulls in the cffi CUDA module (_ext.highway_lstm_layer), "
      "which does not exist on an NPU build"),
])

E("motifs_nms_fn", "lib/fpn/nms/functions/nms.py", "explicit_replacement",
  "rowanz/neural-motifs lib/fpn/nms/functions/nms.py", [
    C("from .._ext import nms", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import nms as tv_nms",
      "cffi CUDA NMS kernel; torchvision nms (NPU kernel via torchvision_npu)"),
    C("return inds, torch.LongTensor(im_per).cuda(scores.get_device())", "tensor_to_device", "replace", True,
      "return inds, torch.LongTensor(im_per).to(scores.device)", ""),
    C("num_out = nms.nms_apply(keep, boxes_sorted, nms_thresh)", "custom_cuda_extension", "replace", True,
      "keep = tv_nms(boxes_sorted, vs[:boxes_sorted.size(0)], nms_thresh); num_out = keep.size(0)",
      "call site of the CUDA kernel"),
    C("keep = idx[keep.cuda(scores.get_device())]", "tensor_to_device", "replace", True,
      "keep = idx[keep.to(scores.device)]", ""),
])

E("motifs_nms_build", "lib/fpn/nms/build.py", "explicit_replacement",
  "rowanz/neural-motifs lib/fpn/nms/build.py (torch.utils.ffi build script)", [])

E("motifs_makefile", "Makefile", "explicit_replacement",
  "rowanz/neural-motifs Makefile (nvcc + cffi builds)", [
    C("export PATH := /usr/local/cuda-9.0/bin:$(PATH)", "env_var", "removal", False, None,
      "inert on an NPU host (directory absent); cleanup"),
    C("cd lib/fpn/nms/src/cuda; nvcc", "custom_cuda_extension", "removal", True, None,
      "no nvcc on an Ascend host; NMS now comes from torchvision"),
    C("cd lib/fpn/nms; python build.py", "custom_cuda_extension", "removal", True, None,
      "build.py links src/cuda/nms.cu.o, which no longer exists; `make` would stop here"),
    C("cd lib/fpn/roi_align/src/cuda; nvcc", "custom_cuda_extension", "removal", True, None, "RoIAlign from torchvision"),
    C("cd lib/fpn/roi_align; python build.py", "custom_cuda_extension", "removal", True, None,
      "links the missing roi_align.cu.o"),
    C("cd lib/lstm/highway_lstm_cuda; ./make.sh", "custom_cuda_extension", "removal", True, None,
      "make.sh runs nvcc for the highway LSTM kernel"),
])

E("motifs_blob", "dataloaders/blob.py", "explicit_replacement",
  "rowanz/neural-motifs dataloaders/blob.py (Blob.scatter)", [
    C("return x.cuda(self.primary_gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "return x.npu(self.primary_gpu, non_blocking=True)", "single-device path"),
    C("return torch.nn.parallel.scatter_gather.Scatter.apply(", "unsupported_op_workaround", "replace", True,
      "raise NotImplementedError('multi-device Scatter is not supported on NPU; use -ngpu 1')",
      "Scatter goes through torch.cuda.comm.scatter, listed as unsupported for NPU"),
    C("self.gt_classes_primary = self.gt_classes.cuda(self.primary_gpu, non_blocking=True)", "tensor_to_device",
      "replace", True, "self.gt_classes_primary = self.gt_classes.npu(self.primary_gpu, non_blocking=True)", ""),
    C("self.gt_boxes_primary = self.gt_boxes.cuda(self.primary_gpu, non_blocking=True)", "tensor_to_device",
      "replace", True, "self.gt_boxes_primary = self.gt_boxes.npu(self.primary_gpu, non_blocking=True)", ""),
    C("self.train_anchor_labels = self.train_anchor_labels.cuda(", "tensor_to_device", "replace", True,
      "self.train_anchor_labels = self.train_anchor_labels.npu(self.primary_gpu, non_blocking=True)", ""),
    C("self.train_anchors = self.train_anchors.cuda(", "tensor_to_device", "replace", True,
      "self.train_anchors = self.train_anchors.npu(self.primary_gpu, non_blocking=True)", ""),
    C("self.gt_rels = self.gt_rels.cuda(self.primary_gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "self.gt_rels = self.gt_rels.npu(self.primary_gpu, non_blocking=True)", ""),
])

E("motifs_train_sh", "scripts/train_motifnet.sh", "explicit_replacement",
  "rowanz/neural-motifs scripts/train_models_sgcls.sh", [
    C("export CUDA_VISIBLE_DEVICES=$1", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$1",
      "the script selects one device per model; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, "
      "so every run would land on device 0"),
])


# --------------------------------------------------------------------------------------------
# KaihuaTang/Scene-Graph-Benchmark.pytorch (maskrcnn-benchmark based; MOTIFS / VCTree / TDE)
# --------------------------------------------------------------------------------------------
E("sgb_train", "tools/relation_train_net.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch tools/relation_train_net.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "after the setup_environment import, which must stay first"),
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,",
      "logging only: CUDA is never initialised on an NPU host, so the CUDA call returns 0 instead of raising"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is uninitialised; the NPU cache is simply not released (memory headroom only)"),
    C("torch.cuda.empty_cache()  # free the gathered results", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free the gathered results before training resumes", "as above"),
    C("torch.cuda.empty_cache()  # release training buffers", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release training buffers before testing", "as above"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises on a torch build without CUDA"),
    C('backend="nccl", init_method="env://"', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://"', "NCCL is not available on Ascend"),
])

E("sgb_test", "tools/relation_test_net.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch tools/relation_test_net.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", ""),
    C('backend="nccl", init_method="env://"', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://"', ""),
])

E("sgb_defaults", "maskrcnn_benchmark/config/defaults.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch maskrcnn_benchmark/config/defaults.py", [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True, '_C.MODEL.DEVICE = "npu"',
      "every torch.device(cfg.MODEL.DEVICE) / model.to(cfg.MODEL.DEVICE) in the code base reads this"),
])

E("sgb_setup", "setup.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch setup.py (maskrcnn_benchmark._C)", [])

E("sgb_nms", "maskrcnn_benchmark/layers/nms.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch maskrcnn_benchmark/layers/nms.py", [
    C("=from maskrcnn_benchmark import _C", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import nms as _tv_nms",
      "supplies the replacement used below (the CPU-only _C would still import)"),
    C("nms = amp.float_function(_C.nms)", "custom_cuda_extension", "replace", True,
      "nms = amp.float_function(_tv_nms)",
      "on an NPU host _C is built CPU-only; its nms dispatches on is_cuda() and would run the CPU kernel on "
      "device memory. torchvision nms has the same (boxes, scores, thresh) signature"),
])

E("sgb_roi_align", "maskrcnn_benchmark/layers/roi_align.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch maskrcnn_benchmark/layers/roi_align.py", [
    C("=from maskrcnn_benchmark import _C", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import roi_align as _tv_roi_align", "replacement import"),
    C("roi_align = _ROIAlign.apply", "custom_cuda_extension", "replace", True,
      "roi_align = _tv_roi_align",
      "same positional signature (input, rois, output_size, spatial_scale, sampling_ratio), aligned=False "
      "like the legacy kernel; NPU kernel via torchvision_npu"),
])

E("sgb_comm", "maskrcnn_benchmark/utils/comm.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch maskrcnn_benchmark/utils/comm.py", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "HCCL all_gather needs device tensors"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', ""),
    C('size_list = [torch.LongTensor([0]).to("cuda")', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', ""),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', ""),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', ""),
])

E("sgb_inference", "maskrcnn_benchmark/engine/inference.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch maskrcnn_benchmark/engine/inference.py", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "the guard only skips it for DEVICE == 'cpu', so with DEVICE='npu' the CUDA call runs and raises; "
      "also needed so the inference timer measures finished NPU work"),
    C("torch.cuda.empty_cache()  # hand cached blocks back", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # hand cached blocks back before evaluation", "as above"),
    C('device="cuda",', "device_type", "replace", False, 'device="npu",',
      "default argument; both callers pass cfg.MODEL.DEVICE explicitly"),
])

E("sgb_treelstm", "maskrcnn_benchmark/modeling/roi_heads/relation_head/utils_treelstm.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch relation_head/utils_treelstm.py (VCTree tree-LSTM)", [
    C("left_c = torch.tensor([0.0] * self.h_dim).float().cuda()", "tensor_to_device", "replace", True,
      "left_c = torch.tensor([0.0] * self.h_dim).float().npu().view(1, -1)", "leaf state"),
    C("left_h = torch.tensor([0.0] * self.h_dim).float().cuda()", "tensor_to_device", "replace", True,
      "left_h = torch.tensor([0.0] * self.h_dim).float().npu().view(1, -1)", ""),
    C("right_c = torch.tensor([0.0] * self.h_dim).float().cuda()", "tensor_to_device", "replace", True,
      "right_c = torch.tensor([0.0] * self.h_dim).float().npu().view(1, -1)", ""),
    C("right_h = torch.tensor([0.0] * self.h_dim).float().cuda()", "tensor_to_device", "replace", True,
      "right_h = torch.tensor([0.0] * self.h_dim).float().npu().view(1, -1)", ""),
    C("root_c = torch.tensor([0.0] * self.h_dim).float().cuda()", "tensor_to_device", "replace", True,
      "root_c = torch.tensor([0.0] * self.h_dim).float().npu().view(1, -1)", "root state of the backward pass"),
    C("root_h = torch.tensor([0.0] * self.h_dim).float().cuda()", "tensor_to_device", "replace", True,
      "root_h = torch.tensor([0.0] * self.h_dim).float().npu().view(1, -1)", ""),
])

E("sgb_vctree", "maskrcnn_benchmark/modeling/roi_heads/relation_head/model_vctree.py", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch relation_head/model_vctree.py", [])

E("sgb_sh", "scripts/train_vctree_predcls.sh", "explicit_replacement",
  "KaihuaTang/Scene-Graph-Benchmark.pytorch README training command (VCTree PredCls)", [
    C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already exported by the image or login profile, so not counted as required"),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "with devices 0,1 and nproc_per_node=2 the ranks land on npu:0/npu:1 either way; kept for intent"),
])


# --------------------------------------------------------------------------------------------
# yrcong/RelTR (DETR-style one-stage SGG)
# --------------------------------------------------------------------------------------------
E("reltr_main", "main.py", "explicit_replacement", "yrcong/RelTR main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "feeds torch.device(args.device); the README commands never pass --device"),
    C("optimizer = torch.optim.AdamW(param_dicts, lr=args.lr,", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_dicts, lr=args.lr,",
      "performance only (msFmkTransplt advice; the fused version costs extra memory)"),
])

E("reltr_misc", "util/misc.py", "explicit_replacement", "yrcong/RelTR util/misc.py (DETR helpers)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace",
      True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "HCCL all_reduce needs a device tensor; whether HCCL reduces float64 on every product is unconfirmed "
      "in the knowledge base (float32 is the fallback)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', ""),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', ""),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", "replace",
      True, 'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', ""),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device",
      "replace", True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', ""),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device",
      "replace", True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")', ""),
    C("if torch.cuda.is_available():  # add a memory column on GPU", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # add a memory column on NPU",
      "selects the log format with 'max mem'; False on an NPU host, so memory is just not logged"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "same logging switch at print time"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host, so the modulo raises ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", ""),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'", ""),
])

E("reltr_engine", "engine.py", "explicit_replacement", "yrcong/RelTR engine.py (train_one_epoch / evaluate)", [])

E("reltr_inference", "inference.py", "explicit_replacement", "yrcong/RelTR inference.py (single-image demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "stand-alone entry script"),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "also drives map_location=args.device in torch.load, which then needs no edit of its own"),
])


# --------------------------------------------------------------------------------------------
# Scarecrow0/SGTR (cvpods / detectron2-style code base)
# --------------------------------------------------------------------------------------------
E("sgtr_launch", "cvpods/engine/launch.py", "explicit_replacement",
  "Scarecrow0/SGTR cvpods/engine/launch.py (detectron2-style mp.spawn launcher)", [
    C('assert torch.cuda.is_available(), "cuda is not available.', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "npu is not available. Please check your installation."',
      "False on an NPU host, so every spawned worker dies on the assert"),
    C('backend="NCCL", init_method=dist_url', "dist_backend", "replace", True,
      'backend="hccl", init_method=dist_url, world_size=world_size, rank=global_rank',
      "upper-case spelling is still the NCCL backend"),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "device_count() is 0 without CUDA"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)", ""),
])

E("sgtr_comm", "cvpods/utils/distributed/comm.py", "explicit_replacement",
  "Scarecrow0/SGTR cvpods/utils/distributed/comm.py", [
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", False,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "keeps the original intent (gather pickled objects over a CPU gloo group); unchanged, the gather "
      "just runs over HCCL on device buffers, which still works once the lines below are ported"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", True,
      'assert backend in ["gloo", "nccl", "hccl"]', "the backend string is 'hccl' on Ascend, so the assert fires"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", True,
      'device = torch.device("cpu" if backend == "gloo" else "npu")', ""),
])

E("sgtr_base_config", "cvpods/configs/base_config.py", "explicit_replacement",
  "Scarecrow0/SGTR cvpods/configs/base_config.py", [
    C('DEVICE="cuda",', "device_type", "replace", True, 'DEVICE="npu",',
      "MODEL.DEVICE drives model placement and input transfer in the meta-architectures"),
])

E("sgtr_events", "cvpods/utils/dump/events.py", "explicit_replacement",
  "Scarecrow0/SGTR cvpods/utils/dump/events.py (CommonMetricPrinter)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "memory column of the training log; False on an NPU host so the column is just left empty"),
    C("max_mem_mb = torch.cuda.max_memory_allocated() / 1024.0 / 1024.0", "torch_cuda_api", "replace", False,
      "max_mem_mb = torch.npu.max_memory_allocated() / 1024.0 / 1024.0", "logging only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats()", "logging only"),
])


# --------------------------------------------------------------------------------------------
# Jingkang50/OpenPSG (PSG dataset; PSGTR / PSGFormer on mmdet 2.x + mmcv-full 1.x)
# --------------------------------------------------------------------------------------------
E("psg_train", "tools/train.py", "explicit_replacement", "Jingkang50/OpenPSG tools/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", "replace", True,
      "torch.npu.set_device(int(os.environ['LOCAL_RANK'])); torch.distributed.init_process_group(**cfg.dist_params)",
      "mmcv 1.4's init_dist('pytorch') calls torch.cuda.set_device(rank % torch.cuda.device_count()), which fails "
      "without CUDA; later mmcv 1.x adds an NPU branch (unconfirmed in the knowledge base)"),
])

E("psg_test", "tools/test.py", "explicit_replacement", "Jingkang50/OpenPSG tools/test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
      "from mmdet.utils import build_dp, build_ddp",
      "device-dispatching wrappers of newer mmdet 2.x (needs the mmdet/mmcv upgrade from the Dockerfile; "
      "their NPU path is unconfirmed in the knowledge base)"),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", "replace", True,
      "torch.npu.set_device(int(os.environ['LOCAL_RANK'])); torch.distributed.init_process_group(**cfg.dist_params)",
      "as in tools/train.py"),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = build_dp(model, 'npu', device_ids=[0])",
      "MMDataParallel scatters DataContainer batches to CUDA devices"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True, "model = build_ddp(", ""),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(), 'npu',", ""),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", ""),
])

E("psg_runtime", "configs/_base_/default_runtime.py", "explicit_replacement",
  "Jingkang50/OpenPSG configs/_base_/default_runtime.py", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "inherited by every PSGTR / PSGFormer / two-stage config"),
])

E("psg_docker", "docker/Dockerfile", "explicit_replacement",
  "Jingkang50/OpenPSG-style docker/Dockerfile (mmdet 2.x template)", [
    C('ARG PYTORCH="1.7.1"', "env_var", "removal", False, None,
      "only fed the old FROM line (a pre-FROM ARG is out of scope afterwards); torch is now pinned in the pip line"),
    C('ARG CUDA="11.0"', "env_var", "removal", False, None, "unused once the base image changes"),
    C('ARG CUDNN="8"', "env_var", "removal", False, None, "unused once the base image changes"),
    C("FROM pytorch/pytorch:", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CANN base image (tag modelled on Ascend/cann-container-image; registry path unconfirmed)"),
    C('ENV TORCH_CUDA_ARCH_LIST=', "env_var", "removal", False, None, "inert without nvcc"),
    C('ENV TORCH_NVCC_FLAGS=', "env_var", "removal", False, None, "inert without nvcc"),
    C("RUN pip install --no-cache-dir --upgrade pip wheel setuptools", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch_npu==2.1.0.post17 torchvision==0.16.0",
      "the CANN image ships no PyTorch; torch 1.7 has no torch_npu, 2.1.0 pairs with torch_npu 2.1.0.post17 on CANN 8.3.RC1"),
    C("RUN pip install --no-cache-dir mmcv-full==1.4.3 -f", "custom_cuda_extension", "replace", True,
      "RUN git clone -b v1.7.2 https://github.com/open-mmlab/mmcv.git /mmcv && cd /mmcv && MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir -e .",
      "the cu110 wheel's mmcv._ext links libcudart; mmcv's NPU build flag is unconfirmed in the knowledge base"),
    C("RUN pip install --no-cache-dir mmdet==2.20.0", "distributed_framework", "replace", True,
      "RUN pip install --no-cache-dir mmdet==2.28.2",
      "build_dp/build_ddp used by the ported tools/test.py arrive in later mmdet 2.x (unconfirmed NPU path)"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None, "OpenPSG itself builds no CUDA extension; inert"),
])

E("psg_sh", "scripts/psgtr/train_psgtr_r50.sh", "explicit_replacement",
  "Jingkang50/OpenPSG scripts/psgtr/train_psgtr_r50.sh (slurm launcher)", [
    C("srun -p dsta --mpi=pmi2 --gres=gpu:${GPUS_PER_NODE}", "device_type", "replace", False,
      "srun -p dsta --mpi=pmi2 --gres=npu:${GPUS_PER_NODE} --ntasks=${GPUS} \\",
      "GRES names are site-defined; an NPU partition may not call them gpu (unconfirmed)"),
])
