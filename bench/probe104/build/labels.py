# Labels for probe104 (LLM compression research code: SparseGPT / Wanda / LLM-Pruner / SmoothQuant /
# QuIP# / AQLM / OmniQuant / GPTQ / mergekit / MiniLLM).  One entry per upstream file, one C() per line
# a careful porter would edit to run (and run well) on Ascend NPU with torch_npu.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


EXPL = "explicit_replacement"
BRANCH = "device_branch_or_abstraction"
KERNEL = "kernel_rewrite"

IMPORT_NPU = "import torch_npu"
IMPORT_NOTE = ("torch 2.1-era stack (no torch_npu autoload before 2.5.1): import torch_npu in the entry script so "
               "the 'npu' device and torch.npu exist before any device string is used")
EMPTY_NOTE = ("torch.cuda.empty_cache() returns early when CUDA was never initialised, so on an NPU host it is a "
              "silent no-op and the NPU caching allocator keeps the freed layer; memory pressure only")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("without CANN's set_env.sh, import torch_npu fails (libhccl.so not found / ASCEND_OPP_PATH unset)")
HF_MAP_NOTE = ("accelerate's hf_device_map holds integer device indices; a bare int used as device / .to(int) means "
               "CUDA in torch (msFmkTransplt rewrites int device args to f'npu:{x}')")
MEM_NOTE = ("torch.cuda memory stats return {} / 0 when CUDA was never initialised, so the reported memory figure is "
            "silently 0 on an NPU host")
SYNC_NOTE = "torch.cuda.synchronize() lazily initialises CUDA and raises on an NPU host; timing must sync the NPU stream"
EVENT_NOTE = "torch.cuda.Event cannot be constructed without a CUDA build; torch.npu.Event has the same API"
FP64_NOTE = ("Ascend's 2.7.1 support list: torch.matmul/mm/addmm take bf16/fp16/fp32 only and torch.linalg.cholesky "
             "fp32 only, so the float64 Hessian algebra cannot run on the NPU; accumulate in fp32 (precision caveat)")
CPU_TORCH_PIN = "torch-npu==2.1.0.post17"

# ---------------------------------------------------------------- SparseGPT
E("sparsegpt_core", "sparsegpt.py", EXPL, "IST-DASLab/sparsegpt sparsegpt.py (SparseGPT OBS layer pruner)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
])

