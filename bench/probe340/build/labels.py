# Labels for probe340: neural combinatorial optimisation / learned solvers (CUDA -> Ascend NPU).
# Format: see bench/probe_build.py. One C(...) per upstream line a careful porter would edit.
# Target assumed by the labels: torch 2.1.0 + torch_npu 2.1.0.postN on CANN 8.x (import torch_npu still
# needed, no device-backend autoload), Atlas A2 training hardware.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch_npu must be imported before any npu device / torch.npu use "
               "(torch 2.1 + torch_npu 2.1.0.postN has no backend autoload)")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH, ...) must be sourced before Python starts, "
                "otherwise import torch_npu fails")
UNCONF_LIGHTNING = ("unconfirmed: stock Lightning has no Ascend accelerator; needs an NPU Accelerator/plugin "
                    "registered under this name")

# ---------------------------------------------------------------------------------------------------------
# attention-learn-to-route (Kool et al.)
# ---------------------------------------------------------------------------------------------------------
E("am_options", "options.py", "device_branch_or_abstraction",
  "wouterkool/attention-learn-to-route options.py (argparse, --no_cuda, opts.use_cuda)", [
    C("opts.use_cuda = torch.cuda.is_available() and not opts.no_cuda", "torch_cuda_api", "replace", True,
      "opts.use_cuda = torch.npu.is_available() and not opts.no_cuda",
      "torch.cuda.is_available() is False on an Ascend host, so every run silently trains on the CPU; the "
      "flag name is kept because run.py/eval.py branch on it"),
])

E("am_run", "run.py", "device_branch_or_abstraction",
  "wouterkool/attention-learn-to-route run.py (device from opts.use_cuda, DataParallel, RNG resume)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('opts.device = torch.device("cuda:0" if opts.use_cuda else "cpu")', "device_type", "replace", True,
      'opts.device = torch.device("npu:0" if opts.use_cuda else "cpu")',
      "with use_cuda ported to NPU this would build a cuda device and every .to(opts.device) would fail"),
    C("if opts.use_cuda and torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
      "only guards DataParallel; cuda.device_count() is 0 on NPU so the branch is dead there, and it goes "
      "away together with the DataParallel line"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is not supported on Atlas A2/A3 (Ascend API list, msFmkTransplt unsupported list); "
      "reached as soon as device counting is ported (or under transfer_to_npu); keep one NPU or move to DDP+HCCL"),
    C("torch.cuda.set_rng_state_all(load_data['cuda_rng_state'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state_all(load_data['cuda_rng_state'])",
      "torch.cuda sees no devices on an NPU host, so nothing is restored and a resumed run silently uses a "
      "different device RNG stream"),
])

E("am_train", "train.py", "device_branch_or_abstraction",
  "wouterkool/attention-learn-to-route train.py (rollout, checkpoint with cuda_rng_state)", [
    C("'cuda_rng_state': torch.cuda.get_rng_state_all(),", "torch_cuda_api", "replace", True,
      "'cuda_rng_state': torch.npu.get_rng_state_all(),",
      "returns [] without CUDA devices, so checkpoints silently lose the device RNG state needed for an exact "
      "resume; dict key kept for checkpoint compatibility with run.py"),
])

E("am_eval", "eval.py", "device_branch_or_abstraction",
  "wouterkool/attention-learn-to-route eval.py (greedy/sampling/beam search, one process per GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; the spawn-context workers re-import this module, so they get it too"),
    C('device = torch.device("cuda:{}".format(i))', "device_type", "replace", True,
      'device = torch.device("npu:{}".format(i))', "per-worker device of the multiprocessing path"),
    C("use_cuda = torch.cuda.is_available() and not opts.no_cuda", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available() and not opts.no_cuda",
      "False on an NPU host: evaluation silently runs on the CPU (and --multiprocessing asserts)"),
    C("num_processes = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_processes = torch.npu.device_count()",
      "0 on an NPU host -> val_size % 0 raises ZeroDivisionError"),
    C('device = torch.device("cuda:0" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if use_cuda else "cpu")', "single-process device"),
])

E("am_functions", "utils/functions.py", "device_branch_or_abstraction",
  "wouterkool/attention-learn-to-route utils/functions.py (+ a fork's set_seed helper)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "unconfirmed: with torch_npu loaded, torch.manual_seed above is expected to seed the NPU generators as "
      "well, so the CUDA-only branch is redundant on NPU rather than wrong"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy-queued no-op without CUDA; see the guard above (unconfirmed that it matters)"),
])

E("am_attention_model", "nets/attention_model.py", "device_branch_or_abstraction",
  "wouterkool/attention-learn-to-route nets/attention_model.py (device-agnostic; multinomial 'bug on GPU' workaround)",
  [])

