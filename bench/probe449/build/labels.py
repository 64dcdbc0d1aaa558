"""Labels for probe449 (visual reasoning / neuro-symbolic VQA: MAC, NS-VQA, FiLM, MDETR, NSCL, OpenVQA).

One entry per file under files/<id>/upstream/<path>; one label per line a careful porter would edit so the
code runs (and runs well) on Ascend NPUs with torch_npu, written as an explicit port (torch.npu.*, 'npu',
hccl; no transfer_to_npu).  See README.md for the policy and the judgement calls.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point that ends up calling torch.npu / 'npu' devices: import torch_npu right after torch "
               "(autoloaded since torch_npu 2.5.1, but still recommended and needed on older stacks)")

# --------------------------------------------------------------------------------------------------
# MAC network, rosinality/mac-network-pytorch
# --------------------------------------------------------------------------------------------------
E("mac_rs_train", "train.py", "explicit_replacement",
  "rosinality/mac-network-pytorch train.py (module-level device global, EMA copy of the net)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "module-level device global; left as is, an NPU host silently trains on the CPU"),
])

E("mac_rs_model", "model.py", "explicit_replacement",
  "rosinality/mac-network-pytorch model.py (Control/Read/Write units, variational dropout mask)", [])

E("mac_rs_imgfeat", "image_feature.py", "explicit_replacement",
  "rosinality/mac-network-pytorch image_feature.py (ResNet-101 conv4 features to HDF5)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("device = 'cuda'", "device_type", "replace", True,
      "device = 'npu'", "hard-coded device string used by resnet.to(device) and image.to(device)"),
    C("num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=4, pin_memory=True, pin_memory_device='npu')",
      "performance only: pinned host buffers for non_blocking copies to the NPU; whether the default "
      "pin target is the NPU depends on the torch version (unconfirmed)"),
])

# --------------------------------------------------------------------------------------------------
# MAC network, tohinz/pytorch-mac-network
# --------------------------------------------------------------------------------------------------
E("mac_th_main", "code/main.py", "explicit_replacement",
  "tohinz/pytorch-mac-network code/main.py (cfg + --gpu flag, CUDA_VISIBLE_DEVICES, seeding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = cfg.GPU_ID', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = cfg.GPU_ID',
      "--gpu N picks the card by masking; the CANN runtime ignores CUDA_VISIBLE_DEVICES, so .npu() would "
      "silently land on device 0 instead of the requested one"),
    C("torch.cuda.manual_seed_all(args.manualSeed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manualSeed)",
      "torch.manual_seed above already seeds the NPU generator in current torch (unconfirmed for old "
      "releases); torch.cuda.manual_seed_all is lazy and does not fail on an NPU host"),
])

E("mac_th_trainer", "code/trainer.py", "explicit_replacement",
  "tohinz/pytorch-mac-network code/trainer.py (train/val loops, EMA model, tensorboardX)", [
    C("self.loss_fn = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "self.loss_fn = torch.nn.CrossEntropyLoss().npu()",
      "CrossEntropyLoss without a weight has no parameters or buffers, so Module.cuda() never touches CUDA; "
      "edited only for consistency"),
    C("image = image.cuda()", "tensor_to_device", "replace", True,
      "image = image.npu()", "batch to device (train loop)"),
    C("question = question.cuda()", "tensor_to_device", "replace", True,
      "question = question.npu()", "batch to device (train loop)"),
    C("answer = answer.cuda().squeeze()", "tensor_to_device", "replace", True,
      "answer = answer.npu().squeeze()", "batch to device (train loop)"),
    C("image, question = image.cuda(), question.cuda()", "tensor_to_device", "replace", True,
      "image, question = image.npu(), question.npu()", "batch to device (validation loop)"),
    C("answer = answer.cuda().view(-1)", "tensor_to_device", "replace", True,
      "answer = answer.npu().view(-1)", "batch to device (validation loop)"),
])

E("mac_th_utils", "code/utils.py", "explicit_replacement",
  "tohinz/pytorch-mac-network code/utils.py (checkpoint helpers, variational dropout mask)", [
    C("randomTensor = torch.tensor(keepProb).cuda().expand(shape)", "tensor_to_device", "replace", True,
      "randomTensor = torch.tensor(keepProb).npu().expand(shape)",
      "the variational-dropout mask is built on the device; runs in every training forward"),
    C("nn.init.uniform_(torch.cuda.FloatTensor(shape[0], shape[1]))", "torch_cuda_api", "replace", True,
      "randomTensor = randomTensor + nn.init.uniform_(torch.npu.FloatTensor(shape[0], shape[1]))",
      "legacy typed CUDA tensor constructor; torch.npu.FloatTensor is the NPU counterpart"),
    C("mask = torch.cuda.FloatTensor(binaryTensor)", "torch_cuda_api", "replace", True,
      "mask = binaryTensor.float()",
      "binaryTensor is already on the NPU; a dtype cast is the device-neutral equivalent"),
])

E("mac_th_mac", "code/mac.py", "explicit_replacement",
  "tohinz/pytorch-mac-network code/mac.py (load_MAC, MAC cell, input/output units)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "left as is the model stays on the CPU while the trainer moves batches to the NPU -> device mismatch"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to device"),
    C("=model_ema.cuda()", "tensor_to_device", "replace", True, "model_ema.npu()", "EMA model to device"),
])

E("mac_th_cfg", "cfgs/clevr_train_mac.yml", "explicit_replacement",
  "tohinz/pytorch-mac-network cfgs/clevr_train_mac.yml", [])

# --------------------------------------------------------------------------------------------------
# NS-VQA (kexinyi/ns-vqa)
# --------------------------------------------------------------------------------------------------
E("nsvqa_attr_options", "scene_parse/attr_net/options.py", "explicit_replacement",
  "kexinyi/ns-vqa scene_parse/attr_net/options.py (--gpu_ids parsing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "first module of the attribute-net tools that touches the device (run_test.py imports no torch itself)"),
    C("if len(self.opt.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(self.opt.gpu_ids) > 0 and torch.npu.is_available():",
      "false on an NPU host -> gpu_ids cleared -> silently runs on the CPU"),
    C("torch.cuda.set_device(self.opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.opt.gpu_ids[0])", "select the device given by --gpu_ids"),
])

E("nsvqa_attr_model", "scene_parse/attr_net/model.py", "explicit_replacement",
  "kexinyi/ns-vqa scene_parse/attr_net/model.py (ResNet-34 attribute network wrapper)", [
    C("self.use_cuda = len(opt.gpu_ids) > 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.use_cuda = len(opt.gpu_ids) > 0 and torch.npu.is_available()",
      "flag name kept; false on an NPU host -> silent CPU run"),
    C("self.net.cuda(opt.gpu_ids[0])", "tensor_to_device", "replace", True,
      "self.net.npu(opt.gpu_ids[0])", "model to the selected device"),
    C("self.net.cuda(self.gpu_ids[0])", "tensor_to_device", "replace", True,
      "self.net.npu(self.gpu_ids[0])", "model back to the device after the CPU state_dict snapshot"),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "inputs/labels to device"),
])

E("nsvqa_attr_runtest", "scene_parse/attr_net/tools/run_test.py", "explicit_replacement",
  "kexinyi/ns-vqa scene_parse/attr_net/tools/run_test.py (derender CLEVR scenes)", [])

E("nsvqa_parser", "reason/models/parser.py", "explicit_replacement",
  "kexinyi/ns-vqa reason/models/parser.py (Seq2seqParser: supervised + REINFORCE)", [
    C("self.seq2seq.cuda(opt.gpu_ids[0])", "tensor_to_device", "replace", True,
      "self.seq2seq.npu(opt.gpu_ids[0])", "model to device"),
    C("self.seq2seq.cuda(self.gpu_ids[0])", "tensor_to_device", "replace", True,
      "self.seq2seq.npu(self.gpu_ids[0])", "model back to device after saving a CPU checkpoint"),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "questions/programs to device"),
])

E("nsvqa_reason_options", "reason/options/base_options.py", "explicit_replacement",
  "kexinyi/ns-vqa reason/options/base_options.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "first module of the reasoning tools that touches torch.npu"),
    C("torch.cuda.set_device(self.opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.opt.gpu_ids[0])",
      "no is_available guard here: unported it raises on an NPU host"),
    C("torch.cuda.manual_seed(self.opt.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(self.opt.manual_seed)",
      "torch.manual_seed just above covers the NPU generator in current torch (unconfirmed); the CUDA call is lazy"),
])

# --------------------------------------------------------------------------------------------------
# FiLM (ethanjperez/film, fork of facebookresearch/clevr-iep)
# --------------------------------------------------------------------------------------------------
E("film_train", "scripts/train_model.py", "explicit_replacement",
  "ethanjperez/film scripts/train_model.py (PG / EE / FiLM / baselines training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("loss_fn = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "loss_fn = torch.nn.CrossEntropyLoss().npu()",
      "parameter-free loss module: .cuda() is a no-op that never initialises CUDA; consistency edit only"),
    C("questions_var = Variable(questions.cuda())", "tensor_to_device", "replace", True,
      "questions_var = Variable(questions.npu())", "batch to device"),
    C("feats_var = Variable(feats.cuda())", "tensor_to_device", "replace", True,
      "feats_var = Variable(feats.npu())", "batch to device"),
    C("answers_var = Variable(answers.cuda())", "tensor_to_device", "replace", True,
      "answers_var = Variable(answers.npu())", "batch to device"),
    C("programs_var = Variable(programs.cuda())", "tensor_to_device", "replace", True,
      "programs_var = Variable(programs.npu())", "ground-truth programs to device (PG / EE)"),
    C("program_generator.reinforce_backward(centered_reward.cuda())", "tensor_to_device", "replace", True,
      "program_generator.reinforce_backward(centered_reward.npu())", "REINFORCE reward to device (PG+EE)"),
    C("=pg.cuda()", "tensor_to_device", "replace", True, "pg.npu()", "program generator / FiLMGen to device"),
    C("=ee.cuda()", "tensor_to_device", "replace", True, "ee.npu()", "execution engine / FiLMedNet to device"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "baseline model to device"),
    C("questions_var = Variable(questions.cuda(), volatile=True)", "tensor_to_device", "replace", True,
      "questions_var = Variable(questions.npu(), volatile=True)", "check_accuracy batch to device"),
    C("feats_var = Variable(feats.cuda(), volatile=True)", "tensor_to_device", "replace", True,
      "feats_var = Variable(feats.npu(), volatile=True)", "check_accuracy batch to device"),
    C("programs_var = Variable(programs.cuda(), volatile=True)", "tensor_to_device", "replace", True,
      "programs_var = Variable(programs.npu(), volatile=True)", "check_accuracy batch to device"),
    C("Variable(questions[i:i+1].cuda(), volatile=True)", "tensor_to_device", "replace", True,
      "program_pred = program_generator.sample(Variable(questions[i:i+1].npu(), volatile=True))",
      "per-question sampling in PG accuracy check"),
])

E("film_extract", "scripts/extract_features.py", "explicit_replacement",
  "ethanjperez/film scripts/extract_features.py (ResNet-101 stage-3 features)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "feature CNN to device"),
    C("image_batch = torch.FloatTensor(image_batch).cuda()", "tensor_to_device", "replace", True,
      "image_batch = torch.FloatTensor(image_batch).npu()", "images to device"),
])

E("film_run", "scripts/run_model.py", "explicit_replacement",
  "ethanjperez/film scripts/run_model.py (dtype-driven device placement via .type(dtype))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("dtype = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True,
      "dtype = torch.npu.FloatTensor",
      "every model/tensor is placed with .type(dtype); this one line is the whole device switch of the script"),
])

E("film_filmednet", "vr/models/filmed_net.py", "explicit_replacement",
  "ethanjperez/film vr/models/filmed_net.py (FiLMedNet, FiLMedResBlock, coord_map)", [
    C("Variable(torch.ones(1, 1, self.module_dim)).type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "self.default_weight = Variable(torch.ones(1, 1, self.module_dim)).type(torch.npu.FloatTensor)",
      "plain tensor attribute (not a buffer), so model.npu() does not move it; built at construction time"),
    C("Variable(torch.zeros(1, 1, self.module_dim)).type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "self.default_bias = Variable(torch.zeros(1, 1, self.module_dim)).type(torch.npu.FloatTensor)",
      "same as default_weight; constructing FiLMedNet fails on an NPU host otherwise"),
    C("x_coord_row = torch.linspace(start, end, steps=n).type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace",
      True, "x_coord_row = torch.linspace(start, end, steps=n).type(torch.npu.FloatTensor)",
      "CoordConv maps are created on the device in __init__ and never moved by .npu()"),
    C("y_coord_row = torch.linspace(start, end, steps=m).type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace",
      True, "y_coord_row = torch.linspace(start, end, steps=m).type(torch.npu.FloatTensor)", "see x_coord_row"),
])

E("film_gen", "vr/models/film_gen.py", "explicit_replacement",
  "ethanjperez/film vr/models/film_gen.py (FiLMGen question encoder / FiLM parameter decoder)", [
    C("if x.is_cuda:", "device_type", "replace", True, "if x.is_npu:",
      "is_cuda is False for NPU tensors, so the end-index would stay on the CPU and the gather below fails"),
    C("idx = idx.cuda()", "tensor_to_device", "replace", True, "idx = idx.npu()", "end-index to the question's device"),
])

E("film_sh", "scripts/train/film.sh", "explicit_replacement",
  "ethanjperez/film scripts/train/film.sh (paper hyper-parameters launcher)", [
    C('checkpoint_path="data/film.pt"', "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for the launcher; usually already sourced in the host/container profile, so not required"),
])

E("film_utils", "vr/utils.py", "explicit_replacement",
  "ethanjperez/film vr/utils.py (checkpoint loading via load_cpu)", [])

# --------------------------------------------------------------------------------------------------
# MDETR (ashkamath/mdetr)
# --------------------------------------------------------------------------------------------------
E("mdetr_main", "main.py", "explicit_replacement",
  "ashkamath/mdetr main.py (args, DDP, CLEVR/GQA QA heads, EMA, checkpoints)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", help="device to use for training / testing")',
      "torch.device(args.device) drives model.to / batch.to everywhere; the launchers never pass --device"),
])

E("mdetr_dist", "util/dist.py", "explicit_replacement",
  "ashkamath/mdetr util/dist.py (detectron2-style all_gather, init_distributed_mode)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend() == "hccl":',
      "backend-string comparison (MDETR_CPU_REDUCE=1 path, used for GQA): unported, the gloo group is never "
      "created and CPU tensors are gathered over HCCL"),
    C('device = "cuda" if cpu_group is None else "cpu"', "device_type", "replace", True,
      'device = "npu" if cpu_group is None else "cpu"', "all_gather staging buffers on the device"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM launch path: device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "bind each rank to its local NPU"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True,
      'args.dist_backend = "hccl"', "NCCL is not available on Ascend"),
])

E("mdetr_misc", "util/misc.py", "explicit_replacement",
  "ashkamath/mdetr util/misc.py (SmoothedValue, MetricLogger, NestedTensor, collate_fn)", [
    C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "device_type", "replace",
      True, 't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
      "metric sync across ranks goes through HCCL, so the tensor must live on the NPU (float64 kept; "
      "HCCL float64 all_reduce support unconfirmed, float32 would be the safe choice)"),
    C("log_memory = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "log_memory = torch.npu.is_available()",
      "only decides whether the 'max mem' column is printed"),
    C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / MB,",
      "with the guard ported this would silently log 0 MB (CUDA allocator never initialised)"),
])

E("mdetr_cfg", "configs/clevr.json", "explicit_replacement",
  "ashkamath/mdetr configs/clevr.json", [])

E("mdetr_req", "requirements.txt", "explicit_replacement",
  "ashkamath/mdetr requirements.txt", [
    C("torch>=1.7.1", "import_torch_npu", "npu_only_addition", False,
      "torch-npu  # must match the installed torch x.y.z (wheel x.y.z[.postN]) and the CANN version",
      "install-time only; an NPU host already has a matching torch_npu, so leaving it out breaks nothing at run time"),
])

E("mdetr_evalclevr", "scripts/eval_clevr.py", "explicit_replacement",
  "ashkamath/mdetr scripts/eval_clevr.py (CLEVR QA prediction dump, .cuda() idiom)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('model_args.device = "cuda"', "device_type", "replace", True,
      'model_args.device = "npu"',
      "overrides the device stored in the checkpoint args; build_model moves the criterion to torch.device(args.device)"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model to device"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',",
      "performance only (pairs with non_blocking copies); default pin target per torch version unconfirmed"),
    C('samples = batch_dict["samples"].to("cuda", non_blocking=True)', "tensor_to_device", "replace", True,
      'samples = batch_dict["samples"].to("npu", non_blocking=True)', "batch to device"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "--benchmark timing; torch.cuda.synchronize raises on a host without CUDA"),
])

# --------------------------------------------------------------------------------------------------
# NSCL (vacancy/NSCL-PyTorch-Release, Jacinle / jactorch)
# --------------------------------------------------------------------------------------------------
E("nscl_trainval", "scripts/trainval.py", "explicit_replacement",
  "vacancy/NSCL-PyTorch-Release scripts/trainval.py (jactorch TrainerEnv, curriculum, JacDataParallel)", [
    C("import torch.cuda as cuda", "torch_cuda_api", "replace", True,
      "import torch_npu.npu as npu  # also registers the NPU backend",
      "module alias used for device_count below; doubles as the torch_npu import of this entry script"),
    C("from jactorch.cuda.copy import async_copy_to", "tensor_to_device", "replace", True,
      "from nscl.utils.npu import async_copy_to  # local helper: recursive .to(f'npu:{dev}', non_blocking=True)",
      "jactorch's async_copy_to walks the feed_dict calling tensor.cuda(dev) on CUDA streams; a small local "
      "replacement keeps the two call sites (incl. main_stream=None) unchanged"),
    C("nr_devs = cuda.device_count()", "torch_cuda_api", "replace", True,
      "nr_devs = npu.device_count()",
      "0 on an NPU host -> 'No GPU device available' assertion"),
    C("args.gpu_parallel = (nr_devs > 1)", "distributed_framework", "replace", True,
      "args.gpu_parallel = False  # JacDataParallel (nn.DataParallel) is not supported on Ascend",
      "multi-NPU hosts would otherwise take the DataParallel path and skip the per-batch device copy"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to device"),
    C("model = JacDataParallel(model, device_ids=args.gpus).cuda()", "distributed_framework", "removal", False,
      None,
      "dead once gpu_parallel is forced off; nn.DataParallel is marked unsupported for NPU, so a porter drops it "
      "(multi-card runs need a DDP+hccl rewrite instead)"),
])

E("nscl_scenegraph", "nscl/nn/scene_graph/scene_graph.py", "explicit_replacement",
  "vacancy/NSCL-PyTorch-Release nscl/nn/scene_graph/scene_graph.py (PrRoIPool-based object/relation features)", [
    C("import jactorch.nn as jacnn", "custom_cuda_extension", "replace", True,
      "from torch_npu.contrib.module import ROIAlign",
      "jacnn.PrRoIPool2D is Precise RoI Pooling, a JIT-built CUDA extension (.cu via cpp_extension.load) "
      "with no NPU build; swap in the NPU RoIAlign"),
    C("self.object_roi_pool = jacnn.PrRoIPool2D(", "unsupported_op_workaround", "replace", True,
      "self.object_roi_pool = ROIAlign((self.pool_size, self.pool_size), 1.0 / downsample_rate, 2, aligned=True)",
      "same (features, rois[K,5]) calling convention; RoIAlign is a numerical approximation of PrRoI pooling, "
      "so pretrained NSCL weights need fine-tuning (unconfirmed how much accuracy moves)"),
    C("self.context_roi_pool = jacnn.PrRoIPool2D(", "unsupported_op_workaround", "replace", True,
      "self.context_roi_pool = ROIAlign((self.pool_size, self.pool_size), 1.0 / downsample_rate, 2, aligned=True)",
      "see object_roi_pool"),
    C("self.relation_roi_pool = jacnn.PrRoIPool2D(", "unsupported_op_workaround", "replace", True,
      "self.relation_roi_pool = ROIAlign((self.pool_size, self.pool_size), 1.0 / downsample_rate, 2, aligned=True)",
      "see object_roi_pool"),
])

# --------------------------------------------------------------------------------------------------
# OpenVQA (MILVLG/openvqa): MCAN etc. on VQA-v2 / GQA / CLEVR
# --------------------------------------------------------------------------------------------------
E("ovqa_basecfg", "openvqa/core/base_cfgs.py", "explicit_replacement",
  "MILVLG/openvqa openvqa/core/base_cfgs.py (BaseCfgs.proc: devices, seeds, loss/opt checks)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = self.GPU", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = self.GPU",
      "--GPU selects cards by masking and N_GPU/DEVICES are derived from it; set before the first NPU call "
      "(torch_npu initialises the device lazily)"),
    C("torch.cuda.manual_seed(self.SEED)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(self.SEED)",
      "torch.manual_seed above seeds the NPU too in current torch (unconfirmed); the CUDA call is lazy"),
    C("torch.cuda.manual_seed_all(self.SEED)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.SEED)", "see torch.cuda.manual_seed"),
])

E("ovqa_trainengine", "utils/train_engine.py", "explicit_replacement",
  "MILVLG/openvqa utils/train_engine.py (resume, grad accumulation, DataParallel)", [
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to device"),
    C("net = nn.DataParallel(net, device_ids=__C.DEVICES)", "distributed_framework", "replace", True,
      "raise NotImplementedError('nn.DataParallel is not supported on Ascend NPU: use a single --GPU id or port to DDP+hccl')",
      "nn.DataParallel is unsupported on NPU; fail loudly instead of crashing inside replicate()"),
    C("').cuda()\")", "tensor_to_device", "replace", False,
      "loss_fn = eval('torch.nn.' + __C.LOSS_FUNC_NAME_DICT[__C.LOSS_FUNC] + \"(reduction='\" + __C.LOSS_REDUCTION + \"').npu()\")",
      "'.cuda()' hidden inside an eval string; the losses have no buffers, so it is a no-op either way"),
    C("ckpt = torch.load(path)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(path, map_location='cpu')",
      "checkpoints saved from net.state_dict() on the GPU (including the released ones) carry CUDA storages; "
      "without map_location they cannot be deserialised on an NPU host"),
    C("pin_memory=__C.PIN_MEM, drop_last=True", "pin_memory", "replace", False,
      "pin_memory=__C.PIN_MEM, pin_memory_device='npu', drop_last=True",
      "performance only; default pin target per torch version unconfirmed"),
    C("frcn_feat_iter = frcn_feat_iter.cuda()", "tensor_to_device", "replace", True,
      "frcn_feat_iter = frcn_feat_iter.npu()", "batch to device"),
    C("grid_feat_iter = grid_feat_iter.cuda()", "tensor_to_device", "replace", True,
      "grid_feat_iter = grid_feat_iter.npu()", "batch to device"),
    C("bbox_feat_iter = bbox_feat_iter.cuda()", "tensor_to_device", "replace", True,
      "bbox_feat_iter = bbox_feat_iter.npu()", "batch to device"),
    C("ques_ix_iter = ques_ix_iter.cuda()", "tensor_to_device", "replace", True,
      "ques_ix_iter = ques_ix_iter.npu()", "batch to device"),
    C("ans_iter = ans_iter.cuda()", "tensor_to_device", "replace", True,
      "ans_iter = ans_iter.npu()", "batch to device"),
])

E("ovqa_yml", "configs/gqa/mcan_small.yml", "explicit_replacement",
  "MILVLG/openvqa configs/gqa/mcan_small.yml", [])

E("ovqa_run", "run.py", "explicit_replacement",
  "MILVLG/openvqa run.py (CLI -> CfgLoader -> Execution)", [
    C("import argparse, yaml", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point imports no torch itself; torch_npu must be loaded before BaseCfgs.proc()/train_engine call torch.npu"),
])