E("sparsegpt_opt", "opt.py", EXPL, "IST-DASLab/sparsegpt opt.py (sequential OPT pruning + ppl eval)", [
    C("import torch.nn as nn", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      IMPORT_NOTE + " (added after the torch imports; get_opt() has its own local 'import torch')"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C("# keep peak memory at one decoder layer", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # keep peak memory at one decoder layer", EMPTY_NOTE),
    C("# embeddings are back on the host", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # embeddings are back on the host", EMPTY_NOTE),
    C("# per-layer eval", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()  # per-layer eval", EMPTY_NOTE),
    C("DEV = torch.device('cuda:0')", "device_type", "replace", True, "DEV = torch.device('npu:0')",
      "the single compute device every layer is moved to; 'cuda:0' does not exist on an NPU host"),
])

# ---------------------------------------------------------------- Wanda
E("wanda_main", "main.py", EXPL, "locuslab/wanda main.py (pruning entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("print('# of gpus: ', torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "print('# of npus: ', torch.npu.device_count())", "diagnostic print only; silently reports 0 on an NPU host"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "calibration / eval device handed to every prune_* function"),
    C('device = model.hf_device_map["lm_head"]', "device_type", "replace", True,
      'device = torch.device("npu", model.hf_device_map["lm_head"])', HF_MAP_NOTE + " (30B/65B multi-device path)"),
])

E("wanda_prune", "lib/prune.py", EXPL, "locuslab/wanda lib/prune.py (magnitude / wanda / sparsegpt / ablation pruning)", [
    C('device = model.hf_device_map["model.embed_tokens"]', "device_type", "replace", True,
      'device = torch.device("npu", model.hf_device_map["model.embed_tokens"])', HF_MAP_NOTE),
    C("def prune_magnitude(", "device_type", "replace", False,
      'def prune_magnitude(args, model, tokenizer, device=torch.device("npu:0"), prune_n=0, prune_m=0):',
      "default never used (main.py always passes device) and constructing torch.device('cuda:0') does not touch CUDA; consistency only"),
    C("W_metric.flatten().cuda()", "tensor_to_device", "replace", True,
      "thresh = torch.sort(W_metric.flatten().npu())[0][int(W.numel()*args.sparsity_ratio)].cpu()",
      "explicit .cuda() to sort the flattened weight on the accelerator; raises on an NPU host"),
    C("def prune_wanda(", "device_type", "replace", False,
      'def prune_wanda(args, model, tokenizer, device=torch.device("npu:0"), prune_n=0, prune_m=0):',
      "default never used (main.py always passes device); consistency only"),
    C('=dev = model.hf_device_map[f"model.layers.{i}"]', "device_type", "replace", True,
      'dev = torch.device("npu", model.hf_device_map[f"model.layers.{i}"])', HF_MAP_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C('=dev = model.hf_device_map["model.embed_tokens"]', "device_type", "replace", True,
      'dev = torch.device("npu", model.hf_device_map["model.embed_tokens"])', HF_MAP_NOTE),
    C("# drop catcher activations", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop catcher activations", EMPTY_NOTE),
    C("# llama-65b spans several GPUs", "device_type", "replace", True,
      'dev = torch.device("npu", model.hf_device_map[f"model.layers.{i}"])  # llama-65b spans several NPUs', HF_MAP_NOTE),
    C("# per-layer cleanup", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()  # per-layer cleanup", EMPTY_NOTE),
    C("# end of sparsegpt pass", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()  # end of sparsegpt pass", EMPTY_NOTE),
    C("dev = model.hf_device_map['model.embed_tokens']", "device_type", "replace", True,
      "dev = torch.device('npu', model.hf_device_map['model.embed_tokens'])", HF_MAP_NOTE),
    C("dev = model.hf_device_map[f'model.layers.{i}']", "device_type", "replace", True,
      "dev = torch.device('npu', model.hf_device_map[f'model.layers.{i}'])", HF_MAP_NOTE),
    C("# ablation: per-layer cleanup", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # ablation: per-layer cleanup", EMPTY_NOTE),
    C("# ablation: done", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()  # ablation: done", EMPTY_NOTE),
])

E("wanda_eval", "lib/eval.py", EXPL, "locuslab/wanda lib/eval.py (wikitext ppl + lm-eval zero-shot)", [
    C('def eval_ppl(args, model, tokenizer, device=torch.device("cuda:0")):', "device_type", "replace", False,
      'def eval_ppl(args, model, tokenizer, device=torch.device("npu:0")):',
      "default never used: the only caller (main.py) passes device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C("# after wikitext eval", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()  # after wikitext eval", EMPTY_NOTE),
    C("=device=None,", "device_type", "replace", False, 'device="npu:0",',
      "lm-eval 0.3 drops None-valued extra args and HuggingFaceAutoLM then falls back to its 'cuda' default; "
      "unconfirmed (third-party behaviour not covered by the knowledge base)"),
])

E("wanda_sh", "scripts/llama_7b.sh", EXPL, "locuslab/wanda scripts/llama_7b.sh (launcher)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=$cuda_device", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$cuda_device",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every NPU stays visible and device_map='auto' "
      "silently spreads the 7B model over all of them"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 python main.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python main.py \\",
      "device selection for the 65B run must use ASCEND_RT_VISIBLE_DEVICES"),
])

# ---------------------------------------------------------------- LLM-Pruner
E("llmpruner_prune", "hf_prune.py", EXPL, "horseee/LLM-Pruner hf_prune.py (dependency-graph structured pruning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op on an NPU host; torch.random.manual_seed on the line above should already seed registered "
      "device backends (unconfirmed), so reproducibility impact is uncertain"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C("torch.cuda.memory_allocated()/1024/1024", "torch_cuda_api", "replace", True,
      'logger.log("Memory Requirement: {} MiB\\n".format(torch.npu.memory_allocated()/1024/1024))',
      MEM_NOTE + " (the memory figure is one of the reported results)"),
    C("parser.add_argument('--device', type=str, default=\"cuda\"", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default=\"npu\", help='device')",
      "default pruning device; model.to('cuda') raises on an NPU host"),
    C("parser.add_argument('--eval_device'", "device_type", "replace", True,
      "parser.add_argument('--eval_device', type=str, default=\"npu\", help='eval device')",
      "default evaluation device"),
])

E("llmpruner_post", "post_training.py", EXPL, "horseee/LLM-Pruner post_training.py (LoRA recovery, alpaca-lora style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      IMPORT_NOTE + "; also lets transformers' Trainer detect the NPU"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "torch.cuda.is_available() is False on an NPU host, so the script silently takes the CPU branch"),
    C("if device == 'cuda':", "device_type", "replace", True, "if device == 'npu':",
      "string comparison must follow the renamed device or model.half() is silently skipped"),
    C("model = torch.compile(model)", "compile_mode", "removal", False, None,
      "Inductor's default backend on this torch_npu generation is unconfirmed; porters usually drop the compile "
      "(it is a no-gain wrapper around the PEFT model here)"),
])

E("llmpruner_ppl", "LLMPruner/evaluator/ppl.py", EXPL, "horseee/LLM-Pruner LLMPruner/evaluator/ppl.py (ppl + latency)", [
    C('def PPLMetric(model, tokenizer, datasets, seq_len=128, batch_size = 4, device="cuda"):', "device_type",
      "replace", False,
      'def PPLMetric(model, tokenizer, datasets, seq_len=128, batch_size = 4, device="npu"):',
      "library default; every caller in the repo passes device= explicitly"),
    C("def PPLMetricSliding(", "device_type", "replace", True,
      'def PPLMetricSliding(model, tokenizer, dataset_name, max_length=2048, stride=512, device="npu:0"):',
      "callers rely on the default; input_ids.to('cuda:0') raises on an NPU host"),
    C(".input_ids.cuda()", "tensor_to_device", "replace", True,
      'input_ids = tokenizer(prompt, return_tensors="pt").input_ids.npu()', "explicit .cuda() on the prompt"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", EVENT_NOTE),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", EVENT_NOTE),
    C("# wait for the generation to finish", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the generation to finish", SYNC_NOTE),
])

# ---------------------------------------------------------------- SmoothQuant / torch-int
E("sq_demo", "examples/smoothquant_opt_demo.py", EXPL, "mit-han-lab/smoothquant smoothquant_opt_demo (W8A8 accuracy + INT8 latency)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("input_ids = torch.randint(0, 50000, (batch_size, seq_len)).cuda()", "tensor_to_device", "replace", True,
      "input_ids = torch.randint(0, 50000, (batch_size, seq_len)).npu()", "explicit .cuda() on the benchmark batch"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", EVENT_NOTE),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", EVENT_NOTE),
    C("# make sure all kernels are done", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure all kernels are done before reading the events", SYNC_NOTE),
    C("peak_mem = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated() / 1024**3", MEM_NOTE + " (peak memory is a reported result)"),
    C('evaluator = Evaluator(dataset, tokenizer, "cuda")', "device_type", "replace", True,
      'evaluator = Evaluator(dataset, tokenizer, "npu")', "input_ids are moved to this device string"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C('ppl_evaluator = PerplexityEvaluator(wiki, tokenizer, "cuda")', "device_type", "replace", True,
      'ppl_evaluator = PerplexityEvaluator(wiki, tokenizer, "npu")', "the whole tokenised corpus is moved to this device"),
    C("# before loading the INT8 model", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # before loading the INT8 model", EMPTY_NOTE),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device (lazy init) and raises on an NPU host"),
])

E("sq_int8opt", "smoothquant/opt.py", KERNEL, "mit-han-lab/smoothquant smoothquant/opt.py (Int8OPT on torch-int CUTLASS kernels)", [
    C("from torch_int.nn.linear import (", "custom_cuda_extension", "replace", True,
      "from smoothquant.npu_int8.linear import (  # W8A8 layers on torch_npu.npu_quant_matmul",
      "torch_int is a CUTLASS/nvcc extension and cannot be built on an NPU host; INT8 GEMMs map to "
      "torch_npu.npu_quant_matmul (per-channel scale + per-token pertoken_scale)"),
    C("from torch_int.nn.fused import LayerNormQ", "custom_cuda_extension", "replace", True,
      "from smoothquant.npu_int8.fused import LayerNormQ",
      "fused LayerNorm+quantise CUDA kernel; re-express with layer_norm + torch_npu.npu_quantize"),
    C("from torch_int.nn.bmm import BMM_S8T_S8N_S8T, BMM_S8T_S8N_F32T", "custom_cuda_extension", "replace", True,
      "from smoothquant.npu_int8.bmm import BMM_S8T_S8N_S8T, BMM_S8T_S8N_F32T",
      "INT8 batched GEMMs from the CUTLASS extension"),
])

E("torchint_setup", "setup.py", KERNEL, "Guangxuan-Xiao/torch-int setup.py (CUTLASS INT8 extension build)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc / CUDA toolkit on an NPU host; NpuExtension adds the torch_npu/ACL include and link paths"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
      "the .cu CUTLASS kernels must be rewritten (Ascend C via OpPlugin or torch_npu fused ops)"),
    C("extra_link_args=['-lcublas_static'", "custom_cuda_extension", "removal", True, None,
      "cuBLAS / cudart static libraries do not exist on an NPU host; the link fails"),
    C("'nvcc': ['-O3', '-std=c++14'", "custom_cuda_extension", "removal", False, None,
      "nvcc flags and -gencode sm_80/sm_86 are meaningless without CUDA sources (unconfirmed whether NpuExtension ignores the key)"),
])

# ---------------------------------------------------------------- QuIP#
E("quip_had", "lib/utils/matmul_had.py", KERNEL, "Cornell-RelaxML/quip-sharp lib/utils/matmul_had.py (Hadamard transforms)", [
    C("=import fast_hadamard_transform", "custom_cuda_extension", "removal", True, None,
      "fast-hadamard-transform (Dao-AILab) is an nvcc-built CUDA extension; the import fails on an NPU host"),
    C("return fast_hadamard_transform.hadamard_transform(X.contiguous()", "custom_cuda_extension", "replace", True,
      "return matmul_hadU(X)", "use the pure-PyTorch butterfly (or a dense Hadamard matmul on the cube unit)"),
    C("input = fast_hadamard_transform.hadamard_transform(input.contiguous()", "custom_cuda_extension", "replace", True,
      "input = matmul_hadU(input.contiguous()) / torch.tensor(K).sqrt()",
      "matmul_hadU normalises by sqrt(n/K); divide by sqrt(K) to keep the 1/sqrt(n) scale"),
    C("W_ = W_.float().cuda()", "tensor_to_device", "replace", True, "W_ = W_.float().npu()",
      "explicit .cuda() before rotating the weight"),
    C("W_ = fast_hadamard_transform.hadamard_transform(", "custom_cuda_extension", "replace", True,
      "W_ = matmul_hadU(",
      "same kernel; matmul_hadU already normalises by sqrt(had_dim) so the scale= argument on the next line goes"),
])

E("quip_hessian", "quantize_llama/hessian_offline_llama.py", EXPL,
  "Cornell-RelaxML/quip-sharp quantize_llama/hessian_offline_llama.py (multi-GPU Hessian collection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      IMPORT_NOTE + "; spawned workers re-import this module, so one import covers them"),
    C("x = x[0].reshape(-1, n).to(torch.float64)", "unsupported_op_workaround", "replace", True,
      "x = x[0].reshape(-1, n).to(torch.float32)", FP64_NOTE),
    C("H = torch.zeros(n, n, dtype=torch.float64, device=device)", "unsupported_op_workaround", "replace", True,
      "H = torch.zeros(n, n, dtype=torch.float32, device=device)", FP64_NOTE + " (H.addmm_ on the device)"),
    C("mu = torch.zeros(n, dtype=torch.float64, device=device)", "unsupported_op_workaround", "replace", True,
      "mu = torch.zeros(n, dtype=torch.float32, device=device)", "must match H's dtype for the final addmm_ in done()"),
    C("def forward_layer(", "torch_cuda_api", "npu_only_addition", False, "    torch.npu.set_device(device)",
      "each spawned worker uses one device; pinning the worker's current NPU is the usual torch_npu practice "
      "(unconfirmed that it is strictly needed)"),
    C("ngpus = min(torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus = min(torch.npu.device_count(), len(dev_emb) // chunk_size)",
      "returns 0 on an NPU host: no forward workers start and the accumulator waits forever"),
    C("attention_mask, args.batch_size, i, in_q,", "device_type", "replace", True,
      "attention_mask, args.batch_size, f'npu:{i}', in_q,",
      "the worker's device is a bare int; layer.to(i) / torch.zeros(device=i) mean CUDA"),
])

E("quip_finetune", "quantize_llama/quantize_finetune_llama.py", EXPL,
  "Cornell-RelaxML/quip-sharp quantize_llama/quantize_finetune_llama.py (layer-parallel quantise + fine-tune)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("nproc = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "nproc = torch.npu.device_count()",
      "0 on an NPU host: no worker slots and a modulo by zero"),
    C("position_ids = position_ids.to(cur_device)", "device_type", "replace", True,
      "position_ids = position_ids.to(f'npu:{cur_device}')", "cur_device is a bare int index; .to(int) means CUDA"),
    C("attention_mask = attention_mask.to(cur_device)", "device_type", "replace", True,
      "attention_mask = attention_mask.to(f'npu:{cur_device}')", "bare int device index"),
    C("model.model.layers[i].to(cur_device)", "device_type", "replace", True,
      "model.model.layers[i].to(f'npu:{cur_device}')", "bare int device index"),
    C("orig_emb_cache[cur_device][j:j + 1].to(cur_device),", "device_type", "replace", True,
      "orig_emb_cache[cur_device][j:j + 1].to(f'npu:{cur_device}'),", "bare int device index"),
    C("=cur_device,", "device_type", "replace", True, "f'npu:{cur_device}',",
      "the worker process receives the int and uses it as its device"),
])

E("quip_algo", "lib/algo/quip.py", EXPL, "Cornell-RelaxML/quip-sharp lib/algo/quip.py (incoherence processing + block LDLQ)", [
    C("=dtype_ = torch.float64 if args.use_fp64 else torch.float32", "unsupported_op_workaround", "replace", True,
      "dtype_ = torch.float32  # no fp64 matmul / cholesky on NPU",
      FP64_NOTE + "; fails as soon as --use_fp64 is passed"),
    C("# LDL in fp64 for the 70B down_proj", "unsupported_op_workaround", "replace", True,
      "dtype_ = torch.float32  # no fp64 matmul / cholesky on NPU", FP64_NOTE),
    C("def quantize(H_orig, W_orig, rank, codebook_orig, args, device='cuda'):", "device_type", "replace", False,
      "def quantize(H_orig, W_orig, rank, codebook_orig, args, device='npu'):",
      "default only; the fine-tune driver always passes device"),
    C("=dtype_ = torch.float64", "unsupported_op_workaround", "replace", True, "dtype_ = torch.float32",
      FP64_NOTE + " (unconditional here: low-rank path with --lora_rank > 0)"),
])

E("quip_e8p", "lib/codebook/latticee8_padded12.py", KERNEL,
  "Cornell-RelaxML/quip-sharp lib/codebook/latticee8_padded12.py (E8P codebook + quiptools_cuda decode)", [
    C("=import quiptools_cuda", "custom_cuda_extension", "removal", True, None,
      "quiptools_cuda is built with nvcc (quiptools/setup.py); the import fails on an NPU host"),
    C("return quiptools_cuda.decompress_packed_e8p(idxs.view", "custom_cuda_extension", "replace", True,
      "return decompress_packed_e8p_torch(idxs.view(m // 16, n // 2, 8, 4), self.grid_packed_abs)",
      "pure-torch (or Ascend C) unpacking of the packed E8P codes"),
    C("x = quiptools_cuda.decode_matvec_e8p(", "custom_cuda_extension", "replace", True,
      "x = decode_matvec_e8p_torch(", "fused decode+GEMV kernel; decompress then matmul on the NPU"),
    C("W_decompressed = quiptools_cuda.decompress_packed_e8p(", "custom_cuda_extension", "replace", True,
      "W_decompressed = decompress_packed_e8p_torch(", "batched path uses the same CUDA decompress kernel"),
])

E("quip_setup", "quiptools/setup.py", KERNEL, "Cornell-RelaxML/quip-sharp quiptools/setup.py (CUDA kernel build)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc on an NPU host"),
    C("CUDAExtension(name='quiptools_cuda',", "custom_cuda_extension", "replace", True,
      "NpuExtension(name='quiptools_npu',", ".cu kernels need an Ascend C rewrite"),
    C("extra_cuda_cflags=['-lineinfo', '-std=c++17'],", "custom_cuda_extension", "removal", False, None,
      "not a CUDAExtension option at all (setuptools only warns); meaningless on NPU"),
    C("'cxx': ['-g', '-lcuda'],", "custom_cuda_extension", "replace", False, "'cxx': ['-g'],",
      "-lcuda on the compile step is ignored by the compiler; cleanup"),
    C("'nvcc': ['-O3', '-lineinfo', '-arch=sm_80', '--use_fast_math']", "custom_cuda_extension", "removal", False, None,
      "nvcc flags; unconfirmed whether NpuExtension ignores the key"),
    C("extra_link_args=['-lcuda'])", "custom_cuda_extension", "replace", True, "extra_link_args=[])",
      "libcuda.so does not exist on an NPU host; the link fails"),
])

E("quip_reqs", "requirements.txt", EXPL, "Cornell-RelaxML/quip-sharp requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu expects the CPU build of torch (x86: download.pytorch.org/whl/cpu; aarch64: plain PyPI)"),
    C("torch==2.1.1+cu121", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA build; and there is no torch_npu for 2.1.1 - the torch_npu wheel version must equal torch's"),
    C("transformers==4.36.2", "import_torch_npu", "npu_only_addition", True, CPU_TORCH_PIN,
      "the torch-npu pin (2.1.0.postN pairs with torch 2.1.0; post17 with CANN 8.3.RC1)"),
    C("fast-hadamard-transform==1.0.4.post1", "custom_cuda_extension", "removal", True, None,
      "nvcc-built package; pip install fails without CUDA and takes the whole install with it"),
    C("=triton==2.1.0", "triton_kernel_tuning", "replace", False, "triton-ascend",
      "only the optional fused fine-tuning path uses Triton; GPU Triton has no NPU backend (triton-ascend needs kernel porting)"),
])