E("am_baselines", "reinforce_baselines.py", "device_branch_or_abstraction",
  "wouterkool/attention-learn-to-route reinforce_baselines.py (rollout / critic / exponential baselines)", [])

# ---------------------------------------------------------------------------------------------------------
# POMO (Kwon et al.)
# ---------------------------------------------------------------------------------------------------------
E("pomo_train_n100", "TSP/POMO/train_n100.py", "explicit_replacement",
  "yd-kwon/POMO NEW_py_ver/TSP/POMO/train_n100.py (USE_CUDA / CUDA_DEVICE_NUM config dicts)", [])

E("pomo_tsp_trainer", "TSP/POMO/TSPTrainer.py", "explicit_replacement",
  "yd-kwon/POMO NEW_py_ver/TSP/POMO/TSPTrainer.py (set_default_tensor_type('torch.cuda.FloatTensor'))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first module of a POMO run that touches a device (train_n100.py itself never imports torch)"),
    C("torch.cuda.set_device(cuda_device_num)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cuda_device_num)", "raises without CUDA"),
    C("device = torch.device('cuda', cuda_device_num)", "device_type", "replace", True,
      "device = torch.device('npu', cuda_device_num)", "used for map_location of checkpoints"),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "torch_cuda_api", "replace", True,
      "torch.set_default_device(device)",
      "POMO relies on the default tensor type to create every env/model tensor on the GPU; "
      "torch.cuda.FloatTensor raises without CUDA and set_default_tensor_type does not accept torch.npu.*Tensor "
      "types (Ascend API list), so switch to set_default_device (float32 is already the default dtype)"),
])

E("pomo_cvrp_tester", "CVRP/POMO/CVRPTester.py", "explicit_replacement",
  "yd-kwon/POMO NEW_py_ver/CVRP/POMO/CVRPTester.py (x8 augmentation, same CUDA block as the trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first module of the test run that touches a device"),
    C("torch.cuda.set_device(cuda_device_num)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cuda_device_num)", "raises without CUDA"),
    C("device = torch.device('cuda', cuda_device_num)", "device_type", "replace", True,
      "device = torch.device('npu', cuda_device_num)", "map_location and saved-problem loading"),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "torch_cuda_api", "replace", True,
      "torch.set_default_device(device)",
      "raises without CUDA; torch.npu.FloatTensor is not accepted by set_default_tensor_type on NPU"),
])

# ---------------------------------------------------------------------------------------------------------
# RL4CO (Lightning + TensorDict)
# ---------------------------------------------------------------------------------------------------------
E("rl4co_trainer", "rl4co/utils/trainer.py", "device_branch_or_abstraction",
  "ai4co/rl4co rl4co/utils/trainer.py (RL4COTrainer: auto-DDP, matmul precision)", [
    C("n_devices = num_cuda_devices()", "torch_cuda_api", "replace", False, "n_devices = torch.npu.device_count()",
      "counts CUDA devices only (0 on NPU), so devices='auto' never auto-configures DDP with "
      "find_unused_parameters=True on a multi-NPU host; behavioural, not a crash (unconfirmed what the NPU "
      "accelerator plugin then picks)"),
    C("strategy = DDPStrategy(", "dist_backend", "replace", False,
      'strategy = DDPStrategy(process_group_backend="hccl",',
      "unconfirmed: Lightning derives nccl only for CUDA root devices and gloo otherwise; gloo cannot carry NPU "
      "tensors, so with an NPU accelerator the backend should be hccl explicitly"),
])

E("rl4co_trainer_cfg", "configs/trainer/default.yaml", "explicit_replacement",
  "ai4co/rl4co configs/trainer/default.yaml (Hydra trainer config)", [
    C('accelerator: "gpu"', "device_type", "replace", True, 'accelerator: "npu"',
      "Lightning raises a MisconfigurationException when 'gpu' is requested and no CUDA device exists; "
      + UNCONF_LIGHTNING),
    C("gradient_as_bucket_view: True", "dist_backend", "npu_only_addition", False, "process_group_backend: hccl",
      "unconfirmed: make the DDP strategy use HCCL instead of Lightning's non-CUDA default (gloo)"),
])

