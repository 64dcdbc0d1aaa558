"""Labels for probe419 (hyperspectral classification and unmixing, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit.
`sub` must occur on exactly one line of the file ("=text" = the stripped line equals text).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"

# ---------------------------------------------------------------------------
# SpectralFormer (danfenghong/IEEE_TGRS_SpectralFormer)
# ---------------------------------------------------------------------------
E("sf_demo", "demo.py", X, "danfenghong/IEEE_TGRS_SpectralFormer demo.py (argparse, module-level script, .cuda() everywhere)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; the explicit port calls .npu()/torch.npu, which needs the torch_npu backend loaded "
      "(autoload only from torch_npu 2.5.1; this project predates it)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_id)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu_id)',
      "--gpu_id selects the card only through this variable; CUDA_VISIBLE_DEVICES is ignored by the Ascend "
      "runtime, so --gpu_id 3 would silently train on NPU 0"),
    C("batch_data = batch_data.cuda()", "tensor_to_device", "replace", True, "batch_data = batch_data.npu()",
      "train_epoch input batch; Tensor.cuda() raises on a host without CUDA"),
    C("batch_target = batch_target.cuda()", "tensor_to_device", "replace", True, "batch_target = batch_target.npu()",
      "train_epoch labels"),
    C("batch_data, batch_target = batch_data.cuda(), batch_target.cuda()", "tensor_to_device", "replace", True,
      "batch_data, batch_target = batch_data.npu(), batch_target.npu()", "valid_epoch batch"),
    C("batch_pred = model(batch_data.cuda())", "tensor_to_device", "replace", True,
      "batch_pred = model(batch_data.npu())", "test_epoch (full-image map) batch"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "torch.cuda.manual_seed is lazily queued and does nothing without CUDA; torch.manual_seed on the line above "
      "also seeds the NPU generator on recent torch_npu (unconfirmed for old versions), so reproducibility only"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "model parameters must live on the NPU"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = nn.CrossEntropyLoss().npu()",
      "CrossEntropyLoss without class weights has no tensors; Module.cuda() only maps over tensors, so it never "
      "touches CUDA and does not fail. Changed for consistency only"),
    C("model.load_state_dict(torch.load(ckpt_path))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(ckpt_path, map_location='cpu'))",
      "the released ./log checkpoints were saved from a GPU model: unpickling CUDA storages without "
      "map_location raises when torch.cuda.is_available() is False"),
])
E("sf_vit", "vit_pytorch.py", X, "danfenghong/IEEE_TGRS_SpectralFormer vit_pytorch.py (device-agnostic model, CAF skip connections)", [])
E("sf_run", "run.sh", X, "SpectralFormer README commands collected into a launcher (passes --gpu_id only)", [])

# ---------------------------------------------------------------------------
# DeepHyperX (nshaud/DeepHyperX)
# ---------------------------------------------------------------------------
E("dhx_main", "main.py", X, "nshaud/DeepHyperX main.py (--cuda ordinal, torchsummary, visdom)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; utils.get_device() uses torch.npu after the port"),
    C("summary(model.to(hyperparams['device']), input.size()[1:])", "device_type", "replace", True,
      "summary(model.to('cpu'), input.size()[1:], device='cpu')",
      "torchsummary.summary defaults to device='cuda' and only accepts 'cuda'/'cpu': on an NPU host it builds CPU "
      "inputs and feeds them to a model that was moved to the NPU -> device mismatch error. Summarise on CPU; "
      "train() moves the net back with net.to(device)"),
    C("model.load_state_dict(torch.load(CHECKPOINT))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(CHECKPOINT, map_location='cpu'))",
      "--restore checkpoints are typically GPU-trained (save_model stores a CUDA state_dict); without "
      "map_location torch.load raises on a host without CUDA"),
])
E("dhx_models", "models.py", X, "nshaud/DeepHyperX models.py (get_model, 1-D/3-D CNN baselines, GRU, train/test/val take a device)", [])
E("dhx_utils", "utils.py", X, "nshaud/DeepHyperX utils.py (get_device, metrics, sampling)", [
    C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True, "elif torch.npu.is_available():",
      "left as is, --cuda N silently falls through to the CPU branch on an NPU host"),
    C("device = torch.device('cuda:{}'.format(ordinal))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(ordinal))", "the device every model/tensor is moved to"),
])
E("dhx_datasets", "datasets.py", X, "nshaud/DeepHyperX datasets.py (HyperX Dataset, downloads; pure numpy/CPU)", [])
E("dhx_inference", "inference.py", X, "nshaud/DeepHyperX inference.py (apply a saved model to a new image)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "second entry script"),
    C("model.load_state_dict(torch.load(CHECKPOINT))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(CHECKPOINT, map_location='cpu'))",
      "checkpoint produced by main.py on a GPU; CUDA storages cannot be restored without map_location"),
])
E("dhx_docker", "Dockerfile", X, "DeepHyperX-style Dockerfile on a pytorch/pytorch CUDA runtime image", [
    C("FROM pytorch/pytorch:1.4-cuda10.1-cudnn7-runtime", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "the CUDA runtime image has no CANN toolkit; base on a CANN image (tag naming as in Ascend/cann-container-image; "
      "registry path unconfirmed). The container also needs the Ascend docker runtime / device mounts instead of --gpus"),
    C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir torch-npu==2.1.0.post10",
      "the CANN base image carries no PyTorch; install CPU torch + the matching torch_npu wheel (2.1.0.post10 pairs "
      "with CANN 8.0.0 in the version matrix)"),
])
E("dhx_requirements", "requirements.txt", X, "DeepHyperX requirements.txt (torch installed separately)", [])

# ---------------------------------------------------------------------------
# DBDA / SSRN / FDSSC PyTorch benchmark (lironui/Double-Branch-Dual-Attention-Mechanism-Network)
# ---------------------------------------------------------------------------
E("dbda_network", "global_module/network.py", X, "lironui/Double-Branch-Dual-Attention-Mechanism-Network global_module/network.py (SSRN, DBDA, 3-D conv + CAM/PAM attention)", [])
E("dbda_train", "global_module/train.py", X, "lironui DBDA global_module/train.py (device passed in, early stopping)", [])
E("dbda_genpic", "global_module/generate_pic.py", X, "lironui DBDA global_module/generate_pic.py (loaders, sampling, maps)", [])
E("dbda_main_in", "DBDA/DBDA_IN.py", X, "lironui DBDA DBDA/main script for Indian Pines (module-level device, torchsummary)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "otherwise the whole Monte-Carlo benchmark silently runs on the CPU"),
    C("summary(net.to(device), (1, img_rows, img_cols, BAND))", "device_type", "replace", True,
      "summary(net, (1, img_rows, img_cols, BAND), device='cpu')",
      "torchsummary's default device='cuda' makes CPU inputs on a non-CUDA host while the net sits on the NPU -> "
      "device mismatch; summarise on CPU (train.train moves the net to the NPU)"),
])
E("dbda_ssrn_up", "SSRN/SSRN_UP.py", X, "lironui DBDA SSRN/ script for Pavia University (hard-coded cuda:0, synchronize timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "hard-coded training device"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() raises 'Torch not compiled with CUDA enabled'; NPU kernels are asynchronous too, so "
      "the test timing needs the NPU barrier"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA was never initialised; releasing the NPU cache between runs is "
      "memory hygiene only"),
])

# ---------------------------------------------------------------------------
# HybridSN PyTorch port (gokriznastic/HybridSN is Keras; common PyTorch re-implementations)
# ---------------------------------------------------------------------------
E("hybridsn_train", "HybridSN.py", X, "PyTorch port of gokriznastic/HybridSN (3-D/2-D CNN, AMP, DataParallel, CUDA-event timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs = inputs.npu(non_blocking=True)", "training batch"),
    C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.npu(non_blocking=True)", "training labels"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "CUDA autocast does not cover NPU ops: with --amp the run would silently stay fp32"),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "evaluation batch in predict()"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed above already seeds (reproducibility only, unconfirmed "
      "for old torch_npu)"),
    C("print('Using GPU: %s' % torch.cuda.get_device_name(0))", "torch_cuda_api", "replace", True,
      "print('Using NPU: %s' % torch.npu.get_device_name(0))",
      "get_device_name initialises CUDA and raises on a non-CUDA build"),
    C("net = HybridSN(bands=args.pca, window=args.window, num_classes=num_classes).cuda()", "tensor_to_device",
      "replace", True, "net = HybridSN(bands=args.pca, window=args.window, num_classes=num_classes).npu()",
      "model to the NPU"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n_gpu = torch.npu.device_count()",
      "only gates the DataParallel wrap (removed below) and a log line; unported it reads 0 and the single-card path "
      "runs unchanged"),
    C("net = nn.DataParallel(net)", "unsupported_op_workaround", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Ascend (use DDP for several NPUs); with the device count ported it "
      "would be reached on any multi-NPU host"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "the CUDA scaler disables itself without CUDA, so fp16 NPU gradients would go unscaled (underflow)"),
    C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)", "torch_cuda_api",
      "replace", True, "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be recorded without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; needed before elapsed_time on the NPU events"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
      "--gpus is honoured only through this variable; set before the first NPU call"),
])
E("hybridsn_predict", "predict_map.py", X, "HybridSN PyTorch port: full-scene classification map (map_location='cuda:0')", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("ckpt = torch.load(args.ckpt, map_location='cuda:0')", "tensor_to_device", "replace", True,
      "ckpt = torch.load(args.ckpt, map_location='cpu')",
      "mapping to cuda:0 fails without CUDA; load on CPU, load_state_dict copies into the NPU model"),
    C("net = net.to('cuda:0').eval()", "device_type", "replace", True, "net = net.to('npu:0').eval()",
      "inference device"),
    C("logits = net(batch.to('cuda:0', non_blocking=True))", "device_type", "replace", True,
      "logits = net(batch.to('npu:0', non_blocking=True))", "input rows to the NPU"),
])

# ---------------------------------------------------------------------------
# HyperSIGMA (WHU-Sigma/HyperSIGMA): MAE-style pre-training + downstream classification
# ---------------------------------------------------------------------------
E("hsig_pretrain", "SpatialPretrain/main_pretrain.py", X, "WHU-Sigma/HyperSIGMA spatial pre-training main (MAE main_pretrain.py lineage, DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "torch.device(args.device) drives model.to() and every batch transfer; 'cuda' fails on an NPU host"),
])
E("hsig_engine", "SpatialPretrain/engine_pretrain.py", X, "HyperSIGMA / MAE engine_pretrain.py (autocast + loss scaler + synchronize)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "CUDA autocast is inert for NPU tensors: pre-training would silently run fp32 (2x memory) while the "
      "loss scaler assumes fp16"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; called every iteration"),
])
E("hsig_misc", "SpatialPretrain/util/misc.py", X, "HyperSIGMA / MAE util/misc.py (init_distributed_mode, NativeScaler, MetricLogger)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "HCCL all_reduce needs an NPU tensor. The float64 is left: torch_npu casts it to fp32 with a warning, "
      "harmless for step counts and loss sums"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False, "use_cuda = torch.npu.is_available()",
      "only decides whether the 'max mem' column is printed"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "torch.cuda.max_memory_allocated returns 0 when CUDA was never initialised: wrong log value, no failure"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: device_count() is 0 without CUDA -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "binds each rank to its NPU before HCCL init"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "the CUDA GradScaler disables itself without CUDA: fp16 gradients would be unscaled"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True, "x_reduce = torch.tensor(x).npu()",
      "all_reduce_mean input for the HCCL all_reduce"),
])
E("hsig_lrsched", "SpatialPretrain/util/lr_sched.py", X, "MAE util/lr_sched.py (cosine schedule, layer-wise lr decay)", [])
E("hsig_spatvit", "model/spat_vit_model.py", X, "HyperSIGMA spatial ViT with sparse sampling attention (Deformable-DETR sampler with optional compiled op)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "a CUDA autocast context does not switch off NPU autocast, so the offset/sampling block would run in fp16 "
      "under the ported training autocast. Precision effect on the sampler unconfirmed"),
])
E("hsig_ops_setup", "model/ops/setup.py", X, "Deformable-DETR models/ops/setup.py as vendored for the sampling attention (CUDAExtension)", [
    C("extension = CUDAExtension", "custom_cuda_extension", "replace", False,
      "extension = NpuExtension  # torch_npu.utils.cpp_extension.NpuExtension over an Ascend C port of ms_deform_attn",
      "optional speed-up only: the model falls back to the grid_sample implementation when the op is not built, and "
      "the call site already guards on value.is_cuda. Porting needs a kernel rewrite"),
])
E("hsig_cls", "ImageClassification/train_cls.py", X, "HyperSIGMA ImageClassification fine-tuning script (torch.autocast('cuda'), memory stats)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "with --fp16 the CUDA scaler would disable itself while NPU autocast produces fp16 gradients"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "unlike max_memory_allocated, reset_peak_memory_stats has no is_initialized guard: it resolves the current CUDA "
      "device and raises without CUDA"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.fp16):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=args.fp16):",
      "device_type='cuda' only warns and disables itself without CUDA: --fp16 silently ignored"),
    C("torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 2 ** 20))", "log value only (reads 0 without CUDA)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; freeing the NPU cache between runs is hygiene only"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises on a non-CUDA build"),
    C("device = torch.device(f'cuda:{args.gpu}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{args.gpu}')", "training/eval device"),
])
E("hsig_pretrain_sh", "SpatialPretrain/scripts/pretrain.sh", X, "HyperSIGMA pre-training launcher (torch.distributed.launch, 8 GPUs)", [
    C("=nvidia-smi", "torch_cuda_api", "replace", False, "npu-smi info",
      "informational device listing; the script has no set -e, so a missing nvidia-smi only prints an error"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "it lists every card of an 8-device node, so ignoring it changes nothing; ported for explicitness"),
    C("export OMP_NUM_THREADS=1", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN library/env setup before torch_npu is imported (unless the login shell/container already exports it)"),
])

# ---------------------------------------------------------------------------
# HySUPP unmixing benchmark (BehnoodRasti/HySUPP): hydra, CNNAEU, MiSiCNet, EDAA, SUnCNN
# ---------------------------------------------------------------------------
E("hysupp_entry", "unmixing.py", X, "BehnoodRasti/HySUPP unmixing.py hydra entry point", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; models call torch.npu after the port"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(cfg.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(cfg.gpu)',
      "cfg.gpu selects the card only through this variable; it is set before any model touches the device "
      "(relies on lazy NPU initialisation, unconfirmed)"),
])
E("hysupp_config", "config/config.yaml", X, "HySUPP config/config.yaml (hydra defaults, device key)", [
    C("device: cuda", "device_type", "replace", True, "device: npu",
      "passed to every torch-based model (src/blind.py); EDAA builds torch.device(cfg.device) directly"),
])
E("hysupp_blind", "src/blind.py", X, "HySUPP src/blind.py (runs, alignment, metrics; device comes from the config)", [])
E("hysupp_metrics", "src/utils/metrics.py", X, "HySUPP src/utils/metrics.py (SAD, aRMSE, SRE in numpy)", [])
E("hysupp_cnnaeu", "src/model/blind/cnnaeu.py", X, "HySUPP CNNAEU (Palsson et al.) re-implementation", [
    C('device="cuda",', "device_type", "replace", False, 'device="npu",',
      "default only; the benchmark always passes device from config.yaml"),
    C('self.device = torch.device(device if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", True,
      'self.device = torch.device(device if torch.npu.is_available() else "cpu")',
      "with the CUDA check the model silently trains on the CPU on an NPU host"),
])
E("hysupp_misicnet", "src/model/blind/misicnet.py", X, "HySUPP MiSiCNet (Rasti et al.) with the DIP-style module-level dtype = torch.cuda.FloatTensor", [
    C("dtype = torch.cuda.FloatTensor", "device_type", "replace", True, "dtype = torch.npu.FloatTensor",
      "every net/tensor goes through .type(dtype); torch.npu.FloatTensor is the legacy NPU tensor type exported by "
      "torch_npu (same mapping transfer_to_npu uses)"),
])
E("hysupp_edaa", "src/model/blind/edaa.py", X, "HySUPP EDAA (entropic descent archetypal analysis) in torch, float64", [
    C('device="cuda",', "device_type", "replace", False, 'device="npu",',
      "default only; the benchmark passes cfg.device"),
    C("self.dtype = torch.float64", "unsupported_op_workaround", "replace", False, "self.dtype = torch.float32",
      "Ascend has no fp64: torch_npu casts double to float with a warning. Making fp32 explicit keeps the "
      "behaviour visible; the numerical effect on the entropic updates is unconfirmed"),
])
E("hysupp_suncnn", "src/model/semi/suncnn.py", X, "HySUPP SUnCNN (Rasti & Koirala) semi-supervised sparse unmixing, .cuda() style", [
    C("=self.cuda()", "tensor_to_device", "replace", True, "self.npu()", "module to the NPU"),
    C("net_input = net_input.cuda()", "tensor_to_device", "replace", True, "net_input = net_input.npu()",
      "network input"),
    C("Y_target = Y_img.cuda()", "tensor_to_device", "replace", True, "Y_target = Y_img.npu()", "target image"),
    C("D_t = torch.from_numpy(D.astype(np.float32)).cuda()", "tensor_to_device", "replace", True,
      "D_t = torch.from_numpy(D.astype(np.float32)).npu()", "spectral library"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene only (no-op without CUDA)"),
])
E("hysupp_env", "environment.yml", X, "HySUPP environment.yml (conda, pytorch + pytorch-cuda)", [
    C("- pytorch-cuda=11.8", "import_torch_npu", "replace", False, "- cpuonly",
      "torch_npu runs on a CPU torch build; pytorch-cuda pulls the CUDA variant and is not published for "
      "linux-aarch64 (most Ascend hosts). Whether the CUDA build breaks torch_npu on x86 is unconfirmed"),
    C("- spectral", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "the ported code imports torch_npu; 2.1.0.postN must match pytorch=2.1.0 and the host CANN version"),
])
