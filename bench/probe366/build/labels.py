"""Labels for probe366: pre-LLM open-domain dialogue systems (ParlAI / Blender, DialoGPT,
HF transfer-learning-conv-ai, DialogRPT, CDial-GPT, a PyTorch port of PLATO).

One label per upstream line a careful porter edits for Ascend NPU (explicit torch_npu port,
no transfer_to_npu). See README.md for the policy and the judgement calls.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------------------------
# ParlAI (Blender era, ~2020)
# --------------------------------------------------------------------------------------------
E("parlai_utils_torch", "parlai/utils/torch.py", X,
  "facebookresearch/ParlAI parlai/utils/torch.py (padded_tensor, PipelineHelper for --model-parallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "    import torch_npu  # noqa: F401",
      "parlai.utils.torch is imported by every torch agent before any torch.npu.* call; "
      "with torch 2.1 + torch_npu the torch.npu namespace only exists after this import"),
    C("output = output.cuda()", "tensor_to_device", "replace", True,
      "        output = output.npu()", "padded batches must land on the NPU the model lives on"),
    C("output = output.to(device)", "device_type", "replace", True,
      "            output = output.to(f'npu:{device}')",
      "an int device in Tensor.to() means a CUDA ordinal; must be an explicit npu:<i>"),
    C("return output.cuda()", "tensor_to_device", "replace", True,
      "        return output.npu()", "padded_3d candidate tensors"),
    C("tokens = tokens.cuda()", "tensor_to_device", "replace", True,
      "        tokens = tokens.npu()", "concat_without_padding (poly/bi-encoder rankers)"),
    C("segments = segments.cuda()", "tensor_to_device", "replace", True,
      "        segments = segments.npu()", "same as above"),
    C("self.num_devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "        self.num_devices = torch.npu.device_count()",
      "returns 0 on an NPU host: no devices to place layers on, min() over empty list fails"),
    C("d = f'cuda:{i}'", "device_type", "replace", True,
      "            d = f'npu:{i}'", "model-parallel device names"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "        if not torch.npu.is_available():",
      "otherwise --model-parallel true always raises on an NPU host"),
    C("self.__device_allocations['cuda:0']", "device_type", "replace", True,
      "        self.__device_allocations['npu:0'] += trainable_parameters(model) * 3",
      "KeyError once the allocation table is keyed by npu:<i>"),
    C("return parameter.to('cuda:0')", "device_type", "replace", True,
      "            return parameter.to('npu:0')",
      "embeddings/optimizer-side params of the pipelined Blender 2.7B/9.4B models. "
      "The method name _move_rest_to_cuda0 is left as is (cosmetic)"),
    C("mostfree = 'cuda:0'", "device_type", "replace", True,
      "                mostfree = 'npu:0'", "KeyError on the npu-keyed allocation table otherwise"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "            num_gpus = torch.npu.device_count()  # type: ignore",
      "0 on an NPU host -> integer division by zero in guess_split_size"),
])

E("parlai_torch_agent", "parlai/core/torch_agent.py", X,
  "facebookresearch/ParlAI parlai/core/torch_agent.py (device selection, optimizer table, gpu_mem metric)", [
    C("import apex.optimizers.fused_adam as fused_adam", "fused_optimizer", "replace", False,
      "            from torch_npu.optim import NpuFusedAdam",
      "apex FusedAdam needs the amp_C/fused_adam_cuda kernels; only matters if the user picks "
      "--optimizer fused_adam (Blender recipes use adam/adamax)"),
    C("import apex.optimizers.fused_lamb as fused_lamb", "fused_optimizer", "replace", False,
      "            from torch_npu.optim import NpuFusedLamb", "same, for --optimizer fused_lamb"),
    C("optims['fused_adam'] = fused_adam.FusedAdam", "fused_optimizer", "replace", False,
      "            optims['fused_adam'] = NpuFusedAdam", "opt-in optimizer choice"),
    C("optims['fused_lamb'] = fused_lamb.FusedLAMB", "fused_optimizer", "replace", False,
      "            optims['fused_lamb'] = NpuFusedLamb", "opt-in optimizer choice"),
    C("self.use_cuda = not opt['no_cuda'] and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "        self.use_cuda = not opt['no_cuda'] and torch.npu.is_available()",
      "use_cuda gates every .npu() move, fp16 and model parallel; the attribute name is kept"),
    C("torch.cuda.set_device(opt['gpu'])", "torch_cuda_api", "replace", True,
      "                torch.npu.set_device(opt['gpu'])", "--gpu N"),
    C("devices = range(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "            devices = range(torch.npu.device_count())",
      "empty range -> memory_avail stays 0 -> ZeroDivisionError in report() every log interval"),
    C("props = torch.cuda.get_device_properties(dev)", "torch_cuda_api", "replace", True,
      "            props = torch.npu.get_device_properties(dev)",
      "raises without CUDA; NPU properties do carry total_memory"),
    C("memory_used += torch.cuda.memory_allocated(dev) + torch.cuda.memory_cached(dev)", "torch_cuda_api",
      "replace", False,
      "            memory_used += torch.npu.memory_allocated(dev) + torch.npu.memory_reserved(dev)",
      "returns 0 silently on an NPU host; only the gpu_mem metric is wrong"),
])

E("parlai_tga", "parlai/core/torch_generator_agent.py", X,
  "facebookresearch/ParlAI parlai/core/torch_generator_agent.py (model placement, dummy batch for OOM sync)", [
    C("=self.model.cuda()", "tensor_to_device", "replace", True,
      "                    self.model.npu()", "single-device placement (non model-parallel)"),
    C("=self.criterion.cuda()", "tensor_to_device", "replace", False,
      "                self.criterion.npu()",
      "CrossEntropyLoss/FP16SafeCrossEntropy without class weights hold no tensors, so "
      ".cuda() is a no-op that does not fail; changed for consistency only"),
    C("self.model = torch.nn.DataParallel(self.model)", "distributed_framework", "replace", False,
      "            raise RuntimeError('--data-parallel (torch.nn.DataParallel) is unsupported on Ascend NPU; use multiprocessing_train')",
      "DataParallel is unsupported on NPU, but only reached with the opt-in --data-parallel flag"),
    C("=.cuda()", "tensor_to_device", "replace", True,
      "            .npu()", "dummy text_vec used to pre-allocate and to resync workers after an OOM"),
    C("label_vec = torch.LongTensor([self.END_IDX, self.NULL_IDX])", "tensor_to_device", "replace", True,
      "        label_vec = torch.LongTensor([self.END_IDX, self.NULL_IDX]).unsqueeze(0).expand(batchsize, 2).npu()",
      "dummy label_vec"),
])

E("parlai_ranker", "parlai/core/torch_ranker_agent.py", X,
  "facebookresearch/ParlAI parlai/core/torch_ranker_agent.py (fixed-candidate vecs/encodings)", [
    C("=self.model.cuda()", "tensor_to_device", "replace", True,
      "                    self.model.npu()", "model placement"),
    C("self.model = torch.nn.DataParallel(self.model)", "distributed_framework", "replace", False,
      "                    raise RuntimeError('--data-parallel (torch.nn.DataParallel) is unsupported on Ascend NPU')",
      "opt-in --data-parallel only"),
    C("=self.criterion.cuda()", "tensor_to_device", "replace", False,
      "                self.criterion.npu()", "loss module without tensors: no-op either way"),
    C("self.fixed_candidate_vecs = self.fixed_candidate_vecs.cuda()", "tensor_to_device", "replace", True,
      "                    self.fixed_candidate_vecs = self.fixed_candidate_vecs.npu()",
      "fixed candidates are scored against NPU context encodings"),
    C("self.fixed_candidate_encs = self.fixed_candidate_encs.cuda()", "tensor_to_device", "replace", True,
      "                        self.fixed_candidate_encs = self.fixed_candidate_encs.npu()",
      "cached candidate encodings are matmul'ed with NPU tensors"),
])

E("parlai_distributed", "parlai/utils/distributed.py", X,
  "facebookresearch/ParlAI parlai/utils/distributed.py (all_gather_list, distributed_context)", [
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", "replace", True,
      "        all_gather_list._buffer = torch.npu.ByteTensor(buffer_size)",
      "the all_reduce buffer must live on the NPU for an HCCL group"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", "replace", False,
      "        all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device='npu')",
      "unconfirmed: whether a bare pin_memory() defaults to the NPU allocator on torch 2.1 + torch_npu"),
    C("gpu = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "        gpu = rank % torch.npu.device_count()", "modulo by 0 on an NPU host"),
    C("torch.cuda.set_device(opt['gpu'])", "torch_cuda_api", "replace", True,
      "            torch.npu.set_device(opt['gpu'])", "per-worker device"),
    C('backend="nccl",', "dist_backend", "replace", True,
      '            backend="hccl",', "NCCL does not exist on Ascend"),
    C("torch.cuda.init()", "torch_cuda_api", "replace", True,
      "        torch.npu.init()", "torch.cuda.init() raises on a CPU-only torch build"),
])

E("parlai_mp_train", "parlai/scripts/multiprocessing_train.py", X,
  "facebookresearch/ParlAI parlai/scripts/multiprocessing_train.py", [
    C("parser.set_defaults(distributed_world_size=torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "    parser.set_defaults(distributed_world_size=torch.npu.device_count())",
      "default world size 0 -> nprocs=-1 / wrong world size"),
])

E("parlai_transformer_modules", "parlai/agents/transformer/modules.py", X,
  "facebookresearch/ParlAI parlai/agents/transformer/modules.py (2020, optional apex FusedLayerNorm)", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as LayerNorm", "custom_cuda_extension",
      "replace", True, "    from torch.nn import LayerNorm",
      "Ascend's apex patch has no fused_layer_norm_cuda: whenever apex is importable the import succeeds "
      "and every LayerNorm construction fails"),
    C("APEX_LAYER_NORM = True", "custom_cuda_extension", "replace", True,
      "    APEX_LAYER_NORM = False",
      "if left True, _normalize enters torch.cuda.device(<npu tensor device>) which rejects a non-CUDA device"),
    C("with torch.cuda.device(tensor.device):", "torch_cuda_api", "replace", False,
      "        with torch.npu.device(tensor.device):",
      "dead once APEX_LAYER_NORM is False; changed for safety"),
])

E("parlai_fp16", "parlai/utils/fp16.py", X,
  "facebookresearch/ParlAI parlai/utils/fp16.py (SafeFP16Optimizer, apex FP16_Optimizer wrapper)", [])

E("parlai_hf_dialogpt", "parlai/agents/hugging_face/dialogpt.py", X,
  "facebookresearch/ParlAI parlai/agents/hugging_face/dialogpt.py", [])

E("parlai_blender_slurm", "projects/blender/finetune_blender_slurm.sh", X,
  "SLURM launcher for the Blender 2.7B BST fine-tune (commands as in ParlAI projects/recipes)", [
    C("#SBATCH --gres=gpu:8", "env_var", "replace", False, "#SBATCH --gres=npu:8",
      "unconfirmed: the GRES name for NPUs is site configuration"),
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN runtime environment for torch_npu/HCCL in every task"),
    C("=nvidia-smi", "device_capability_check", "replace", True, "npu-smi info",
      "under set -e a missing nvidia-smi aborts the job"),
    C("export NCCL_SOCKET_IFNAME=^docker0,lo", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=^docker0,lo",
      "inert on NPU; HCCL's default NIC order already puts docker/lo last"),
])

# --------------------------------------------------------------------------------------------
# DialoGPT (microsoft/DialoGPT)
# --------------------------------------------------------------------------------------------
E("dialogpt_lsp_train", "LSP_train.py", X, "microsoft/DialoGPT LSP_train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch.npu namespace"),
    C("logger.info('CUDA available? {}'", "torch_cuda_api", "replace", False,
      "    logger.info('NPU available? {}'.format(str(torch.npu.is_available())))", "log line only"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      '    device = torch.device("npu" if torch.npu.is_available() else "cpu")', "single-process device"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "    n_gpu = torch.npu.device_count()",
      "with the DataParallel line removed n_gpu only names the output dir and gates the "
      "redundant cuda seeding; 0 does not break anything"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "    torch.npu.set_device(args.local_rank)", "distributed branch"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      '    device = torch.device("npu", args.local_rank)', "distributed branch"),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "    torch.distributed.init_process_group(backend='hccl')", ""),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)",
      "torch.random.manual_seed on the line above already seeds registered devices "
      "(unconfirmed for torch 2.1 + torch_npu)"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "    torch.npu.manual_seed_all(args.seed)", "same as above"),
    C("from apex.optimizers import FP16_Optimizer", "amp", "replace", True,
      "        from apex.fp16_utils import FP16_Optimizer",
      "apex.optimizers.FP16_Optimizer drives FusedAdam's step(grads=, output_params=, scale=) API; "
      "with a torch_npu fused optimizer the generic (pure-Python) apex.fp16_utils wrapper is needed"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "        from torch_npu.optim import NpuFusedAdam as FusedAdam",
      "--fp16 defaults to true; apex FusedAdam needs CUDA kernels"),
    C("bias_correction=False,", "fused_optimizer", "removal", True, None,
      "NpuFusedAdam has no bias_correction kwarg (TypeError); note it always bias-corrects"),
    C("=max_grad_norm=1.0)", "fused_optimizer", "replace", True, "                          )",
      "NpuFusedAdam has no max_grad_norm kwarg; clipping has to move to "
      "FP16_Optimizer.clip_master_grads (not labelled, see README)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "            torch.npu.empty_cache()", "no-op on an NPU host; memory hygiene only"),
])

E("dialogpt_train_utils", "gpt2_training/train_utils.py", X, "microsoft/DialoGPT gpt2_training/train_utils.py", [
    C("model_state_dict = torch.load(checkpoint)", "tensor_to_device", "replace", False,
      "        model_state_dict = torch.load(checkpoint, map_location='cpu')",
      "unconfirmed whether the released .pkl checkpoints hold CUDA storages; if they do, loading fails "
      "on a host without CUDA"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "single-process runs on a multi-NPU host reach DataParallel (unsupported on NPU); the if-block "
      "keeps its logging line"),
])

E("dialogpt_distributed", "gpt2_training/distributed.py", X,
  "microsoft/DialoGPT gpt2_training/distributed.py (OpenNMT-derived)", [
    C("all_gather_list._in_buffer = torch.cuda.ByteTensor(max_size)", "torch_cuda_api", "replace", True,
      "        all_gather_list._in_buffer = torch.npu.ByteTensor(max_size)", "HCCL all_gather buffers"),
    C("=torch.cuda.ByteTensor(max_size)", "torch_cuda_api", "replace", True,
      "            torch.npu.ByteTensor(max_size)", "output buffers"),
    C("torch.distributed.all_gather(out_buffers, in_buffer.cuda())", "tensor_to_device", "replace", True,
      "    torch.distributed.all_gather(out_buffers, in_buffer.npu())",
      "in_buffer is already an NPU tensor; .cuda() would try to copy it to a CUDA device"),
])

E("dialogpt_eval_utils", "gpt2_training/eval_utils.py", X, "microsoft/DialoGPT gpt2_training/eval_utils.py", [])

E("dialogpt_dockerfile", "Dockerfile", X, "microsoft/DialoGPT Dockerfile (CUDA base + conda env + apex)", [
    C("FROM nvidia/cuda:10.0-cudnn7-devel-ubuntu18.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
      "need a CANN-enabled base; the exact image tag is unconfirmed"),
    C("RUN git clone https://github.com/NVIDIA/apex /tmp/apex", "amp", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex /tmp/apex && \\",
      "Ascend apex patch (FP16_Optimizer path, --fp16 defaults to true); repo URL per Ascend docs"),
    C('--global-option="--cuda_ext"', "amp", "replace", True,
      "    bash scripts/build.sh --python=3.9 && pip install apex/dist/apex-*.whl && \\",
      "no CUDA extensions to build; the build-script/wheel path is unconfirmed"),
])

E("dialogpt_env", "LSP-linux.yml", X, "microsoft/DialoGPT LSP-linux.yml (conda env)", [
    C("=- python=3.6", "import_torch_npu", "replace", True, "  - python=3.9",
      "torch 2.1 / torch_npu 2.1 need Python >= 3.8"),
    C("=- cudatoolkit=10.0", "import_torch_npu", "replace", False, "  - cpuonly",
      "torch_npu is installed over a CPU torch; a stray cudatoolkit is unused but harmless"),
    C("=- pytorch=1.2.0", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "torch_npu wheels exist only for torch >= 1.11; must match torch_npu exactly"),
    C("- pytorch-pretrained-bert==0.6.2", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.1.0.post10", "the NPU backend itself (pairs with CANN 8.0.0)"),
])

# --------------------------------------------------------------------------------------------
# huggingface/transfer-learning-conv-ai
# --------------------------------------------------------------------------------------------
E("hfconvai_train", "train.py", X, "huggingface/transfer-learning-conv-ai train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('parser.add_argument("--device", type=str, default="cuda" if torch.cuda.is_available()', "device_type",
      "replace", True,
      '    parser.add_argument("--device", type=str, default="npu" if torch.npu.is_available() else "cpu", help="Device (npu or cpu)")',
      "default device string used by model.to and every batch .to"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_device(args.local_rank)", ""),
    C('args.device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      '        args.device = torch.device("npu", args.local_rank)', ""),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace",
      True, "        torch.distributed.init_process_group(backend='hccl', init_method='env://')", ""),
])

E("hfconvai_interact", "interact.py", X, "huggingface/transfer-learning-conv-ai interact.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('parser.add_argument("--device", type=str, default="cuda"', "device_type", "replace", True,
      '    parser.add_argument("--device", type=str, default="npu" if torch.npu.is_available() else "cpu", help="Device (npu or cpu)")',
      ""),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "        torch.npu.manual_seed(args.seed)",
      "torch.random.manual_seed above already seeds registered devices (unconfirmed for 2.1)"),
])

E("hfconvai_reqs", "requirements.txt", X, "huggingface/transfer-learning-conv-ai requirements.txt", [
    C("=torch", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the torch line also needs pinning to 2.1.0 to match (same line, one label)"),
])

# --------------------------------------------------------------------------------------------
# DialogRPT (golsun/DialogRPT)
# --------------------------------------------------------------------------------------------
E("dialogrpt_model", "src/model.py", X, "golsun/DialogRPT src/model.py", [
    C("ids = ids.cuda()", "tensor_to_device", "replace", True, "                ids = ids.npu()",
      "opt.cuda is a bool flag set from torch.npu.is_available() after the port; name kept"),
    C("=scorer.cuda()", "tensor_to_device", "replace", True, "                scorer.npu()",
      "JointScorer sub-models"),
])

E("dialogrpt_score", "src/score.py", X, "golsun/DialogRPT src/score.py", [
    C("=import torch, os, pdb", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script (python src/score.py ...)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "            model.npu()", ""),
    C("cuda = False if args.cpu else torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "    cuda = False if args.cpu else torch.npu.is_available()", "otherwise silently scores on CPU"),
])

E("dialogrpt_feeder", "src/feeder.py", X, "golsun/DialogRPT src/feeder.py", [
    C("ids_pos = ids_pos.cuda()", "tensor_to_device", "replace", True, "            ids_pos = ids_pos.npu()", ""),
    C("ids_neg = ids_neg.cuda()", "tensor_to_device", "replace", True, "            ids_neg = ids_neg.npu()", ""),
])

E("dialogrpt_master", "src/master.py", X, "golsun/DialogRPT src/master.py", [
    C("self._model = self._model.cuda()", "tensor_to_device", "replace", True,
      "            self._model = self._model.npu()", ""),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "        n_gpu = torch.npu.device_count()",
      "once the DataParallel line is replaced it only feeds a print"),
    C("self.model = torch.nn.DataParallel(self._model)", "distributed_framework", "replace", True,
      "            self.model = self._model  # torch.nn.DataParallel is unsupported on Ascend NPU",
      "reached on any multi-NPU host once device_count is ported"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "                    ss.append('GPU mem %.1fG' % (torch.npu.max_memory_allocated() / 1e9))",
      "log metric only (0 on an NPU host)"),
])

E("dialogrpt_main", "src/main.py", X, "golsun/DialogRPT src/main.py", [
    C("=import argparse, torch, time, pdb", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script (python src/main.py train ...)"),
    C("if args.cpu or not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "        if args.cpu or not torch.npu.is_available():", "otherwise trains on CPU silently"),
])

# --------------------------------------------------------------------------------------------
# CDial-GPT (thu-coai/CDial-GPT)
# --------------------------------------------------------------------------------------------
E("cdial_train", "train.py", X, "thu-coai/CDial-GPT train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('default="cuda" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
      '    parser.add_argument("--device", type=str, default="npu" if torch.npu.is_available() else "cpu",',
      ""),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_device(args.local_rank)", ""),
    C('args.device = "cuda:%d" % args.local_rank', "device_type", "replace", True,
      '        args.device = "npu:%d" % args.local_rank', ""),
    C("backend='nccl'", "dist_backend", "replace", True,
      "        torch.distributed.init_process_group(backend='hccl', init_method='env://')", ""),
])

E("cdial_interact", "interact.py", X, "thu-coai/CDial-GPT interact.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('default="cuda" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
      '    parser.add_argument("--device", type=str, default="npu" if torch.npu.is_available() else "cpu",',
      ""),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "    torch.npu.manual_seed(args.seed)", "redundant after torch.random.manual_seed (unconfirmed for 2.1)"),
])

E("cdial_inputter", "od/inputters/inputter.py", X, "thu-coai/CDial-GPT od/inputters/inputter.py", [
    C('pin_memory=(args.device == "cuda"),', "pin_memory", "replace", False,
      '                              pin_memory=(args.device == "npu"),',
      "after the port the comparison is always False, so pinning is silently off: performance only"),
])

# --------------------------------------------------------------------------------------------
# PLATO, PyTorch port (original: PaddlePaddle Research/NLP/Dialogue-PLATO)
# --------------------------------------------------------------------------------------------
E("plato_run", "run.py", X, "PyTorch ports of Baidu PLATO run.py (original is PaddlePaddle)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('init_process_group(backend="nccl"', "dist_backend", "replace", True,
      '        torch.distributed.init_process_group(backend="hccl", init_method="env://")', ""),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_device(local_rank)", ""),
    C('hparams.device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      '        hparams.device = torch.device(f"npu:{local_rank}")', ""),
    C("hparams.use_gpu = hparams.use_gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "        hparams.use_gpu = hparams.use_gpu and torch.npu.is_available()",
      "use_gpu would silently become False (CPU training)"),
    C('hparams.device = torch.device("cuda" if hparams.use_gpu else "cpu")', "device_type", "replace", True,
      '        hparams.device = torch.device("npu" if hparams.use_gpu else "cpu")', ""),
    C("return array.cuda() if hparams.use_gpu else array", "tensor_to_device", "replace", True,
      "        return array.npu() if hparams.use_gpu else array", "every batch goes through to_tensor"),
])

E("plato_trainer", "plato/trainer.py", X, "PyTorch ports of Baidu PLATO plato/trainer.py", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
      "        self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "the shipped launcher passes --use_amp true; a CUDA GradScaler disables itself on an NPU host, "
      "so NPU fp16 autocast would run without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "            with torch.npu.amp.autocast(enabled=self.use_amp):",
      "left as CUDA autocast it is just inactive on NPU tensors: fp32 training, correct but slower"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "                torch.npu.synchronize()", "raises on an NPU host (CUDA lazy init)"),
    C("torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      '                    avg_time += f"   Mem-{torch.npu.max_memory_allocated() / 2 ** 30:.1f}G"',
      "log metric only"),
])

E("plato_model_base", "plato/models/model_base.py", X, "PyTorch ports of Baidu PLATO plato/models/model_base.py", [
    C("model = model.cuda()", "tensor_to_device", "replace", True, "            model = model.npu()", ""),
])

E("plato_unified", "plato/models/unified_transformer.py", X,
  "PyTorch ports of Baidu PLATO plato/models/unified_transformer.py (mask/latent excerpt)", [
    C("sequence_mask = sequence_mask.cuda()", "tensor_to_device", "replace", True,
      "            sequence_mask = sequence_mask.npu()", "causal mask multiplied with NPU masks"),
])

E("plato_script", "scripts/DailyDialog/multi_gpu_train.sh", X,
  "PLATO scripts/DailyDialog/*train.sh, torch.distributed.launch variant", [
    C("=set -ux", "env_var", "npu_only_addition", True, SET_ENV,
      "insert BEFORE set -u: set_env.sh expands possibly-unset variables"),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime"),
    C("GPU_NUM=$(echo $CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "GPU_NUM=$(echo $ASCEND_RT_VISIBLE_DEVICES | awk -F ',' '{print NF}')",
      "with set -u the renamed export leaves $CUDA_VISIBLE_DEVICES unbound and the script aborts"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "inert on NPU; log-level mapping unconfirmed"),
])
