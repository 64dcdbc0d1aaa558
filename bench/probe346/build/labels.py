# Labels for probe346: symbolic music generation / MIDI modelling (CUDA -> Ascend NPU).
# One label per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------------------------
# Music Transformer PyTorch port (get_device() abstraction, --force_cpu, RPR attention)
# --------------------------------------------------------------------------------------------
E("mt_device", "utilities/device.py", "device_branch_or_abstraction",
  "Music Transformer PyTorch port: utilities/device.py (get_device / use_cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "every script gets its device from this module, so this is where the NPU backend is registered (needed for torch.npu below on torch_npu < 2.5.1)"),
    C("if(torch.cuda.device_count() > 0):", "torch_cuda_api", "replace", True, "if(torch.npu.device_count() > 0):",
      "device_count() is 0 on an NPU host, so the whole project silently falls back to CPU"),
    C('TORCH_CUDA_DEVICE = torch.device("cuda", _GPU_ID)', "device_type", "replace", True,
      'TORCH_CUDA_DEVICE = torch.device("npu", _GPU_ID)',
      "the default device every tensor/model is moved to; variable name can stay"),
    C('if dev.type == "cuda":', "device_type", "replace", False, 'if dev.type == "npu":',
      "only decides whether the log line shows the device name; harmless if left"),
    C("name = torch.cuda.get_device_name(dev)", "torch_cuda_api", "replace", True, "name = torch.npu.get_device_name(dev)",
      "CUDA query raises on a torch build without CUDA once the branch above is taken"),
    C("total = torch.cuda.get_device_properties(dev).total_memory", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(dev).total_memory / (1024 ** 3)",
      "NPU properties do expose total_memory (and name), so only the namespace changes"),
])

E("mt_args", "utilities/argument_funcs.py", "device_branch_or_abstraction",
  "Music Transformer PyTorch port: utilities/argument_funcs.py (argparse, --force_cpu)", [])

E("mt_train", "train.py", "explicit_replacement",
  "Music Transformer PyTorch port: train.py (epoch loop, LR schedule, tensorboard)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy seeding of a CUDA that never initialises: silent no-op; torch.manual_seed above should already seed the npu generator (unconfirmed)"),
    C('map_location="cuda"', "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.continue_weights, map_location=get_device()))",
      "deserialising onto a CUDA device fails without CUDA"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "CUDA GradScaler disables itself on an NPU host, so --amp fp16 training runs without loss scaling"),
    C('if get_device().type == "cuda":', "device_type", "replace", False, 'if get_device().type == "npu":',
      "only gates the peak-memory log lines"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      'print("Peak NPU memory (MiB):", torch.npu.max_memory_allocated() // (1024 * 1024))',
      "logging only; the CUDA counter would report 0"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "needs CUDA initialisation and raises once the branch is taken on NPU"),
])

E("mt_rpr", "model/rpr.py", "explicit_replacement",
  "Music Transformer PyTorch port: model/rpr.py (relative-position MHA, skew trick)", [
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", "replace", False,
      "@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)",
      "the CUDA decorator checks the CUDA autocast state, so under NPU autocast the fp32 cast the comment relies on would be skipped (unconfirmed; precision risk, not a crash)"),
    C("@torch.cuda.amp.custom_bwd", "amp", "replace", False, "@torch.npu.amp.custom_bwd",
      "pairs with custom_fwd above"),
])

E("mt_model", "model/music_transformer.py", "device_branch_or_abstraction",
  "Music Transformer PyTorch port: model/music_transformer.py (decoder-only nn.Transformer, generate)", [])

