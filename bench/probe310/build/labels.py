"""Labels for probe310: deep learning for wireless communications (CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. `required` is True only when the
unchanged line fails, computes something wrong, or silently does the wrong thing on an Ascend
host (CPU-only torch build + torch_npu); performance-only edits, silent no-ops and claims not
confirmed in /work/shared/knowledge are False.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point / self-test that will reference torch.npu after the port; torch_npu must be "
               "imported (mandatory before torch_npu 2.5.1, still recommended with autoload)")
SEED_NOTE = ("torch.manual_seed() a few lines above already seeds every device; on a CPU-only torch build "
             "torch.cuda.manual_seed* is queued lazily and never runs, so this is a silent no-op")
PIN_NOTE = ("without CUDA, DataLoader pinning is silently skipped unless pin_memory_device='npu' is given "
            "(unconfirmed in the knowledge notes); performance only")

# ---------------------------------------------------------------------------------------------
E("csinet-main", "main.py", "explicit_replacement",
  "CsiNet PyTorch re-implementation main.py (COST2100 CSI feedback)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; --gpu would silently select nothing"),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()",
        "returns False on an NPU host, so the whole script silently trains on CPU"),
      C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if use_cuda else "cpu")', "cuda device string"),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        'print("=> using NPU(s):", args.gpu, torch.npu.get_device_name(0))',
        "torch.cuda.get_device_name lazily initialises CUDA and raises on a CPU-only build"),
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "x = x.npu(non_blocking=True)", ".cuda() raises 'Torch not compiled with CUDA enabled'"),
      C("x = torch.from_numpy(x_test).cuda()", "tensor_to_device", "replace", True,
        "x = torch.from_numpy(x_test).npu()", ".cuda() on the test set"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises on a CPU-only build; NPU timing needs torch.npu.synchronize"),
      C("torch.cuda.synchronize()  # wait for the forward", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the forward kernels before stopping the clock",
        "second synchronize of the latency measurement"),
      C("pin_memory=True, drop_last=False", "pin_memory", "replace", False,
        "shuffle=True, num_workers=4, pin_memory=True, pin_memory_device=\"npu\", drop_last=False", PIN_NOTE),
      C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
        "pass  # nn.DataParallel is unsupported on Ascend; launch with torchrun + DDP for several NPUs",
        "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 (Ascend API list, msFmkTransplt notes)"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "Module.cuda()"),
      C("criterion = nn.MSELoss().cuda()", "tensor_to_device", "replace", False, "criterion = nn.MSELoss().npu()",
        "MSELoss has no parameters or buffers, so Module.cuda() touches no tensor and does not raise; "
        "changed only for consistency"),
      C('map_location="cuda:0"', "device_type", "replace", True,
        'state = torch.load(ckpt, map_location="npu:0")', "map_location to a cuda device fails without CUDA"),
      C("torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
        "epoch, lr, train_loss, val_loss, torch.npu.max_memory_allocated() / 2 ** 20))",
        "uninitialised CUDA allocator just reports 0 MB; log value only"),
  ])

E("csinet-model", "models/csinet.py", "explicit_replacement",
  "CsiNet / CsiNet+ / CsiNet-LSTM model definitions with a __main__ latency benchmark", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the __main__ benchmark uses npu device/events after the port; " + IMPORT_NOTE),
      C(".cuda().eval()", "tensor_to_device", "replace", True, "net = csinet(encoded_dim=128).npu().eval()",
        "Module.cuda() on a model with parameters raises without CUDA"),
      C("x = torch.rand(200, 2, 32, 32).cuda()", "tensor_to_device", "replace", True,
        "x = torch.rand(200, 2, 32, 32).npu()", "tensor .cuda()"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA Event is a dummy class on a CPU-only build and raises"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA Event"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "synchronize before reading elapsed_time"),
  ])

E("crnet-init", "utils/init.py", "explicit_replacement",
  "CRNet utils/init.py (init_device / init_model)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "init_device is where the device is chosen (torch.npu.* after the port); " + IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)', "--gpu selection is silently ignored on NPU"),
      C("if not cpu and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not cpu and torch.npu.is_available():", "False on NPU hosts -> silently runs on CPU"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "cuda device string"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
  ])

E("crnet-solver", "utils/solver.py", "explicit_replacement",
  "CRNet utils/solver.py Trainer/Tester (device passed in, mostly device-agnostic)", [
      C("checkpoint = torch.load(self.resume_file)", "tensor_to_device", "replace", False,
        "checkpoint = torch.load(self.resume_file, map_location=self.device)",
        "only fails when resuming a checkpoint that was written on a CUDA machine (tensors restore to cuda); "
        "checkpoints written by this run on NPU load fine"),
  ])

E("crnet-dataset", "dataset/cost2100.py", "explicit_replacement",
  "CRNet dataset/cost2100.py with the CUDA-stream PreFetcher", [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "CUDA Stream is a dummy class on a CPU-only build and raises; PreFetcher is enabled whenever pin_memory"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "stream context"),
      C("tensor.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_input[idx] = tensor.npu(non_blocking=True)", "async H2D copy"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "current_stream initialises CUDA and raises"),
      C("tensor.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "tensor.record_stream(torch.npu.current_stream())", "record_stream on the NPU stream"),
  ])

E("transnet-main", "main.py", "explicit_replacement",
  "TransNet (transformer CSI feedback) main.py with torch.cuda.amp and DataParallel", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
        "from torch.npu.amp import GradScaler, autocast",
        "torch.cuda.amp autocast does not cover NPU ops and GradScaler disables itself without CUDA: "
        "--amp silently trains in fp32; the autocast/GradScaler call sites need no change once this import is fixed"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C("h = h.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "h = h.npu(non_blocking=True)",
        "tensor .cuda()"),
      C("dummy = torch.randn(1, 2, 32, 32).cuda()", "tensor_to_device", "replace", True,
        "dummy = torch.randn(1, 2, 32, 32).npu()", "ONNX export dummy input"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu', "device selection ignored on NPU"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():", "the script exits(1) on every NPU host"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "cuda device string"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "n_gpu = torch.npu.device_count()",
        "returns 0 on NPU; only feeds the log line and the DataParallel switch (which must stay off on NPU)"),
      C("torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", True,
        'logger.info("visible NPUs: %d (%s)", n_gpu, torch.npu.get_device_name(device))',
        "get_device_name raises on a CPU-only build"),
      C("num_workers=args.workers, pin_memory=True,", "pin_memory", "replace", False,
        "num_workers=args.workers, pin_memory=True,  # also enables the (ported) NPU-stream PreFetcher",
        PIN_NOTE),
      C("model = nn.DataParallel(model, device_ids=list(range(n_gpu)))", "distributed_framework", "replace", True,
        "pass  # nn.DataParallel is unsupported on Ascend; use torchrun + DDP for multi-NPU",
        "DataParallel is unsupported on Atlas A2/A3; reachable as soon as n_gpu counts NPUs"),
      C("torch.cuda.max_memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated(device) / 1024 ** 3)", "logs 0 GB without CUDA; log only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op when CUDA is not initialised"),
  ])

E("llm4cp-model", "models/GPT4CP.py", "explicit_replacement",
  "LLM4CP GPT-2 based channel-prediction model (models/GPT4CP.py)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "needed for torch_npu.npu_fusion_attention and the npu device of __main__; " + IMPORT_NOTE),
      C("if self.use_flash and x.is_cuda", "attention_kernel", "add_branch", False,
        'elif x.device.type == "npu" and x.dtype in (torch.float16, torch.bfloat16): '
        'out = torch_npu.npu_fusion_attention(q, k, v, self.n_heads, "BSND", keep_prob=1 - p, '
        'scale=1 / math.sqrt(self.head_dim))[0]',
        "flash_attn cannot be installed on NPU, so the guarded import falls back to the math path, which is "
        "correct; an npu_fusion_attention branch is a speed-up only"),
      C('device = torch.device("cuda:{}".format(gpu_id))', "device_type", "replace", True,
        'device = torch.device("npu:{}".format(gpu_id))', "use_gpu=1 is the default"),
      C('self.gpt2.to(device=torch.device(f"cuda:{gpu_id}"))', "device_type", "replace", True,
        'self.gpt2.to(device=torch.device(f"npu:{gpu_id}"))', "moves the GPT-2 backbone to a cuda device"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "__main__ smoke test"),
  ])

E("llm4cp-train", "train.py", "explicit_replacement",
  "LLM4CP train/test script with RNN/LSTM/GRU/Transformer/PAD baselines", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = gpu_list', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = gpu_list', "device selection ignored on NPU"),
      C("drop_last=False, pin_memory=True)", "pin_memory", "replace", False,
        "drop_last=False, pin_memory=True, pin_memory_device=\"npu\")", PIN_NOTE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises on a CPU-only build; per-sample latency needs an NPU sync"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "cuda device string"),
      C('print("Using %d GPU(s): %s" % (torch.cuda.device_count(), gpu_list))', "torch_cuda_api", "replace", False,
        'print("Using %d NPU(s): %s" % (torch.npu.device_count(), gpu_list))', "prints 0; log only"),
      C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
        "if False:  # DataParallel is unsupported on Ascend",
        "returns 0 on NPU, which happens to keep DataParallel off"),
      C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
        "pass  # use DDP (torchrun) for several NPUs",
        "DataParallel is unsupported on Atlas A2/A3; reachable once the device count is ported"),
      C("storage.cuda(0)", "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.ckpt, map_location=lambda storage, loc: storage.npu(0))",
        "map_location callable calls storage.cuda()"),
  ])

E("channelnet-train", "train_channelnet.py", "explicit_replacement",
  "ChannelNet (SRCNN + DnCNN) channel-estimation training with torch.cuda.amp", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('default="cuda:0"', "device_type", "replace", True,
        'p.add_argument("--device", type=str, default="npu:0")', "default device string"),
      C('torch.set_default_tensor_type("torch.cuda.FloatTensor")', "torch_cuda_api", "replace", True,
        'torch.set_default_tensor_type("torch.npu.FloatTensor")',
        "torch.cuda.FloatTensor cannot be constructed without CUDA; every factory call would fail"),
      C('generator=torch.Generator(device="cuda")', "device_type", "replace", True,
        'generator=torch.Generator(device="npu").manual_seed(0))',
        "random_split needs a generator on the default tensor device"),
      C("pin_memory=True, drop_last=True", "pin_memory", "replace", False,
        "num_workers=args.workers, pin_memory=True, pin_memory_device=\"npu\", drop_last=True)", PIN_NOTE),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "CUDA GradScaler disables itself without CUDA: --amp silently runs without loss scaling"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.amp):",
        "cuda autocast does not apply to NPU ops: --amp silently trains in fp32"),
  ])

E("deepmimo-beam-train", "beam_prediction/train.py", "explicit_replacement",
  "DeepMIMO / ViWi beam-prediction training (GRU sequence model, sub-6 GHz to mmWave MLP)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = torch.device(f"cuda:{GPU_ID}"', "device_type", "replace", True,
        'device = torch.device(f"npu:{GPU_ID}" if torch.npu.is_available() else "cpu")',
        "module-level device: silently CPU on NPU hosts"),
      C("self.gru = nn.GRU(", "unsupported_op_workaround", "replace", False,
        "self.gru = nn.GRU(embed_size, hidden_size, num_layers, dropout=0.0, batch_first=True)",
        "Ascend's 2.7.1 API list says nn.GRU does not support the dropout argument; whether it is ignored or "
        "rejected is unconfirmed (move the dropout between layers by hand)"),
      C("torch.zeros(self.num_layers, batch_size, self.hidden_size).cuda()", "tensor_to_device", "replace", True,
        "return torch.zeros(self.num_layers, batch_size, self.hidden_size, device=self.fc.weight.device)",
        "initial hidden state created with .cuda()"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guards only seeding and cudnn flags; skipping it on NPU changes nothing (torch.manual_seed seeds NPU)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C("=pin_memory=True)", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu")', PIN_NOTE),
      C("pin_memory=True, persistent_workers=True)", "pin_memory", "replace", False,
        'pin_memory=True, pin_memory_device="npu", persistent_workers=True)', PIN_NOTE),
      C("beams, target = beams.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "beams, target = beams.to(device), target.to(device)", "validation batch .cuda()"),
      C("pos = pos.cuda() if args.use_pos else None", "tensor_to_device", "replace", True,
        "pos = pos.to(device) if args.use_pos else None", "validation positions .cuda()"),
      C("net = Sub6ToMmWave(train_set.in_dim, args.codebook).cuda()", "tensor_to_device", "replace", True,
        "net = Sub6ToMmWave(train_set.in_dim, args.codebook).to(device)", "Module.cuda()"),
      C("torch.cuda.get_device_name(GPU_ID) if torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "print(f\"device: {device}  ({torch.npu.get_device_name(GPU_ID) if torch.npu.is_available() else 'cpu'})\")",
        "guarded, so it just prints 'cpu'; log only"),
  ])

E("deepmimo-dataset", "beam_prediction/dataset.py", "explicit_replacement",
  "DeepMIMO beam-label generation (DFT codebook search on GPU) and datasets", [
      C('LABEL_DEVICE = "cuda"', "device_type", "replace", True, 'LABEL_DEVICE = "npu"',
        "default device of best_beams(); .to('cuda') fails"),
      C("y = torch.matmul(h.transpose(1, 2).conj(), F)", "unsupported_op_workaround", "replace", False,
        "y = torch.complex(hr.mT @ F.real + hi.mT @ F.imag, hr.mT @ F.imag - hi.mT @ F.real)  # hr/hi = h.real/h.imag",
        "complex64 matmul: Ascend's 2.7.1 list gives torch.matmul input dtypes bf16/fp16/fp32 only; may fail or "
        "fall back to CPU (unconfirmed); a real-valued split keeps it on the cube unit"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("deepjscc-train", "train.py", "explicit_replacement",
  "Deep JSCC (Bourtsoulatze et al.) PyTorch training script with --gpu list and DataParallel", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "calls into torch._C CUDA bindings absent from CPU builds"),
      C("starter, ender = torch.cuda.Event", "torch_cuda_api", "replace", True,
        "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)", "CUDA events"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises on CPU-only build"),
      C("torch.cuda.max_memory_allocated(device) / 2 ** 20))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated(device) / 2 ** 20))", "reports 0 MB; log only"),
      C('if cfg["device"] == "cuda":', "device_type", "replace", True, 'if cfg["device"] == "npu":',
        "with the config ported to 'npu' this comparison is False and training silently runs on CPU"),
      C("torch.cuda.set_device(gpu_ids[0])", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_ids[0])",
        "raises without CUDA"),
      C('device = torch.device("cuda", gpu_ids[0])', "device_type", "replace", True,
        'device = torch.device("npu", gpu_ids[0])', "cuda device"),
      C("model = nn.DataParallel(model, device_ids=gpu_ids", "distributed_framework", "replace", True,
        "raise SystemExit('multi-NPU needs DDP: nn.DataParallel is unsupported on Ascend')",
        "DataParallel unsupported on Atlas A2/A3"),
      C("pin_memory=True, drop_last=True", "pin_memory", "replace", False,
        'num_workers=cfg["num_workers"], pin_memory=True, pin_memory_device="npu", drop_last=True)', PIN_NOTE),
      C('=num_workers=cfg["num_workers"], pin_memory=True)', "pin_memory", "replace", False,
        'num_workers=cfg["num_workers"], pin_memory=True, pin_memory_device="npu")', PIN_NOTE),
  ])

E("deepjscc-config", "configs/cifar10_awgn.json", "explicit_replacement",
  "Deep JSCC JSON experiment config", [
      C('"device": "cuda",', "device_type", "replace", True, '"device": "npu",',
        "train.py builds the device from this string"),
  ])

E("deepjscc-channel", "models/channel.py", "explicit_replacement",
  "Deep JSCC channel layers (AWGN, slow/fast Rayleigh, phase noise, MIMO-SVD) on complex64", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "for the __main__ self-test; " + IMPORT_NOTE),
      C("h = torch.complex(h_re, h_im).cuda()", "tensor_to_device", "replace", True,
        "h = torch.complex(h_re, h_im).to(z.device)", "hard-coded .cuda() inside forward"),
      C('h = torch.randn(z.shape, dtype=torch.cfloat, device="cuda")', "device_type", "replace", True,
        "h = torch.randn(z.shape, dtype=torch.cfloat, device=z.device)", "hard-coded cuda device in forward"),
      C('x = torch.randn(16, 16, 8, 8, device="cuda")', "device_type", "replace", True,
        'x = torch.randn(16, 16, 8, 8, device="npu")', "__main__ self-test"),
  ])

E("deepjscc-ofdm", "models/ofdm.py", "explicit_replacement",
  "Deep JSCC OFDM channel (IFFT/CP/multipath/LS-MMSE equalisation, PAPR clipping)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "for the __main__ self-test; " + IMPORT_NOTE),
      C("self.pilot = self.pilot.cuda()", "tensor_to_device", "replace", True,
        'self.register_buffer("pilot", self.pilot)',
        "plain attribute pinned to cuda in __init__; a buffer follows model.to(device)"),
      C("X = torch.fft.ifftshift(X, dim=-1)", "unsupported_op_workaround", "replace", False,
        "X = torch.roll(X, shifts=-(self.M // 2), dims=-1)",
        "torch.fft.ifftshift is listed unsupported (Ascend 2.7.1 list and msFmkTransplt), yet op-plugin has a "
        "fft_ifftshift kernel: unconfirmed; only used when centered=True"),
      C("X = torch.fft.fftshift(X, dim=-1)", "unsupported_op_workaround", "replace", False,
        "X = torch.roll(X, shifts=self.M // 2, dims=-1)",
        "same contradiction for fftshift; unconfirmed, only when centered=True"),
      C("z = torch.randn(8, 1024, dtype=torch.complex64).cuda()", "tensor_to_device", "replace", True,
        "z = torch.randn(8, 1024, dtype=torch.complex64).npu()", "__main__ self-test"),
  ])

E("deepsc-utils", "utils.py", "explicit_replacement",
  "DeepSC utils.py (module-level device, channels, masks, train/val steps, greedy decoding)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the module-level device probe uses torch.npu after the port and every script imports it from here"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
        "silently CPU on NPU hosts; every other line uses .to(device)"),
  ])

E("deepsc-main", "main.py", "explicit_replacement",
  "DeepSC main.py training loop (europarl) with the performance/BLEU helper", [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'  # move above the imports: utils probes the NPU at import",
        "ignored on NPU; and the ported variable must be set before utils.py touches the NPU runtime"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        SEED_NOTE),
      C("=pin_memory=True, collate_fn=collate_data)", "pin_memory", "replace", False,
        'pin_memory=True, pin_memory_device="npu", collate_fn=collate_data)', PIN_NOTE),
      C("num_workers=0, pin_memory=True,", "pin_memory", "replace", False,
        'train_iterator = DataLoader(train_eur, batch_size=args.batch_size, num_workers=0, pin_memory=True, '
        'pin_memory_device="npu",', PIN_NOTE),
      C("checkpoint = torch.load(model_path)", "tensor_to_device", "replace", False,
        "checkpoint = torch.load(model_path, map_location=device)",
        "fails only for checkpoints written on a CUDA machine (e.g. the published DeepSC weights)"),
      C("torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "print('device: {} | NPUs visible: {}'.format(device, torch.npu.device_count()))", "prints 0; log only"),
  ])

E("swinjscc-eval", "eval_swinjscc.py", "transfer_to_npu",
  "SwinJSCC / WITT evaluation script (PSNR/MS-SSIM sweep, NVTX ranges, pynvml utilisation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "automatic migration: the .cuda()/torch.device('cuda:0')/synchronize/map_location lines are rewritten "
        "by transfer_to_npu at runtime and are deliberately left unlabelled"),
      C("=import torch.nn as nn", "import_torch_npu", "npu_only_addition", True,
        "from torch_npu.contrib import transfer_to_npu", "enables the runtime cuda->npu patching"),
      C("=import pynvml", "torch_cuda_api", "removal", False, None,
        "NVML has no Ascend backend; the import itself succeeds, the calls below do not"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus', "transfer_to_npu does not translate env vars"),
      C("util = pynvml.nvmlDeviceGetUtilizationRates(handle)", "torch_cuda_api", "replace", True,
        "util = torch.npu.utilization()", "NVML query; use the NPU utilisation API"),
      C("mem = pynvml.nvmlDeviceGetMemoryInfo(handle)", "torch_cuda_api", "replace", True,
        "free, total = torch.npu.mem_get_info()", "NVML memory query"),
      C("return util.gpu, mem.used / 2 ** 20", "torch_cuda_api", "replace", True,
        "return util, (total - free) / 2 ** 20", "follows the two replacements above"),
      C("torch.cuda.nvtx.range_push(", "torch_cuda_api", "replace", True,
        'rid = torch_npu.npu.mstx.range_start("swinjscc_forward_snr%d" % snr)',
        "torch.cuda.nvtx is not redirected by transfer_to_npu and raises without CUDA; mstx is the NPU counterpart"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rid)",
        "with --profile"),
      C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
        "raises NVMLError (libnvidia-ml not found) on an Ascend host"),
      C("handle = pynvml.nvmlDeviceGetHandleByIndex(0)", "torch_cuda_api", "replace", True, "handle = 0",
        "NVML handle"),
      C('logger.info("GPU: %s" % pynvml.nvmlDeviceGetName(handle))', "torch_cuda_api", "replace", True,
        'logger.info("NPU: %s" % torch.npu.get_device_name(0))', "NVML device name"),
      C("net = nn.DataParallel(net)", "distributed_framework", "replace", True,
        "pass  # DataParallel is unsupported on Ascend even with transfer_to_npu",
        "msFmkTransplt/transfer_to_npu limitation: nn.DataParallel unsupported"),
      C("pynvml.nvmlShutdown()", "torch_cuda_api", "removal", True, None,
        "would raise NVMLError_Uninitialized once nvmlInit is gone"),
  ])

E("torchsionna-config", "torchsionna/config.py", "device_branch_or_abstraction",
  "Sionna-style global config (precision, seed, device) of a PyTorch Sionna port", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        'torch_npu = importlib.import_module("torch_npu") if importlib.util.find_spec("torch_npu") else None',
        "guarded import so the library keeps working on CUDA/CPU hosts; registers the npu device"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'if getattr(torch, "npu", None) is not None and torch.npu.is_available(): '
        'return torch.device("npu", torch.npu.current_device())',
        "without an NPU branch the default device silently falls back to CPU"),
      C('return self.device.type == "cuda"', "device_type", "replace", True,
        'return self.device.type in ("cuda", "npu")',
        "is_gpu=False on NPU makes `generator` a CPU torch.Generator, and sampling on the npu device with a CPU "
        "generator raises"),
      C("torch.cuda.manual_seed_all(s)", "torch_cuda_api", "add_branch", False,
        'torch.npu.manual_seed_all(s) if self.device.type == "npu" else torch.cuda.manual_seed_all(s)', SEED_NOTE),
      C("alloc = torch.cuda.memory_allocated(self.device)", "torch_cuda_api", "add_branch", False,
        "alloc = torch.get_device_module(self.device).memory_allocated(self.device) / 2 ** 30",
        "0 on NPU; report only"),
      C("peak = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", "add_branch", False,
        "peak = torch.get_device_module(self.device).max_memory_allocated(self.device) / 2 ** 30",
        "0 on NPU; report only"),
      C("torch.cuda.get_device_name(self.device), alloc, peak)", "torch_cuda_api", "add_branch", True,
        'return "%s: %.2f GiB allocated, %.2f GiB peak" % '
        "(torch.get_device_module(self.device).get_device_name(self.device), alloc, peak)",
        "get_device_name raises without CUDA once is_gpu is true for npu"),
      C('if v == "double" and dev.type == "mps":', "unsupported_op_workaround", "add_branch", False,
        'if v == "double" and dev.type == "npu": warnings.warn("fp64/complex128 matmul is not an Ascend cube '
        'dtype; expect CPU fallback or errors")',
        "Ascend lists matmul/bmm as bf16/fp16/fp32 only, so 'double' precision BER sims are doubtful; unconfirmed"),
  ])

E("torchsionna-channel", "torchsionna/channel/rayleigh_block_fading.py", "explicit_replacement",
  "Sionna-style RayleighBlockFading / FlatFadingChannel / Kronecker model in PyTorch", [
      C('r = r.to("cuda")', "tensor_to_device", "replace", True, "r = r.to(config.device)",
        "correlation matrices forced to cuda in __init__"),
      C('x = complex_normal([1024, 4], dtype=torch.complex64, device="cuda")', "device_type", "replace", True,
        'x = complex_normal([1024, 4], dtype=torch.complex64, device=config.device)', "__main__ self-test"),
      C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1)",
        "config.seed already seeded all devices and the layers draw from config.generator; no-op"),
  ])

E("torchsionna-ldpc", "torchsionna/fec/ldpc/decoding.py", "kernel_rewrite",
  "Sionna-style LDPC BP decoder with a JIT/pre-built fused CUDA min-sum kernel", [
      C("_ext = load(", "custom_cuda_extension", "replace", False,
        "_ext = _load_ascend_kernel()  # Ascend C min-sum op registered through OpPlugin / NpuExtension",
        "nvcc JIT build (cpp_extension.load is unsupported on A2/A3); it sits behind llr.is_cuda and a try/except, "
        "so on NPU the PyTorch decoder runs correctly but slower"),
      C("if self.use_cuda_kernel and self.cn_type", "custom_cuda_extension", "add_branch", False,
        'elif self.use_cuda_kernel and self.cn_type != "boxplus" and llr.device.type == "npu" and '
        "_npu_ext is not None: out = _npu_ext.bp_decode_minsum(...)",
        "call site of the fused kernel; an NPU branch is needed only to recover the speed"),
      C('use_cuda_kernel=True, device="cuda"):', "device_type", "replace", True,
        "offset=0.5, clip_llr=20.0, use_cuda_kernel=True, device=None):  # then device = device or config.device",
        "default device of the Tanner-graph buffers; LDPCBPDecoder(pcm) fails on NPU"),
  ])

E("torchsionna-setup", "setup.py", "kernel_rewrite",
  "setup.py of the PyTorch Sionna port building CUDAExtension LDPC/mapping kernels", [
      C("use_cuda = (torch.cuda.is_available() and CUDA_HOME", "custom_cuda_extension", "add_branch", False,
        'use_npu = importlib.util.find_spec("torch_npu") is not None  # -> NpuExtension(...) with Ascend C sources',
        "on an NPU host use_cuda is False and the CPU-only helpers build fine; an NpuExtension branch is only "
        "needed once the kernels are rewritten in Ascend C"),
  ])

E("torchsionna-mimo", "torchsionna/mimo/detection.py", "explicit_replacement",
  "Sionna-style MIMO detectors (LMMSE/ZF/MF, ML, K-Best) in PyTorch", [
      C('torch.backends.cuda.preferred_linalg_library("cusolver")', "torch_cuda_api", "removal", False, None,
        "listed unsupported on Ascend, but guarded by torch.cuda.is_available() so never runs on NPU"),
      C("l = torch.linalg.cholesky(s)", "unsupported_op_workaround", "replace", False,
        "l = torch.linalg.cholesky(s.cpu()).to(s.device)  # Ascend cholesky: fp32 only",
        "Ascend's 2.7.1 list: linalg.cholesky input fp32 only, and s is complex64 here; outcome (error vs "
        "fallback) unconfirmed"),
      C("start, end = torch.cuda.Event(", "torch_cuda_api", "replace", True,
        "start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)", "CUDA events"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

E("torchsionna-ber", "examples/ber_ldpc_awgn.py", "explicit_replacement",
  "Sionna-style BER/BLER Monte-Carlo simulation of 5G LDPC + QAM in PyTorch", [
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; throughput numbers need an NPU sync"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C('config.device = "cuda:%d" % args.gpu', "device_type", "replace", True,
        'config.device = "npu:%d" % args.gpu', "library device"),
      C("torch.cuda.get_device_name(args.gpu)))", "torch_cuda_api", "replace", True,
        "config, torch.__version__, torch_npu.__version__, torch.npu.get_device_name(args.gpu)))",
        "get_device_name raises without CUDA (torch.version.cuda just prints None)"),
      C('model = torch.compile(model, mode="max-autotune"', "compile_mode", "replace", False,
        'model = torch.compile(model, backend="npugraphs")',
        "max-autotune relies on Triton autotuning and CUDA graphs; NPU graph mode uses its own backends; "
        "behaviour of the unchanged call on NPU unconfirmed (only with --compile)"),
  ])

E("csi-gpu-utils", "utils/torch_utils.py", "device_branch_or_abstraction",
  "YOLOv5-derived torch_utils (select_device, time_sync, ModelEMA) copied into CSI repos", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the added branches call torch.npu.*"),
      C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
        "device_ids was historically NCCL-only; whether HCCL accepts it is unconfirmed"),
      C("dist.barrier(device_ids=[0])", "dist_backend", "replace", False, "dist.barrier()", "same as above"),
      C('["nvidia-smi", "--query-gpu=memory.free"', "torch_cuda_api", "replace", False,
        "free = [torch.npu.mem_get_info(i)[0] // 2 ** 20 for i in range(torch.npu.device_count())]",
        "nvidia-smi is missing on Ascend hosts; the OSError is caught and 'auto' degrades to the default device"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment', "env_var", "add_branch", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES" if torch.npu.is_available() else "CUDA_VISIBLE_DEVICES"] = device',
        "device selection ignored on NPU"),
      C("assert torch.cuda.is_available() and torch.cuda.device_count() >=", "torch_cuda_api", "add_branch", True,
        "assert (torch.cuda.is_available() or torch.npu.is_available()) and "
        "torch.get_device_module().device_count() >= len(device.replace(\",\", \"\")), \\",
        "the assertion fails for every --device N on an NPU host"),
      C("if not cpu and not mps and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'elif not cpu and not mps and torch.npu.is_available(): arg = "npu:0"',
        "without an NPU branch select_device silently returns cpu"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "elif torch.npu.is_available(): torch.npu.synchronize()",
        "NPU kernels run asynchronously: without a sync every timing is wrong"),
      C('if device.type == "cuda":', "device_type", "add_branch", False,
        'elif device.type == "npu": torch.npu.reset_peak_memory_stats(device)', "peak-memory reset; report only"),
      C("mem = torch.cuda.max_memory_allocated(device) / 1e6", "torch_cuda_api", "add_branch", False,
        'mem = torch.get_device_module(device).max_memory_allocated(device) / 1e6 if device.type in ("cuda", "npu") '
        "else 0.0", "reports 0 MB on NPU; report only"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
      C("torch.cuda.manual_seed_all(seed)  # for Multi-GPU", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)  # for Multi-NPU", SEED_NOTE),
  ])

E("lwm-pretrain-ddp", "tools/pretrain_ddp.py", "explicit_replacement",
  "Large Wireless Model (LWM) masked-channel-modelling pre-training with DDP/NCCL and bf16 autocast", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "removal", False, None,
        "NCCL-only knob, ignored by HCCL; no HCCL counterpart confirmed"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('dist.init_process_group(backend="nccl"', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method="env://", world_size=world_size, rank=rank,',
        "NCCL backend is unavailable on Ascend; HCCL"),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "cuda device"),
      C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
        "major = 8  # Atlas A2/A3 support bf16; torch.npu.get_device_capability() returns None",
        "raises without CUDA, and the NPU version returns None (unless TORCH_NPU_DEVICE_CAPABILITY is set)"),
      C("torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
        'use_bf16 = cfg["train"]["amp"] and torch.npu.is_bf16_supported()',
        "queries the current CUDA device and raises"),
      C("torch.cuda.get_device_name(device)))", "torch_cuda_api", "replace", True,
        'log("world %d | amp dtype %s | device %s" % (world_size, amp_dtype, torch.npu.get_device_name(device)))',
        "raises without CUDA"),
      C("pin_memory=True, collate_fn=mcm_collate,", "pin_memory", "replace", False,
        'num_workers=cfg["data"]["workers"], pin_memory=True, pin_memory_device="npu", collate_fn=mcm_collate,',
        PIN_NOTE),
      C("scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True,
        'scaler = torch.npu.amp.GradScaler(enabled=cfg["train"]["amp"] and not use_bf16)',
        "CUDA GradScaler disables itself: fp16 runs lose loss scaling silently"),
      C('map_location={"cuda:0": "cuda:%d" % local_rank}', "device_type", "replace", True,
        'ckpt = torch.load(args.resume, map_location={"npu:0": "npu:%d" % local_rank})',
        "cuda map_location"),
      C('with torch.autocast(device_type="cuda"', "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=cfg["train"]["amp"]):',
        "device_type='cuda' autocast does not touch NPU ops: silently fp32"),
      C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(device) / 2 ** 30", "0 GB; log only"),
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", False, 'if dist.get_backend() == "hccl":',
        "backend-string comparisons must be edited by hand; unchanged it just skips a final sync"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "only reached once the backend comparison above is ported"),
  ])

E("lwm-launch-sh", "scripts/dist_pretrain.sh", "explicit_replacement",
  "torchrun launcher for LWM pre-training with NCCL tuning variables", [
      C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        "CANN environment must be sourced; set_env.sh is known to fail under `set -u` (unbound CMAKE_PREFIX_PATH)"),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS - 1)))}",
        "device list ignored on NPU"),
      C("export NCCL_DEBUG=", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "diagnostics only"),
      C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-ens3f0}",
        "HCCL picks the host NIC by its own priority rules; only matters for multi-node on multi-homed hosts"),
      C("export NCCL_IB_DISABLE=", "env_var", "removal", False, None, "no HCCL equivalent; ignored"),
      C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "no HCCL equivalent; ignored"),
      C("nvidia-smi --query-gpu=", "torch_cuda_api", "replace", True,
        'npu-smi info | tee "${OUTPUT}/npus.txt"',
        "nvidia-smi is absent; with `set -euo pipefail` the failing pipeline aborts the launcher"),
  ])

E("csinet-run-sh", "scripts/run_all_cr.sh", "explicit_replacement",
  "Shell sweep over compression ratios / scenarios, one background job per GPU", [
      C("=mkdir -p ${LOG_DIR}", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for the background jobs"),
      C("CUDA_VISIBLE_DEVICES=${GPU} nohup python main.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPU} nohup python main.py \\", "per-job device pinning ignored on NPU"),
  ])

E("lwm-requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a CSI/LWM research repo pinned to CUDA 11.8 wheels", [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu needs the CPU torch build (x86: cpu index, aarch64: plain PyPI)"),
      C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "+cu118 builds do not exist for aarch64 and torch_npu must match torch exactly (2.1.0)"),
      C("torchvision==0.16.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "CUDA build; 0.16.0 pairs with torch 2.1.0"),
      C("# (torchaudio only needed", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "the torch_npu wheel (2.1.0.post17 pairs with CANN 8.3.RC1)"),
      C("cupy-cuda11x==12.3.0", "torch_cuda_api", "removal", False, None,
        "no Ascend backend; the wheel may still install but is unusable (nothing on the NPU path imports it)"),
      C("nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
        "pure-Python NVML binding installs anywhere but has nothing to talk to on Ascend"),
      C('flash-attn==2.5.6 ; platform_machine == "x86_64"', "attention_kernel", "removal", True, None,
        "cannot be built on NPU; the marker only skips aarch64, so x86 Atlas servers fail the install"),
  ])

E("deepjscc-environment", "environment.yml", "explicit_replacement",
  "conda environment.yml of a semantic-communication repo (pytorch-cuda, TF for Sionna)", [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA conda channel; harmless once nothing needs it"),
      C("=- pytorch-cuda=11.8", "torch_cuda_api", "replace", True, "- cpuonly",
        "pulls the CUDA runtime and a CUDA torch build; torch_npu requires the CPU build"),
      C("=- cudatoolkit-dev=11.7", "torch_cuda_api", "removal", True, None,
        "nvcc toolchain package, not available for aarch64 Ascend hosts"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.0.1.post1",
        "torch_npu wheel matching torch 2.0.1 (CANN 7.0.0, end-of-life: upgrading torch to 2.1.0 is advisable)"),
      C("tensorflow[and-cuda]==2.13.1", "torch_cuda_api", "replace", True, "      - tensorflow-cpu==2.13.1",
        "the and-cuda extra pulls nvidia-* wheels (x86 only); Sionna can run on the CPU build"),
      C('CUDA_VISIBLE_DEVICES: "0"', "env_var", "replace", True, 'ASCEND_RT_VISIBLE_DEVICES: "0"',
        "ignored on NPU"),
  ])

E("csi-dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of a CSI research image (nvidia/cuda base, CUDA torch wheels, FORCE_CUDA kernel build)", [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image; the CANN image also sets the set_env.sh variables as ENV lines"),
      C("=FORCE_CUDA=1", "custom_cuda_extension", "removal", True, None,
        "forces torchsionna's setup.py to build CUDAExtension kernels with no CUDA toolkit in the image"),
      C("RUN pip install --no-cache-dir torch==2.1.2 torchvision==0.16.2 --index-url", "torch_cuda_api", "replace",
        True, "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url "
        "https://download.pytorch.org/whl/cpu", "CUDA wheels; torch_npu needs the CPU build of torch 2.1.0"),
      C("=WORKDIR /workspace", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch-npu==2.1.0.post17 pyyaml decorator attrs psutil",
        "install the torch_npu wheel (pairs with CANN 8.3.RC1)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all \\",
        "NVIDIA container-runtime variable; Ascend-Docker-Runtime uses ASCEND_VISIBLE_DEVICES"),
      C("=NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None,
        "NVIDIA container-runtime variable; ignored"),
      C("=NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only; ignored by HCCL"),
  ])

E("transnet-config", "configs/transnet_outdoor.yaml", "explicit_replacement",
  "TransNet YAML experiment config (hardware / amp / attention sections)", [
      C("attention: flash", "attention_kernel", "replace", False,
        "attention: math          # flash_attn is not available on Ascend (or an npu_fusion_attention path)",
        "how the (absent) model code reacts when flash_attn is missing is unconfirmed"),
      C("=device: cuda", "device_type", "replace", True, "device: npu", "device string read by the trainer"),
      C("backend: nccl", "dist_backend", "replace", False, "backend: hccl",
        "only used when distributed.enabled is true, which it is not in this config"),
  ])
