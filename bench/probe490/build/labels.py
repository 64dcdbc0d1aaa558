"""Labels for probe490 (antibody and immune-receptor modelling). One C(...) per upstream line a careful
porter would edit for an explicit torch_npu port; see README.md for the policy and the near-misses."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


NPU_IMPORT = "import torch_npu"

# ---------------------------------------------------------------- AbLang / AbLang2 (oxpig)

E("ablang_pretrained", "ablang/pretrained.py", "explicit_replacement",
  "oxpig/AbLang ablang/pretrained.py (pretrained wrapper; device passed in by the caller)", [])

E("ablang_model", "ablang/model.py", "explicit_replacement",
  "oxpig/AbLang ablang/model.py (AbLang / AbRep / AbHead modules)", [])

E("ablang_tokenizers", "ablang/tokenizers.py", "explicit_replacement",
  "oxpig/AbLang ablang/tokenizers.py (ABtokenizer)", [])

E("ablang2_load", "ablang2/load_model.py", "explicit_replacement",
  "oxpig/AbLang2 ablang2/load_model.py (weight download + device resolution)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "the ported _resolve_device builds 'npu:N' devices itself; torch.device('npu:0') only parses once "
      "torch_npu has registered the backend (autoload only from torch_npu 2.5.1)"),
    C('return torch.device(f"cuda:{device}")', "device_type", "replace", True,
      'return torch.device(f"npu:{device}")',
      "an integer device index is turned into a CUDA device; on an Ascend host the model .to() fails"),
    C('if device == "cuda" and not torch.cuda.is_available():', "torch_cuda_api", "add_branch", False,
      'if device == "npu" and not torch.npu.is_available():',
      "friendly CPU fallback for a missing accelerator; without the NPU branch an explicit 'npu' request on a "
      "host without NPUs fails later with a less helpful error - convenience only"),
])

E("ablang_embed", "examples/embed_oas_csv.py", "explicit_replacement",
  "oxpig/AbLang2-style batch embedding script over OAS CSV exports (user script around ablang2.pretrained)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "entry script uses torch.npu.* and the 'npu' device string"),
    C("if args.cpu or not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.cpu or not torch.npu.is_available():",
      "unchanged, the script silently runs on the CPU on an Ascend host"),
    C('log.info("using GPU %s (%d visible)", torch.cuda.get_device_name(0), torch.cuda.device_count())',
      "torch_cuda_api", "replace", True,
      'log.info("using NPU %s (%d visible)", torch.npu.get_device_name(0), torch.npu.device_count())',
      "torch.cuda.get_device_name initialises CUDA and raises on a CPU-only torch build"),
    C('return "cuda"', "device_type", "replace", True, 'return "npu"',
      "device string handed to ablang2.pretrained"),
    C('if device == "cuda":', "device_type", "replace", False, 'if device == "npu":',
      "only gates the peak-memory log line; left alone the NPU run just logs without memory figures"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 30",
      "reporting only: torch.cuda.max_memory_allocated returns 0 when CUDA was never initialised"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device first and raises on an NPU host once the branch above is taken"),
])

# ---------------------------------------------------------------- AntiBERTy (jeffreyruffolo)

E("antiberty_runner", "antiberty/AntiBERTyRunner.py", "explicit_replacement",
  "jeffreyruffolo/AntiBERTy antiberty/AntiBERTyRunner.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "library module now calls torch.npu.is_available(); AntiBERTyRunner is also constructed inside IgFoldRunner"),
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level device choice; unchanged the language model silently runs on the CPU"),
])

E("antiberty_model", "antiberty/model/AntiBERTy.py", "explicit_replacement",
  "jeffreyruffolo/AntiBERTy antiberty/model/AntiBERTy.py (BertPreTrainedModel subclass)", [])

E("antiberty_tests", "tests/test_runner.py", "explicit_replacement",
  "jeffreyruffolo/AntiBERTy-style pytest suite for AntiBERTyRunner", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unchanged, the else-branch asserts a CPU device while the ported runner sits on the NPU: test fails"),
    C('assert runner.device.type == "cuda"', "device_type", "replace", True, 'assert runner.device.type == "npu"',
      "device type of the ported runner"),
    C("assert next(runner.model.parameters()).is_cuda", "device_type", "replace", True,
      "assert next(runner.model.parameters()).is_npu", "is_cuda is False for NPU tensors"),
    C('@pytest.mark.skipif(not torch.cuda.is_available(), reason="requires a CUDA GPU")', "torch_cuda_api",
      "replace", True, '@pytest.mark.skipif(not torch.npu.is_available(), reason="requires an Ascend NPU")',
      "unchanged, the accelerator throughput test is silently skipped on every NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize raises without CUDA"),
    C("wait for the last batch", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the last batch before stopping the clock",
      "second sync of the timing pair"),
])

# ---------------------------------------------------------------- IgFold (Graylab)

E("igfold_runner", "igfold/IgFoldRunner.py", "explicit_replacement",
  "Graylab/IgFold igfold/IgFoldRunner.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "IgFoldRunner is the public entry point and now names the npu device"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() and try_gpu else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu:0" if torch.npu.is_available() and try_gpu else "cpu")',
      "all four IgFold ensemble members are placed with this device; unchanged they run on the CPU"),
])

E("igfold_folding", "igfold/utils/folding.py", "explicit_replacement",
  "Graylab/IgFold igfold/utils/folding.py (fold / embed / template processing)", [])

E("igfold_model", "igfold/model/IgFold.py", "explicit_replacement",
  "Graylab/IgFold igfold/model/IgFold.py (LightningModule, inference path)", [])

E("igfold_openmm", "igfold/refine/openmm_ref.py", "explicit_replacement",
  "Graylab/IgFold igfold/refine/openmm_ref.py (OpenMM refinement)", [])

E("igfold_tga", "igfold/model/components/TriangleGraphAttention.py", "explicit_replacement",
  "Graylab/IgFold igfold/model/components (triangle graph attention / multiplicative updates)", [])

E("igfold_batch", "scripts/batch_fold.py", "explicit_replacement",
  "IgFold user-side multi-GPU batch folding script (one spawned worker per card)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu_id)',
      "per-worker card pinning; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so every worker "
      "would silently share npu:0"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "worker uses torch.npu.* (import inside the worker, after the visibility variable is set)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "OOM recovery path; torch.cuda.empty_cache is a silent no-op without CUDA, so only memory reuse suffers"),
    C("torch.cuda.synchronize()  # make the timing honest", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make the timing honest", "raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 1024 ** 3",
      "reporting only: reads 0 when CUDA was never initialised"),
])

# ---------------------------------------------------------------- DiffAb (luost26)

E("diffab_train", "train.py", "explicit_replacement",
  "luost26/diffab train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "--device npu needs the backend registered"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')",
      "default device for model, batches and checkpoint map_location"),
])

E("diffab_utils_train", "diffab/utils/train.py", "explicit_replacement",
  "luost26/diffab diffab/utils/train.py (optimizer/scheduler factories, recursive_to)", [
    C("return obj.cuda(device=device, non_blocking=True)", "tensor_to_device", "replace", True,
      "return obj.to(device, non_blocking=True)",
      "Tensor.cuda(device='npu') fails, and the CPU-only build raises AssertionError ('Torch not compiled with "
      "CUDA enabled'), which the except RuntimeError fallback does not catch"),
])

E("diffab_misc", "diffab/utils/misc.py", "explicit_replacement",
  "luost26/diffab diffab/utils/misc.py", [])

E("diffab_design", "diffab/tools/runner/design_for_pdb.py", "explicit_replacement",
  "luost26/diffab diffab/tools/runner/design_for_pdb.py", [
    C("from torch.utils.data import DataLoader", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "no plain 'import torch' in this file (torch arrives through a star import); torch_npu goes next to the "
      "first torch import so --device npu parses"),
    C("parser.add_argument('-d', '--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('-d', '--device', type=str, default='npu')", "CLI default device"),
    C("device='cuda',", "device_type", "replace", True, "device='npu',",
      "args_factory default used when design_for_pdb is driven from Python (notebooks, design_testset)"),
])

E("diffab_relax", "diffab/tools/relax/openmm_relaxer.py", "explicit_replacement",
  "luost26/diffab diffab/tools/relax/openmm_relaxer.py (ForceFieldMinimizer)", [
    C("tolerance=2.39*unit.kilocalories_per_mole, platform='CUDA'", "device_type", "replace", True,
      "def __init__(self, stiffness=10.0, max_iterations=0, tolerance=2.39*unit.kilocalories_per_mole, platform='CPU'):",
      "OpenMM has no Ascend platform; Platform.getPlatformByName('CUDA') raises OpenMMException on a host "
      "without NVIDIA drivers and run_openmm only catches ValueError"),
])

E("diffab_dpm", "diffab/modules/diffusion/dpm_full.py", "explicit_replacement",
  "luost26/diffab diffab/modules/diffusion/dpm_full.py (FullDPM, EpsilonNet)", [])

E("diffab_so3", "diffab/modules/common/so3.py", "explicit_replacement",
  "luost26/diffab diffab/modules/common/so3.py", [])

E("diffab_config", "configs/train/codesign_single.yml", "explicit_replacement",
  "luost26/diffab configs/train/codesign_single.yml", [])

E("diffab_env", "env.yaml", "explicit_replacement",
  "luost26/diffab env.yaml (conda environment)", [
    C("pytorch=1.13.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu release pairs with torch 1.13; torch_npu 2.1.0.postN needs exactly torch 2.1.0"),
    C("pytorch-cuda=11.7", "torch_cuda_api", "removal", False, None,
      "CUDA runtime metapackage is dead weight on an Ascend host (unconfirmed whether it even resolves on aarch64)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "torch_npu itself (pip only); pairs with torch 2.1.0 / CANN 8.3.RC1"),
])

# ---------------------------------------------------------------- TCR-BERT (wukevin)

E("tcrbert_utils", "tcr/utils.py", "explicit_replacement",
  "wukevin/tcr-bert tcr/utils.py (get_device, seeding, misc helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT,
      "get_device now calls torch.npu.*"),
    C("if torch.cuda.is_available() and i is not None", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and i is not None and isinstance(i, int) and i >= 0:",
      "unchanged, every embedding/classification call silently falls back to the CPU"),
    C("devices = list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
      "devices = list(range(torch.npu.device_count()))", "0 on an NPU host -> IndexError"),
    C("torch.cuda.set_device(device_idx)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device_idx)",
      "raises without CUDA"),
    C('d = torch.device(f"cuda:{device_idx}")', "device_type", "replace", True,
      'd = torch.device(f"npu:{device_idx}")', "returned device"),
    C("torch.cuda.set_device(d)", "torch_cuda_api", "replace", True, "torch.npu.set_device(d)",
      "raises without CUDA"),
    C('cmd = "nvidia-smi --query-gpu=memory.free', "torch_cuda_api", "replace", False,
      "free = [torch.npu.mem_get_info(i)[0] >> 20 for i in range(torch.npu.device_count())]",
      "nvidia-smi is absent on Ascend hosts; the existing fallback quietly returns card 0, so only the "
      "'least loaded card' choice is lost"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed_all(seed)",
      "torch.cuda.manual_seed_all is queued lazily and never runs without CUDA: NPU RNG silently unseeded "
      "(MLM masking / dropout not reproducible)"),
])

E("tcrbert_model_utils", "tcr/model_utils.py", "explicit_replacement",
  "wukevin/tcr-bert tcr/model_utils.py (embeddings, attentions, classification pipelines)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only releases cached NPU memory between calls"),
])

E("tcrbert_train", "bin/transformer_custom_training.py", "explicit_replacement",
  "wukevin/tcr-bert bin/transformer_custom_training.py (HF Trainer MLM pretraining)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, NPU_IMPORT,
      "explicit import for the entry script; not strictly needed because the ported tcr/utils.py (imported "
      "above main) already imports torch_npu and transformers imports it for NPU detection"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "n_gpu = torch.npu.device_count()",
      "0 on an NPU host, so per_device_bs becomes the whole global batch: silently wrong effective batch size"),
    C("fp16=torch.cuda.is_available() and not args.no_fp16,", "amp", "replace", True,
      "fp16=torch.npu.is_available() and not args.no_fp16,",
      "unchanged, mixed precision is silently switched off on NPU and the recipe trains in fp32"),
])

E("tcrbert_launch", "bin/run_pretrain.sh", "explicit_replacement",
  "wukevin/tcr-bert-style launcher for multi-GPU pretraining (torch.distributed.launch)", [
    C("NGPU=${3:-$(nvidia-smi -L | wc -l)}", "torch_cuda_api", "replace", True,
      "NGPU=${3:-$(npu-smi info -l | awk '/Total Count/{print $4}')}",
      "nvidia-smi not found; with set -o pipefail/-e the script exits before training"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "card selection is ignored by the Ascend runtime; a user-chosen subset would silently be replaced by 0..N-1"),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "CANN environment for torch_npu/HCCL (libascendcl, libhccl); set +u because the script runs with nounset "
      "and set_env.sh extends possibly-unset variables (unconfirmed which ones)"),
    C('echo "[$(date)] pretraining on ${NGPU} GPU(s): ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      'echo "[$(date)] pretraining on ${NGPU} NPU(s): ${ASCEND_RT_VISIBLE_DEVICES}"',
      "once the export above is ported CUDA_VISIBLE_DEVICES may be unset, and set -u aborts on this echo"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True,
      'npu-smi info | tee "${OUTDIR}/npus.txt"',
      "nvidia-smi not found; pipefail + set -e abort the run"),
])

E("tcrbert_env", "environment.yml", "explicit_replacement",
  "wukevin/tcr-bert environment.yml", [
    C("cudatoolkit=11.1", "torch_cuda_api", "removal", False, None,
      "CUDA toolkit is unused on an Ascend host (unconfirmed whether it blocks the solve on aarch64)"),
    C("pytorch=1.9.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu for torch 1.9; torch_npu 2.1.0.postN needs torch 2.1.0"),
    C("transformers==4.4.2", "distributed_framework", "replace", True, "- transformers>=4.32.0",
      "HF Trainer/pipelines only place models on NPU (and pick hccl) from transformers 4.32.0; 4.4.2 silently "
      "trains on the CPU"),
    C("=- gdown", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "torch_npu itself (pip only)"),
])

# ---------------------------------------------------------------- ATM-TCR (Lee-CBG)

E("atmtcr_main", "main.py", "explicit_replacement",
  "Lee-CBG/ATM-TCR main.py (train/test entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, "entry script uses torch.npu.*"),
    C("if torch.cuda.is_available() and not args.cuda:", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and not args.cuda:", "only prints a hint"),
    C("args.cuda = args.cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = args.cuda and torch.npu.is_available()",
      "--cuda True is silently downgraded to CPU on an NPU host"),
    C("device = torch.device('cuda' if args.cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if args.cuda else 'cpu')", "model/batch device"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed(args.seed)",
      "lazily queued and never applied without CUDA: NPU RNG (dropout) silently unseeded"),
])

E("atmtcr_attention", "attention.py", "explicit_replacement",
  "Lee-CBG/ATM-TCR attention.py (Net)", [])

E("atmtcr_loader", "data_loader.py", "explicit_replacement",
  "Lee-CBG/ATM-TCR data_loader.py", [
    C("num_workers=num_workers, pin_memory=pin_memory, drop_last=False)", "pin_memory", "replace", False,
      "num_workers=num_workers, pin_memory=pin_memory, pin_memory_device='npu' if pin_memory else '', drop_last=False)",
      "performance only: without pin_memory_device the DataLoader decides pinning from torch.cuda.is_available() "
      "and skips it on NPU hosts (unconfirmed whether torch_npu patches this)"),
])

E("atmtcr_utils", "utils.py", "explicit_replacement",
  "Lee-CBG/ATM-TCR utils.py (metrics, blackbox output)", [])

E("atmtcr_reqs", "requirements.txt", "explicit_replacement",
  "Lee-CBG/ATM-TCR requirements (pip)", [
    C("torch==1.9.0+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA-local wheel; there is no +cu111 wheel for aarch64 and torch_npu needs torch 2.1.0 exactly"),
    C("=numpy>=1.19", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "torch_npu itself"),
])
