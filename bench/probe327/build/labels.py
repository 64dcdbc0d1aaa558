# Labels for probe327: image retrieval / deep metric learning / landmark recognition (CUDA -> Ascend NPU).
# Format: see ../../probe_build.py. One entry per upstream file, one change per edited line.
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Shared note fragments
NO_CUDA = "raises on an NPU host (CPU-only torch build / no CUDA device)"
SEED_NOOP = ("torch.cuda seeding is lazily queued and never runs without CUDA: silent no-op, NPU RNG stays "
             "unseeded (reproducibility only)")
MEM_NOOP = "torch.cuda memory stats return 0 when CUDA is not initialised: logging only"
IMPORT_NPU = ("entry script: import torch_npu after torch (mandatory before torch_npu 2.5.1, still recommended "
              "with autoload)")
AMP_NOOP = ("torch.cuda.amp on a host without CUDA warns and disables itself, so the run silently falls back "
            "to fp32: performance/memory only")
FAISS_GPU = ("faiss GPU indexes need CUDA devices; faiss has no NPU backend (not covered by the knowledge "
             "notes, general faiss fact) - use the CPU index or torch kNN on the NPU")


# ---------------------------------------------------------------------------------------------
# pytorch-metric-learning
# ---------------------------------------------------------------------------------------------
E("pml_common_functions", "src/pytorch_metric_learning/utils/common_functions.py",
  "device_branch_or_abstraction",
  "pytorch-metric-learning utils/common_functions.py (to_device, load_model, label mapping helpers)",
  [
    C('return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")',
      "device_type", "replace", True,
      'return torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "default device helper: torch.cuda.is_available() is False on NPU, so testers/InferenceModel silently run on CPU"),
  ])

E("pml_inference", "src/pytorch_metric_learning/utils/inference.py",
  "device_branch_or_abstraction",
  "pytorch-metric-learning utils/inference.py (FaissKNN with try_gpu fallback, CustomKNN, InferenceModel)",
  [
    C("self.knn_func = FaissKNN() if knn_func is None else knn_func",
      "unsupported_op_workaround", "replace", False,
      "self.knn_func = CustomKNN(CosineSimilarity()) if knn_func is None else knn_func",
      "FaissKNN already falls back to the CPU index (faiss.get_num_gpus()==0, query.is_cuda False); kNN on the NPU "
      "via CustomKNN/torch.topk is only faster"),
  ])

E("pml_example_trainwithclassifier", "examples/scripts/train_with_classifier_cub200.py",
  "explicit_replacement",
  "pytorch-metric-learning examples TrainWithClassifierHook notebook exported as a script (CUB-200)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "hard-coded cuda device; every .to(device) below fails on NPU"),
    C("trunk = torch.nn.DataParallel(trunk.to(device))", "distributed_framework", "replace", True,
      "trunk = trunk.to(device)",
      "torch.nn.DataParallel is unsupported on Ascend (2.7.1 API table and msFmkTransplt); single card or DDP+hccl"),
    C("embedder = torch.nn.DataParallel(embedder.to(device))", "distributed_framework", "replace", True,
      "embedder = embedder.to(device)", "torch.nn.DataParallel is unsupported on Ascend"),
    C('device=torch.device("cuda:0"),', "device_type", "replace", True, 'device=torch.device("npu:0"),',
      "AccuracyCalculator device: label/kNN tensors would be moved to cuda:0"),
    C('logging.info("training on %d GPU(s)" % torch.cuda.device_count())', "torch_cuda_api", "replace", False,
      'logging.info("training on %d NPU(s)" % torch.npu.device_count())',
      "device_count() returns 0 without CUDA: log message only"),
  ])

E("pml_base_tester", "src/pytorch_metric_learning/testers/base_tester.py",
  "device_branch_or_abstraction",
  "pytorch-metric-learning testers/base_tester.py (embedding pass + AccuracyCalculator)",
  [
    C('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'torch.device("npu" if torch.npu.is_available() else "cpu")',
      "default data_device: silently CPU on an NPU host (embeddings computed off-device)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; frees NPU cache only if renamed"),
    C('if self.data_device.type == "cuda":', "device_type", "replace", False,
      'if self.data_device.type == "npu":', "guard is just False on NPU: peak-memory log is skipped"),
    C("peak = torch.cuda.max_memory_allocated(self.data_device) / 1024.0**2", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(self.data_device) / 1024.0**2",
      "only reached once the guard above is changed to npu; logging only"),
  ])