E("rl4co_attention", "rl4co/models/nn/attention.py", "device_branch_or_abstraction",
  "ai4co/rl4co rl4co/models/nn/attention.py (SDPA MHA, PointerAttention, + an optional flash-attn encoder MHA)", [
    C("from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func", "attention_kernel", "replace", False,
      "import torch_npu  # npu_fusion_attention replaces flash-attn, which cannot be installed on Ascend",
      "guarded import: on NPU it only leaves the name None; the failures are in FlashMultiHeadAttention"),
    C("if flash_attn_qkvpacked_func is None:", "attention_kernel", "replace", True,
      'if not hasattr(torch_npu, "npu_fusion_attention"):',
      "flash-attn is absent on NPU, so constructing the flash encoder raises ImportError"),
    C('assert qkv.is_cuda, "flash-attn kernels only run on CUDA tensors"', "device_type", "replace", True,
      'assert qkv.device.type == "npu", "fused attention path expects NPU tensors"', "is_cuda is False on NPU"),
    C("out = flash_attn_qkvpacked_func(", "attention_kernel", "replace", True,
      'out = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", keep_prob=1.0 - dropout_p, '
      'scale=self.head_dim ** -0.5)[0]',
      "Dao-AILab kernel: CUDA only; npu_fusion_attention is the Ascend training FlashAttention (BSND layout, "
      "keep_prob = 1 - dropout_p); the packed qkv must be unbound into q, k, v first"),
])

E("rl4co_example", "examples/train_tsp_am.py", "device_branch_or_abstraction",
  "ai4co/rl4co quickstart / examples (AM on TSP50 with RL4COTrainer, greedy rollouts before/after)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silently falls back to CPU for the before/after greedy rollouts"),
    C('policy = torch.compile(policy, mode="reduce-overhead")', "compile_mode", "replace", False,
      'policy = torch.compile(policy, backend="npugraphs")',
      "opt-in flag; unconfirmed: reduce-overhead = Inductor + CUDA graphs; Ascend lists torch.compile as "
      "supported with backend='npugraphs' as the cudagraphs equivalent (NPUGraph is inference-only per the "
      "2.7.1 list), so plain eager may be the safer choice for training"),
    C('accelerator="gpu",', "device_type", "replace", True, 'accelerator="npu",',
      "Lightning rejects 'gpu' without CUDA devices; " + UNCONF_LIGHTNING),
    C('checkpoint_callback.best_model_path, map_location="cuda", load_baseline=False', "device_type", "replace",
      True, 'checkpoint_callback.best_model_path, map_location="npu", load_baseline=False',
      "torch.load onto 'cuda' raises on a host without CUDA"),
])

E("rl4co_eval", "rl4co/tasks/eval.py", "device_branch_or_abstraction",
  "ai4co/rl4co rl4co/tasks/eval.py (greedy/augmentation eval, auto batch size) + TSPLIB loader and event timing", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the module doubles as a CLI (python -m rl4co.tasks.eval)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "unchanged it falls back to host wall-clock timing without a device sync: reported inference time is "
      "wrong on the asynchronous NPU, results are not (diagnostic only)"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)", "fails once the guard above is ported"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "fails once the guard above is ported"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA once the timing branch is taken"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only cached NPU memory is kept longer"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
      "except RuntimeError:  # NPU out-of-memory surfaces as a RuntimeError",
      "unconfirmed which exception class torch_npu raises on OOM; if it is not torch.cuda.OutOfMemoryError the "
      "batch-halving retry never triggers"),
    C("torch.cuda.empty_cache()  # release the cached blocks", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release the cached blocks of the failed attempt",
      "no-op without CUDA, so the retry runs with the failed attempt's blocks still cached"),
    C('return TensorDict({"locs": locs[None]}, batch_size=[1], device="cuda"), scale.item()', "tensor_to_device",
      "replace", True, 'return TensorDict({"locs": locs[None]}, batch_size=[1], device="npu"), scale.item()',
      "TensorDict moves its leaves to cuda at construction -> fails without CUDA"),
    C('default="cuda:0", help="Device to run the evaluation"', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu:0", help="Device to run the evaluation")',
      "default device string"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device -> raises without CUDA"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      'print(f"Peak memory: {torch.npu.max_memory_allocated() / 1024 ** 3:.2f} GB")',
      "returns 0 while CUDA is uninitialised: misleading log line only"),
])

E("rl4co_pyproject", "pyproject.toml", "explicit_replacement",
  "ai4co/rl4co pyproject.toml (+ a uv source pinning the cu121 PyTorch index)", [
    C('"torch>=2.1.0",', "torch_cuda_api", "replace", False, '"torch==2.1.0",',
      "torch must equal the torch_npu wheel's torch version; unconfirmed whether the torch-npu wheel pins it itself"),
    C('"torchrl>=0.6.0",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post12",',
      "torch_npu is a separate wheel; without it there is no npu device"),
    C("flash = [\"flash-attn>=2.5.0; platform_system == 'Linux'\"]", "attention_kernel", "removal", False, None,
      "optional extra; flash-attn cannot be built on Ascend hosts (no CUDA); the default install does not use it"),
    C('url = "https://download.pytorch.org/whl/cu121"', "torch_cuda_api", "replace", True,
      'url = "https://download.pytorch.org/whl/cpu"',
      "uv would install the CUDA build on Linux; torch_npu pairs with CPU torch (x86: whl/cpu, aarch64: PyPI)"),
])