# ---------------------------------------------------------------- AQLM
E("aqlm_main", "main.py", EXPL, "Vahe1994/AQLM main.py (additive quantisation driver, multi-GPU calibration)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('if emb_device.type != "cuda":', "device_type", "replace", False,
      'if emb_device.type not in ("cuda", "npu"):',
      "an embedding already on an NPU is treated as 'not on the accelerator' and bounced to devices[0] and back; "
      "correct but a wasted copy"),
    C("pin_memory=offload_activations,", "pin_memory", "replace", False,
      "pin_memory=False,  # pin afterwards with .pin_memory(device='npu') when offloading",
      "factory pin_memory=True goes through the default (CUDA) host allocator in torch 2.1; whether torch_npu's "
      "host allocator is used here is unconfirmed"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C("# layer is back on its original device", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # layer is back on its original device", EMPTY_NOTE),
    C('print(f"quantize: {torch.cuda.max_memory_allocated()=:,}")', "torch_cuda_api", "replace", True,
      'print(f"quantize: {torch.npu.max_memory_allocated()=:,}")', MEM_NOTE),
    C('wandb.log({"max_cuda_mem_quantize"', "torch_cuda_api", "replace", True,
      'wandb.log({"max_npu_mem_quantize": round(torch.npu.max_memory_allocated() / 1e9, 2)})', MEM_NOTE),
    C("# eval: one layer at a time", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # eval: one layer at a time", EMPTY_NOTE),
    C("=layer_replicas = replicate(layer, devices=devices, detach=True)", "unsupported_op_workaround", "replace", True,
      "layer_replicas = [copy.deepcopy(layer).to(d) for d in devices]",
      "torch.nn.parallel.replicate broadcasts through torch.cuda.comm (the DataParallel machinery, ✘ in Ascend's list)"),
    C("aq_handles_by_device: Sequence[dict[str, AQEngine]] = parallel_apply(", "unsupported_op_workaround", "replace", True,
      "aq_handles_by_device = _apply_per_npu(  # loop / threads with torch.npu.set_device per replica",
      "parallel_apply enters torch.cuda.device / CUDA streams per worker (DataParallel machinery, ✘ on NPU)"),
    C("# one replica per GPU", "unsupported_op_workaround", "replace", True,
      "layer_replicas = [copy.deepcopy(layer).to(d) for d in devices]  # one replica per NPU",
      "replicate uses torch.cuda.comm broadcast"),
    C("out_losses_by_device: Sequence[Sequence[float]] = parallel_apply(", "unsupported_op_workaround", "replace", True,
      "out_losses_by_device = _apply_per_npu(", "same parallel_apply replacement"),
    C('device = torch.device(f"cuda:{torch.cuda.current_device()}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{torch.npu.current_device()}")',
      "torch.cuda.current_device() raises on an NPU host and the device string is CUDA"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: silently falls back to --devices cpu"),
    C('args.devices = [torch.device(f"cuda:{i}") for i in range(torch.cuda.device_count())]', "device_type", "replace",
      True, 'args.devices = [torch.device(f"npu:{i}") for i in range(torch.npu.device_count())]',
      "default device list"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device (lazy init) and raises on an NPU host"),
    C('print(f"eval: {torch.cuda.max_memory_allocated()=:,}")', "torch_cuda_api", "replace", True,
      'print(f"eval: {torch.npu.max_memory_allocated()=:,}")', MEM_NOTE),
    C('wandb.log({"max_cuda_mem_eval"', "torch_cuda_api", "replace", True,
      'wandb.log({"max_npu_mem_eval": round(torch.npu.max_memory_allocated() / 1e9, 2)})', MEM_NOTE),
])

E("aqlm_inference", "inference_lib/src/aqlm/inference.py", BRANCH,
  "Vahe1994/AQLM inference_lib aqlm/inference.py (QuantizedLinear + kernel dispatch)", [
    C('case (False, "cuda", 1, 65536, 1, 8)', "custom_cuda_extension", "add_branch", False,
      'case (False, "npu", 1, 65536, 1, 8):  # Ascend C port of code1x16_matmat',
      "on NPU the match falls through to the generic dequantize_gemm, which is correct; an NPU case only pays off "
      "if the 1x16 kernel is ported"),
    C('case (False, "cuda", 2, 256, 1, 8)', "custom_cuda_extension", "add_branch", False,
      'case (False, "npu", 2, 256, 1, 8):  # Ascend C port of code2x8_matmat', "as above, performance only"),
    C('case (False, "cuda", _, _, 1, _):', "triton_kernel_tuning", "add_branch", False,
      'case (False, "npu", _, _, 1, _):  # triton-ascend port of triton_matmul', "as above, performance only"),
    C("not input.is_cuda", "device_type", "replace", True, 'input.device.type == "cpu"',
      "is_cuda is False for NPU tensors, so the 2x8 codes get permuted into the CPU/numba layout while the NPU then "
      "runs dequantize_gemm on the original layout: wrong shapes or silently wrong outputs"),
])

E("aqlm_triton", "inference_lib/src/aqlm/inference_kernels/triton_kernel.py", KERNEL,
  "Vahe1994/AQLM inference_kernels/triton_kernel.py (Triton GEMV)", [
    C('triton.Config({"UNUSED": 1}, num_stages=num_stages, num_warps=num_warps)', "triton_kernel_tuning", "replace", False,
      'triton.Config({"UNUSED": 1}, num_stages=1, num_warps=1)',
      "warp/stage autotuning is CUDA-specific; triton-ascend maps programs onto AI cores (unconfirmed tuning rules). "
      "Module only reached on NPU if the dispatcher gets an npu case"),
    C("grid = lambda META: (out_features // out_group_size,)", "triton_kernel_tuning", "replace", False,
      "grid = lambda META: (min(out_features // out_group_size, NUM_AI_CORES),)",
      "one program per output row launches tens of thousands of programs; triton-ascend guidance is a grid sized to the "
      "core count with an inner loop (unconfirmed)"),
])

E("aqlm_cuda", "inference_lib/src/aqlm/inference_kernels/cuda_kernel.py", KERNEL,
  "Vahe1994/AQLM inference_kernels/cuda_kernel.py (JIT-built CUDA kernels)", [
    C("CUDA_KERNEL = load(", "custom_cuda_extension", "replace", False,
      "CUDA_KERNEL = load_npu_extension(  # NpuExtension build of an Ascend C port",
      "cpp_extension.load is ✘ on A2/A3 and there is no nvcc; but the module is only imported from the "
      "device.type=='cuda' dispatch cases, so on NPU it is dead code unless the kernels are ported (performance)"),
])

# ---------------------------------------------------------------- OmniQuant
E("omni_main", "main.py", EXPL, "OpenGVLab/OmniQuant main.py (calibration driver + eval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "silent no-op on an NPU host; torch.manual_seed on the line above should seed the NPU generator too (unconfirmed)"),
    C("torch.cuda.max_memory_allocated(lm._device)", "torch_cuda_api", "replace", True,
      'logger.info(f"max memory allocated: {torch.npu.max_memory_allocated(lm._device) / 1024**2:.2f} MiB")', MEM_NOTE),
])

E("omni_quant", "quantize/omniquant.py", EXPL, "OpenGVLab/OmniQuant quantize/omniquant.py (LET/LWC block-wise calibration)", [
    C("import auto_gptq.nn_modules.qlinear.qlinear_cuda as qlinear_cuda", "custom_cuda_extension", "replace", False,
      "from quantize.npu_qlinear import NPUWeightQuantLinear  # npu_weight_quant_batchmatmul",
      "guarded import (only prints); the kernels it wraps are CUDA-only"),
    C("import auto_gptq.nn_modules.qlinear.qlinear_triton as qlinear_triton", "custom_cuda_extension", "removal", False, None,
      "guarded import of GPU-Triton kernels"),
    C("traincast = torch.cuda.amp.autocast", "amp", "replace", True, "traincast = torch.npu.amp.autocast",
      "autocast('cuda') is silently disabled on an NPU host; the fp16 activations then meet the .float() layer and "
      "the matmuls fail with a dtype mismatch"),
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "silently disabled autocast changes the numerics of the full-precision targets (no fp32 softmax/norm)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C("max memory_allocated {torch.cuda.max_memory_allocated(lm._device)", "torch_cuda_api", "replace", True,
      'logger.info(f"layer {i} iter {epochs} loss:{loss_mean} norm:{norm_mean} max memory_allocated {torch.npu.max_memory_allocated(lm._device) / 1024**2} ")',
      MEM_NOTE),
    C("# fp16 forward of the quantized layer", "amp", "replace", True,
      "with torch.npu.amp.autocast():  # fp16 forward of the quantized layer", "same silent autocast disable"),
    C("q_linear = qlinear_cuda.QuantLinear(", "custom_cuda_extension", "replace", True,
      "q_linear = NPUWeightQuantLinear(args.wbits, group_size, module.in_features,module.out_features,not module.bias is None)",
      "--real_quant: AutoGPTQ's CUDA QuantLinear needs autogptq_cuda kernels; on NPU use a layer built on "
      "torch_npu.npu_weight_quant_batchmatmul"),
    C("q_linear = qlinear_triton.QuantLinear(", "custom_cuda_extension", "replace", True,
      "q_linear = NPUWeightQuantLinear(args.wbits, group_size, module.in_features,module.out_features,not module.bias is None)",
      "--real_quant: GPU-Triton QuantLinear has no NPU backend"),
    C("# next layer", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()  # next layer", EMPTY_NOTE),
    C("# calibration buffers freed", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # calibration buffers freed", EMPTY_NOTE),
])

E("omni_env", "environment.yml", EXPL, "OmniQuant-style conda environment.yml (pytorch-cuda channel install)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "channel only serves CUDA packages; harmless once they are gone"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", "replace", True, "- cpuonly",
      "selects the CUDA build of pytorch; torch_npu needs the CPU build"),
    C("=- cudatoolkit-dev=11.7", "custom_cuda_extension", "removal", False, None,
      "nvcc for building AutoGPTQ kernels; useless on an NPU host (unconfirmed whether it even resolves on aarch64)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - " + CPU_TORCH_PIN,
      "the torch-npu pin matching pytorch 2.1.0"),
    C("=- triton==2.1.0", "triton_kernel_tuning", "replace", False, "- triton-ascend",
      "only AutoGPTQ's Triton QuantLinear uses it (--real_quant)"),
    C("=- auto-gptq==0.5.1", "custom_cuda_extension", "removal", False, None,
      "real-quant kernels are CUDA/Triton only; unconfirmed whether the wheel even installs without CUDA"),
    C("=- flash-attn==2.3.6", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU; use attn_implementation='sdpa' (NPU FA underneath)"),
])

# ---------------------------------------------------------------- GPTQ
E("gptq_llama", "llama.py", EXPL, "IST-DASLab/gptq llama.py (sequential GPTQ with CPU offload + benchmark)", [
    C("import torch.nn as nn", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      IMPORT_NOTE + " (get_llama() has its own local 'import torch')"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C("# offload to cpu, free the GPU copy", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # offload to cpu, free the NPU copy", EMPTY_NOTE),
    C("# eval: embeddings offloaded", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # eval: embeddings offloaded", EMPTY_NOTE),
    C("# eval: per layer", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()  # eval: per layer", EMPTY_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize(gpu)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(gpu)", SYNC_NOTE),
    C("# single-GPU timing", "torch_cuda_api", "replace", True, "torch.npu.synchronize()  # single-NPU timing", SYNC_NOTE),
    C("torch.cuda.memory_allocated() / 1024 /1024", "torch_cuda_api", "replace", True,
      "max_memory = max(max_memory,torch.npu.memory_allocated() / 1024 /1024)", MEM_NOTE + " (printed as max memory)"),
    C("DEV = torch.device('cuda:0')", "device_type", "replace", True, "DEV = torch.device('npu:0')",
      "compute device for quantisation, eval and benchmark"),
    C("gpus = [torch.device('cuda:%d' % i) for i in range(torch.cuda.device_count())]", "device_type", "replace", True,
      "gpus = [torch.device('npu:%d' % i) for i in range(torch.npu.device_count())]", "benchmark device list"),
])

E("gptq_quant", "quant.py", KERNEL, "IST-DASLab/gptq quant.py (Quantizer + 3-bit quant_cuda kernels)", [
    C("=import quant_cuda", "custom_cuda_extension", "removal", False, None,
      "guarded import of the nvcc-built quant_cuda extension (only prints on failure)"),
    C("quant_cuda.vecquant3matmul_faster(", "custom_cuda_extension", "replace", True,
      "y += torch.matmul(x, dequant3(self.qweight, self.scales, self.zeros).to(x.dtype))",
      "NameError on NPU (quant_cuda never imported); replace with unpack+matmul or an Ascend C port"),
    C("quant_cuda.vecquant3matmul(x,", "custom_cuda_extension", "replace", True,
      "y += torch.matmul(x, dequant3(self.qweight, self.scales, self.zeros))", "same as the faster path"),
])

# ---------------------------------------------------------------- mergekit
E("mergekit_merge", "mergekit/merge.py", EXPL, "arcee-ai/mergekit mergekit/merge.py (run_merge + mergekit-yaml CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "needed once --cuda is mapped to the NPU (CPU merges would work without it)"),
    C('math_device = "cuda" if options.cuda else "cpu"', "device_type", "replace", True,
      'math_device = "npu" if options.cuda else "cpu"', "--cuda math device string"),
    C('storage_device = "cuda" if options.low_cpu_memory else "cpu"', "device_type", "replace", True,
      'storage_device = "npu" if options.low_cpu_memory else "cpu"', "--low-cpu-memory keeps tensors on the accelerator"),
    C("torch.cuda.max_memory_allocated() / 1024**3,", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_allocated() / 1024**3,", MEM_NOTE),
    C("if cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if cuda and not torch.npu.is_available():", "always rejects --cuda on an NPU host"),
])

# ---------------------------------------------------------------- MiniLLM / distillation
E("minillm_train", "finetune.py", EXPL, "microsoft/LMOps minillm finetune/distillation script (DeepSpeed KD)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      IMPORT_NOTE + "; DeepSpeed then selects its NPU accelerator"),
    C("mpu.model_parallel_cuda_manual_seed(seed)", "torch_cuda_api", "replace", False,
      "mpu.model_parallel_npu_manual_seed(seed)",
      "only with --model-parallel; the fork's RNG tracker is written against torch.cuda RNG state (unconfirmed)"),
    C("=device = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "device = args.rank % torch.npu.device_count()", "device_count() is 0 on an NPU host: ZeroDivisionError"),
    C("=torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "raises on an NPU host"),
    C('dist.init_process_group(backend="nccl"', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", timeout=timedelta(minutes=300))', "NCCL does not exist on Ascend; HCCL"),
    C("# same mapping as init_distributed", "torch_cuda_api", "replace", True,
      "device = args.rank % torch.npu.device_count()  # same mapping as init_distributed",
      "device_count() is 0 on an NPU host: ZeroDivisionError"),
    C("# one process per GPU", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)  # one process per NPU",
      "raises on an NPU host"),
    C("optimizer = FusedAdam(param_groups", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_groups, lr=args.lr, weight_decay=args.weight_decay)",
      "DeepSpeed's FusedAdam builds a CUDA op; whether DeepSpeed's NPU accelerator supplies an equivalent builder for "
      "this DeepSpeed version is unconfirmed"),
    C("torch.cuda.memory_summary()", "torch_cuda_api", "replace", True,
      'print_rank("Model mem\\n", torch.npu.memory_summary())',
      "memory_summary resolves the current CUDA device first and raises on an NPU host"),
    C("pin_memory=True, collate_fn", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu", collate_fn=dataset["train"].collate)',
      "DataLoader pinning targets CUDA by default; without a device it is skipped or fails (unconfirmed which)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("# time the full step", "torch_cuda_api", "replace", True, "torch.npu.synchronize()  # time the full step", SYNC_NOTE),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      'device = torch.device("npu", torch.npu.current_device())',
      "raises on an NPU host; a torch.device (not a bare int) also keeps model.to(device) / device_map off CUDA"),
])

E("minillm_sh", "scripts/gpt2/kd/kd_base.sh", EXPL, "microsoft/LMOps minillm scripts/gpt2/kd/kd_base.sh (torchrun launcher)", [
    C("=#! /bin/bash", "env_var", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
    C('export NCCL_DEBUG=""', "env_var", "removal", False, None, "NCCL variables are ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no HCCL equivalent; ignored"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific; ignored on Ascend"),
    C("CUDA_LAUNCH_BLOCKING=1 ${CMD}", "env_var", "replace", False, "ASCEND_LAUNCH_BLOCKING=1 ${CMD}",
      "debug-only synchronous launch; CUDA_LAUNCH_BLOCKING is ignored by torch_npu"),
])

# ---------------------------------------------------------------- Docker
E("distill_docker", "Dockerfile", EXPL, "MiniLLM-style training Dockerfile (NGC PyTorch base, DeepSpeed, flash-attn)", [
    C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "NGC image is CUDA-only; Ascend's CANN images already bake the set_env.sh exports into ENV"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;9.0"', "env_var", "removal", False, None, "CUDA arch list; no effect on NPU"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "points at a toolkit that is not there"),
    C("ENV NCCL_IB_DISABLE=0 \\", "env_var", "removal", False, None, "NCCL variable, ignored by HCCL"),
    C("NCCL_SOCKET_IFNAME=eth0 \\", "env_var", "replace", False, "HCCL_SOCKET_IFNAME=eth0 \\",
      "HCCL's own NIC selection variable; HCCL otherwise picks a NIC by its own rule (may matter multi-node)"),
    C("NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL variable, ignored by HCCL"),
    C("RUN pip install --no-cache-dir -r /tmp/requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 " + CPU_TORCH_PIN,
      "the CANN base image has no torch; install CPU torch plus the matching torch-npu"),
    C("RUN DS_BUILD_FUSED_ADAM=1 DS_BUILD_CPU_ADAM=1 DS_BUILD_UTILS=1 \\", "distributed_framework", "replace", True,
      "RUN DS_BUILD_OPS=0 \\", "pre-building DeepSpeed's CUDA ops needs nvcc; the image build fails"),
    C("flash-attn==2.3.3", "attention_kernel", "removal", True, None, "flash-attn cannot be built or installed on NPU"),
    C("torch.cuda.is_available(), deepspeed.__version__", "torch_cuda_api", "replace", False,
      'RUN python -c "import torch, torch_npu, deepspeed; print(torch.__version__, torch_npu.__version__, deepspeed.__version__)"',
      "sanity print only (no device is mounted at build time anyway)"),
])