E("mt_generate", "generate.py", "explicit_replacement",
  "Music Transformer PyTorch port: generate.py (primer, beam / random sampling)", [
    C('map_location=torch.device("cuda:0")', "tensor_to_device", "replace", True,
      "state = torch.load(path, map_location=get_device())",
      "GPU-trained checkpoints cannot be mapped to cuda:0 on an NPU host"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards only the final cache release; False on NPU, so it is skipped"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "releases cached device memory; no effect on NPU as written"),
])

E("mt_run_model", "utilities/run_model.py", "explicit_replacement",
  "Music Transformer PyTorch port: utilities/run_model.py (train_epoch / eval_model)", [
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "CUDA autocast is disabled when CUDA is absent, so --amp silently trains in fp32"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "cache release after eval; no-op on NPU as written"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on a torch build without CUDA; timing would also be wrong without an NPU sync"),
    C("torch.cuda.synchronize(get_device())", "torch_cuda_api", "replace", True, "torch.npu.synchronize(get_device())",
      "same as above"),
])

# --------------------------------------------------------------------------------------------
# Compound Word Transformer (fast-transformers causal-linear attention)
# --------------------------------------------------------------------------------------------
E("cp_main", "workspace/uncond/cp-linear/main-cp.py", "explicit_replacement",
  "Compound Word Transformer: workspace/uncond/cp-linear/main-cp.py (fast-transformers, linear attention)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "single-file script; registers the npu device before any .npu() call"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(gid)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(gid)",
      "ignored by the NPU runtime: the job always lands on NPU 0 instead of gid"),
    C('=attention_type="causal-linear",', "attention_kernel", "replace", True,
      'attention_type="causal-linear-torch",  # pure-PyTorch cumsum kernel registered for NPU',
      "training path calls fast-transformers' causal_dot_product, dispatched by device type to CPU/CUDA kernels only; "
      "needs a torch (cumsum) implementation on NPU. The recurrent builder used for inference is pure PyTorch and is left alone"),
    C("np.array([cur_word_type])).long().cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "np.array([cur_word_type])).long().to(h.device).unsqueeze(0)", ".cuda() fails without CUDA"),
    C("init_t = torch.from_numpy(init).long().cuda()", "tensor_to_device", "replace", True,
      "init_t = torch.from_numpy(init).long().npu()", ".cuda() fails without CUDA"),
    C("input_ = torch.from_numpy(next_arr).long().cuda()", "tensor_to_device", "replace", True,
      "input_ = torch.from_numpy(next_arr).long().npu()", ".cuda() fails without CUDA"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model placement (training)"),
    C("=net.load_state_dict(torch.load(path_saved_ckpt))", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(path_saved_ckpt, map_location='npu'))",
      "Saver stores state_dicts of a CUDA model; unpickling them needs CUDA unless map_location is given"),
    C("batch_x = torch.from_numpy(batch_x).long().cuda()", "tensor_to_device", "replace", True,
      "batch_x = torch.from_numpy(batch_x).long().npu()", ".cuda() fails without CUDA"),
    C("batch_y = torch.from_numpy(batch_y).long().cuda()", "tensor_to_device", "replace", True,
      "batch_y = torch.from_numpy(batch_y).long().npu()", ".cuda() fails without CUDA"),
    C("batch_mask = torch.from_numpy(batch_mask).float().cuda()", "tensor_to_device", "replace", True,
      "batch_mask = torch.from_numpy(batch_mask).float().npu()", ".cuda() fails without CUDA"),
    C("=net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "model placement (inference)"),
    C("net.load_state_dict(torch.load(path_saved_ckpt), strict=True)", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(path_saved_ckpt, map_location='npu'), strict=True)",
      "GPU-trained checkpoint; see above"),
])

E("cp_req", "requirements.txt", "explicit_replacement",
  "Compound Word Transformer: requirements.txt (torch +cu101, pytorch-fast-transformers)", [
    C("=-f https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel page; harmless once the pin below no longer names a +cu build"),
    C("=torch==1.5.1+cu101", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA build pin; there is no torch_npu for 1.5.1 and torch_npu wheels pair with an exact torch version"),
    C("=pytorch-fast-transformers==0.3.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch-npu pin, inserted right after the torch pin (the torch line carries its own version change)"),
])

# --------------------------------------------------------------------------------------------
# REMI / Pop Music Transformer, PyTorch Transformer-XL port
# --------------------------------------------------------------------------------------------
E("remi_train", "remi-xl/train.py", "explicit_replacement",
  "Pop Music Transformer (REMI) PyTorch Transformer-XL port: train.py (--cuda/--multi_gpu/--fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only prints a hint and seeds; torch.manual_seed above already seeds (unconfirmed)"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "silent no-op on NPU as written"),
    C("from apex.fp16_utils import FP16_Optimizer", "amp", "replace", False,
      "from torch.npu.amp import GradScaler  # replace FP16_Optimizer with native NPU AMP",
      "NVIDIA apex is not installable on NPU; the guard then silently drops --fp16 and trains in fp32 (correct, slower). "
      "Whether Ascend's apex patch keeps fp16_utils is unconfirmed"),
    C("device = torch.device('cuda' if args.cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if args.cuda else 'cpu')", "--cuda keeps its name but must mean the NPU"),
    C("model = torch.load(f)", "tensor_to_device", "replace", True, "model = torch.load(f, map_location=device)",
      "--restart from a GPU-trained whole-model pickle cannot be unpickled without CUDA"),
    C("para_model = BalancedDataParallel(args.gpu0_bsz // args.batch_chunk,", "distributed_framework", "replace", True,
      "para_model = model.to(device)  # DataParallel-based; use torchrun + DDP for multi-NPU",
      "BalancedDataParallel subclasses nn.DataParallel (unsupported on NPU)"),
    C("para_model = nn.DataParallel(model, dim=1).to(device)", "distributed_framework", "replace", True,
      "para_model = model.to(device)  # nn.DataParallel unsupported on NPU; use DDP",
      "torch.nn.DataParallel is listed unsupported for NPU"),
    C("opt_state_dict = torch.load(f)", "tensor_to_device", "replace", True,
      "opt_state_dict = torch.load(f, map_location=device)", "optimizer state saved from CUDA tensors"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      "logging('#npus = {} ({})'.format(torch.npu.device_count(), torch.npu.get_device_name(0)))",
      "get_device_name needs CUDA; device_count would print 0"),
])