# ---------------------------------------------------------------------------------------------------------
# DIFUSCO (Sun & Yang)
# ---------------------------------------------------------------------------------------------------------
E("difusco_train", "difusco/train.py", "explicit_replacement",
  "Edward-Sun/DIFUSCO difusco/train.py (PyTorch Lightning Trainer, DDPStrategy, wandb)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check",
      "replace", False, "if torch.npu.is_available():  # no compute capability on NPU",
      "unchanged it is just skipped (perf knob); a literal port to torch.npu.get_device_capability() would crash "
      "because it returns None unless TORCH_NPU_DEVICE_CAPABILITY is set; allow_tf32 itself is supported on A2"),
    C('accelerator="auto",', "device_type", "replace", True, 'accelerator="npu",',
      "Lightning's auto selection knows CUDA/MPS/TPU/HPU, so on an Ascend host it silently trains on the CPU; "
      + UNCONF_LIGHTNING),
    C("devices=torch.cuda.device_count() if torch.cuda.is_available() else None,", "torch_cuda_api", "replace",
      True, "devices=torch.npu.device_count() if torch.npu.is_available() else None,",
      "None on an NPU host"),
    C("strategy=DDPStrategy(static_graph=True),", "dist_backend", "replace", False,
      'strategy=DDPStrategy(static_graph=True, process_group_backend="hccl"),',
      "unconfirmed: Lightning picks gloo for non-CUDA roots; HCCL is the NPU collective backend"),
])

E("difusco_tsp_model", "difusco/pl_tsp_model.py", "explicit_replacement",
  "Edward-Sun/DIFUSCO difusco/pl_tsp_model.py (diffusion denoising, greedy merge + batched 2-opt)", [
    C('np_points.astype("float64")', "unsupported_op_workaround", "replace", False,
      'np_points.astype("float32"), np.array(tours).astype(\'int64\'),',
      "unconfirmed: the 2-opt runs on the model's device in float64; fp64 coverage on NPU kernels is partial "
      "(transfer_to_npu even maps DoubleTensor to FloatTensor), so fp64 may fall back to CPU or fail; fp32 can "
      "flip near-zero improvement decisions (threshold -1e-6)"),
])

E("difusco_gnn", "difusco/models/gnn_encoder.py", "explicit_replacement",
  "Edward-Sun/DIFUSCO difusco/models/gnn_encoder.py (anisotropic GNN, torch_sparse aggregation)", [
    C("from torch_sparse import sum as sparse_sum, mean as sparse_mean, max as sparse_max", "custom_cuda_extension",
      "removal", False, None,
      "unused after the aggregation rewrite; torch_sparse stays installed (CPU build) for the SparseTensor "
      "container used by the encoder"),
    C("sparseVh = SparseTensor(row=edge_index[0]", "custom_cuda_extension", "removal", False, None,
      "construction is plain PyTorch, but nothing consumes it after the rewrite"),
    C("return sparse_mean(sparseVh, dim=1)", "custom_cuda_extension", "replace", True,
      "return Vh.new_zeros(graph.size(0), Vh.size(-1)).index_add_(0, edge_index[0], Vh) / "
      "torch.bincount(edge_index[0], minlength=graph.size(0)).clamp_min(1)[:, None]",
      "torch_sparse reductions go through compiled torch_sparse/torch_scatter ops (CPU/CUDA kernels only) -> "
      "error on NPU tensors; index_add_/bincount have NPU kernels"),
    C("return sparse_max(sparseVh, dim=1)", "custom_cuda_extension", "replace", True,
      "return Vh.view(graph.size(0), -1, Vh.size(-1)).max(dim=1)[0]",
      "compiled op; torch.scatter_reduce is unsupported on NPU; the TSP KNN graph has a fixed out-degree with "
      "edges grouped by source, so reshape+max is exact (not for the irregular MIS graphs)"),
    C("return sparse_sum(sparseVh, dim=1)", "custom_cuda_extension", "replace", True,
      "return Vh.new_zeros(graph.size(0), Vh.size(-1)).index_add_(0, edge_index[0], Vh)",
      "default aggregation ('sum'): compiled torch_sparse reduction -> error on NPU tensors"),
])

E("difusco_tsp_utils", "difusco/utils/tsp_utils.py", "explicit_replacement",
  "Edward-Sun/DIFUSCO difusco/utils/tsp_utils.py (batched_two_opt_torch with cuda_points, Cython merge)", [])