E("pml_setup", "setup.py", "explicit_replacement",
  "pytorch-metric-learning setup.py (extras with-hooks / with-hooks-cpu)",
  [
    C('"faiss-gpu >= 1.6.3",', "unsupported_op_workaround", "replace", False, '"faiss-cpu >= 1.6.3",',
      "faiss-gpu is CUDA-only and has no aarch64 wheel (not in knowledge notes); the with-hooks-cpu extra already "
      "exists, so NPU users can pick that instead"),
  ])


# ---------------------------------------------------------------------------------------------
# cirtorch (cnnimageretrieval-pytorch)
# ---------------------------------------------------------------------------------------------
E("cirtorch_train", "cirtorch/examples/train.py", "explicit_replacement",
  "cnnimageretrieval-pytorch (cirtorch) examples/train.py: contrastive/triplet fine-tuning with --gpu-id",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_id",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --gpu-id silently has no effect (job lands on NPU 0)"),
    C("torch.cuda.manual_seed_all(0)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(0)", SEED_NOOP),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", NO_CUDA),
    C("criterion = ContrastiveLoss(margin=args.loss_margin).cuda()", "tensor_to_device", "replace", False,
      "criterion = ContrastiveLoss(margin=args.loss_margin).npu()",
      "ContrastiveLoss has no parameters or buffers, so Module.cuda() touches no tensor and does not raise; edited for consistency"),
    C("criterion = TripletLoss(margin=args.loss_margin).cuda()", "tensor_to_device", "replace", False,
      "criterion = TripletLoss(margin=args.loss_margin).npu()",
      "parameter-less loss module: .cuda() is a no-op"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "checkpoints saved from GPU hold CUDA storages; torch.load without map_location fails when CUDA is unavailable"),
    C("torch.cuda.manual_seed_all(epoch)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(epoch)",
      SEED_NOOP),
    C("output = torch.zeros(model.meta['outputdim'], ni).cuda()", "tensor_to_device", "replace", True,
      "output = torch.zeros(model.meta['outputdim'], ni).npu()", NO_CUDA),
    C("output[:, imi] = model(input[q][imi].cuda()).squeeze()", "tensor_to_device", "replace", True,
      "output[:, imi] = model(input[q][imi].npu()).squeeze()", NO_CUDA),
    C("loss = criterion(output, target[q].cuda())", "tensor_to_device", "replace", True,
      "loss = criterion(output, target[q].npu())", NO_CUDA),
    C("output = torch.zeros(model.meta['outputdim'], nq*ni).cuda()", "tensor_to_device", "replace", True,
      "output = torch.zeros(model.meta['outputdim'], nq*ni).npu()", NO_CUDA),
    C("output[:, q*ni + imi] = model(input[q][imi].cuda()).squeeze()", "tensor_to_device", "replace", True,
      "output[:, q*ni + imi] = model(input[q][imi].npu()).squeeze()", NO_CUDA),
    C("loss = criterion(output, torch.cat(target).cuda())", "tensor_to_device", "replace", True,
      "loss = criterion(output, torch.cat(target).npu())", NO_CUDA),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", NO_CUDA),
  ])

E("cirtorch_test", "cirtorch/examples/test.py", "explicit_replacement",
  "cnnimageretrieval-pytorch (cirtorch) examples/test.py: ROxford/RParis eval with learned whitening",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_id", "--gpu-id silently ignored on NPU otherwise"),
    C("state = load_url(PRETRAINED[args.network_path], model_dir=os.path.join(get_data_root(), 'networks'))",
      "device_type", "replace", False,
      "state = load_url(PRETRAINED[args.network_path], model_dir=os.path.join(get_data_root(), 'networks'), map_location='cpu')",
      "unconfirmed whether the published checkpoints contain CUDA storages; map_location='cpu' is the safe port"),
    C("state = torch.load(args.network_path)", "device_type", "replace", True,
      "state = torch.load(args.network_path, map_location='cpu')",
      "fine-tuned checkpoints written by train.py hold CUDA tensors: load fails without CUDA"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", NO_CUDA),
  ])

E("cirtorch_imageretrievalnet", "cirtorch/networks/imageretrievalnet.py", "explicit_replacement",
  "cnnimageretrieval-pytorch (cirtorch) networks/imageretrievalnet.py: init_network + extract_vectors",
  [
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", NO_CUDA),
    C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", NO_CUDA),
    C("=net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", NO_CUDA),
    C("net = net.cuda().eval()", "tensor_to_device", "replace", True, "net = net.npu().eval()", NO_CUDA),
    C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", NO_CUDA),
  ])

E("cirtorch_layers_functional", "cirtorch/layers/functional.py", "device_branch_or_abstraction",
  "cnnimageretrieval-pytorch (cirtorch) layers/functional.py: mac/spoc/gem/rmac pooling, contrastive/triplet loss",
  [])