E("remi_model", "remi-xl/model.py", "explicit_replacement",
  "Pop Music Transformer (REMI) PyTorch Transformer-XL port: model.py (MemTransformerLM + sampling)", [
    C("from apex.normalization import FusedLayerNorm as LayerNorm", "custom_cuda_extension", "replace", False,
      "from torch.nn import LayerNorm",
      "guarded import falls back to torch LayerNorm when apex is absent; if Ascend apex is installed for amp, "
      "FusedLayerNorm would need fused_layer_norm_cuda at construction (unconfirmed)"),
    C("inp = torch.tensor(words, dtype=torch.long, device='cuda').view(-1, 1)", "tensor_to_device", "replace", True,
      "inp = torch.tensor(words, dtype=torch.long, device=self.out_layer.weight.device).view(-1, 1)",
      "hard-coded cuda device in generate()"),
    C("inp = torch.full((1, 1), int(word), dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "inp = torch.full((1, 1), int(word), dtype=torch.long, device=self.out_layer.weight.device)", ".cuda() fails without CUDA"),
])

E("config_yaml", "remi-xl/configs/remi_xl.yaml", "explicit_replacement",
  "Pop Music Transformer (REMI) PyTorch port: configs/remi_xl.yaml (data/model/train/generate/env)", [
    C("device: cuda:0", "device_type", "replace", True, "device: npu:0", "generate.py builds torch.device from it"),
    C("map_location: cuda", "tensor_to_device", "replace", True, "map_location: npu", "passed to torch.load in generate.py"),
    C('CUDA_VISIBLE_DEVICES: "0,1"', "env_var", "replace", True, 'ASCEND_RT_VISIBLE_DEVICES: "0,1"',
      "exported by run.sh; ignored by the NPU runtime"),
    C('CUDA_LAUNCH_BLOCKING: "0"', "env_var", "replace", False, 'ASCEND_LAUNCH_BLOCKING: "0"', "debug switch, value 0 anyway"),
])

# --------------------------------------------------------------------------------------------
# Museformer (fairseq user-dir, Triton block-sparse kernels, CUDA extension)
# --------------------------------------------------------------------------------------------
E("mf_triton", "museformer/kernels/block_sparse_softmax.py", "kernel_rewrite",
  "Museformer: Triton block-sparse softmax kernels for fine/coarse-grained attention", [
    C("assert x.is_cuda, ", "device_type", "replace", True,
      'assert x.device.type in ("cuda", "npu"), "block-sparse softmax needs a CUDA or NPU tensor"',
      "NPU tensors are not is_cuda"),
    C("grid = (block, n_heads * n_row_blocks, x.shape[0])", "triton_kernel_tuning", "replace", False,
      "grid = (min(n_heads * n_row_blocks * x.shape[0], NUM_AI_CORES),)  # loop over rows inside the kernel",
      "one program per row is a GPU-style launch; on triton-ascend programs map onto AI cores and grids are usually sized to the core count (unconfirmed; performance)"),
    C("with torch.cuda.device(x.device):", "torch_cuda_api", "replace", True, "with torch.npu.device(x.device):",
      "CUDA device context raises on an NPU host"),
    C("num_warps=num_warps_for(max_cols),", "triton_kernel_tuning", "replace", False,
      "# num_warps dropped: warp count is a CUDA notion",
      "warp-count tuning for NVIDIA SMs; meaningless for Ascend (unconfirmed whether triton-ascend ignores or rejects it)"),
    C("grid = (ctx.block, lut.shape[0] * ctx.n_row_blocks, dy.shape[0])", "triton_kernel_tuning", "replace", False,
      "grid = (min(lut.shape[0] * ctx.n_row_blocks * dy.shape[0], NUM_AI_CORES),)",
      "same as the forward grid"),
    C("with torch.cuda.device(dy.device):", "torch_cuda_api", "replace", True, "with torch.npu.device(dy.device):",
      "CUDA device context raises on an NPU host"),
    C("num_warps=num_warps_for(ctx.max_cols), num_stages=1,", "triton_kernel_tuning", "replace", False,
      "# num_warps/num_stages dropped for triton-ascend", "CUDA warp / pipelining knobs"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "return torch.npu.is_bf16_supported()",
      "SM capability query; raises without CUDA and returns None under transfer_to_npu"),
])

E("mf_range_fill", "museformer/kernels/range_fill/__init__.py", "kernel_rewrite",
  "Museformer: range_fill CUDA extension loader (prebuilt or torch.utils.cpp_extension.load JIT)", [
    C("if not ranges.is_cuda:", "custom_cuda_extension", "add_branch", False,
      "if ranges.device.type == \"npu\": return range_fill_vectorized(ranges, values, out)  # repeat_interleave + index_put",
      "NPU tensors take the per-bar Python loop (correct, but one tiny kernel launch per bar); the CUDA JIT path below is never reached on NPU"),
])

E("mf_setup", "setup.py", "kernel_rewrite",
  "Museformer: setup.py building the range_fill CUDAExtension", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", False,
      "from torch.utils.cpp_extension import BuildExtension",
      "the import itself works on CPU torch; tidy-up once the extension goes"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;8.0")', "env_var", "removal", False, None,
      "nvcc arch list; meaningless without CUDA"),
    C('"triton==2.0.0",', "triton_kernel_tuning", "replace", True, '"triton-ascend",',
      "NVIDIA Triton cannot launch on NPU; the block-sparse kernels need the Ascend Triton backend"),
    C("CUDAExtension(", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension needs CUDA_HOME/nvcc, so pip install fails on an NPU host; range_fill has a torch path "
      "(or rewrite it in Ascend C and build with torch_npu's NpuExtension)"),
])