E("difusco_script", "scripts/tsp50_categorical.sh", "explicit_replacement",
  "Edward-Sun/DIFUSCO reproduce scripts (tsp50 categorical training + tsp500 sparse test)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored by the NPU runtime, so the device restriction silently does nothing"),
    C("CUDA_VISIBLE_DEVICES=0 python -u difusco/train.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python -u difusco/train.py \\",
      "ignored on NPU: the 'single GPU' test would see all NPUs and devices=device_count() would launch DDP on all"),
])

E("difusco_env", "environment.yml", "explicit_replacement",
  "Edward-Sun/DIFUSCO environment.yml-style conda env (pytorch + nvidia + pyg channels)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "channel only supplies CUDA runtime packages"),
    C("- cudatoolkit=11.3", "torch_cuda_api", "removal", True, None,
      "CUDA runtime; it makes conda pick the CUDA build of pytorch; the NPU stack comes from CANN on the host"),
    C("- pytorch=1.11.0", "torch_cuda_api", "replace", True, "- pytorch=2.1.0  # plus cpuonly",
      "torch_npu needs the CPU build of exactly its torch version (2.1.0 for torch-npu 2.1.0.postN)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "torch_npu wheel from PyPI, matching torch 2.1.0"),
])

# ---------------------------------------------------------------------------------------------------------
# DIMES (Qiu et al.)
# ---------------------------------------------------------------------------------------------------------
E("dimes_train", "TSP/TSP-KNN/tsp_train.py", "explicit_replacement",
  "DIMES-TSP TSP-KNN meta-training script (KNN graph, REINFORCE inner loop, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", False,
      "from torch.npu.amp import autocast, GradScaler",
      "without CUDA, torch.cuda.amp autocast/GradScaler warn and disable themselves, so --amp silently trains "
      "in fp32 (slower, numerically fine; stock-PyTorch behaviour, not confirmed in the Ascend notes); "
      "torch.npu.amp is the supported counterpart"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "ignored on NPU: the job silently lands on logical device 0 whatever --gpu says; must be set before the "
      "first NPU call"),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')", "silently CPU otherwise"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy no-op without CUDA; unconfirmed: torch.manual_seed is expected to seed the NPU generator already"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)",
      "a torch.cuda memory API given an npu device raises ValueError (expects a cuda device)"),
    C("torch.cuda.synchronize()  # do not bill", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # do not bill the previous step's async kernels to this one",
      "raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2 ** 30",
      "returns 0 while CUDA is uninitialised (stats lookup happens before the device check): wrong log only"),
])

E("dimes_net", "TSP/TSP-KNN/net.py", "explicit_replacement",
  "DIMES-TSP TSP-KNN net.py (edge-gated GNN with torch_scatter aggregation, heatmap head)", [
    C("from torch_scatter import scatter, scatter_softmax", "custom_cuda_extension", "replace", False,
      "from torch_scatter import scatter",
      "scatter(reduce='sum'/'mean') is pure PyTorch (scatter_add_) and runs on NPU; scatter_softmax is replaced below"),
    C("agg = scatter(gates * Vx[dst], src, dim=0, dim_size=n, reduce='max')", "custom_cuda_extension", "replace",
      True, "agg = (gates * Vx[dst]).view(n, -1, self.units).max(dim=1)[0]",
      "reduce='max' dispatches to the compiled torch_scatter scatter_max (CPU/CUDA kernels only) -> fails on NPU "
      "tensors; torch.scatter_reduce is unsupported on NPU; the KNN graph has k out-edges per node grouped by "
      "source, so reshape+max is exact"),
    C("par = torch.log(scatter_softmax(par, edge_index[0], dim=0) + 1e-10)", "custom_cuda_extension", "replace",
      True, "par = torch.log_softmax(par.view(x.size(0), -1), dim=-1).view(-1)",
      "scatter_softmax calls the compiled scatter_max internally; dense per-node softmax over the k edges instead"),
])