E("cirtorch_traindataset", "cirtorch/datasets/traindataset.py", "explicit_replacement",
  "cnnimageretrieval-pytorch (cirtorch) datasets/traindataset.py: TuplesDataset hard-negative mining",
  [
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", NO_CUDA),
    C("qvecs = torch.zeros(net.meta['outputdim'], len(self.qidxs)).cuda()", "tensor_to_device", "replace", True,
      "qvecs = torch.zeros(net.meta['outputdim'], len(self.qidxs)).npu()", NO_CUDA),
    C("qvecs[:, i] = net(input.cuda()).data.squeeze()", "tensor_to_device", "replace", True,
      "qvecs[:, i] = net(input.npu()).data.squeeze()", NO_CUDA),
    C("poolvecs = torch.zeros(net.meta['outputdim'], len(idxs2images)).cuda()", "tensor_to_device", "replace", True,
      "poolvecs = torch.zeros(net.meta['outputdim'], len(idxs2images)).npu()", NO_CUDA),
    C("poolvecs[:, i] = net(input.cuda()).data.squeeze()", "tensor_to_device", "replace", True,
      "poolvecs[:, i] = net(input.npu()).data.squeeze()", NO_CUDA),
    C("avg_ndist = torch.tensor(0).float().cuda()  # for statistics", "tensor_to_device", "replace", True,
      "avg_ndist = torch.tensor(0).float().npu()  # for statistics", NO_CUDA),
    C("n_ndist = torch.tensor(0).float().cuda()  # for statistics", "tensor_to_device", "replace", True,
      "n_ndist = torch.tensor(0).float().npu()  # for statistics", NO_CUDA),
  ])

E("cirtorch_whiten", "cirtorch/utils/whiten.py", "explicit_replacement",
  "cnnimageretrieval-pytorch (cirtorch) utils/whiten.py plus a torch whitening variant used for GLDv2",
  [
    C("X = X.cuda() if device is None else X.to(device)", "tensor_to_device", "replace", True,
      "X = X.npu() if device is None else X.to(device)", "default path " + NO_CUDA),
    C("X = X.double()", "unsupported_op_workaround", "replace", True,
      "X = X.cpu().double()  # fp64 matmul/eigh not supported on NPU: learn the whitening on the host",
      "fp64 is not an NPU dtype for torch.mm/matmul (2.7.1 API table: mm bf16/fp16/fp32 only) and linalg.eigh has no "
      "NPU kernel; keep the double-precision solve on CPU"),
  ])


# ---------------------------------------------------------------------------------------------
# CVNet (pycls-style trainer)
# ---------------------------------------------------------------------------------------------
E("cvnet_config", "core/config.py", "explicit_replacement",
  "CVNet / pycls core/config.py (yacs defaults: NUM_GPUS, DIST_BACKEND, CUDNN)",
  [
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", "replace", True, '_C.DIST_BACKEND = "hccl"',
      "default backend passed to init_process_group; NCCL does not exist in torch_npu"),
  ])

E("cvnet_distributed", "core/distributed.py", "explicit_replacement",
  "CVNet / pycls core/distributed.py (multi_proc_run, scaled_all_reduce)",
  [
    C("torch.cuda.set_device(proc_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(proc_rank)",
      NO_CUDA),
    C('local_size = torch.tensor([feats.shape[0]], device="cuda")', "device_type", "replace", True,
      "local_size = torch.tensor([feats.shape[0]], device=feats.device)",
      "hard-coded cuda tensor for all_gather of shard sizes"),
  ])