E("mf_attn", "museformer/attention/fc_attention.py", "kernel_rewrite",
  "Museformer: fine/coarse-grained attention module dispatching to Triton block-sparse kernels", [
    C('if self.attention_impl == "triton" and x.is_cuda:', "attention_kernel", "replace", False,
      'if self.attention_impl == "triton" and x.device.type in ("cuda", "npu"):',
      "on NPU the check silently falls back to dense O(L^2) masked attention (correct, slow for 10k-token songs)"),
])

E("mf_train_sh", "ttrain/mf-lmd6remi-1.sh", "explicit_replacement",
  "Museformer: ttrain/*.sh fairseq-train launcher", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1,2,3}", "device selection"),
    C("NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "NUM_GPUS=$(echo $ASCEND_RT_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)",
      "once the export is renamed this counts an empty variable as 1 device and --distributed-world-size silently drops to 1"),
    C('echo "Training on ${NUM_GPUS} GPUs: ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", False,
      'echo "Training on ${NUM_GPUS} NPUs: ${ASCEND_RT_VISIBLE_DEVICES}"', "log line only"),
])

# --------------------------------------------------------------------------------------------
# MusicBERT (fairseq user-dir; ported with transfer_to_npu because fairseq internals call torch.cuda)
# --------------------------------------------------------------------------------------------
E("mb_init", "musicbert/__init__.py", "transfer_to_npu",
  "MusicBERT: musicbert/__init__.py fairseq user-dir (octuple masking, multilabel task, arch registry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "fairseq-train imports the user-dir before building the trainer; transfer_to_npu then redirects fairseq's own torch.cuda / .cuda() / nccl calls"),
    C("if dist.get_backend() == 'nccl':", "dist_backend", "replace", True,
      "if dist.get_backend() in ('nccl', 'hccl'):",
      "transfer_to_npu turns nccl into hccl but does not rewrite string comparisons, so the tensor stays on CPU and the HCCL all_gather fails"),
])

