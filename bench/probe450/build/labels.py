"""Labels for probe450 (fact verification / claim detection / rumour & misinformation detectors).

One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port:
torch.npu.*, 'npu', hccl, no transfer_to_npu). `required` = with every other label ported, would
leaving this one line unchanged fail / compute wrong / silently do the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"
SEED_NOTE = ("seeding only: torch.manual_seed() a few lines above already seeds every device generator "
             "(torch>=2.1 also seeds the registered PrivateUse1 backend) and torch.cuda.manual_seed* is a silent "
             "no-op without CUDA, so nothing fails; port for clarity (NPU seeding via torch.manual_seed unconfirmed "
             "in /work/shared/knowledge)")
CKPT_NOTE = ("checkpoint was written from a CUDA model; deserialising CUDA storages on a host without CUDA raises "
             "('Attempting to deserialize object on a CUDA device'), so load to CPU and let load_state_dict copy "
             "into the NPU parameters")
IMPORT_NOTE = ("entry point: import torch_npu right after torch so the torch.npu namespace / 'npu' device exist "
               "(autoload only from torch_npu 2.5.1; the pinned stack here is 2.1)")

# ---------------------------------------------------------------- KGAT (thunlp/KernelGAT)
E("kgat_train", "kgat/train.py", X, "thunlp/KernelGAT kgat/train.py (BERT + kernel graph attention trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "False on an NPU host, so the DataLoader keeps batches on CPU while the model sits on the NPU"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("pretrained_dict = torch.load(args.postpretrain)['model']", "tensor_to_device", "replace", True,
      "pretrained_dict = torch.load(args.postpretrain, map_location='cpu')['model']", CKPT_NOTE),
    C("bert_model = bert_model.cuda()", "tensor_to_device", "replace", True,
      "bert_model = bert_model.npu()", ".cuda() on an NPU-only host raises"),
    C("model = nn.DataParallel(ori_model)", "distributed_framework", "replace", True,
      "model = ori_model",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 (torch_api_npu_support_2.7.1.tsv); KGAT trains "
      "on one device, so drop the wrapper (multi-NPU would need DDP + hccl)"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "moves the kernel/projection layers; .cuda() raises without CUDA"),
])

E("kgat_models", "kgat/models.py", X, "thunlp/KernelGAT kgat/models.py (inference_model with RBF kernels)", [
    C("self.mu = Variable(torch.FloatTensor(kernal_mus", "tensor_to_device", "replace", True,
      "self.mu = Variable(torch.FloatTensor(kernal_mus(self.kernel)), requires_grad=False).view(1, 1, 1, 21).npu()",
      "kernel centres are plain attributes (not buffers), created on the device in __init__; .cuda() raises"),
    C("self.sigma = Variable(torch.FloatTensor(kernel_sigmas", "tensor_to_device", "replace", True,
      "self.sigma = Variable(torch.FloatTensor(kernel_sigmas(self.kernel)), requires_grad=False).view(1, 1, 1, 21).npu()",
      "same as mu"),
    C("idx = torch.LongTensor([index]).cuda()", "tensor_to_device", "replace", True,
      "idx = torch.LongTensor([index]).npu()", "index for index_select on NPU hidden states"),
])

E("kgat_data_loader", "kgat/data_loader.py", X, "thunlp/KernelGAT kgat/data_loader.py (hand-rolled batch iterator)", [
    C("inp_tensor_input = inp_tensor_input.cuda()", "tensor_to_device", "replace", True,
      "inp_tensor_input = inp_tensor_input.npu()", "train-set batch to device"),
    C("msk_tensor_input = msk_tensor_input.cuda()", "tensor_to_device", "replace", True,
      "msk_tensor_input = msk_tensor_input.npu()", "train-set batch to device"),
    C("seg_tensor_input = seg_tensor_input.cuda()", "tensor_to_device", "replace", True,
      "seg_tensor_input = seg_tensor_input.npu()", "train-set batch to device"),
    C("lab_tensor = lab_tensor.cuda()", "tensor_to_device", "replace", True,
      "lab_tensor = lab_tensor.npu()", "labels must be on the device of the log-probs for nll_loss"),
    C("inp_tensor_input = inp_tensor_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inp_tensor_input = inp_tensor_input.npu(non_blocking=True)",
      "DataLoaderTest defaults to cuda=True, so this always runs at test time"),
    C("msk_tensor_input = msk_tensor_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "msk_tensor_input = msk_tensor_input.npu(non_blocking=True)", "test-set batch to device"),
    C("seg_tensor_input = seg_tensor_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "seg_tensor_input = seg_tensor_input.npu(non_blocking=True)", "test-set batch to device"),
])

E("kgat_test", "kgat/test.py", X, "thunlp/KernelGAT kgat/test.py (prediction + FEVER submission writer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "args.cuda is never read in test.py (DataLoaderTest is built with its default cuda=True), so leaving it "
      "is harmless; port for consistency"),
    C("bert_model = bert_model.cuda()", "tensor_to_device", "replace", True, "bert_model = bert_model.npu()",
      ".cuda() raises without CUDA"),
    C("model.load_state_dict(torch.load(args.checkpoint)['model'])", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.checkpoint, map_location='cpu')['model'])", CKPT_NOTE),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      ".cuda() raises without CUDA"),
])

E("kgat_bert_model", "kgat/bert_model.py", X,
  "thunlp/KernelGAT kgat/bert_model.py (trimmed pytorch_pretrained_bert modeling copy)", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as BertLayerNorm", "custom_cuda_extension",
      "replace", False, "from torch.nn import LayerNorm as BertLayerNorm",
      "NVIDIA apex FusedLayerNorm needs the fused_layer_norm_cuda extension, which Ascend's apex patch does not "
      "ship; without apex the except-branch fallback is used, so it only fails when some apex is installed "
      "(environment-dependent, unconfirmed); nn.LayerNorm has an NPU kernel"),
])

E("kgat_train_sh", "kgat/train.sh", X, "thunlp/KernelGAT kgat/train.sh (launcher)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced in the shell profile or container image, hence not required"),
    C("CUDA_VISIBLE_DEVICES=1 python train.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python train.py --outdir ../checkpoint/kgat \\",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: the job would silently land on NPU 0 instead of "
      "the chosen card"),
    C("CUDA_VISIBLE_DEVICES=1 python test.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python test.py --outdir ./output/ \\", "same as the train line"),
])

E("kgat_requirements", "requirements.txt", X, "thunlp/KernelGAT requirements.txt", [
    C("torch>=1.0.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu is a separate wheel; it must match torch exactly (torch 2.1.0 <-> torch-npu 2.1.0.postN, "
      "CANN 8.0.0 per the version matrix), so torch also has to resolve to 2.1.0"),
])

# ---------------------------------------------------------------- GEAR (thunlp/GEAR)
E("gear_train", "gear/train.py", X, "thunlp/GEAR gear/train.py (graph-based evidence aggregation trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = args.cuda >= 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = args.cuda >= 0 and torch.npu.is_available()",
      "False on an NPU host -> the whole run silently trains on CPU"),
    C("torch.cuda.set_device(args.cuda)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.cuda)",
      "torch.cuda.set_device raises without CUDA once use_cuda is ported"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)", SEED_NOTE),
    C("    model.cuda()", "tensor_to_device", "replace", True, "    model.npu()", ".cuda() raises without CUDA"),
    C("feature_batch = feature_batch.cuda()", "tensor_to_device", "replace", True,
      "feature_batch = feature_batch.npu()", "batch to device"),
    C("claim_batch = claim_batch.cuda()", "tensor_to_device", "replace", True,
      "claim_batch = claim_batch.npu()", "batch to device"),
    C("label_batch = label_batch.cuda()", "tensor_to_device", "replace", True,
      "label_batch = label_batch.npu()", "batch to device"),
    C("data = [t.cuda() for t in data]", "tensor_to_device", "replace", True,
      "data = [t.npu() for t in data]", "dev batches to device"),
])

E("gear_models", "gear/models.py", X, "thunlp/GEAR gear/models.py (SelfAttentionLayer / GEAR)", [
    C("idx = torch.LongTensor([index]).cuda()", "tensor_to_device", "replace", True,
      "idx = torch.LongTensor([index]).npu()", "index_select index must live with the NPU inputs"),
    C("self.index = torch.LongTensor([0]).cuda()", "tensor_to_device", "replace", True,
      "self.index = torch.LongTensor([0]).npu()",
      "runs in __init__ whatever the pool type, so constructing the model raises without CUDA"),
])

E("gear_utils", "gear/utils.py", X, "thunlp/GEAR gear/utils.py (feature file readers; device-agnostic)", [])

E("gear_test", "gear/test.py", X, "thunlp/GEAR gear/test.py (test-set prediction)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda:%d' % args.cuda)", "device_type", "replace", True,
      "device = torch.device('npu:%d' % args.cuda)",
      "module-level device; map_location=device and .to(device) below follow it"),
])

E("gear_extractor", "feature_extractor/extractor.py", X,
  "thunlp/GEAR feature_extractor/extractor.py (pytorch-pretrained-BERT extract_features adaptation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "otherwise BERT feature extraction silently runs on CPU"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "n_gpu = torch.npu.device_count()",
      "with the DataParallel branch ported, n_gpu only feeds the log line (0 is misleading but harmless)"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "distributed path: per-rank device"),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')", "NCCL does not exist on Ascend; HCCL is the backend"),
    C("model.load_state_dict(torch.load(args.model_checkpoint))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.model_checkpoint, map_location='cpu'))", CKPT_NOTE),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel is unsupported on Ascend; run several NPUs through torchrun + the DDP branch",
      "with n_gpu counting NPUs this branch runs on a multi-NPU host; DataParallel is marked unsupported "
      "(torch_api_npu_support_2.7.1.tsv)"),
])

E("gear_extract_sh", "feature_extractor/extract.sh", X, "thunlp/GEAR feature extraction launcher", [
    C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
      "device mask must use the Ascend runtime variable, else every split runs on NPU 0"),
    C("nvidia-smi --query-gpu=name", "device_capability_check", "replace", False,
      "echo \"Using NPU $GPU ($(npu-smi info -t board -i $GPU | grep -m1 'Product Name'))\"",
      "log only: nvidia-smi is absent, the command substitution fails but echo (and set -e) carry on; note "
      "npu-smi -i takes the NPU id, not the logical id"),
])

# ---------------------------------------------------------------- FEVER baselines (sheffieldnlp/fever-baselines)
E("fever_dockerfile", "Dockerfile", X, "sheffieldnlp/fever-baselines Dockerfile (GPU variant)", [
    C("FROM nvidia/cuda:9.0-cudnn7-runtime-ubuntu16.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
      "needs a CANN toolkit + driver-mount-ready base (tag illustrative, after Ascend/cann-container-image)"),
    C("RUN conda install python=3.6", "import_torch_npu", "replace", True, "RUN conda install python=3.9",
      "torch 2.1 / torch_npu 2.1 support Python 3.8-3.11 only"),
    C("RUN conda install pytorch=0.3.1 torchvision cuda90 -c pytorch", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
      "CUDA 9 PyTorch 0.3.1 has no torch_npu counterpart; oldest supported pairing is torch 1.8.1 (EOL), 2.1.0 is "
      "the long-lived branch"),
])

E("fever_options", "src/common/training/options.py", X, "sheffieldnlp/fever-baselines src/common/training/options.py", [
    C("return torch.cuda.is_available() and int(", "torch_cuda_api", "replace", True,
      "return torch.npu.is_available() and int(os.getenv(\"CUDA_DEVICE\", 0)) >= 0",
      "gpu() gates every device move in the MLP baseline; False on an NPU host -> silent CPU training. "
      "CUDA_DEVICE is the project's own variable, not a CUDA runtime one, so it stays"),
    C("torch.cuda.get_device_name(gpu_id())", "torch_cuda_api", "replace", True,
      "logger.info(\"Training on NPU {0}: {1}\".format(gpu_id(), torch.npu.get_device_name(gpu_id())))",
      "called from run.train(); torch.cuda.get_device_name raises without CUDA"),
])

E("fever_batcher", "src/common/training/batcher.py", X, "sheffieldnlp/fever-baselines src/common/training/batcher.py", [
    C("return Variable(data).cuda(gpu_id())", "tensor_to_device", "replace", True,
      "return Variable(data).npu(gpu_id())", "feature batch to device"),
    C("labels = labels.cuda(gpu_id())", "tensor_to_device", "replace", True,
      "labels = labels.npu(gpu_id())", "labels to device"),
])

E("fever_run", "src/common/training/run.py", X, "sheffieldnlp/fever-baselines src/common/training/run.py", [
    C("model.load_state_dict(torch.load(path))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(path, map_location='cpu'))", CKPT_NOTE + " (released GPU models)"),
    C("return model.cuda(gpu_id())", "tensor_to_device", "replace", True, "return model.npu(gpu_id())",
      ".cuda() raises without CUDA"),
])

E("fever_train_mlp", "src/scripts/rte/mlp/train_mlp.py", X,
  "sheffieldnlp/fever-baselines src/scripts/rte/mlp/train_mlp.py (Riedel MLP baseline)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(SimpleRandom.get_seed())", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(SimpleRandom.get_seed())",
      "seeding only; silent no-op without CUDA (reproducibility, not correctness)"),
    C("model.cuda(gpu_id())", "tensor_to_device", "replace", True, "model.npu(gpu_id())",
      ".cuda() raises without CUDA"),
])

E("fever_model", "src/rte/riedel/model.py", X, "sheffieldnlp/fever-baselines src/rte/riedel/model.py (device-agnostic)", [])

E("fever_train_da", "src/scripts/rte/da/train_da.py", X,
  "sheffieldnlp/fever-baselines src/scripts/rte/da/train_da.py (AllenNLP decomposable attention)", [])

E("fever_config", "config/fever_nn_ora_sent.json", X, "sheffieldnlp/fever-baselines config/fever_nn_ora_sent.json", [])

# ---------------------------------------------------------------- NSMN (easonnie/combine-FEVER-NSMN)
E("nsmn_nli", "src/nli/mesim_wn_simi_v1_2.py", X,
  "easonnie/combine-FEVER-NSMN src/nli/mesim_wn_simi_v1_2.py (ESIM+ELMo+WordNet NLI with EMA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu", index=0)', "device_type", "replace",
      True, 'device = torch.device("npu" if torch.npu.is_available() else "cpu", index=0)',
      "otherwise training silently runs on CPU"),
    C("device_num = -1 if device.type == 'cpu' else 0", "device_type", "replace", True,
      "device_num = -1  # allennlp 0.x iterators can only .cuda(); Model.forward moves batches to the NPU",
      "the int is handed to allennlp's BasicIterator(cuda_device=...), which calls tensor.cuda(0) when >= 0; on an "
      "NPU device it would be 0 and raise. Model.forward already does .to(device), so CPU batches are fine"),
    C("model.load_state_dict(torch.load(resume_model))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(resume_model, map_location='cpu'))", CKPT_NOTE),
])

E("nsmn_doc", "src/nn_doc_retrieval/disabuigation_training.py", X,
  "easonnie/combine-FEVER-NSMN src/nn_doc_retrieval/disabuigation_training.py (neural document matching)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "hard-coded device; model.to(device) raises without CUDA"),
    C("                torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "                torch.npu.empty_cache()",
      "no-op without CUDA; only affects NPU cached-memory release (performance/memory headroom)"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print(\"Peak NPU memory: %.1f MB\" % (torch.npu.max_memory_allocated() / 1024 ** 2))",
      "diagnostic print; without CUDA it reports 0 MB rather than failing (unconfirmed)"),
    C("map_location=lambda storage, loc: storage.cuda(0)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(model_path, map_location='cpu'))",
      "the map_location lambda calls storage.cuda(0), which raises on an NPU-only host"),
    C("model.cuda(0)", "tensor_to_device", "replace", True, "model.npu(0)", ".cuda() raises without CUDA"),
])

E("nsmn_torch_util", "src/flint/torch_util.py", X, "easonnie/combine-FEVER-NSMN src/flint/torch_util.py", [
    C("if inputs.is_cuda:", "device_type", "replace", True, "if inputs.is_npu:",
      "is_cuda is False for NPU tensors, so the mask silently stays on CPU and the later masked op mixes devices"),
    C("mask = mask.cuda(inputs.get_device())", "tensor_to_device", "replace", True,
      "mask = mask.npu(inputs.get_device())", "once the branch is taken, .cuda() raises without CUDA"),
])

E("nsmn_ema", "src/neural_modules/ema.py", X, "easonnie/combine-FEVER-NSMN src/neural_modules/ema.py (device-agnostic)", [])

# ---------------------------------------------------------------- BiGCN (TianBian95/BiGCN)
E("bigcn_twitter", "model/Twitter/BiGCN_Twitter.py", X,
  "TianBian95/BiGCN model/Twitter/BiGCN_Twitter.py (bi-directional GCN rumour detector)", [
    C("import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch_scatter import scatter_mean", "custom_cuda_extension", "replace", True,
      "from torch_geometric.utils import scatter as _scatter; scatter_mean = lambda src, index, dim=0: "
      "_scatter(src, index, dim, reduce='mean')",
      "torch_scatter is a compiled CUDA/CPU extension that picks its kernel from is_cuda and otherwise runs the "
      "CPU kernel, which rejects non-CPU tensors; PyG's scatter is plain torch (scatter_reduce) and runs on NPU"),
    C("device = th.device('cuda:0' if th.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = th.device('npu:0' if th.npu.is_available() else 'cpu')",
      "module-level device used by every .to(device); otherwise silently CPU"),
])

E("bigcn_weibo", "model/Weibo/BiGCN_Weibo.py", X, "TianBian95/BiGCN model/Weibo/BiGCN_Weibo.py", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "1"', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "1"',
      "set before torch is imported; the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so the job would take NPU 0"),
    C("import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch_scatter import scatter_mean", "custom_cuda_extension", "replace", True,
      "from torch_geometric.utils import scatter as _scatter; scatter_mean = lambda src, index, dim=0: "
      "_scatter(src, index, dim, reduce='mean')", "see bigcn_twitter"),
    C("model = Net(5000, 64, 64).cuda()", "tensor_to_device", "replace", True,
      "model = Net(5000, 64, 64).npu()", ".cuda() raises without CUDA"),
    C("Batch_data = Batch_data.cuda()", "tensor_to_device", "replace", True,
      "Batch_data = Batch_data.to('npu')", "PyG Batch has .cuda() but no .npu(); use .to('npu')"),
    C("Batch_data = Batch_data.to('cuda')", "device_type", "replace", True,
      "Batch_data = Batch_data.to('npu')", "eval batches"),
    C("th.cuda.empty_cache()", "torch_cuda_api", "replace", False, "th.npu.empty_cache()",
      "no-op without CUDA; memory hygiene between folds only"),
])

E("bigcn_dataset", "Process/dataset.py", X, "TianBian95/BiGCN Process/dataset.py (PyG datasets; device-agnostic)", [])

E("bigcn_earlystop", "tools/earlystopping.py", X, "TianBian95/BiGCN tools/earlystopping.py (device-agnostic)", [])

# ---------------------------------------------------------------- MDFEND (kennqiang/MDFEND-Weibo21)
E("mdfend_main", "main.py", X, "kennqiang/MDFEND-Weibo21 main.py (argparse entry point)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu picks the card; with CUDA_VISIBLE_DEVICES the NPU run silently uses device 0"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      SEED_NOTE),
])

E("mdfend_run", "run.py", X, "kennqiang/MDFEND-Weibo21 run.py (trainer dispatch; no device code)", [])

E("mdfend_utils", "utils/utils.py", X, "kennqiang/MDFEND-Weibo21 utils/utils.py (data2gpu, metrics)", [
    C("'content': batch[0].cuda(),", "tensor_to_device", "replace", True, "'content': batch[0].npu(),",
      "use_cuda is True in the config, so this branch always runs"),
    C("'content_masks': batch[1].cuda(),", "tensor_to_device", "replace", True,
      "'content_masks': batch[1].npu(),", "batch to device"),
    C("'label': batch[2].cuda(),", "tensor_to_device", "replace", True, "'label': batch[2].npu(),",
      "batch to device"),
    C("'category': batch[3].cuda()", "tensor_to_device", "replace", True, "'category': batch[3].npu()",
      "batch to device"),
])

E("mdfend_dataloader", "utils/dataloader.py", X, "kennqiang/MDFEND-Weibo21 utils/dataloader.py", [
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "without CUDA the DataLoader warns and skips pinning; pinning for the NPU is a host-to-device throughput "
      "matter only (pin_memory_device='npu' behaviour unconfirmed)"),
])

E("mdfend_model", "models/mdfend.py", X, "kennqiang/MDFEND-Weibo21 models/mdfend.py (mixture-of-experts FEND + Trainer)", [
    C("idxs = torch.tensor([index for index in category]).view(-1, 1).cuda()", "tensor_to_device", "replace", True,
      "idxs = torch.tensor([index for index in category]).view(-1, 1).npu()",
      "domain ids rebuilt on the host each forward"),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
      ".cuda() raises without CUDA"),
])

E("mdfend_layers", "models/layers.py", X, "kennqiang/MDFEND-Weibo21 models/layers.py (device-agnostic)", [])

E("mdfend_requirements", "requirements.txt", X, "kennqiang/MDFEND-Weibo21 requirements.txt", [
    C("torch==1.8.1+cu102", "import_torch_npu", "replace", True, "torch==2.1.0",
      "a +cu102 local-version wheel cannot back torch_npu; pin the CPU torch matching a torch_npu release "
      "(2.1.0 <-> torch-npu 2.1.0.postN) and add torch-npu next to it"),
])