E("cvnet_trainer", "core/trainer.py", "explicit_replacement",
  "CVNet / pycls core/trainer.py (setup_model, train_epoch with torch.cuda.amp)",
  [
    C("torch.cuda.manual_seed(cfg.RNG_SEED)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(cfg.RNG_SEED)", SEED_NOOP),
    C("assert cfg.NUM_GPUS <= torch.cuda.device_count(), err_str", "torch_cuda_api", "replace", True,
      "assert cfg.NUM_GPUS <= torch.npu.device_count(), err_str",
      "device_count() is 0 without CUDA: the assertion fails"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()", NO_CUDA),
    C("model = model.cuda(device=cur_device)", "tensor_to_device", "replace", True,
      "model = model.npu(device=cur_device)", NO_CUDA),
    C("inputs, labels = inputs.cuda(), labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs, labels = inputs.npu(), labels.npu(non_blocking=True)", NO_CUDA),
    C("with torch.cuda.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):", AMP_NOOP),
    C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", NO_CUDA),
    C("=labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.npu(non_blocking=True)", NO_CUDA),
    C("loss_fun = builders.build_loss_fun().cuda()", "tensor_to_device", "replace", False,
      "loss_fun = builders.build_loss_fun().npu()",
      "cross-entropy loss module has no parameters/buffers: .cuda() is a no-op"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)", AMP_NOOP),
    C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3", MEM_NOOP),
    C("=loss_fun = loss_fun.cuda()", "tensor_to_device", "replace", False, "loss_fun = loss_fun.npu()",
      "parameter-less loss module: no-op"),
  ])

E("cvnet_rerank_model", "model/CVNet_Rerank_model.py", "explicit_replacement",
  "CVNet model/CVNet_Rerank_model.py (cross-scale correlation + CVLearner reranker)",
  [
    C("query_feats = self.extract_featuremap(query_img.cuda())", "tensor_to_device", "replace", True,
      "query_feats = self.extract_featuremap(query_img.npu())", NO_CUDA),
    C("batch = torch.cat(db_imgs[s:s + batch_size], dim=0).cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "batch = torch.cat(db_imgs[s:s + batch_size], dim=0).npu(non_blocking=True)", NO_CUDA),
  ])

E("cvnet_test_utils", "test/test_utils.py", "explicit_replacement",
  "CVNet test/test_utils.py (global retrieval, faiss R1M index, CVNet-Rerank timing)",
  [
    C("im_list[idx] = im_list[idx].cuda()", "tensor_to_device", "replace", True,
      "im_list[idx] = im_list[idx].npu()", NO_CUDA),
    C("qf = [f.cuda() for f in query_feats[qidx]]", "tensor_to_device", "replace", True,
      "qf = [f.npu() for f in query_feats[qidx]]", NO_CUDA),
    C("df = [f.cuda().float() for f in db_feats[didx]]", "tensor_to_device", "replace", True,
      "df = [f.npu().float() for f in db_feats[didx]]", NO_CUDA),
    C("index = build_knn_index(X, use_gpu=True)", "unsupported_op_workaround", "replace", True,
      "index = build_knn_index(X, use_gpu=False)",
      FAISS_GPU + "; faiss-cpu has no Gpu* classes, and faiss-gpu without a CUDA device reports 0 GPUs and the cloner path fails"),
    C("Q_t = torch.from_numpy(Q).cuda()", "tensor_to_device", "replace", True,
      "Q_t = torch.from_numpy(Q).npu()", NO_CUDA),
    C("X_t = torch.from_numpy(X).cuda()", "tensor_to_device", "replace", True,
      "X_t = torch.from_numpy(X).npu()", NO_CUDA),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", NO_CUDA),
    C("torch.cuda.synchronize()  # wait for the last rerank kernels before stopping the clock", "torch_cuda_api",
      "replace", True, "torch.npu.synchronize()  # wait for the last rerank kernels before stopping the clock",
      NO_CUDA),
  ])

E("cvnet_yaml", "configs/resnet50_cvnet_gldv2.yaml", "explicit_replacement",
  "CVNet configs/*.yaml (pycls-style experiment config)",
  [
    C("DIST_BACKEND: nccl", "dist_backend", "replace", True, "DIST_BACKEND: hccl",
      "overrides the config.py default; nccl is not available with torch_npu"),
  ])

E("cvnet_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "CVNet / GLDv2 experiment Dockerfile on nvidia/cuda base image",
  [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit; torch_npu needs CANN (set_env exports baked into the Ascend images)"),
    C("RUN pip install --no-cache-dir torch==1.12.1+cu113 torchvision==0.13.1+cu113 \\", "import_torch_npu",
      "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 \\",
      "+cu113 wheels are CUDA builds (none for aarch64); torch must match an existing torch_npu release"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 Ascend hosts take CPU torch from whl/cpu"),
    C("RUN pip install --no-cache-dir faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True,
      "RUN pip install --no-cache-dir faiss-cpu==1.7.4", FAISS_GPU),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NVIDIA container-runtime variable has no effect; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or "
      "mount /dev/davinci* at docker run)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA runtime only; no effect on Ascend"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "replace", False, "ENV ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL variable has no effect with HCCL; log level only"),
  ])


# ---------------------------------------------------------------------------------------------
# Google Landmark Recognition 2020 solution
# ---------------------------------------------------------------------------------------------
E("glr_train", "train.py", "explicit_replacement",
  "Google Landmark Recognition 2020 Kaggle solution train.py (apex amp + apex DDP, torch.distributed.launch)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("from apex.parallel import DistributedDataParallel", "distributed_framework", "replace", False,
      "from torch.nn.parallel import DistributedDataParallel",
      "apex.parallel.DDP is built on CUDA streams; unconfirmed whether the Ascend apex patch adapts it - torch DDP is the safe port"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOOP),
    C("data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "data, target = data.npu(), target.npu()", NO_CUDA),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", NO_CUDA),
    C("data = data.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "data = data.npu(non_blocking=True)", NO_CUDA),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", NO_CUDA),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", NO_CUDA),
    C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", "replace", False,
      "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
      "apex SyncBN: CUDA kernel or python fallback, unconfirmed on NPU; torch SyncBatchNorm is supported on Ascend"),
    C("optimizer = optim.Adam(model.parameters(), lr=args.init_lr)", "fused_optimizer", "replace", False,
      "optimizer = apex.optimizers.NpuFusedAdam(model.parameters(), lr=args.init_lr)",
      "performance: Ascend apex fused Adam pairs with combine_grad amp (msFmkTransplt advice); torch.optim.Adam works"),
    C('model, optimizer = amp.initialize(model, optimizer, opt_level="O1")', "amp", "replace", False,
      'model, optimizer = amp.initialize(model, optimizer, opt_level="O1", loss_scale=128.0, combine_grad=True)',
      "kept on the Ascend apex patch (same amp API); combine_grad is the Ascend performance option"),
    C("checkpoint = torch.load(args.load_from, map_location='cuda:{}'.format(args.local_rank))", "device_type",
      "replace", True, "checkpoint = torch.load(args.load_from, map_location='npu:{}'.format(args.local_rank))",
      "map_location to a cuda device fails without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("model = DistributedDataParallel(model, delay_allreduce=True)", "distributed_framework", "replace", False,
      "model = DistributedDataParallel(model, device_ids=[args.local_rank])",
      "apex DDP -> torch DDP (see import); unconfirmed that apex DDP fails on the Ascend apex patch"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.CUDA_VISIBLE_DEVICES",
      "device subset from --CUDA_VISIBLE_DEVICES silently ignored on NPU"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", NO_CUDA),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL backend absent on NPU"),
  ])