E("mb_eval", "eval_genre.py", "transfer_to_npu",
  "MusicBERT: eval_genre.py (fold-wise TOPMAGD/MASD evaluation via RobertaModel.from_pretrained)", [
    C("os.environ.setdefault('CUDA_VISIBLE_DEVICES', '0')", "env_var", "replace", False,
      "os.environ.setdefault('ASCEND_RT_VISIBLE_DEVICES', '0')",
      "default of 0 is what the NPU runtime picks anyway; only an externally chosen device would be ignored"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "use_cuda is computed before from_pretrained imports the musicbert user-dir (which carries its own transfer_to_npu), "
      "so without this it is False and evaluation silently runs on CPU; the later .cuda()/empty_cache calls are then redirected"),
])

E("mb_train_sh", "train_mask.sh", "transfer_to_npu",
  "MusicBERT: train_mask.sh (fairseq-train masked LM pre-training)", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only workaround; ignored by HCCL"),
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", False, "export TORCH_TRANSFER_TO_NPU=1",
      "belt-and-braces for the fairseq-train entry point we cannot edit (spawned workers); the user-dir import already applies transfer_to_npu (unconfirmed whether it is early enough in every worker)"),
    C("N_GPU_LOCAL=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", True,
      "N_GPU_LOCAL=$(python -c \"import torch, torch_npu; print(torch.npu.device_count())\")",
      "nvidia-smi is absent, N_GPU_LOCAL becomes 0 and the UPDATE_FREQ division aborts the script"),
])

# --------------------------------------------------------------------------------------------
# Hugging Face based: MMM, anticipatory music transformer, MidiTok GPT/Mistral, demo, benchmark
# --------------------------------------------------------------------------------------------
E("mmm_train", "scripts/train_mmm.py", "explicit_replacement",
  "MMM (Multi-Track Music Machine) on Hugging Face: GPT-2 Trainer script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torch.npu is used below before transformers gets a chance to import torch_npu"),
    C("n_devices = max(torch.cuda.device_count(), 1)", "torch_cuda_api", "replace", True,
      "n_devices = max(torch.npu.device_count(), 1)",
      "returns 0 on NPU, so gradient accumulation is computed for one device and the global batch is silently 8x too large on 8 NPUs"),
])

E("app", "app.py", "device_branch_or_abstraction",
  "Gradio demo for a MidiTok REMI GPT-2 (Hugging Face Space style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "torch.npu used in the DEVICE choice"),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'DEVICE = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
      "otherwise the demo silently runs on CPU"),
    C('DTYPE = torch.float16 if DEVICE == "cuda" else torch.float32', "device_type", "replace", False,
      'DTYPE = torch.float16 if DEVICE in ("cuda", "npu") else torch.float32', "fp32 on NPU works, just slower"),
    C('model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=False)', "compile_mode", "replace", False,
      'model.forward = torch.compile(model.forward, backend="npugraphs")',
      "reduce-overhead means CUDA graphs; the NPU analogue is the npugraphs backend, and Inductor on NPU needs torch_npu>=2.6 (unconfirmed for the pinned 2.1)"),
    C("mem = torch.cuda.max_memory_allocated() / 2 ** 20 if DEVICE == \"cuda\" else 0.0", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2 ** 20 if DEVICE == \"npu\" else 0.0", "status text only"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=DEVICE == "cuda"):', "amp", "replace", False,
      'with torch.autocast(device_type=DEVICE, dtype=torch.float16, enabled=DEVICE != "cpu"):',
      "weights are already fp16 via DTYPE, so autocast being off on NPU changes nothing functionally"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "cache release per request"),
])

E("amt_accompany", "scripts/accompany.py", "explicit_replacement",
  "Anticipatory Music Transformer: accompaniment generation script (HF AutoModelForCausalLM)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "script exits on an NPU host"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)", "raises without CUDA"),
    C("model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype).cuda()", "tensor_to_device", "replace", True,
      "model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype).npu()",
      "model placement; sample.generate follows model.device from there"),
    C("props = torch.cuda.get_device_properties(gpu)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(gpu)",
      "NPU properties keep name and total_memory, so the print below still works"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("torch.cuda.synchronize(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(args.gpu)", "raises without CUDA"),
    C("torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
      "print(f'peak NPU memory: {torch.npu.max_memory_allocated() / 2**20:.0f} MiB')", "log line; would print 0"),
])