E("dimes_sparsify", "TSP/utils/graph_sparsify.py", "explicit_replacement",
  "DIMES-style KNN sparsification for TSP-10000 with CuPy + DLPack hand-off", [
    C("import cupy as cp", "custom_cuda_extension", "removal", True, None,
      "CuPy has no Ascend backend (cupy#9379); the cupy-cuda wheel cannot run on an NPU host"),
    C("def knn_cupy(points, k, chunk=1024):", "custom_cuda_extension", "replace", False,
      "def knn_torch_chunked(x, k, chunk=1024):", "same chunked algorithm on a torch tensor (rename only)"),
    C("pts = cp.asarray(points, dtype=cp.float32)", "custom_cuda_extension", "replace", True, "pts = x.float()",
      "host-to-GPU copy through CuPy"),
    C("idx_out = cp.empty((n, k), dtype=cp.int64)", "custom_cuda_extension", "replace", True,
      "idx_out = torch.empty((n, k), dtype=torch.long, device=pts.device)", "CuPy allocation"),
    C("dist_out = cp.empty((n, k), dtype=cp.float32)", "custom_cuda_extension", "replace", True,
      "dist_out = torch.empty((n, k), dtype=torch.float32, device=pts.device)", "CuPy allocation"),
    C("d2[cp.arange(e - s), cp.arange(s, e)] = cp.inf", "custom_cuda_extension", "replace", True,
      "d2[torch.arange(e - s, device=pts.device), torch.arange(s, e, device=pts.device)] = float('inf')  "
      "# no self loops", "CuPy indexing"),
    C("part = cp.argpartition(d2, k, axis=1)[:, :k]", "custom_cuda_extension", "replace", True,
      "pd, part = d2.topk(k, dim=1, largest=False)  # sorted ascending",
      "topk has an NPU kernel and already returns sorted values"),
    C("pd = cp.take_along_axis(d2, part, axis=1)", "custom_cuda_extension", "removal", True, None,
      "covered by topk"),
    C("order = cp.argsort(pd, axis=1)", "custom_cuda_extension", "removal", True, None, "topk output is sorted"),
    C("idx_out[s:e] = cp.take_along_axis(part, order, axis=1)", "custom_cuda_extension", "replace", True,
      "idx_out[s:e] = part", "CuPy gather"),
    C("dist_out[s:e] = cp.sqrt(cp.maximum(cp.take_along_axis(pd, order, axis=1), 0.0))", "custom_cuda_extension",
      "replace", True, "dist_out[s:e] = pd.clamp_min(0.0).sqrt()", "CuPy math"),
    C("with cp.cuda.Device(device.index or 0):", "custom_cuda_extension", "removal", True, None,
      "CuPy CUDA device context"),
    C("idx, dist = knn_cupy(points, k)", "custom_cuda_extension", "replace", True,
      "knn_idx, knn_dist = knn_torch_chunked(torch.from_numpy(points).to(device), k)",
      "default path for every instance above 2000 nodes"),
    C("knn_idx = torch.utils.dlpack.from_dlpack(idx.toDlpack())", "custom_cuda_extension", "removal", True, None,
      "CuPy -> torch DLPack hand-off no longer needed"),
    C("knn_dist = torch.utils.dlpack.from_dlpack(dist.toDlpack())", "custom_cuda_extension", "removal", True, None,
      "CuPy -> torch DLPack hand-off no longer needed"),
    C("cp.get_default_memory_pool().free_all_blocks()", "custom_cuda_extension", "removal", True, None,
      "CuPy memory pool"),
    C("dev = torch.device('cuda:0')", "device_type", "replace", True, "dev = torch.device('npu:0')",
      "self-test device"),
])

E("dimes_requirements", "requirements.txt", "explicit_replacement",
  "DIMES-style requirements.txt (cu113 PyTorch index, PyG wheel index, cupy-cuda113)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with CPU torch (x86) or plain PyPI torch (aarch64)"),
    C("-f https://data.pyg.org/whl/torch-1.10.0+cu113.html", "custom_cuda_extension", "replace", True,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html", "CUDA builds of the PyG extensions for an old torch"),
    C("=# --- deep learning stack ---", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel, must match torch 2.1.0"),
    C("torch==1.10.1+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0", "CUDA build; no torch_npu for 1.10"),
    C("torchvision==0.11.2+cu113", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "CUDA build; must match torch 2.1.0"),
    C("torch-scatter==2.0.9", "custom_cuda_extension", "replace", True, "torch-scatter==2.1.2",
      "2.0.9 only has wheels for old torch; CPU wheel for torch 2.1 (its compiled max/softmax ops still do not "
      "run on NPU tensors, see net.py)"),
    C("cupy-cuda113==10.6.0", "custom_cuda_extension", "removal", True, None,
      "CUDA-only library, no Ascend support; replaced by torch ops in graph_sparsify.py"),
])

E("dimes_script", "TSP/TSP-KNN/scripts/tsp500.sh", "explicit_replacement",
  "DIMES TSP-500 run script (meta-training, test-time fine-tuning, MCTS)", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
      "info print only; it sits in a pipeline without pipefail, so set -e does not abort when nvidia-smi is missing"),
    C("export CUDA_LAUNCH_BLOCKING", "env_var", "replace", False,
      "export ASCEND_LAUNCH_BLOCKING=${ASCEND_LAUNCH_BLOCKING:-0}", "debug switch, off by default either way"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python3 -u tsp_test.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python3 -u tsp_test.py \\",
      "ignored on NPU: the test silently runs on logical device 0 instead of ${GPU}"),
])