E("glr_models", "models.py", "explicit_replacement",
  "Google Landmark Recognition 2020 solution models.py (sub-center ArcFace, adaptive margins, GeM)",
  [
    C("cos_m = torch.from_numpy(np.cos(ms)).float().cuda()", "tensor_to_device", "replace", True,
      "cos_m = torch.from_numpy(np.cos(ms)).float().to(logits.device)", NO_CUDA),
    C("sin_m = torch.from_numpy(np.sin(ms)).float().cuda()", "tensor_to_device", "replace", True,
      "sin_m = torch.from_numpy(np.sin(ms)).float().to(logits.device)", NO_CUDA),
    C("th = torch.from_numpy(np.cos(math.pi - ms)).float().cuda()", "tensor_to_device", "replace", True,
      "th = torch.from_numpy(np.cos(math.pi - ms)).float().to(logits.device)", NO_CUDA),
    C("mm = torch.from_numpy(np.sin(math.pi - ms) * ms).float().cuda()", "tensor_to_device", "replace", True,
      "mm = torch.from_numpy(np.sin(math.pi - ms) * ms).float().to(logits.device)", NO_CUDA),
    C("one_hot = torch.zeros(cosine.size(), device='cuda')", "device_type", "replace", True,
      "one_hot = torch.zeros(cosine.size(), device=cosine.device)", "hard-coded cuda device string"),
  ])

E("glr_predict", "predict.py", "explicit_replacement",
  "Google Landmark Recognition 2020 inference/kNN script (torch.mm kNN on GPU or faiss GPU index)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "module-level device used by every .to(device)"),
    C("checkpoint = torch.load(model_file, map_location='cuda:0')", "device_type", "replace", True,
      "checkpoint = torch.load(model_file, map_location='npu:0')", "map_location to cuda fails without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=fp16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=fp16):", AMP_NOOP),
    C("gallery = gallery.cuda().half()", "tensor_to_device", "replace", True, "gallery = gallery.npu().half()",
      NO_CUDA),
    C("q = query[s:s + chunk].cuda().half()", "tensor_to_device", "replace", True,
      "q = query[s:s + chunk].npu().half()", NO_CUDA),
    C("torch.cuda.empty_cache()  # drop the fp16 gallery copy before the next model", "torch_cuda_api", "replace",
      False, "torch.npu.empty_cache()  # drop the fp16 gallery copy before the next model", "no-op without CUDA"),
    C("res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", True, None,
      FAISS_GPU + " (--knn faiss path)"),
    C("index = faiss.GpuIndexFlatIP(res, gallery.shape[1])", "unsupported_op_workaround", "replace", True,
      "index = faiss.IndexFlatIP(gallery.shape[1])", FAISS_GPU),
    C("del index, res", "unsupported_op_workaround", "replace", True, "del index",
      "follows the removal of the GPU resources object"),
    C("print('num GPUs:', torch.cuda.device_count(), torch.cuda.get_device_name(0))", "torch_cuda_api", "replace",
      True, "print('num NPUs:', torch.npu.device_count(), torch.npu.get_device_name(0))",
      "get_device_name() initialises CUDA and raises"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("print('written', args.sub_csv, 'peak GPU memory %.1f GB' % (torch.cuda.max_memory_allocated() / 2 ** 30))",
      "torch_cuda_api", "replace", False,
      "print('written', args.sub_csv, 'peak NPU memory %.1f GB' % (torch.npu.max_memory_allocated() / 2 ** 30))",
      MEM_NOOP),
  ])