E("amt_sample", "anticipation/sample.py", "device_branch_or_abstraction",
  "Anticipatory Music Transformer: anticipation/sample.py (nucleus sampling, anticipation interleave)", [])

E("miditok_train", "train_gpt2_miditok.py", "explicit_replacement",
  "MidiTok REMI+BPE causal-LM training with the Hugging Face Trainer (flash-attn, bf16, tf32)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("use_bf16 = torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
      "use_bf16 = torch.npu.is_bf16_supported()", "queries the current CUDA device and raises without CUDA"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True, 'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU; SDPA dispatches to the NPU fused attention"),
    C("tf32=True,", "device_capability_check", "replace", True, "tf32=False,",
      "TrainingArguments raises '--tf32 requires Ampere or a newer GPU arch' when TF32 availability is False, as it is on NPU"),
    C('ddp_backend="nccl",', "dist_backend", "replace", True, 'ddp_backend="hccl",', "NCCL is not available on NPU"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      'logger.info("max NPU memory allocated: %.2f GiB", torch.npu.max_memory_allocated() / 2**30)',
      "final log line; would report 0"),
])

E("bench", "tools/benchmark_generation.py", "explicit_replacement",
  "Generation throughput benchmark for MIDI-token LMs (CUDA events, NVTX, torch.profiler, pynvml)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if not _NVML:", "torch_cuda_api", "add_branch", False,
      "if hasattr(torch, \"npu\") and torch.npu.is_available(): return float(torch.npu.utilization(index))",
      "NVML init fails on NPU and the column silently becomes NaN"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "SM capability query raises without CUDA (returns None under transfer_to_npu)"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", "raises without CUDA"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")', "benchmark device"),
    C("sdp_ctx = torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False, "sdp_ctx = nullcontext()",
      "CUDA SDPA backend selection is listed unsupported on NPU; it only sets CUDA flags, SDPA on NPU already uses the fused kernel"),
    C("gpu_name = torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", True,
      "gpu_name = torch.npu.get_device_name(device)", "raises without CUDA"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "raises without CUDA"),
    C('torch.cuda.nvtx.range_push(f"generate_bs{bs}_r{r}")', "torch_cuda_api", "replace", True,
      'range_id = torch_npu.npu.mstx.range_start(f"generate_bs{bs}_r{r}")',
      "NVTX is not redirected to NPU and raises on a non-CUDA build; mstx is the NPU counterpart"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(range_id)",
      "pairs with range_push"),
    C("peak = torch.cuda.max_memory_allocated(device) / 2**20", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(device) / 2**20",
      "peak memory is one of the benchmark's output columns; the CUDA counter silently reports 0"),
    C("from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler", "torch_cuda_api", "replace", True,
      "from torch_npu.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler",
      "torch.profiler cannot record NPU kernels; the trace is what --profile is for"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "CUDA activity records nothing on NPU"),
    C('sort_by="cuda_time_total"', "torch_cuda_api", "replace", False,
      'print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))',
      "CUDA-named sort key; unconfirmed what torch_npu's key_averages accepts"),
])

E("ddp_train", "train_ddp.py", "explicit_replacement",
  "Music Transformer DDP trainer (torchrun, DistributedSampler, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)", "raises without CUDA"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "bind the rank to its NPU before creating the HCCL communicator"),
    C('dist.init_process_group(backend="nccl", init_method="env://",', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://",', "NCCL is not available on NPU"),
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
      "device_ids was historically NCCL-only; unconfirmed whether HCCL accepts it"),
    C("torch.cuda.manual_seed(seed + rank)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed + rank)",
      "silent no-op as written; torch.manual_seed above should cover the npu generator (unconfirmed)"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")', "per-rank device"),
    C('pin_memory_device=f"cuda:{local_rank}",', "pin_memory", "replace", True, 'pin_memory_device=f"npu:{local_rank}",',
      "pinning for a CUDA device fails in the DataLoader pin thread without CUDA"),
    C("eps=ADAM_EPSILON, fused=True)", "fused_optimizer", "replace", False,
      "betas=(ADAM_BETA_1, ADAM_BETA_2), eps=ADAM_EPSILON)  # or torch_npu.optim.NpuFusedAdam",
      "the NPU op list has _fused_adamw_ but no _fused_adam_, so fused Adam would at best fall back to CPU (unconfirmed)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", "CUDA GradScaler disables itself without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.amp):',
      "CUDA autocast is disabled without CUDA, so --amp silently trains in fp32"),
])

