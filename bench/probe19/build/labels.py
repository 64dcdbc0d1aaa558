"""Labels for probe19 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"

# ---------------------------------------------------------------------------------------------------------
# shared notes (knowledge files are under /work/shared/knowledge)
TSV = "ops/torch_api_npu_support_2.7.1.tsv"
MIG = "torch-npu-migration.md"
DIST = "ascend-distributed.md"
HOST = "ascend-host-formats.md"
IMP = ("torch_npu must be imported before the first npu device is used; autoload exists since 2.5.1 but the "
       "import is still recommended (" + MIG + " §1.1)")
IMP_SIDE = ("module only uses torch.npu.* once ported; the entry script already imports torch_npu, so the import "
            "here is for clarity only (" + MIG + " §1.1)")
AVAIL = ("torch.cuda.is_available() is False on an Ascend host, so the unchanged line pushes an NPU host onto the CPU "
         "path; torch.npu.is_available() (" + TSV + ")")
DEV = "a 'cuda' device string/torch.device fails on an NPU-only torch build; use 'npu' (" + MIG + " §3.4 ReplaceStringRule)"
DOTCUDA = "Tensor/Module.cuda() needs a CUDA build; use .npu() or .to(device) (" + MIG + " §2.3, §3.4)"
AUTOCAST = ("CUDA autocast does not cover NPU tensors, so the AMP path silently runs in fp32/fp16 without autocast; "
            "torch.npu.amp.autocast / torch.autocast('npu') (" + TSV + ": torch.cuda.amp.autocast -> torch_npu.npu.amp.autocast)")
SCALER = ("torch.cuda.amp.GradScaler disables itself without CUDA, so fp16 trains without loss scaling; "
          "torch.npu.amp.GradScaler (" + TSV + ")")
EMPTY = "torch.cuda.empty_cache() is a silent no-op without CUDA; torch.npu.empty_cache() (" + TSV + ")"
SYNC = ("torch.cuda.synchronize() raises without a CUDA build and this line is on the ported run path; "
        "torch.npu.synchronize() (" + TSV + ")")
SYNC_OPT = "timing/logging only; torch.npu.synchronize() (" + TSV + ")"
MEMLOG = ("torch.cuda memory counters return 0 when CUDA is not initialised (logging only); torch.npu.max_memory_* "
          "(" + TSV + ")")
SEED = ("torch.cuda.manual_seed_all is a lazy no-op without CUDA, NPU RNG stays unseeded (reproducibility only); "
        "torch.npu.manual_seed_all (" + TSV + ")")
SETDEV = "torch.cuda.set_device raises without CUDA; torch.npu.set_device (" + TSV + "; " + DIST + " §6.1)"
DEVCOUNT = "torch.cuda.device_count() returns 0 on an Ascend host; torch.npu.device_count() (" + TSV + ")"
CVD = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; ASCEND_RT_VISIBLE_DEVICES selects the logical "
       "NPUs a process sees (" + DIST + " env-var table)")
NCCL = "NCCL does not exist on Ascend; the collective backend is HCCL (" + DIST + " §6.1; " + MIG + " §2.4)"
DP = ("torch.nn.DataParallel is ✘ on Ascend (" + TSV + "; ops/mstt_unsupported_torch_apis_2.7.txt; " + MIG +
      " §2.8); use DDP over HCCL or one device")
NVSMI = "nvidia-smi does not exist on an Ascend host; npu-smi info (" + HOST + " §1; " + MIG + " §6)"
SPARSE = ("sparse gradients produce sparse tensors whose ops mostly lack NPU kernels and raise instead of falling "
          "back (" + MIG + " §3.8; only _coalesce appears among sparse ops in ops/npu_native_ops_*.txt)")
TORCHPIN = ("torch_npu wheels pair with an exact torch version (" + MIG + " §1.1-1.2); x86 hosts take CPU torch "
            "from download.pytorch.org/whl/cpu, aarch64 plain PyPI")
DGL = ("DGL's graph/sampling kernels and device contexts are cpu/cuda only (DGL docs; nothing about DGL in "
       "/work/shared/knowledge, so the NPU side is unconfirmed)")
LIGHTNING = ("Lightning's 'gpu'/'cuda' accelerator requires CUDA and errors out when none is found; an NPU accelerator "
             "has to come from a plugin registered with Lightning (not in /work/shared/knowledge: replacement unconfirmed)")

# =========================================================================================================
# Time-Series-Library
# =========================================================================================================
E("tslib_run", "run.py", "explicit_replacement",
  "Time-Series-Library run.py (argparse runner, --use_gpu/--gpu/--use_multi_gpu/--devices)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False", "torch_cuda_api", R, True,
        "args.use_gpu = True if torch.npu.is_available() and args.use_gpu else False", AVAIL),
      C("print(torch.cuda.is_available())", "torch_cuda_api", R, False, "print(torch.npu.is_available())",
        "diagnostic print only; torch.npu.is_available() (" + TSV + ")"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
      C("torch.cuda.empty_cache()  # release cached blocks", "torch_cuda_api", R, False,
        "torch.npu.empty_cache()  # release cached blocks before exit", EMPTY),
  ])

E("tslib_exp_basic", "exp/exp_basic.py", "explicit_replacement",
  "Time-Series-Library exp/exp_basic.py (_acquire_device)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(', "env_var", R, True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(', CVD),
      C("device = torch.device('cuda:{}'.format(self.args.gpu))", "device_type", R, True,
        "device = torch.device('npu:{}'.format(self.args.gpu))", DEV),
      C("print('Use GPU: cuda:{}'.format(self.args.gpu))", "device_type", R, False,
        "print('Use NPU: npu:{}'.format(self.args.gpu))", "log text only, changed together with the device line"),
      C("if self.device.type == 'cuda':", "device_type", R, False, "if self.device.type == 'npu':",
        "after the port the device type is 'npu', so the unchanged check silently skips the name log"),
      C("torch.cuda.get_device_name(self.device)", "torch_cuda_api", R, False,
        "lines.append('npu name   : {}'.format(torch.npu.get_device_name(self.device)))",
        "torch.npu.get_device_name (" + TSV + "); only reached once the check above is ported"),
  ])

E("tslib_exp_long_term", "exp/exp_long_term_forecasting.py", "explicit_replacement",
  "Time-Series-Library exp/exp_long_term_forecasting.py (DataParallel, CUDA AMP, map_location)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("model = nn.DataParallel(model, device_ids=self.args.device_ids)", "distributed_framework", R, True,
        "pass  # DataParallel is unsupported on NPU: launch with torchrun and wrap in DDP(backend='hccl') instead",
        DP + "; reached with --use_multi_gpu"),
      C("with torch.autocast(device_type='cuda', dtype=torch.float16):", "amp", R, True,
        "with torch.autocast(device_type='npu', dtype=torch.float16):", AUTOCAST),
      C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()", SCALER),
      C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", R, True,
        "with torch.npu.amp.autocast(dtype=torch.float16):", AUTOCAST),
      C("=with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():", AUTOCAST),
      C("map_location='cuda:0'))", "device_type", R, True, "map_location='npu:0'))",
        "map_location='cuda:0' makes torch.load deserialize onto CUDA and fails on an NPU host (" + MIG +
        " §2.2 rewrites map_location for this reason)"),
  ])

E("tslib_script_patchtst", "scripts/long_term_forecast/ETT_script/PatchTST_ETTh1.sh", "explicit_replacement",
  "Time-Series-Library scripts/long_term_forecast/ETT_script/PatchTST_ETTh1.sh", [
      C("export CUDA_VISIBLE_DEVICES=${GPU_IDS:-0}", "env_var", R, True,
        "export ASCEND_RT_VISIBLE_DEVICES=${NPU_IDS:-0}", CVD),
      C("nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv", "device_type", R, False,
        "npu-smi info", NVSMI + "; the script has no `set -e`, so the unchanged line only prints an error"),
      C("--use_multi_gpu --devices 0,1,2,3", "distributed_framework", R, True,
        "--devices 0,1,2,3  # run via torchrun + DDP/HCCL; --use_multi_gpu selects nn.DataParallel",
        "--use_multi_gpu routes into nn.DataParallel in exp_long_term_forecasting.py, which is ✘ on Ascend (" + TSV + ")"),
  ])

E("tslib_requirements", "requirements.txt", "explicit_replacement",
  "Time-Series-Library requirements.txt (pinned CUDA torch wheel, mamba-ssm)", [
      C("torch==1.7.1+cu110", "import_torch_npu", R, True, "torch==2.1.0  (+ new line: torch-npu==2.1.0.post17)",
        "torch 1.7.1+cu110 is a CUDA wheel with no torch_npu counterpart; torch_npu releases pair with exact torch "
        "versions, e.g. 2.1.0 <-> 2.1.0.post17 (" + MIG + " §1.2)"),
      C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", R, True,
        "--extra-index-url https://download.pytorch.org/whl/cpu", TORCHPIN),
      C("mamba-ssm==1.2.0", "custom_cuda_extension", X, True, None,
        "mamba-ssm builds CUDA kernels with nvcc, so `pip install -r requirements.txt` fails on an Ascend host "
        "(" + MIG + " §6: no nvcc path; §2.7 lists is_mamba_ssm_available among CUDA-only checks)"),
  ])

E("tslib_data_loader", "data_provider/data_loader.py", "explicit_replacement",
  "Time-Series-Library data_provider/data_loader.py (CPU-only: pandas/sklearn datasets, no device code)", [])

E("autoformer_autocorrelation", "layers/AutoCorrelation.py", "explicit_replacement",
  "Autoformer layers/AutoCorrelation.py (FFT autocorrelation with a hard-coded .cuda())", [
      C("repeat(batch, head, channel, 1).cuda()", "tensor_to_device", R, True,
        "init_index = torch.arange(length, device=values.device).unsqueeze(0).unsqueeze(0).unsqueeze(0).repeat(batch, head, channel, 1)",
        DOTCUDA + "; runs in every eval/test forward. torch.fft.rfft/irfft themselves have NPU kernels "
        "(_fft_r2c/_fft_c2r in ops/npu_native_ops_torch2.7.1_v7.3.0.base.txt)"),
  ])

E("pf_tft_lightning", "examples/train_tft.py", "explicit_replacement",
  "pytorch-forecasting TFT tutorial on Lightning (accelerator='gpu', 16-mixed, ddp)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('accelerator = "gpu" if args.gpus > 0 and torch.cuda.is_available() else "cpu"', "torch_cuda_api", R, True,
        'accelerator = "npu" if args.gpus > 0 and torch.npu.is_available() else "cpu"',
        AVAIL + ". " + LIGHTNING),
      C('devices = args.gpus if accelerator == "gpu" else 1', "device_type", R, True,
        'devices = args.gpus if accelerator == "npu" else 1',
        "string compare against 'gpu' silently drops to 1 device once the accelerator is ported"),
      C('strategy = "ddp" if devices > 1 else "auto"', "dist_backend", R, True,
        'strategy = DDPStrategy(process_group_backend="hccl") if devices > 1 else "auto"',
        "Lightning's ddp strategy picks nccl for accelerator devices; HCCL must be named (" + NCCL +
        "); Lightning-on-NPU wiring unconfirmed"),
      C("trainer_kwargs=dict(accelerator=\"gpu\", devices=1))", "device_type", R, True,
        "trainer_kwargs=dict(accelerator=\"npu\", devices=1))", LIGHTNING),
      C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
        "only gates a memory log line; " + AVAIL),
      C("torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", R, False,
        'print(f"peak NPU memory: {torch.npu.max_memory_allocated() / 2**20:.0f} MiB")', MEMLOG),
  ])

E("gluonts_deepar", "examples/deepar_electricity.py", "explicit_replacement",
  "GluonTS torch DeepAREstimator example (Lightning trainer_kwargs, predictor.to(cuda))", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('"accelerator": "cuda",', "device_type", R, True, '"accelerator": "npu",', LIGHTNING),
      C('predictor = predictor.to(torch.device("cuda"))', "device_type", R, True,
        'predictor = predictor.to(torch.device("npu"))', DEV),
      C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
        "gates end-of-run diagnostics only; " + AVAIL),
      C("=torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()", SYNC_OPT),
      C('print("max memory (MiB):", torch.cuda.max_memory_reserved() // 2**20)', "torch_cuda_api", R, False,
        'print("max memory (MiB):", torch.npu.max_memory_reserved() // 2**20)', MEMLOG),
  ])

E("chronos_eval", "scripts/evaluation/evaluate.py", "explicit_replacement",
  "chronos-forecasting scripts/evaluation/evaluate.py (device_map, bf16, timing syncs)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('device: str = "cuda",', "device_type", R, True, 'device: str = "npu",',
        "default device_map='cuda' fails on an NPU host; transformers/accelerate accept npu devices "
        "(" + MIG + " §6: native NPU support since transformers 4.32 / accelerate 0.22)"),
      C("torch.cuda.synchronize()  # make sure warm-up", "torch_cuda_api", R, True,
        "torch.npu.synchronize()  # make sure warm-up kernels are done", SYNC),
      C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
  ])

E("chronos_pyproject", "pyproject.toml", "explicit_replacement",
  "chronos-forecasting pyproject.toml (uv source pinned to the cu121 PyTorch index)", [
      C('"torch>=2.0,<2.6",', "import_torch_npu", A, False, '"torch-npu>=2.1.0,<2.6",',
        "a library may leave torch-npu to the user; listed for NPU installs, version must match torch exactly "
        "(" + MIG + " §1.1)"),
      C('"flash-attn>=2.5; platform_system', "attention_kernel", X, False, None,
        "flash-attn cannot be installed on NPU (" + MIG + " §6); only in the optional `fast` extra"),
      C('{ index = "pytorch-cu121", marker', "import_torch_npu", R, True,
        '{ index = "pytorch-cpu", marker = "sys_platform == \'linux\' and platform_machine == \'x86_64\'" },',
        "uv would resolve torch from the CUDA index on every Linux host; " + TORCHPIN),
      C('=name = "pytorch-cu121"', "import_torch_npu", R, False, 'name = "pytorch-cpu"',
        "renamed together with the source entry"),
      C('url = "https://download.pytorch.org/whl/cu121"', "import_torch_npu", R, True,
        'url = "https://download.pytorch.org/whl/cpu"', TORCHPIN),
  ])

E("moirai_finetune_yaml", "cli/conf/finetune/default.yaml", "explicit_replacement",
  "uni2ts (Moirai) hydra finetune config cli/conf/finetune/default.yaml", [
      C("accelerator: gpu", "device_type", R, True, "accelerator: npu", LIGHTNING),
      C("tf32: true", "device_capability_check", R, False, "tf32: false",
        "TF32 is an Ampere feature; the NPU analogue (HF32) is switched elsewhere and not confirmed in "
        "/work/shared/knowledge (unconfirmed); the flag is harmless but meaningless"),
  ])

E("timesfm_infer", "forecast_timesfm.py", "explicit_replacement",
  "TimesFM (PyTorch checkpoint) batch forecasting script (backend='gpu')", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('p.add_argument("--backend", default="gpu", choices=["cpu", "gpu"],', "device_type", R, True,
        'p.add_argument("--backend", default="npu", choices=["cpu", "gpu", "npu"],',
        "TimesFM's torch wrapper maps backend='gpu' to a CUDA device; an 'npu' backend needs a small patch of the "
        "wrapper (unconfirmed: TimesFM is not covered in /work/shared/knowledge)"),
      C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", str(args.gpu))', "env_var", R, True,
        'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", str(args.gpu))', CVD),
      C('device = torch.device("cuda" if args.backend == "gpu" else "cpu")', "device_type", R, True,
        'device = torch.device("npu" if args.backend == "npu" else "cpu")', DEV),
      C('if device.type == "cuda":', "device_type", R, False, 'if device.type == "npu":',
        "after the port the timing sync is silently skipped (asynchronous NPU work, timing wrong)"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", R, False, "torch.npu.synchronize(device)", SYNC_OPT),
      C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
        "gates a memory log only; " + AVAIL),
      C("free, total = torch.cuda.mem_get_info(device)", "torch_cuda_api", R, False,
        "free, total = torch.npu.mem_get_info(device)", "mem_get_info is in torch_npu.npu.__all__ (" + MIG + " §2.1)"),
  ])

# =========================================================================================================
# Graphs: DGL, OGB/PyG, GraphGPS
# =========================================================================================================
SAGE_NOTE = ("DGL's SAGEConv runs DGL message-passing kernels on the block's device; with sampling kept on CPU the "
             "porter swaps in a torch-only SAGE layer that reads block.edges() and aggregates with index_add_ on the "
             "NPU (index_add has an NPU kernel, " + TSV + "). " + DGL)
E("dgl_graphsage", "examples/pytorch/graphsage/node_classification.py", "explicit_replacement",
  "DGL examples/pytorch/graphsage/node_classification.py (NeighborSampler, use_uva, puregpu/mixed modes)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('self.layers.append(dglnn.SAGEConv(in_size, hid_size, "mean"))', "unsupported_op_workaround", R, True,
        'self.layers.append(TorchSAGEConv(in_size, hid_size, "mean"))', SAGE_NOTE),
      C('self.layers.append(dglnn.SAGEConv(hid_size, hid_size, "mean"))', "unsupported_op_workaround", R, True,
        'self.layers.append(TorchSAGEConv(hid_size, hid_size, "mean"))', SAGE_NOTE),
      C('self.layers.append(dglnn.SAGEConv(hid_size, out_size, "mean"))', "unsupported_op_workaround", R, True,
        'self.layers.append(TorchSAGEConv(hid_size, out_size, "mean"))', SAGE_NOTE),
      C("=h = x", "tensor_to_device", R, True, "h = x.to(next(self.parameters()).device)",
        "blocks and their prefetched features stay on CPU (DGL cannot place them on an NPU), so the input "
        "features are moved explicitly. " + DGL),
      C("device=device,  # blocks are produced", "device_type", R, True,
        'device="cpu",  # DGL samples on CPU; layers move what they need to the NPU', DGL),
      C('ys.append(blocks[-1].dstdata["label"])', "tensor_to_device", R, True,
        'ys.append(blocks[-1].dstdata["label"].to(device))',
        "labels come from CPU blocks while predictions are on the NPU; torchmetrics needs both on one device"),
      C("train_idx = dataset.train_idx.to(device)", "tensor_to_device", R, True,
        "train_idx = dataset.train_idx  # seeds stay on CPU with the graph",
        "DGL requires seed ids on the graph's device (CPU after the port). " + DGL),
      C("val_idx = dataset.val_idx.to(device)", "tensor_to_device", R, True,
        "val_idx = dataset.val_idx  # seeds stay on CPU with the graph", DGL),
      C('use_uva = args.mode == "mixed"', "pin_memory", R, True, "use_uva = False",
        "UVA pins the CPU graph and has the GPU read it through CUDA unified addressing; there is no NPU "
        "equivalent in DGL. " + DGL),
      C("=device=device,", "device_type", R, True, 'device="cpu",', DGL),
      C("val_dataloader = DataLoader(g, val_idx, sampler, device=device, batch_size=1024,", "device_type", R, True,
        'val_dataloader = DataLoader(g, val_idx, sampler, device="cpu", batch_size=1024,', DGL),
      C('y = blocks[-1].dstdata["label"]', "tensor_to_device", R, True, 'y = blocks[-1].dstdata["label"].to(device)',
        "cross_entropy needs labels on the NPU with the logits"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():", AVAIL),
      C('g = g.to("cuda" if args.mode == "puregpu" else "cpu")', "device_type", R, False,
        'g = g.to("cpu")  # DGL has no NPU context; puregpu mode is dropped',
        "only the non-default puregpu mode moves the graph to CUDA. " + DGL),
      C('device = torch.device("cpu" if args.mode == "cpu" else "cuda")', "device_type", R, True,
        'device = torch.device("cpu" if args.mode == "cpu" else "npu")', DEV),
      C("pin_memory=pin_memory,", "pin_memory", R, False, "pin_memory=False,",
        "pinned host buffers: pinning through torch_npu is reported as flaky/slow on some versions "
        "(seeds/000_d74e16621e108182.txt §2.3, anecdotal; unconfirmed)"),
  ])

E("dgl_dist", "examples/distributed/graphsage/node_classification.py", "explicit_replacement",
  "DGL examples/distributed/graphsage/node_classification.py (DistGraph, DistNodeDataLoader, DDP)", [
      C("=import torch as th", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('self.layers.append(dglnn.SAGEConv(in_feats, n_hidden, "mean"))', "unsupported_op_workaround", R, True,
        'self.layers.append(TorchSAGEConv(in_feats, n_hidden, "mean"))', SAGE_NOTE),
      C('self.layers.append(dglnn.SAGEConv(n_hidden, n_hidden, "mean"))', "unsupported_op_workaround", R, True,
        'self.layers.append(TorchSAGEConv(n_hidden, n_hidden, "mean"))', SAGE_NOTE),
      C('self.layers.append(dglnn.SAGEConv(n_hidden, n_classes, "mean"))', "unsupported_op_workaround", R, True,
        'self.layers.append(TorchSAGEConv(n_hidden, n_classes, "mean"))', SAGE_NOTE),
      C("blocks = [block.to(device) for block in blocks]", "device_type", R, True,
        "blocks = [block for block in blocks]  # blocks stay on CPU; TorchSAGEConv moves edges to the NPU",
        "DGLBlock.to('npu') fails. " + DGL),
      C("gpu_mem_alloc = th.cuda.max_memory_allocated() / 1000000 if th.cuda.is_available() else 0",
        "torch_cuda_api", R, False,
        "gpu_mem_alloc = th.npu.max_memory_allocated() / 1000000 if th.npu.is_available() else 0", MEMLOG),
      C('device = th.device("cuda:" + str(dev_id))', "device_type", R, True,
        'device = th.device("npu:" + str(dev_id))', DEV),
      C("th.cuda.set_device(device)", "torch_cuda_api", R, True, "th.npu.set_device(device)", SETDEV),
      C('parser.add_argument("--backend", type=str, default="gloo"', "dist_backend", R, True,
        'parser.add_argument("--backend", type=str, default="hccl", help="pytorch distributed backend")',
        "DDP over NPU tensors needs HCCL; gloo cannot reduce NPU tensors (" + DIST + " §6.1: init must use "
        "backend='hccl'; gloo behaviour on NPU tensors itself unconfirmed)"),
  ])

E("dgl_sparse_gcn", "examples/sparse/gcn.py", "explicit_replacement",
  "DGL examples/sparse/gcn.py (dgl.sparse SpMatrix GCN)", [
      C("=import dgl.sparse as dglsp", "unsupported_op_workaround", X, False, None,
        "import no longer needed after the dense rewrite below (harmless if left)"),
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('label, val_mask, test_mask = g.ndata["label"], g.ndata["val_mask"], g.ndata["test_mask"]',
        "tensor_to_device", R, True,
        'label, val_mask, test_mask = (g.ndata[k].to(pred.device) for k in ("label", "val_mask", "test_mask"))',
        "graph tensors stay on CPU (DGL cannot hold NPU tensors) while predictions are on the NPU. " + DGL),
      C('=label = g.ndata["label"]', "tensor_to_device", R, True, 'label = g.ndata["label"].to(X.device)',
        "cross_entropy needs labels with the NPU logits"),
      C("A = dglsp.spmatrix(indices, shape=(N, N))", "unsupported_op_workaround", R, True,
        "A = torch.zeros(N, N, device=dev); A[indices[0].to(dev), indices[1].to(dev)] = 1.0",
        "dgl.sparse SpMM runs DGL's own cpu/cuda kernels, and torch sparse tensors lack NPU kernels (" + SPARSE +
        "); for Cora/Citeseer/Pubmed-size graphs a dense normalised adjacency on the NPU is the simple port"),
      C("I = dglsp.identity(A.shape, device=dev)", "unsupported_op_workaround", R, True,
        "I = torch.eye(N, device=dev)", "dense rewrite, see above"),
      C("D_hat = dglsp.diag(A_hat.sum(0))", "unsupported_op_workaround", R, True, "d_hat = A_hat.sum(0)",
        "dense rewrite, see above"),
      C("D_hat_invsqrt = D_hat ** -0.5", "unsupported_op_workaround", R, True, "d_invsqrt = d_hat.pow(-0.5)",
        "dense rewrite, see above"),
      C("return D_hat_invsqrt @ A_hat @ D_hat_invsqrt", "unsupported_op_workaround", R, True,
        "return d_invsqrt[:, None] * A_hat * d_invsqrt[None, :]", "dense rewrite, see above"),
      C('dev = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "torch_cuda_api", R, True,
        'dev = torch.device("npu:0" if torch.npu.is_available() else "cpu")', AVAIL),
      C("g = dataset[0].to(dev)", "device_type", R, True, "g = dataset[0]  # DGL graph stays on CPU",
        "DGLGraph.to('npu') fails. " + DGL),
      C('X = g.ndata["feat"]', "tensor_to_device", R, True, 'X = g.ndata["feat"].to(dev)',
        "features leave the CPU graph explicitly"),
  ])

E("ogb_arxiv", "examples/nodeproppred/arxiv/gnn.py", "explicit_replacement",
  "OGB examples/nodeproppred/arxiv/gnn.py (PyG GCN/SAGE on a torch_sparse SparseTensor adjacency)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("device = f'cuda:{args.device}' if torch.cuda.is_available() else 'cpu'", "torch_cuda_api", R, True,
        "device = f'npu:{args.device}' if torch.npu.is_available() else 'cpu'", AVAIL),
      C("transform=T.ToSparseTensor())", "unsupported_op_workaround", R, True,
        "transform=None)  # keep edge_index: torch_sparse SpMM has no NPU kernels",
        "GCNConv/SAGEConv on a SparseTensor call torch_sparse's compiled cpu/cuda SpMM; on NPU tensors they fail. "
        "With edge_index PyG aggregates via scatter_add_/index ops that have NPU kernels (" + TSV +
        ": torch.scatter_add ✔). torch_sparse behaviour on NPU not in /work/shared/knowledge (unconfirmed)"),
      C("data.adj_t = data.adj_t.to_symmetric()", "unsupported_op_workaround", R, True,
        "data.adj_t = torch_geometric.utils.to_undirected(data.edge_index)",
        "follows from dropping ToSparseTensor: adj_t becomes an undirected edge_index"),
      C("edge_index = torch.stack(data.adj_t.coo()[:2])", "unsupported_op_workaround", R, True,
        "edge_index = data.adj_t", "follows from dropping ToSparseTensor"),
  ])

E("graphgps_main", "main.py", "explicit_replacement",
  "GraphGPS main.py on GraphGym (auto_select_device, cfg.accelerator)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("=if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():", AVAIL),
      C("free = [torch.cuda.mem_get_info(i)[0] for i in range(torch.cuda.device_count())]", "torch_cuda_api", R, True,
        "free = [torch.npu.mem_get_info(i)[0] for i in range(torch.npu.device_count())]",
        "reached once the check above is ported; mem_get_info/device_count are in torch_npu.npu (" + MIG + " §2.1)"),
      C("cfg.device = f'cuda:{max(range(len(free)), key=free.__getitem__)}'", "device_type", R, True,
        "cfg.device = f'npu:{max(range(len(free)), key=free.__getitem__)}'", DEV),
      C("if cfg.device.startswith('cuda'):", "device_type", R, False, "if cfg.device.startswith('npu'):",
        "gates a memory log; silently skipped after the port"),
      C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, False,
        'logging.info(f"    Peak NPU memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")', MEMLOG),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, False, "torch.npu.reset_peak_memory_stats()",
        "reset_peak_memory_stats is in torch_npu.npu.__all__ (" + MIG + " §2.1)"),
  ])

E("graphgps_yaml", "configs/GPS/zinc-GPS+RWSE.yaml", "explicit_replacement",
  "GraphGPS configs/GPS/zinc-GPS+RWSE.yaml (GraphGym config with accelerator)", [
      C('accelerator: "cuda:0"', "device_type", R, True, 'accelerator: "npu:0"',
        "cfg.accelerator becomes cfg.device (auto_select_device) and the model is moved there; 'cuda:0' fails on an "
        "NPU host. " + DEV),
  ])

# =========================================================================================================
# Recommendation: NVTabular / Merlin, DLRM, two-tower, SASRec, BERT4Rec, feature-store loader
# =========================================================================================================
RAPIDS = ("cudf / rmm / dask_cuda are RAPIDS CUDA libraries that need an NVIDIA GPU at import/run time; on an "
          "Ascend host NVTabular runs in its CPU mode (pandas + dask.distributed). Not in /work/shared/knowledge: "
          "the failure is a generic no-CUDA failure, the CPU-mode details are unconfirmed")
E("nvtabular_criteo", "examples/criteo/preprocess.py", "explicit_replacement",
  "NVTabular Criteo preprocessing on a Dask-CUDA cluster (cudf, rmm pool, Categorify)", [
      C("=import cudf", "distributed_framework", R, True, "import pandas as pd", RAPIDS),
      C("=import rmm", "distributed_framework", X, True, None, RAPIDS),
      C("from dask_cuda import LocalCUDACluster", "distributed_framework", R, True,
        "from dask.distributed import LocalCluster", RAPIDS),
      C("from nvtabular.utils import device_mem_size", "distributed_framework", R, False, "import psutil",
        "device_mem_size queries GPU memory; replaced by host memory (whether the import itself fails without CUDA "
        "is unconfirmed)"),
      C("client.run(rmm.reinitialize, pool_allocator=True, initial_pool_size=pool_size)", "distributed_framework",
        X, True, None, RAPIDS),
      C('device_size = device_mem_size(kind="total")', "distributed_framework", R, True,
        "device_size = psutil.virtual_memory().total", RAPIDS),
      C("cluster = LocalCUDACluster(", "distributed_framework", R, True, "cluster = LocalCluster(", RAPIDS),
      C("CUDA_VISIBLE_DEVICES=args.devices,", "env_var", X, True, None,
        "LocalCluster has no CUDA_VISIBLE_DEVICES argument; CPU workers are not pinned to accelerators"),
      C("device_memory_limit=device_limit,", "distributed_framework", R, True, "memory_limit=device_limit,",
        "LocalCluster takes memory_limit (host memory), not device_memory_limit"),
      C("setup_rmm_pool(client, device_pool_size)", "distributed_framework", X, False, None,
        "dead after the rmm removal above"),
      C("df = cudf.read_parquet(path, columns=COLUMNS, num_rows=100_000)", "distributed_framework", R, True,
        "df = pd.read_parquet(path, columns=COLUMNS).head(100_000)", RAPIDS),
      C("na = df.isna().sum().to_pandas()", "distributed_framework", R, True, "na = df.isna().sum()",
        "pandas Series has no .to_pandas()"),
      C('train_ds = nvt.Dataset(train_paths, engine="parquet", part_size=part_size)', "distributed_framework", R, True,
        'train_ds = nvt.Dataset(train_paths, engine="parquet", part_size=part_size, cpu=True)',
        "nvt.Dataset defaults to cudf-backed partitions; cpu=True selects pandas (NVTabular docs; unconfirmed here)"),
      C('valid_ds = nvt.Dataset(valid_paths, engine="parquet", part_size=part_size)', "distributed_framework", R, True,
        'valid_ds = nvt.Dataset(valid_paths, engine="parquet", part_size=part_size, cpu=True)',
        "see train_ds"),
  ])

E("merlin_dockerfile", "docker/Dockerfile.train", "explicit_replacement",
  "Merlin/DLRM training Dockerfile (nvcr.io base, cu121 wheels, fbgemm-gpu/torchrec/faiss-gpu, NCCL env)", [
      C("ARG BASE_IMAGE=nvcr.io/nvidia/merlin/merlin-pytorch:23.08", "import_torch_npu", R, True,
        "ARG BASE_IMAGE=ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "the NGC Merlin image carries CUDA userspace, no CANN; Ascend publishes CANN images built from "
        "Ascend/cann-container-image, e.g. cann/8.3.rc1-910b-ubuntu22.04-py3.11 (" + HOST + " §3.8); the registry "
        "name/tag used here is unconfirmed"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "NVIDIA container runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (" + DIST +
        " env-var table); devices can also be passed with --device, so not strictly required"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None,
        "NVIDIA runtime only; no effect on Ascend"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "no CUDA toolkit in the image"),
      C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH}", "env_var", R, True,
        "ENV LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/common/:/usr/local/Ascend/driver/lib64/driver/:${ASCEND_TOOLKIT_HOME}/lib64:${LD_LIBRARY_PATH}",
        "torch_npu fails with `ImportError: libhccl.so` unless the CANN set_env.sh paths are on LD_LIBRARY_PATH "
        "(" + HOST + " §3.8, §4.1)"),
      C("torch==2.1.0 --index-url https://download.pytorch.org/whl/cu121 && \\", "import_torch_npu", R, True,
        "torch==2.1.0 torch-npu==2.1.0.post17 --extra-index-url https://download.pytorch.org/whl/cpu && \\",
        TORCHPIN + "; torch_npu 2.1.0.post17 pairs with torch 2.1.0 (" + MIG + " §1.2)"),
      C("fbgemm-gpu==0.5.0 \\", "custom_cuda_extension", R, True,
        "# fbgemm_gpu: build Ascend/fbgemm-ascend (import fbgemm_ascend) from source",
        "fbgemm_gpu ships CUDA kernels; the Ascend counterpart is Ascend/fbgemm-ascend exposing torch.ops.fbgemm.* "
        "(" + MIG + " §6)"),
      C("torchrec==0.5.0 \\", "distributed_framework", R, True,
        "# torchrec: Ascend/RecSDK torch_rec (hybrid_torchrec / torchrec_npu)",
        "torchrec depends on fbgemm_gpu; Ascend's path is RecSDK (" + MIG + " §6)"),
      C("faiss-gpu==1.7.2 \\", "custom_cuda_extension", R, True, "faiss-cpu==1.7.4 \\",
        "faiss-gpu needs CUDA (and has no aarch64 wheel); no NPU faiss in /work/shared/knowledge (unconfirmed)"),
      C("=pynvml", "torch_cuda_api", X, False, None,
        "NVML has no NPU equivalent; use torch.npu.utilization / mem_get_info or npu-smi (" + MIG + " §6)"),
      C("ENV NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only knob; no effect with HCCL"),
      C("ENV NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL-only knob; no effect with HCCL"),
      C("ENV NCCL_SOCKET_IFNAME=eth0", "env_var", R, False, "ENV HCCL_SOCKET_IFNAME=eth0",
        "HCCL's host NIC selector is HCCL_SOCKET_IFNAME (" + DIST + " §1 / §6.1); single-node runs do not need it"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0 8.0 9.0"', "env_var", X, False, None, "nvcc arch list; nothing to compile for CUDA"),
      C("RUN useradd -m -s /bin/bash recsys && chown -R recsys /opt/recsys", "env_var", R, True,
        "RUN useradd -m -s /bin/bash -G HwHiAiUser recsys && chown -R recsys /opt/recsys",
        "/dev/davinci* belong to HwHiAiUser:HwHiAiUser mode 0660, so a non-root user must be in that group to open "
        "the NPUs (" + HOST + " §3.9); whether the group exists in the chosen base image is unconfirmed"),
      C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi", "device_type", R, False,
        "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null || exit 1",
        NVSMI + "; a failing healthcheck only marks the container unhealthy"),
      C('CMD ["torchrun --nproc_per_node=8 dlrm_s_pytorch.py --use-gpu --dist-backend=nccl"]', "dist_backend", R, True,
        'CMD ["torchrun --nproc_per_node=8 dlrm_s_pytorch.py --use-gpu --dist-backend=hccl"]', NCCL),
  ])

E("dlrm_main", "dlrm_s_pytorch.py", "explicit_replacement",
  "facebookresearch/dlrm dlrm_s_pytorch.py (--use-gpu, EmbeddingBag sparse=True, replicate/parallel_apply)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
        SYNC + " (time_wrap runs every iteration when use_gpu)"),
      C('EE = nn.EmbeddingBag(n, m, mode="sum", sparse=True)', "unsupported_op_workaround", R, True,
        'EE = nn.EmbeddingBag(n, m, mode="sum", sparse=False)',
        SPARSE + ". nn.EmbeddingBag itself is ✔ (" + TSV + ") with dense gradients (_embedding_bag has an NPU kernel)"),
      C('d = torch.device("cuda:" + str(k % ndevices))', "device_type", R, False,
        'd = torch.device("npu:" + str(k % ndevices))',
        "parallel_forward is unreachable once ngpus is forced to 1 below; changed for consistency"),
      C('return gather(p, torch.device("cuda:0"), dim=0)', "device_type", R, False,
        'return gather(p, torch.device("npu:0"), dim=0)', "unreachable after the port, see above"),
      C("use_gpu = args.use_gpu and torch.cuda.is_available()", "torch_cuda_api", R, True,
        "use_gpu = args.use_gpu and torch.npu.is_available()", AVAIL),
      C("torch.cuda.manual_seed_all(args.numpy_rand_seed)", "torch_cuda_api", R, False,
        "torch.npu.manual_seed_all(args.numpy_rand_seed)", SEED),
      C('device = torch.device("cuda", ext_dist.my_local_rank)', "device_type", R, True,
        'device = torch.device("npu", ext_dist.my_local_rank)', DEV),
      C("ngpus = torch.cuda.device_count()", "distributed_framework", R, True,
        "ngpus = 1  # single-process multi-device (replicate/scatter/parallel_apply) is not supported on NPU",
        "with ngpus = device count the single-process path uses replicate/scatter/parallel_apply/gather, i.e. the "
        "DataParallel machinery, ✘ on Ascend (" + TSV + ": torch.nn.DataParallel, torch.cuda.comm.scatter); "
        "multi-NPU runs go through torchrun + HCCL"),
      C('device = torch.device("cuda", 0)', "device_type", R, True, 'device = torch.device("npu", 0)', DEV),
      C("gpu_mem = torch.cuda.max_memory_allocated(device) / 2**30 if use_gpu else 0.0", "torch_cuda_api", R, False,
        "gpu_mem = torch.npu.max_memory_allocated(device) / 2**30 if use_gpu else 0.0", MEMLOG),
  ])

E("dlrm_extend_dist", "extend_distributed.py", "explicit_replacement",
  "facebookresearch/dlrm extend_distributed.py (MPI env guessing, nccl/ccl/mpi/gloo, alltoall probe)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("elif use_gpu and dist.is_nccl_available():", "dist_backend", R, True,
        "elif use_gpu and dist.is_hccl_available():",
        "is_nccl_available() is False on an Ascend torch build, so the backend silently falls to mpi/gloo; torch_npu "
        "provides is_hccl_available (" + MIG + " §2.4)"),
      C('backend = "nccl"', "dist_backend", R, True, 'backend = "hccl"', NCCL),
      C("if my_local_size > torch.cuda.device_count():", "torch_cuda_api", R, True,
        "if my_local_size > torch.npu.device_count():", DEVCOUNT + "; the unchanged check exits the run"),
      C("% (my_local_size, torch.cuda.device_count()))", "torch_cuda_api", R, False,
        "% (my_local_size, torch.npu.device_count()))", "error message only"),
      C("torch.cuda.set_device(my_local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(my_local_rank)",
        SETDEV),
      C("t = t.cuda()", "tensor_to_device", R, True, "t = t.npu()",
        DOTCUDA + "; the failure is not a RuntimeError, so the surrounding try does not catch it"),
  ])

E("dlrm_mlperf_logger", "mlperf_logger.py", "explicit_replacement",
  "facebookresearch/dlrm mlperf_logger.py (all_reduce barrier on torch.cuda.FloatTensor)", [
      C("=import torch", "import_torch_npu", A, False, "import torch_npu", IMP_SIDE),
      C("torch.distributed.all_reduce(torch.cuda.FloatTensor(1))", "tensor_to_device", R, True,
        'torch.distributed.all_reduce(torch.zeros(1, device="npu"))',
        "torch.cuda.FloatTensor needs CUDA; with HCCL the tensor must live on the NPU (" + DIST + " §6.1)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC),
      C("if not torch.cuda.is_available():", "torch_cuda_api", R, False, "if not torch.npu.is_available():",
        "metadata only: the unchanged line logs accelerator=cpu on an NPU host"),
      C("props = torch.cuda.get_device_properties(0)", "torch_cuda_api", R, False,
        "props = torch.npu.get_device_properties(0)", "reached only once the check above is ported (" + TSV + ")"),
      C('log_event(key="accelerator_count", value=torch.cuda.device_count())', "torch_cuda_api", R, False,
        'log_event(key="accelerator_count", value=torch.npu.device_count())', "metadata only"),
      C("props.multi_processor_count)", "device_capability_check", R, False,
        'log_event(key="accelerator_core_count", value=props.cube_core_num)',
        "NPU device properties have name, total_memory, L2_cache_size, cube_core_num, vector_core_num only (" +
        MIG + " §2.8; " + TSV + ")"),
  ])

E("dlrm_run_script", "bench/dlrm_s_criteo_terabyte_dist.sh", "explicit_replacement",
  "DLRM bench/*.sh launch script (torchrun, NCCL env, MLPerf flags)", [
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", R, True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", CVD),
      C("export NCCL_DEBUG=INFO", "env_var", X, False, None, "NCCL-only; HCCL logs via plog/ASCEND_GLOBAL_LOG_LEVEL"),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", X, False, None, "NVLink P2P knob; no effect on Ascend"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog variable is HCCL_ASYNC_ERROR_HANDLING (" + DIST + " §1, related variables)"),
      C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", X, False, None,
        "cuBLAS determinism knob; HCCL/NPU determinism is HCCL_DETERMINISTIC + torch.use_deterministic_algorithms "
        "(" + TSV + ")"),
      C('nvidia-smi topo -m | tee -a "${OUT}/env.txt"', "device_type", R, True, 'npu-smi info | tee -a "${OUT}/env.txt"',
        NVSMI + "; under `set -euo pipefail` the missing command aborts the script"),
      C("torch.version.cuda, torch.cuda.device_count())", "torch_cuda_api", R, False,
        'python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__, torch.npu.device_count())" | tee -a "${OUT}/env.txt"',
        "prints None / 0 on an NPU host; environment log only"),
      C("--dist-backend=nccl \\", "dist_backend", R, True, "--dist-backend=hccl \\", NCCL),
  ])

E("two_tower_train", "retrieval/train_two_tower.py", "explicit_replacement",
  "Two-tower retrieval trainer (in-batch + cross-rank negatives, logQ correction, FAISS GPU index, AMP)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}", "tensor_to_device", R, True,
        "batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}", DOTCUDA),
      C("res = faiss.StandardGpuResources()", "custom_cuda_extension", X, False, None,
        "faiss GPU resources need CUDA; unreachable once --faiss-gpu defaults to False (no NPU faiss in "
        "/work/shared/knowledge, unconfirmed)"),
      C("res.setTempMemory(512 * 1024 * 1024)", "custom_cuda_extension", X, False, None, "see above"),
      C("index = faiss.index_cpu_to_gpu(res, torch.cuda.current_device(), cpu_index)", "custom_cuda_extension", X, False,
        None, "see above"),
      C('p.add_argument("--faiss-gpu", action="store_true", default=True)', "custom_cuda_extension", R, True,
        'p.add_argument("--faiss-gpu", action="store_true", default=False)',
        "store_true with default=True always takes the GPU-index branch; faiss-gpu needs CUDA, so the NPU build "
        "uses the CPU IndexFlatIP"),
      C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, True,
        'dist.init_process_group(backend="hccl", init_method="env://")', NCCL),
      C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", SETDEV),
      C('device = torch.device(f"cuda:{local_rank}")', "device_type", R, True,
        'device = torch.device(f"npu:{local_rank}")', DEV),
      C("args.dim, args.temperature).cuda()", "tensor_to_device", R, True,
        "args.dim, args.temperature).to(device)", DOTCUDA),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", R, True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", SCALER),
      C('with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):', "amp", R, True,
        'with torch.autocast("npu", dtype=torch.float16, enabled=args.amp):', AUTOCAST),
  ])

E("recsys_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a recsys repo (cu121 torch, fbgemm-gpu, torchrec, faiss-gpu, DGL/PyG CUDA wheels, NVML)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
        "--extra-index-url https://download.pytorch.org/whl/cpu", TORCHPIN),
      C("torch==2.1.2+cu121", "import_torch_npu", R, True, "torch==2.1.0  (+ new line: torch-npu==2.1.0.post17)",
        "2.1.2 has no torch_npu release; torch_npu wheels match torch exactly (" + MIG + " §1.1-1.2)"),
      C("fbgemm-gpu==0.5.0", "custom_cuda_extension", R, True, "# fbgemm-ascend (Ascend/fbgemm-ascend, built from source)",
        "fbgemm_gpu ships CUDA kernels; Ascend counterpart fbgemm-ascend (" + MIG + " §6)"),
      C("torchrec==0.5.0", "distributed_framework", R, True, "# torchrec: Ascend/RecSDK torch_rec",
        "torchrec needs fbgemm_gpu; Ascend path is RecSDK (" + MIG + " §6)"),
      C("faiss-gpu==1.7.2", "custom_cuda_extension", R, True, "faiss-cpu==1.7.4",
        "faiss-gpu needs CUDA; no NPU faiss found in /work/shared/knowledge (unconfirmed)"),
      C("dgl==1.1.3+cu121", "custom_cuda_extension", R, True, "dgl==1.1.3",
        "CUDA build of DGL; the CPU build is what runs next to torch_npu. " + DGL),
      C("-f https://data.dgl.ai/wheels/cu121/repo.html", "custom_cuda_extension", R, True,
        "-f https://data.dgl.ai/wheels/repo.html", DGL),
      C("-f https://data.pyg.org/whl/torch-2.1.0+cu121.html", "custom_cuda_extension", R, True,
        "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
        "torch-scatter/torch-sparse are compiled against CUDA torch from this index; CPU builds are needed next "
        "to CPU torch + torch_npu (" + TORCHPIN + ")"),
      C("nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None,
        "NVML has no NPU equivalent; torch.npu.utilization / npu-smi (" + MIG + " §6)"),
  ])

E("gnn_install_env", "scripts/install_env.sh", "explicit_replacement",
  "conda environment setup script for graph + time-series experiments (cu121 wheels, sanity checks)", [
      C("CUDA_TAG=cu121", "import_torch_npu", R, True, "CUDA_TAG=cpu", TORCHPIN),
      C('conda activate "${ENV_NAME}"', "env_var", A, True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "torch_npu needs the CANN environment sourced, otherwise `ImportError: libhccl.so` (" + HOST + " §3.8, §4.1)"),
      C("pip install torch==${TORCH_VERSION} torchvision==0.16.0 \\", "import_torch_npu", R, True,
        "pip install torch==${TORCH_VERSION} torchvision==0.16.0 torch-npu==2.1.0.post17 \\",
        "torch_npu 2.1.0.post17 pairs with torch 2.1.0 (" + MIG + " §1.2)"),
      C('assert torch.cuda.is_available(), "CUDA build of torch expected"', "torch_cuda_api", R, True,
        'import torch_npu; assert torch.npu.is_available(), "torch_npu cannot see an NPU"',
        "the assertion fails on an NPU host and `set -e` aborts the install; " + AVAIL),
      C('print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())',
        "torch_cuda_api", R, False,
        'print("torch", torch.__version__, "torch_npu", torch_npu.__version__, "devices", torch.npu.device_count())',
        "log only"),
      C('export TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", X, False, None, "optional WITH_MAMBA branch; nvcc-only"),
      C("pip install causal-conv1d==1.2.0 mamba-ssm==1.2.0 --no-build-isolation", "custom_cuda_extension", X, False,
        None, "nvcc-built CUDA extensions cannot build on Ascend (" + MIG + " §6); opt-in branch (WITH_MAMBA=1) only"),
      C("nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv", "device_type", R, True,
        "npu-smi info", NVSMI + "; with `set -e` the missing command fails the script at its last step"),
  ])

E("sasrec_main", "main.py", "explicit_replacement",
  "pmixer/SASRec.pytorch main.py (--device default 'cuda')", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("parser.add_argument('--device', default='cuda', type=str)", "device_type", R, True,
        "parser.add_argument('--device', default='npu', type=str)", DEV + "; everything else follows args.device"),
  ])

E("sasrec_model", "model.py", "explicit_replacement",
  "pmixer/SASRec.pytorch model.py (device-agnostic: self.dev from args, nn.MultiheadAttention)", [])

E("bert4rec_trainer", "trainers/base.py", "explicit_replacement",
  "BERT4Rec-VAE-Pytorch trainers/base.py (CUDA_VISIBLE_DEVICES from args, DataParallel, AMP)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("torch.cuda.manual_seed_all(random_seed)", "torch_cuda_api", R, False,
        "torch.npu.manual_seed_all(random_seed)", SEED),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.device_idx", "env_var", R, True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.device_idx", CVD),
      C("self.model = nn.DataParallel(self.model)", "distributed_framework", R, True,
        "pass  # nn.DataParallel is unsupported on NPU; use one device or DDP over HCCL", DP),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", R, True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)", SCALER),
      C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", R, True,
        "with torch.npu.amp.autocast(enabled=self.use_amp):", AUTOCAST),
      C("map_location='cuda').get('model_state_dict')", "device_type", R, True,
        "map_location='npu').get('model_state_dict')", DEV),
  ])

E("feature_store_loader", "featurestore/prefetch.py", "explicit_replacement",
  "feature-store H2D prefetcher (pinned staging ring, side CUDA stream, events, NVTX ranges)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("ready: Optional[torch.cuda.Event] = None", "torch_cuda_api", R, False,
        "ready: Optional[torch.npu.Event] = None", "annotation only; torch.cuda.Event exists as a class without CUDA"),
      C('self.device = torch.device(device or f"cuda:{torch.cuda.current_device()}")', "device_type", R, True,
        'self.device = torch.device(device or f"npu:{torch.npu.current_device()}")',
        DEV + "; torch.npu.current_device (" + TSV + ")"),
      C("self.stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", R, True,
        "self.stream = torch.npu.Stream(device=self.device)",
        "CUDA streams need a CUDA build; torch.npu.Stream (" + TSV + ")"),
      C("torch.cuda.set_device(self.device)", "torch_cuda_api", R, True, "torch.npu.set_device(self.device)", SETDEV),
      C('torch.cuda.nvtx.range_push("fs.stage")', "torch_cuda_api", R, False,
        'torch_npu.npu.mstx.range_start("fs.stage")',
        "torch.cuda.nvtx is not redirected and fails without CUDA; NPU ranges are torch_npu.npu.mstx (" + MIG +
        " §2.1); only with FS_NVTX=1. mstx call names unconfirmed"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
        "start = torch.npu.Event(enable_timing=True)", "torch.npu.Event (" + TSV + ")"),
      C("done = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
        "done = torch.npu.Event(enable_timing=True)", "torch.npu.Event (" + TSV + ")"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):",
        "torch.npu.stream (" + TSV + ")"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, False, "torch_npu.npu.mstx.range_end(rng)",
        "see range_push; only with FS_NVTX=1"),
      C("cur = torch.cuda.current_stream(self.device)", "torch_cuda_api", R, True,
        "cur = torch.npu.current_stream(self.device)", "torch_npu.npu.current_stream (" + MIG + " §2.1)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", SYNC),
      C('out["max_reserved_mib"] = torch.cuda.max_memory_reserved(pf.device) / 2**20', "torch_cuda_api", R, False,
        'out["max_reserved_mib"] = torch.npu.max_memory_reserved(pf.device) / 2**20', MEMLOG),
  ])