E("glr_run_sh", "run.sh", "explicit_replacement",
  "Google Landmark Recognition 2020 solution run.sh (torch.distributed.launch, NCCL env)",
  [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu can load (libhccl/libascendcl)"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "npu_only_addition", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES",
      "keep the shell variable (it is forwarded as --CUDA_VISIBLE_DEVICES) but export the Ascend one too, "
      "otherwise a device subset is ignored"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL variable ignored by HCCL; logging only"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no effect with HCCL"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "single node here; HCCL picks its init NIC via HCCL_SOCKET_IFNAME / HCCL_IF_IP"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "V100/PCIe workaround, meaningless for HCCL"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "device_capability_check",
      "replace", True, "npu-smi info",
      "nvidia-smi is absent on an Ascend host and the script runs under set -e"),
    C("CUDA_VISIBLE_DEVICES=0 python predict.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python predict.py --data-dir $DATA_DIR --model-dir ./weights --knn torch --fp16",
      "pins device 0, which is also the default NPU: same behaviour without it"),
  ])

E("glr_requirements", "requirements.txt", "explicit_replacement",
  "Google Landmark Recognition 2020 solution requirements.txt (+cu110 wheels, faiss-gpu, NVIDIA apex)",
  [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel page; once the +cu110 pins are gone it is only wasteful (x86 should take CPU torch) - unconfirmed "
      "that a CUDA torch build breaks torch_npu"),
    C("torch==1.7.1+cu110", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA build, no aarch64 wheel, and no torch_npu release for torch 1.7"),
    C("torchvision==0.8.2+cu110", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "CUDA build pinned to torch 1.7.1"),
    C("geffnet==1.0.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch-npu pin matching torch 2.1.0 (added next to the framework block)"),
    C("faiss-gpu==1.6.5", "unsupported_op_workaround", "replace", True, "faiss-cpu==1.7.4", FAISS_GPU),
    C("pynvml==8.0.4", "unsupported_op_workaround", "removal", False, None,
      "NVML binding, unused by the code and useless without NVIDIA driver (npu-smi instead)"),
    C("git+https://github.com/NVIDIA/apex.git@0c2c6eea6556b208d1a8711197efc94899e754e1#egg=apex", "amp",
      "replace", True, "./third_party/apex/dist/apex-0.1+ascend-cp38-cp38-linux_aarch64.whl",
      "NVIDIA apex CUDA extensions cannot be built; the Ascend apex patch (built locally) keeps the amp API"),
  ])


# ---------------------------------------------------------------------------------------------
# Proxy-Anchor (and the pytorch-metric-learning based baselines it ships)
# ---------------------------------------------------------------------------------------------
E("pa_train", "code/train.py", "explicit_replacement",
  "Proxy-Anchor Loss (CVPR'20) code/train.py with --gpu-id, wandb, optional nn.DataParallel",
  [
    C("import torch, math, time, argparse, os", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU),
    C("torch.cuda.manual_seed_all(seed) # set random seed for all gpus", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed) # set random seed for all npus", SEED_NOOP),
    C("torch.cuda.set_device(args.gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu_id)",
      NO_CUDA),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", NO_CUDA),
    C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
      "raise SystemExit('--gpu-id -1 (nn.DataParallel) is not supported on NPU; launch with torchrun + DDP')",
      "torch.nn.DataParallel is unsupported on Ascend (2.7.1 API table)"),
    C("criterion = losses.Proxy_Anchor(nb_classes = nb_classes, sz_embed = args.sz_embedding, mrg = args.mrg, alpha = args.alpha).cuda()",
      "tensor_to_device", "replace", True,
      "criterion = losses.Proxy_Anchor(nb_classes = nb_classes, sz_embed = args.sz_embedding, mrg = args.mrg, alpha = args.alpha).npu()",
      "module holds the proxies Parameter: " + NO_CUDA),
    C("criterion = losses.Proxy_NCA(nb_classes = nb_classes, sz_embed = args.sz_embedding).cuda()",
      "tensor_to_device", "replace", True,
      "criterion = losses.Proxy_NCA(nb_classes = nb_classes, sz_embed = args.sz_embedding).npu()",
      "wraps pml ProxyNCALoss, which owns a proxies Parameter: " + NO_CUDA),
    C("criterion = losses.MultiSimilarityLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = losses.MultiSimilarityLoss().npu()",
      "pml MultiSimilarityLoss/miner own no tensors: .cuda() is a no-op"),
    C("criterion = losses.ContrastiveLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = losses.ContrastiveLoss().npu()", "parameter-less pml loss: no-op"),
    C("criterion = losses.TripletLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = losses.TripletLoss().npu()", "parameter-less pml loss: no-op"),
    C("criterion = losses.NPairLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = losses.NPairLoss().npu()", "parameter-less pml loss: no-op"),
    C("m = model(x.squeeze().cuda())", "tensor_to_device", "replace", True, "m = model(x.squeeze().npu())",
      NO_CUDA),
    C("loss = criterion(m, y.squeeze().cuda())", "tensor_to_device", "replace", True,
      "loss = criterion(m, y.squeeze().npu())", NO_CUDA),
  ])