E("ddp_sh", "scripts/train_ddp.sh", "explicit_replacement",
  "Music Transformer DDP launcher (torchrun, NCCL_* tuning)", [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "must come before 'set -u': CANN's set_env.sh references unset variables"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "device selection"),
    C("GPUS_PER_NODE=$(python -c \"import torch; print(torch.cuda.device_count())\")", "torch_cuda_api", "replace", True,
      "GPUS_PER_NODE=$(python -c \"import torch, torch_npu; print(torch.npu.device_count())\")",
      "prints 0, so torchrun gets --nproc_per_node 0"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-2}", "log verbosity only"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no HCCL counterpart; HCCL uses the NPU RoCE NICs"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "multi-node NIC choice; HCCL picks a NIC by its own priority rules if unset (unconfirmed whether that is the right one here)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog switch (reported default 1)"),
])

# --------------------------------------------------------------------------------------------
# Packaging / environment files
# --------------------------------------------------------------------------------------------
E("req", "requirements-gpu.txt", "explicit_replacement",
  "requirements file of a MidiTok/transformers training stack (cu121 index, flash-attn, pynvml, bitsandbytes)", [
    C("=--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index; Ascend installs CPU torch"),
    C("=torch==2.1.2+cu121", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA build pin; torch_npu wheels pair with an exact torch version (2.1.0 here)"),
    C("=transformers==4.38.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch-npu pin, inserted right after the torch pin (the torch line carries its own version change)"),
    C("=flash-attn==2.5.6", "attention_kernel", "removal", True, None,
      "cannot be built without nvcc/CUDA, so pip install -r fails"),
    C("=nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
      "installs but NVML has nothing to talk to on NPU hosts"),
    C("=bitsandbytes==0.42.0", "unsupported_op_workaround", "removal", False, None,
      "8-bit optimizers are CUDA-only (only NF4 quantisation has NPU work); unconfirmed whether the install itself fails"),
])

E("pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of a symbolic-music LM package (uv CUDA index, cuda extra)", [
    C('"torch>=2.1,<2.2",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post12",',
      "torch range already admits 2.1.0; add the matching torch-npu"),
    C('"flash-attn>=2.5; platform_system == \'Linux\'",', "attention_kernel", "removal", False, None,
      "only in the optional 'cuda' extra"),
    C('"nvidia-ml-py>=12.535",', "torch_cuda_api", "removal", False, None, "optional extra"),
    C('url = "https://download.pytorch.org/whl/cu121"', "torch_cuda_api", "replace", False,
      'url = "https://download.pytorch.org/whl/cpu"',
      "uv pulls torch from the CUDA index; Ascend docs install CPU torch (unconfirmed whether torch_npu rejects a +cu121 build)"),
])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for the REMI / compound-word / Museformer experiments (nvidia/cuda base, apex)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA base image has no CANN toolkit (CANN 8.1.RC1 pairs with torch-npu 2.1.0.post12); the image name is illustrative"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None, "nvcc arch list"),
    C("ENV FORCE_CUDA=1", "env_var", "removal", False, None, "forces CUDA builds in some setup.py files; nothing to build for"),
    C("RUN pip install torch==1.11.0+cu113", "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA torch build; torch_npu needs its paired torch version"),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex", "custom_cuda_extension", "removal", True, None,
      "apex is only used behind guarded imports / the optional --fp16 path"),
    C('pip install -v --disable-pip-version-check --global-option="--cpp_ext" --global-option="--cuda_ext" ./',
      "custom_cuda_extension", "removal", True, None, "--cuda_ext needs nvcc, so the image build fails"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime hint; Ascend Docker Runtime sets ASCEND_VISIBLE_DEVICES at run time"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA container runtime hint"),
])

E("env_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml for MusicBERT (pytorch + nvidia channels, cudatoolkit, nccl)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel"),
    C("=- pytorch=1.11.0", "torch_cuda_api", "replace", True, "- pytorch=2.1.0=*cpu*",
      "torch_npu for 1.11 is end-of-life (last build paired with CANN 8.0.RC2); move to a torch with a current torch_npu"),
    C("=- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None, "dead weight on NPU (unconfirmed whether the aarch64 solve fails)"),
    C("=- nccl=2.12", "dist_backend", "removal", False, None, "HCCL ships with CANN"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12", "torch-npu pin"),
])