# ---------------------------------------------------------------------------------------------------------
# Batched 2-opt / Or-opt CUDA extension shipped with several NCO code bases
# ---------------------------------------------------------------------------------------------------------
E("ls_setup", "csrc/setup.py", "kernel_rewrite",
  "setup.py of a batched 2-opt/Or-opt CUDAExtension used to refine neural-solver tours", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension",
      "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc path on Ascend; NpuExtension adds the torch_npu/ACL include and lib dirs"),
    C("if CUDA_HOME is None:", "custom_cuda_extension", "replace", True,
      'if os.getenv("ASCEND_HOME_PATH") is None:',
      "CUDA_HOME is None on an Ascend host, so the build aborts; check that CANN's set_env.sh was sourced instead"),
    C('nvcc_flags = ["-O3", "--use_fast_math"', "custom_cuda_extension", "removal", False, None,
      "nvcc flags are dead once nothing is compiled with nvcc"),
    C('for arch in os.getenv("TORCH_CUDA_ARCH_LIST"', "custom_cuda_extension", "removal", False, None,
      "CUDA SM targets"),
    C('nvcc_flags.append("-gencode=arch=compute_{0},code=sm_{0}"', "custom_cuda_extension", "removal", False,
      None, "CUDA SM targets"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
      "CUDAExtension needs nvcc/CUDA_HOME"),
    C('name="batched_two_opt_cuda",', "custom_cuda_extension", "replace", False, 'name="batched_two_opt_npu",',
      "optional rename so local_search/two_opt.py can tell the builds apart"),
    C('os.path.join(this_dir, "two_opt_kernel.cu"),', "custom_cuda_extension", "replace", True,
      'os.path.join(this_dir, "npu", "two_opt_kernel.cpp"),  # Ascend C rewrite',
      "CUDA kernel source; must be rewritten in Ascend C (or expressed with torch ops)"),
    C('os.path.join(this_dir, "or_opt_kernel.cu"),', "custom_cuda_extension", "replace", True,
      'os.path.join(this_dir, "npu", "or_opt_kernel.cpp"),  # Ascend C rewrite',
      "CUDA kernel source; must be rewritten in Ascend C"),
    C('extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},', "custom_cuda_extension", "replace",
      False, 'extra_compile_args={"cxx": ["-O3", "-std=c++17"]},', "drop the nvcc entry"),
])

E("ls_two_opt", "local_search/two_opt.py", "kernel_rewrite",
  "Python front-end of the batched 2-opt/Or-opt extension with JIT build and PyTorch fallback", [
    C("import batched_two_opt_cuda as ext", "custom_cuda_extension", "replace", True,
      "import batched_two_opt_npu as ext",
      "Or-opt exists only in the compiled extension, so without an NPU build refine() silently skips it "
      "(warning only) and returns worse tours; 2-opt alone has a PyTorch fallback"),
    C('if os.getenv("TWO_OPT_JIT", "1") == "1" and torch.cuda.is_available():', "torch_cuda_api", "removal", False,
      None, "JIT build of .cu sources: dead on NPU, and cpp_extension.load is unsupported on Atlas A2/A3"),
    C("ext = load(", "custom_cuda_extension", "removal", False, None, "nvcc JIT build"),
    C("if ext is not None and dist.is_cuda:", "device_type", "replace", False, "if ext is not None and dist.is_npu:",
      "NPU tensors would always take the slow (but correct) PyTorch 2-opt: perf only"),
    C("if ext is None or not dist.is_cuda:", "device_type", "replace", True, "if ext is None or not dist.is_npu:",
      "NPU tensors would always skip Or-opt and return the tours unchanged: silently worse solutions"),
])