E("pa_losses", "code/losses.py", "explicit_replacement",
  "Proxy-Anchor code/losses.py (Proxy_Anchor with binarize, pml wrappers, SoftTriple)",
  [
    C("T = torch.FloatTensor(T).cuda()", "tensor_to_device", "replace", True, "T = torch.FloatTensor(T).npu()",
      NO_CUDA),
    C("self.proxies = torch.nn.Parameter(torch.randn(nb_classes, sz_embed).cuda())", "tensor_to_device",
      "replace", True, "self.proxies = torch.nn.Parameter(torch.randn(nb_classes, sz_embed).npu())", NO_CUDA),
    C("self.loss_func = losses.ProxyNCALoss(num_classes = self.nb_classes, embedding_size = self.sz_embed, softmax_scale = self.scale).cuda()",
      "tensor_to_device", "replace", True,
      "self.loss_func = losses.ProxyNCALoss(num_classes = self.nb_classes, embedding_size = self.sz_embed, softmax_scale = self.scale).npu()",
      "ProxyNCALoss owns a Parameter: " + NO_CUDA),
  ])

E("pa_utils", "code/utils.py", "explicit_replacement",
  "Proxy-Anchor code/utils.py (predict_batchwise, Recall@K evaluation with F.linear + topk)",
  [
    C("checkpoint = torch.load(path, map_location=lambda storage, loc: storage.cuda())", "device_type", "replace",
      True, "checkpoint = torch.load(path, map_location='cpu')",
      "map_location lambda moves every storage to CUDA"),
    C('device = "cuda"', "device_type", "replace", False, 'device = "npu"',
      "assigned but never used (the .cuda() call below does the move)"),
    C("J = model(J.cuda())", "tensor_to_device", "replace", True, "J = model(J.npu())", NO_CUDA),
    C("allocated = torch.cuda.memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated() / 1024 ** 2", MEM_NOOP),
    C("reserved = torch.cuda.memory_reserved() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / 1024 ** 2", MEM_NOOP),
  ])


# ---------------------------------------------------------------------------------------------
# Multi-Similarity loss (research-ms-loss, ret_benchmark)
# ---------------------------------------------------------------------------------------------
E("msloss_defaults", "ret_benchmark/config/defaults.py", "device_branch_or_abstraction",
  "research-ms-loss ret_benchmark/config/defaults.py (yacs, MODEL.DEVICE)",
  [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True, '_C.MODEL.DEVICE = "npu"',
      "single source of the device: torch.device(cfg.MODEL.DEVICE) everywhere else"),
    C("_C.VALIDATION.USE_FAISS_GPU = True", "unsupported_op_workaround", "replace", True,
      "_C.VALIDATION.USE_FAISS_GPU = False", FAISS_GPU),
  ])

E("msloss_loss", "ret_benchmark/losses/multi_similarity_loss.py", "explicit_replacement",
  "research-ms-loss ret_benchmark/losses/multi_similarity_loss.py (MS loss, contrastive, margin)",
  [
    C("return torch.zeros([], requires_grad=True).cuda()", "tensor_to_device", "replace", True,
      "return torch.zeros([], requires_grad=True, device=feats.device)",
      "empty-batch path " + NO_CUDA),
  ])

