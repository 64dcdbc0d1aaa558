"""Labels for probe447 (malware / network-intrusion detection with deep learning, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit, written as an explicit torch_npu port.
`required` = with every other labelled line already ported, would leaving this one unchanged fail,
compute something wrong, or silently do the wrong thing on an NPU host?
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: load the NPU backend before any torch.npu / 'npu' use (mandatory before torch_npu 2.5.1, "
               "autoloaded afterwards; the pinned torch versions of this project predate autoload)")

# ---------------------------------------------------------------------------------------------
# 1. MalConv2 (FutureComputing4AI/MalConv2): low-memory MalConv / MalConvGCT
# ---------------------------------------------------------------------------------------------

E("mc2_lowmemconv", "LowMemConv.py", "explicit_replacement",
  "FutureComputing4AI/MalConv2 LowMemConv.py (chunked two-pass temporal max-pool base class)", [
    C("self.pooling = nn.AdaptiveMaxPool1d(1)", "unsupported_op_workaround", "replace", False,
      "self.pooling = lambda t: torch.amax(t, dim=-1, keepdim=True)",
      "nn.AdaptiveMaxPool1d is marked unsupported in Ascend's 2.7.1 API list and in msFmkTransplt's list, but aten lowers "
      "it to adaptive_max_pool2d, which has an NPU kernel; worst case a CPU fallback. Global max == amax. Unconfirmed, "
      "so performance-only"),
])

E("mc2_gct", "MalConvGCT_nocat.py", "explicit_replacement",
  "FutureComputing4AI/MalConv2 MalConvGCT_nocat.py (global channel gating model + __main__ smoke test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the module's __main__ smoke test runs as a script and selects an 'npu' device"),
    C('dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'dev = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "torch.cuda.is_available() is False on an NPU host: the smoke test would silently run on CPU"),
])

E("mc2_loader", "binaryLoader.py", "explicit_replacement",
  "FutureComputing4AI/MalConv2 binaryLoader.py (raw-byte dataset, chunk sampler, pad collate)", [])

E("mc2_train", "MalConvGCTTrain.py", "explicit_replacement",
  "FutureComputing4AI/MalConv2 MalConvGCTTrain.py (argparse training script, --gpus, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "otherwise the model silently trains on CPU"),
    C("model = nn.DataParallel(model, device_ids=GPUS)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Ascend (API list marks it unsupported; mstt README: use DDP). "
      "Minimal port runs on one NPU; multi-NPU needs a DDP+hccl rewrite"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "torch.cuda.reset_peak_memory_stats() resolves the current CUDA device and raises when CUDA is absent"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a silent no-op when CUDA is not initialised; only affects the OOM-retry path"),
    C('epoch_stats["peak_mem_mb"] = torch.cuda.max_memory_allocated() / 2 ** 20', "torch_cuda_api", "replace", False,
      'epoch_stats["peak_mem_mb"] = torch.npu.max_memory_allocated() / 2 ** 20',
      "returns 0 without CUDA (memory_stats is empty), so the CSV column is wrong but training is unaffected"),
])

E("mc2_score", "score_files.py", "explicit_replacement",
  "FutureComputing4AI/MalConv2 usage pattern: score files with the released GPU-trained MalConvGCT checkpoint", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_gpu = torch.cuda.is_available() and not args.cpu", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available() and not args.cpu",
      "False on an NPU host: scoring silently falls back to CPU"),
    C('device = torch.device("cuda" if use_gpu else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_gpu else "cpu")', "device string"),
    C("ckpt = torch.load(args.checkpoint)", "tensor_to_device", "replace", True,
      'ckpt = torch.load(args.checkpoint, map_location="cpu")',
      "the released checkpoint holds CUDA tensors; deserialising them without CUDA raises. The model is moved with .to(device) right after"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises without it"),
    C('print("GPU:", torch.cuda.get_device_name(device))', "torch_cuda_api", "replace", True,
      'print("NPU:", torch.npu.get_device_name(device))',
      "get_device_name initialises CUDA and raises; also given an npu device"),
])

# ---------------------------------------------------------------------------------------------
# 2. MalConv-Pytorch (Alexander-H-Liu/MalConv-Pytorch): original 2MB MalConv
# ---------------------------------------------------------------------------------------------

E("mcp_train", "train.py", "explicit_replacement",
  "Alexander-H-Liu/MalConv-Pytorch train.py (YAML config, use_gpu flag, .cuda() chains)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("malconv = malconv.cuda()", "tensor_to_device", "replace", True, "malconv = malconv.npu()",
      "model parameters must move to the NPU"),
    C("bce_loss = bce_loss.cuda()", "tensor_to_device", "replace", False, "bce_loss = bce_loss.npu()",
      "BCEWithLogitsLoss without pos_weight has no parameters or buffers, so Module.cuda() touches no tensor and never "
      "initialises CUDA; harmless, edited for consistency"),
    C("sigmoid = sigmoid.cuda()", "tensor_to_device", "replace", False, "sigmoid = sigmoid.npu()",
      "nn.Sigmoid has no tensors; .cuda() is a no-op, edited for consistency"),
    C("exe_input = batch_data[0].cuda() if use_gpu else batch_data[0]", "tensor_to_device", "replace", True,
      "exe_input = batch_data[0].npu() if use_gpu else batch_data[0]", "batch to device"),
    C("label = batch_data[1].cuda() if use_gpu else batch_data[1]", "tensor_to_device", "replace", True,
      "label = batch_data[1].npu() if use_gpu else batch_data[1]", "labels to device"),
    C("val_input = val_batch_data[0].cuda() if use_gpu else val_batch_data[0]", "tensor_to_device", "replace", True,
      "val_input = val_batch_data[0].npu() if use_gpu else val_batch_data[0]", "validation batch to device"),
    C("val_label = val_batch_data[1].cuda() if use_gpu else val_batch_data[1]", "tensor_to_device", "replace", True,
      "val_label = val_batch_data[1].npu() if use_gpu else val_batch_data[1]", "validation labels to device"),
])

E("mcp_model", "src/model.py", "explicit_replacement",
  "Alexander-H-Liu/MalConv-Pytorch src/model.py (gated conv + MaxPool1d)", [])

E("mcp_util", "src/util.py", "explicit_replacement",
  "Alexander-H-Liu/MalConv-Pytorch src/util.py (ExeDataset, write_pred, whole-model load helper)", [
    C("model = torch.load(path)", "tensor_to_device", "replace", True,
      "model = torch.load(path, map_location='npu')",
      "checkpoints are whole pickled modules saved from the GPU (torch.save(malconv, ...)); loading CUDA storages "
      "without CUDA raises"),
])

E("mcp_config", "config/example.yaml", "explicit_replacement",
  "Alexander-H-Liu/MalConv-Pytorch config/example.yaml", [])

# ---------------------------------------------------------------------------------------------
# 3. SOREL-20M (sophos/SOREL-20M): EMBER-feature feed-forward baseline
# ---------------------------------------------------------------------------------------------

E("sorel_config", "config.py", "explicit_replacement",
  "sophos/SOREL-20M config.py (module-level device string)", [
    C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'",
      "every tensor move in nets/train/evaluate goes through config.device"),
])

E("sorel_nets", "nets.py", "explicit_replacement",
  "sophos/SOREL-20M nets.py (PENetwork, compute_loss via config.device)", [])

E("sorel_dataset", "dataset.py", "explicit_replacement",
  "sophos/SOREL-20M dataset.py + generators.py (LMDB EMBER features, DataLoader factory)", [
    C("pin_memory=config.device.startswith('cuda'))", "pin_memory", "replace", False,
      "pin_memory=config.device.startswith('npu'))",
      "once config.device is 'npu:0' this evaluates False and pinning is silently skipped; performance only"),
])

E("sorel_train", "train.py", "explicit_replacement",
  "sophos/SOREL-20M train.py (baker command, seeding, device description log)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard for the extra device seeding below; torch.manual_seed already seeds the NPU generator through the "
      "PrivateUse1 hook (unconfirmed in knowledge), so only reproducibility hygiene"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "see the guard; redundant with torch.manual_seed (unconfirmed)"),
    C("if str(device).startswith('cuda'):", "device_type", "replace", False, "if str(device).startswith('npu'):",
      "left as is, the branch is skipped and the log prints just 'npu:0': harmless"),
    C("props = torch.cuda.get_device_properties(idx)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(idx)",
      "with the branch ported this runs on an NPU host; the torch.cuda call raises"),
    C("props.major, props.minor)", "device_capability_check", "replace", True,
      "return '{} ({:.1f} GB)'.format(props.name, props.total_memory / 2 ** 30)",
      "NPU device properties only expose name, total_memory, L2_cache_size, cube_core_num and vector_core_num; "
      ".major/.minor raise AttributeError"),
])

E("sorel_evaluate", "evaluate.py", "explicit_replacement",
  "sophos/SOREL-20M evaluate.py (load released GPU checkpoint, write results.csv)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model.load_state_dict(torch.load(checkpoint_file))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(checkpoint_file, map_location='cpu'))",
      "released baseline checkpoints were saved from the GPU; CUDA storages cannot be deserialised without CUDA. "
      "model.to(config.device) follows"),
])

E("sorel_env", "environment.yml", "explicit_replacement",
  "sophos/SOREL-20M environment.yml (conda env pinned to pytorch 1.6 + cudatoolkit 10.1)", [
    C("- pytorch=1.6.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu release pairs with torch 1.6 (oldest lines are 1.5.0 / 1.8.1); 2.1.0 pairs with torch-npu 2.1.0.postN"),
    C("- cudatoolkit=10.1", "import_torch_npu", "removal", False, None,
      "unused on an NPU host; may not even resolve on aarch64 Ascend servers (unconfirmed)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "the NPU backend itself; inserted under pip:, version must equal the torch version"),
])

# ---------------------------------------------------------------------------------------------
# 4. Kitsune (ymirsky/Kitsune-py) with a torch/CuPy KitNET fork
# ---------------------------------------------------------------------------------------------

E("kit_kitsune", "Kitsune.py", "explicit_replacement",
  "ymirsky/Kitsune-py Kitsune.py (FE + KitNET wrapper; fork adds batched execute)", [])

E("kit_fe", "FeatureExtractor.py", "explicit_replacement",
  "ymirsky/Kitsune-py FeatureExtractor.py (tshark/scapy parsing, AfterImage statistics)", [])

E("kit_kitnet", "KitNET/KitNET.py", "explicit_replacement",
  "ymirsky/Kitsune-py KitNET/KitNET.py, torch fork with a device argument", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "default device; otherwise the ensemble silently runs on CPU"),
    C(".pin_memory().to(self.device, non_blocking=True)", "pin_memory", "replace", False,
      "Xt = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32)).to(self.device, non_blocking=True)",
      "argument-less Tensor.pin_memory() targets the CUDA host allocator on older torch; whether it reaches the NPU "
      "allocator depends on the torch/torch_npu pair (unconfirmed). Dropping the pin is safe"),
])

E("kit_da", "KitNET/dA.py", "explicit_replacement",
  "ymirsky/Kitsune-py KitNET/dA.py, torch port of the tied-weight denoising autoencoder", [])

E("kit_corclust", "KitNET/corClust.py", "explicit_replacement",
  "ymirsky/Kitsune-py KitNET/corClust.py, CuPy variant of the incremental correlation clustering", [
    C("import cupy as cp", "unsupported_op_workaround", "replace", True, "import numpy as cp",
      "CuPy has no Ascend backend (cupy issue #9379). The cp.* calls used here are numpy-compatible, so aliasing numpy "
      "keeps the rest of the file; the feature mapper only runs during the grace period"),
    C("return cp.asnumpy(D)", "unsupported_op_workaround", "replace", True, "return D",
      "numpy has no asnumpy; D is already a host array"),
])

E("kit_example", "example.py", "explicit_replacement",
  "ymirsky/Kitsune-py example.py (Mirai pcap demo), fork with CUDA-event timing", [
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", "replace", False,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")',
      "ignored on NPU, but the script then uses device 0 anyway, so the result is the same device"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available()", "otherwise CPU path and no device timing"),
    C('device = "cuda:0" if use_gpu else "cpu"', "device_type", "replace", True,
      'device = "npu:0" if use_gpu else "cpu"', "device string"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "a CUDA event cannot record on an NPU stream"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "as above"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      'print("Peak NPU memory: {:.1f} MB".format(torch.npu.max_memory_allocated() / 2 ** 20))',
      "returns 0 without CUDA; log line only"),
])

E("kit_req", "requirements.txt", "explicit_replacement",
  "ymirsky/Kitsune-py requirements, fork pinning a cu118 torch wheel and cupy-cuda11x", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "torch_npu must be installed next to torch; the extra index itself is harmless once the +cu118 pin is gone"),
    C("torch==2.1.0+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "torch_npu needs the plain (CPU) torch build; +cu118 wheels do not exist for aarch64 Ascend hosts"),
    C("cupy-cuda11x>=12.0", "unsupported_op_workaround", "removal", False, None,
      "no longer imported after the corClust port; installing it is wasted but not fatal (unconfirmed on aarch64)"),
])

# ---------------------------------------------------------------------------------------------
# 5. MAGIC (ACFG malware classification) on top of pytorch_DGCNN
# ---------------------------------------------------------------------------------------------

E("magic_util", "src/util.py", "explicit_replacement",
  "MAGIC / muhanzhang/pytorch_DGCNN util.py (cmd_args with -mode cpu/gpu, ACFG loading)", [])

E("magic_main", "src/main.py", "explicit_replacement",
  "MAGIC / muhanzhang/pytorch_DGCNN main.py (Classifier, mode=='gpu' .cuda() branches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("node_feat = node_feat.cuda()", "tensor_to_device", "replace", True, "node_feat = node_feat.npu()",
      "the -mode gpu flag is kept as 'use the accelerator'; only the moves change"),
    C("labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "labels to device"),
    C("edge_feat = edge_feat.cuda()", "tensor_to_device", "replace", True, "edge_feat = edge_feat.npu()",
      "only reached with edge features (MAGIC's ACFG sets have none), still a hard failure when reached"),
    C("classifier = classifier.cuda()", "tensor_to_device", "replace", True, "classifier = classifier.npu()",
      "model to device"),
])

E("magic_embed", "src/DGCNN_embedding.py", "explicit_replacement",
  "MAGIC / muhanzhang/pytorch_DGCNN DGCNN_embedding.py (sparse adjacency, SortPooling)", [
    C("if isinstance(node_feat, torch.cuda.FloatTensor):", "device_type", "replace", True,
      "if node_feat.device.type == 'npu':",
      "an NPU tensor is not a torch.cuda.FloatTensor: the sparse matrices would stay on CPU and the spmm would mix devices"),
    C("n2n_sp = n2n_sp.cuda()", "tensor_to_device", "replace", True, "n2n_sp = n2n_sp.npu()",
      "sparse COO tensors can live on the NPU (torch.sparse_coo_tensor is supported)"),
    C("e2n_sp = e2n_sp.cuda()", "tensor_to_device", "replace", True, "e2n_sp = e2n_sp.npu()", "as above"),
    C("subg_sp = subg_sp.cuda()", "tensor_to_device", "replace", True, "subg_sp = subg_sp.npu()", "as above"),
    C("node_degs = node_degs.cuda()", "tensor_to_device", "replace", True, "node_degs = node_degs.npu()",
      "dense degree vector to device"),
    C("if node_feat.is_cuda:", "device_type", "replace", True, "if node_feat.is_npu:",
      "is_cuda is False for NPU tensors"),
    C("edge_feat = edge_feat.cuda()", "tensor_to_device", "replace", True, "edge_feat = edge_feat.npu()",
      "edge features to device"),
    C("if isinstance(node_feat.data, torch.cuda.FloatTensor):", "device_type", "replace", True,
      "if node_feat.device.type == 'npu':",
      "otherwise the SortPooling buffer stays on CPU and the index_select results cannot be written into it"),
    C("batch_sortpooling_graphs = batch_sortpooling_graphs.cuda()", "tensor_to_device", "replace", True,
      "batch_sortpooling_graphs = batch_sortpooling_graphs.npu()", "buffer to device"),
])

E("magic_gnnlib", "src/lib/gnn_lib.py", "explicit_replacement",
  "muhanzhang/pytorch_DGCNN lib/gnn_lib.py (ctypes wrapper building CPU sparse index matrices)", [])

E("magic_ptutil", "src/lib/pytorch_util.py", "kernel_rewrite",
  "muhanzhang/pytorch_DGCNN lib/pytorch_util.py (MySpMM autograd function over torch.mm(sparse, dense))", [
    C("return torch.mm(sp_mat, dense_mat)", "unsupported_op_workaround", "replace", True,
      "return spmm_index_add(sp_mat, dense_mat)",
      "sparse x dense mm has no NPU kernel (no sparse op in the NPU native op lists) and sparse ops raise instead of "
      "falling back; rewrite as gather + index_add over sp_mat._indices()/_values()"),
    C("grad_matrix2 = Variable(torch.mm(sp_mat.data.t(), grad_output.data))", "unsupported_op_workaround", "replace",
      True, "grad_matrix2 = spmm_index_add(sp_mat.data.t().coalesce(), grad_output.data)",
      "same sparse mm in the backward pass"),
])

E("magic_makefile", "src/lib/Makefile", "explicit_replacement",
  "muhanzhang/pytorch_DGCNN / pytorch_structure2vec lib Makefile (optional nvcc build of message-passing kernels)", [
    C("=USE_GPU = 1", "custom_cuda_extension", "replace", True, "USE_GPU = 0",
      "no nvcc/CUDA_HOME on an NPU host; the .cu objects and -lcudart/-lcusparse links fail. The Python side only "
      "calls the CPU graph-preparation functions, so the CPU build is enough"),
])

E("magic_run", "run_DGCNN.sh", "explicit_replacement",
  "MAGIC / muhanzhang/pytorch_DGCNN run_DGCNN.sh (CUDA_VISIBLE_DEVICES launcher, 10-fold loop)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime environment (library paths) for the python processes"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python main.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python main.py \\",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime; GPU=N would silently run on device 0"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python -u main.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python -u main.py \\", "same, single-fold branch"),
])

# ---------------------------------------------------------------------------------------------
# 6. FCG-GNN: PyTorch Geometric function-call-graph classifier with DDP + AMP
# ---------------------------------------------------------------------------------------------

E("fcg_train", "train_ddp.py", "explicit_replacement",
  "PyG function-call-graph malware classifiers (research code in the style of FCG/GIN malware repos): torchrun DDP + AMP trainer", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW as FusedAdam",
      "NVIDIA apex (CUDA build) is absent, so the ImportError path falls back to torch.optim.AdamW and training is "
      "correct; the NPU fused AdamW is a performance change"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "bind each rank to its NPU before HCCL init"),
    C('dist.init_process_group(backend=cfg.get("dist_backend", "nccl"), init_method="env://")', "dist_backend",
      "replace", False, 'dist.init_process_group(backend=cfg.get("dist_backend", "hccl"), init_method="env://")',
      "the YAML always provides dist_backend (labelled there), so the fallback default is never used"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")', "per-rank device"),
    C('device = torch.device(cfg.get("device", "cuda") if torch.cuda.is_available() else "cpu")', "device_type",
      "replace", True, 'device = torch.device(cfg.get("device", "npu") if torch.npu.is_available() else "cpu")',
      "non-distributed path: is_available() is False on NPU, silently CPU"),
    C("return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check",
      "replace", True, "return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "amp_dtype: auto is the config default; torch.cuda.is_bf16_supported() queries CUDA device properties and raises "
      "(or returns False on some versions) without CUDA"),
    C('comm_device = device if dist.get_backend() == "nccl" else torch.device("cpu")', "dist_backend", "replace",
      True, 'comm_device = device if dist.get_backend() == "hccl" else torch.device("cpu")',
      "backend-string comparison (mstt: must be hand-edited); unported it picks CPU tensors for all_gather, and HCCL "
      "only communicates device tensors"),
    C("n = torch.tensor([scores.shape[0]], device=comm_device)", "unsupported_op_workaround", "replace", True,
      "n = torch.tensor([scores.shape[0]], device=comm_device, dtype=torch.int32)",
      "Ascend's API list: dist.all_gather supports bf16/fp16/fp32/int8/int32/bool only; the default int64 is not listed"),
    C("pad_l = torch.full((max_n,), -1, device=comm_device, dtype=labels.dtype)", "unsupported_op_workaround",
      "replace", True, "pad_l = torch.full((max_n,), -1, device=comm_device, dtype=torch.int32)",
      "labels are int64 (data.y); all_gather them as int32 for HCCL"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=use_amp):',
      "CUDA autocast is disabled with a warning on an NPU host: eval silently runs in fp32, unlike training"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp and amp_dtype == torch.float16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp and amp_dtype == torch.float16)",
      "the CUDA GradScaler disables itself without CUDA: fp16 training would run without loss scaling"),
    C('ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")', "tensor_to_device", "replace", True,
      'ckpt = torch.load(args.resume, map_location=f"npu:{local_rank}")', "map_location names a CUDA device"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=use_amp, dtype=amp_dtype):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp, dtype=amp_dtype):", "training autocast is silently disabled otherwise"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      'f"mem {torch.npu.max_memory_allocated(device) / 2 ** 30:.2f}GB")', "log value reads 0; no functional effect"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only releases cached blocks"),
])

E("fcg_model", "models/gnn.py", "explicit_replacement",
  "PyG FCG classifiers: GIN/SAGE/GCN encoder with torch_scatter mean||max||sum readout", [
    C("from torch_scatter import scatter_add, scatter_max, scatter_mean", "unsupported_op_workaround", "replace", True,
      "from torch_geometric.utils import scatter",
      "torch_scatter ships CPU/CUDA kernels only; its ops have no PrivateUse1 (NPU) registration. PyG's own scatter "
      "uses native index/scatter ops"),
    C("outs.append(scatter_mean(x, batch, dim=0, dim_size=num_graphs))", "unsupported_op_workaround", "replace", True,
      'outs.append(scatter(x, batch, dim=0, dim_size=num_graphs, reduce="mean"))', "mean readout"),
    C("outs.append(scatter_max(x, batch, dim=0, dim_size=num_graphs)[0])", "unsupported_op_workaround", "replace",
      True, 'outs.append(scatter(x, batch, dim=0, dim_size=num_graphs, reduce="max"))',
      "max readout; PyG lowers it to scatter_reduce_(amax), which Ascend's list marks unsupported, so expect a CPU "
      "fallback (performance, not correctness)"),
    C("outs.append(scatter_add(x, batch, dim=0, dim_size=num_graphs))", "unsupported_op_workaround", "replace", True,
      'outs.append(scatter(x, batch, dim=0, dim_size=num_graphs, reduce="sum"))', "sum readout"),
])

E("fcg_data", "data/fcg_dataset.py", "explicit_replacement",
  "PyG InMemoryDataset over radare2/androguard FCG JSON (opcode histograms, API vocabulary)", [])

E("fcg_config", "configs/gin_fcg.yaml", "explicit_replacement",
  "FCG-GNN YAML config (device, dist backend, AMP)", [
    C("device: cuda", "device_type", "replace", True, "device: npu            # used when not launched with torchrun",
      "read by train_ddp.py for the single-process path"),
    C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("fcg_launch", "scripts/train_multi_gpu.sh", "explicit_replacement",
  "FCG-GNN torchrun launcher (CUDA_VISIBLE_DEVICES, nvidia-smi GPU count, NCCL env)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torchrun workers"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "device selection; the ported NGPUS line also reads it (unbound under set -u otherwise)"),
    C("NGPUS=$(nvidia-smi", "device_capability_check", "replace", True,
      "NGPUS=$(echo \"${ASCEND_RT_VISIBLE_DEVICES}\" | tr ',' '\\n' | wc -l)",
      "nvidia-smi does not exist on an NPU host; under set -e/pipefail the script aborts"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=${IFNAME:-eth0}",
      "only matters for multi-node runs; HCCL picks a host NIC by its own priority otherwise (may or may not be right, "
      "unconfirmed)"),
])

E("fcg_docker", "Dockerfile", "explicit_replacement",
  "FCG-GNN Dockerfile on nvidia/cuda with cu118 torch + PyG wheels", [
    C("FROM nvidia/cuda", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image must provide CANN (image name illustrative); the CUDA image has neither CANN nor the driver bindings"),
    C("RUN pip install torch==2.1.0 --index-url", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post12",
      "CPU torch + matching torch_npu instead of the cu118 wheel"),
    C("RUN pip install torch_scatter", "unsupported_op_workaround", "removal", False, None,
      "models/gnn.py no longer imports torch_scatter; a CUDA wheel would just be dead weight (or fail to resolve on "
      "aarch64, unconfirmed)"),
])

E("fcg_misc", "utils/misc.py", "device_branch_or_abstraction",
  "FCG-GNN utils/misc.py (seeding, device helper, nvidia-smi memory report, env summary)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "without CUDA this is queued lazily and never runs; torch.manual_seed already seeds the NPU (unconfirmed)"),
    C('return torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")', "device_type", "replace",
      True, 'return torch.device(f"npu:{local_rank}" if torch.npu.is_available() else "cpu")',
      "device helper silently returns CPU"),
    C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True, "return torch.npu.device_count()",
      "returns 0 on an NPU host"),
    C('["nvidia-smi", "--query-gpu=index,memory.used,memory.total,utilization.gpu",', "device_capability_check",
      "replace", False, '["npu-smi", "info"],',
      "wrapped in try/except, so it only degrades to 'gpu: n/a' in the log; a real port also rewrites the CSV parsing "
      "below (npu-smi has no --query-gpu CSV mode)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "environment summary only; unported it prints 'cuda: not available'"),
    C('lines.append(f"cuda {torch.version.cuda} cudnn {torch.backends.cudnn.version()}")', "torch_cuda_api",
      "replace", False, 'lines.append(f"npu devices: {torch.npu.device_count()}")',
      "prints None values on NPU but does not fail"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for i in range(torch.npu.device_count()):", "loop over zero devices unported: empty summary, no failure"),
    C("torch.cuda.get_device_name(i)", "torch_cuda_api", "replace", True,
      'lines.append(f"  [{i}] {torch.npu.get_device_name(i)}")',
      "with the loop ported this executes for NPU indices and the CUDA call raises"),
])