# ---------------------------------------------------------------------------------------------------------
# BQ-NCO-style multi-GPU imitation-learning trainer + launcher
# ---------------------------------------------------------------------------------------------------------
E("bq_train_ddp", "train_ddp.py", "explicit_replacement",
  "BQ-NCO-style torchrun/DDP trainer (NCCL, bf16 autocast, fused AdamW / apex FusedAdam)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW as FusedAdam",
      "guarded import (falls back to None); apex's CUDA FusedAdam is not available on NPU (Ascend apex ships "
      "NpuFused* instead)"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C('args.device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'args.device = torch.device("npu", args.local_rank)', "all .to(args.device) calls follow it"),
    C('backend="nccl", init_method="env://"', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://", timeout=datetime.timedelta(minutes=30)',
      "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("if args.amp and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if args.amp and not torch.npu.is_bf16_supported():",
      "torch.cuda.is_bf16_supported() queries the current CUDA device and raises without CUDA when --amp is set"),
    C('map_location=f"cuda:{args.local_rank}"', "device_type", "replace", True,
      'state = torch.load(args.pretrained_model, map_location=f"npu:{args.local_rank}")',
      "torch.load onto a cuda device raises without CUDA"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.to(args.device)",
      "Module.cuda() fails without CUDA"),
    C("optimizer = FusedAdam(model.parameters()", "fused_optimizer", "replace", True,
      "optimizer = FusedAdam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)",
      "--optimizer apex_adam path: apex FusedAdam (CUDA kernels) is unavailable on NPU, so the assert above fires; "
      "with NpuFusedAdamW imported under that name the apex-only adam_w_mode argument must go"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "without CUDA it disables itself; with bf16 autocast loss scaling is not needed anyway"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False, "pin_memory=True,",
      "False on NPU, so host batches are not pinned: slower H2D copies only"),
    C("[b.cuda(non_blocking=True) for b in batch]", "tensor_to_device", "replace", True,
      "node_features, dist_matrices, ground_truth = [b.to(args.device, non_blocking=True) for b in batch]",
      "Tensor.cuda() fails without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.amp):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16, enabled=args.amp):',
      "autocast('cuda') without CUDA warns and disables itself: silently fp32 training (slower, correct)"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=torch.bfloat16, enabled=args.amp):',
      "validation decoding: same silent fp32 fallback"),
    C("dtype=torch.float64, device=args.device)", "unsupported_op_workaround", "replace", True,
      "loss_t = torch.tensor([metrics.loss_sum, metrics.count], dtype=torch.float32, device=args.device)",
      "HCCL all_reduce only takes bf16/fp16/fp32/int32/int64/bool tensors (Ascend API list), so the fp64 "
      "all_reduce fails"),
    C("dist.all_reduce(gap, op=dist.ReduceOp.AVG)", "dist_backend", "replace", False,
      "dist.all_reduce(gap, op=dist.ReduceOp.SUM); gap /= args.world_size",
      "unconfirmed whether HCCL supports ReduceOp.AVG; SUM + divide is safe"),
    C("torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      'f"{time.time() - t0:.1f}s  peak mem {torch.npu.max_memory_allocated() / 2 ** 30:.1f} GiB",',
      "returns 0 while CUDA is uninitialised: wrong log only"),
])

E("bq_launch", "scripts/train_ddp.sh", "explicit_replacement",
  "torchrun launcher with NCCL_* tuning and nvidia-smi GPU count", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=3  # HCCL has no NCCL_DEBUG equivalent",
      "NCCL_* variables are ignored by HCCL; logging level only"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "only matters for multi-node root-info setup; this launch is --standalone"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog switch (documented default 1)"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "ignored on NPU, so a user-provided restriction silently does nothing"),
    C("NGPUS=$(nvidia-smi -L | wc -l)", "torch_cuda_api", "replace", True,
      'NGPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "nvidia-smi is absent -> 0 -> torchrun --nproc_per_node=0 fails"),
])

E("nco_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of an NCO playground image (nvidia/cuda base, cu118 wheels, PyG CUDA wheels, CUDA extension build)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; the NPU image needs CANN (driver is mounted from the host by Ascend Docker Runtime); "
      "tag illustrative"),
    C('TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
      "only read by CUDA extension builds"),
    C("FORCE_CUDA=1", "env_var", "removal", False, None,
      "forces PyG/extension source builds to compile CUDA code; harmless while prebuilt CPU wheels are found "
      "(unconfirmed for aarch64 source builds)"),
    C("torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api",
      "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url "
      "https://download.pytorch.org/whl/cpu && pip install --no-cache-dir torch-npu==2.1.0.post12",
      "CUDA wheels; torch_npu 2.1.0.postN needs CPU torch 2.1.0 exactly (this line also carries the torch-npu pin)"),
    C("torch_scatter torch_sparse -f https://data.pyg.org/whl/torch-2.1.0+cu118.html", "custom_cuda_extension",
      "replace", True,
      "RUN pip install --no-cache-dir torch_scatter torch_sparse -f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "CUDA builds of the PyG extensions need libcudart"),
    C("RUN cd csrc && python setup.py install", "custom_cuda_extension", "replace", True,
      "RUN bash -c 'source /usr/local/Ascend/ascend-toolkit/set_env.sh && cd csrc && python setup.py install'",
      "the CUDA build aborts (CUDA_HOME is None); needs the NpuExtension port of csrc/setup.py and CANN env"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "read only by the NVIDIA container runtime; Ascend Docker Runtime takes ASCEND_VISIBLE_DEVICES at docker run"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime only"),
])