E("msloss_trainer", "ret_benchmark/engine/trainer.py", "device_branch_or_abstraction",
  "research-ms-loss ret_benchmark/engine/trainer.py + utils/feat_extractor.py (do_train, recall@k)",
  [
    C("imgs = batch[0].to('cuda')", "device_type", "replace", True, "imgs = batch[0].to('npu')",
      "hard-coded cuda string in the feature extractor (the training loop uses the configured device)"),
    C("x = torch.from_numpy(feats).cuda()", "tensor_to_device", "replace", True,
      "x = torch.from_numpy(feats).npu()", "kNN fallback path, live once USE_FAISS_GPU is False: " + NO_CUDA),
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0 / 1024.0,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0 / 1024.0,", MEM_NOOP),
  ])


# ---------------------------------------------------------------------------------------------
# DELG re-implementation, DINOv2-based VPR/retrieval backbone, SOLAR environment
# ---------------------------------------------------------------------------------------------
E("delg_extract", "delg/extract_features.py", "explicit_replacement",
  "DELG PyTorch re-implementation: multi-scale global (GeM/MAC) + attention-selected local feature extraction",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("return F.adaptive_max_pool2d(fmap, (1, 1))", "unsupported_op_workaround", "replace", False,
      "return F.max_pool2d(fmap, (fmap.size(-2), fmap.size(-1)))",
      "Ascend 2.7.1 API table marks F.adaptive_max_pool2d as unsupported, yet op-plugin lists an aten kernel - "
      "unconfirmed; global max_pool2d is equivalent and safe"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=use_amp):", AMP_NOOP),
    C("with torch.cuda.amp.autocast(enabled=use_amp, dtype=torch.float16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=use_amp, dtype=torch.float16):", AMP_NOOP),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      NO_CUDA),
    C('device = torch.device("cuda", args.gpu)', "device_type", "replace", True,
      'device = torch.device("npu", args.gpu)', "cuda device object used for model and inputs"),
    C("total_mem_gb = torch.cuda.get_device_properties(args.gpu).total_memory / 2 ** 30", "torch_cuda_api",
      "replace", True, "total_mem_gb = torch.npu.get_device_properties(args.gpu).total_memory / 2 ** 30",
      NO_CUDA + "; total_memory is one of the properties torch_npu provides"),
    C("global_desc = torch.empty((len(paths), dim), dtype=torch.float32).pin_memory()", "pin_memory", "replace",
      False, "global_desc = torch.empty((len(paths), dim), dtype=torch.float32).pin_memory(device='npu')",
      "explicit pin_memory() defaults to the CUDA pinned allocator in older torch; behaviour with torch_npu unconfirmed"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", NO_CUDA),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", NO_CUDA),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", NO_CUDA),
  ])

E("vpr_dinov2_attention", "models/backbones/dinov2/layers/attention.py", "device_branch_or_abstraction",
  "DINOv2 layers/attention.py vendored in a DINOv2-based VPR / landmark-retrieval repo (xFormers, flash SDPA)",
  [
    C("if not torch.cuda.is_available():", "device_capability_check", "add_branch", False,
      "if not (torch.cuda.is_available() or torch.npu.is_available()):",
      "on NPU the check returns False, so 'auto' silently picks the plain O(N^2) attention: performance only"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "add_branch", False,
      "major, _ = torch.cuda.get_device_capability() if torch.cuda.is_available() else (8, 0)",
      "only reached after the branch above admits NPU; sm80 capability has no NPU meaning"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):",
      "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # NPU: plain SDPA dispatches to the fused NPU kernel",
      "torch.backends.cuda.sdp_kernel is unsupported on Ascend (2.7.1 table); unreachable on NPU unless "
      "USE_FLASH_SDP is enabled there"),
  ])

E("solar_env", "environment.yml", "explicit_replacement",
  "SOLAR (ECCV'20) conda environment.yml (pytorch + nvidia channels, cudatoolkit, faiss-gpu)",
  [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "CUDA package channel, nothing from it is needed"),
    C("  - cudatoolkit=11.1", "import_torch_npu", "removal", False, None,
      "CUDA runtime is useless on an NPU host (CANN comes from the system install)"),
    C("  - pytorch=1.8.1", "import_torch_npu", "replace", True, "  - pytorch=2.1.0=*cpu*",
      "conda pytorch from the pytorch channel is a CUDA build with no linux-aarch64 package; torch must match torch_npu"),
    C("  - torchvision=0.9.1", "import_torch_npu", "replace", True, "  - torchvision=0.16.0=*cpu*",
      "pinned to torch 1.8.1"),
    C("  - faiss-gpu=1.7.1", "unsupported_op_workaround", "replace", True, "  - faiss-cpu=1.7.1", FAISS_GPU),
    C("      - tensorboard==2.5.0", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
      "torch-npu pin (pip section) matching torch 2.1.0"),
    C("      - nvidia-ml-py3==7.352.0", "unsupported_op_workaround", "removal", False, None,
      "NVML binding, no NPU equivalent (npu-smi); unused by the training code"),
  ])
