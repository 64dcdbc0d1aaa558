"""Labels for probe437 (OOD detection: ODIN, Mahalanobis, energy OOD, OpenOOD, ViM, ReAct).

Every label names one upstream line by a substring ("=text" = whole stripped line).
Ported lines are explicit torch_npu ports (torch.npu.*, 'npu', hccl), not transfer_to_npu.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


def npu(sub):
    """Ported form of a matched line: strip the '=' marker and swap .cuda( for .npu(."""
    return (sub[1:] if sub.startswith("=") else sub).replace(".cuda(", ".npu(")


# recurring notes
IMPORT_NOTE = ("entry script: torch_npu must be imported (registers the 'npu' device / torch.npu) before any "
               ".npu() call in this process")
TO_NOTE = "tensor/module moved with .cuda(); no CUDA device on an Ascend host -> .npu()"
SEED_NOTE = ("torch.cuda seeding is a lazy no-op on a host without CUDA, so it does not fail; the NPU generator "
             "is left to torch.manual_seed (or unseeded) -> reproducibility only, not required")
LOAD_NOTE = ("checkpoint was saved from GPU tensors; torch.load without map_location tries to restore CUDA "
             "storages and raises on a host without CUDA")
DP_NOTE = ("torch.nn.DataParallel is marked unsupported (✘) on Ascend in the torch_npu API list; "
           "scatter/replicate go through CUDA comm")
VISIBLE_NOTE = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; device pinning must use "
                "ASCEND_RT_VISIBLE_DEVICES (logical ids), otherwise the chosen device is silently not honoured")

IMPORT_TORCH = lambda: C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE)

# ------------------------------------------------------------------ ODIN (facebookresearch/odin)
E("odin_main", "code/main.py", "explicit_replacement",
  "facebookresearch/odin code/main.py (argparse entry calling cal.test)", [
    IMPORT_TORCH(),
])

E("odin_cal", "code/cal.py", "explicit_replacement",
  "facebookresearch/odin code/cal.py (loads pickled DenseNet/WRN, dispatches to calData)", [
    C('net1 = torch.load("../models/{}.pth".format(nnName))', "tensor_to_device", "replace", True,
      'net1 = torch.load("../models/{}.pth".format(nnName), map_location=\'cpu\')',
      "the whole nn.Module is pickled with CUDA storages; " + LOAD_NOTE),
    C("net1.cuda(CUDA_DEVICE)", "tensor_to_device", "replace", True, "net1.npu(CUDA_DEVICE)", TO_NOTE),
])

_odin_data = [
    "=inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad = True)",
    "=labels = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE))",
    "inputs = Variable(imagesOut.cuda(CUDA_DEVICE), requires_grad = True)",
    "labelsOut = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE))",
    "=inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad = True)  # Gaussian run, in-dist",
    "=labels = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE))  # Gaussian run",
    "=inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad = True)  # Gaussian run, noise images",
    "=labels = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE))  # Gaussian run, noise labels",
]
E("odin_caldata", "code/calData.py", "explicit_replacement",
  "facebookresearch/odin code/calData.py (temperature scaling + input perturbation loops)", [
    C(s, "tensor_to_device", "replace", True, npu(s),
      TO_NOTE + " (integer device index kept: .npu(CUDA_DEVICE))") for s in _odin_data
])

E("odin_calmetric", "code/calMetric.py", "explicit_replacement",
  "facebookresearch/odin code/calMetric.py (numpy FPR/AUROC/AUPR sweeps)", [])

# ------------------------------------------------------------------ Mahalanobis (pokaxpoka/deep_Mahalanobis_detector)
def _maha_main(extra):
    return [
        IMPORT_TORCH(),
        C("torch.cuda.manual_seed(0)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(0)", SEED_NOTE),
        C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
          "selects the --gpu device; after the port model.npu()/.npu() use the current NPU, so without it every "
          "run silently lands on npu:0 (and torch.cuda.set_device raises without CUDA)"),
        C('=model.load_state_dict(torch.load(pre_trained_net, map_location = "cuda:" + str(args.gpu)))',
          "tensor_to_device", "replace", True,
          'model.load_state_dict(torch.load(pre_trained_net, map_location = "npu:" + str(args.gpu)))',
          "map_location string names a CUDA device; deserializing onto cuda:N fails on an Ascend host"),
        C('model = torch.load(pre_trained_net, map_location = "cuda:" + str(args.gpu))',
          "tensor_to_device", "replace", True,
          'model = torch.load(pre_trained_net, map_location = "npu:" + str(args.gpu))',
          "pickled DenseNet restored onto cuda:N -> npu:N"),
        C("# resnet ckpt", "tensor_to_device", "replace", True,
          'model.load_state_dict(torch.load(pre_trained_net, map_location = "npu:" + str(args.gpu)))  # resnet ckpt',
          "map_location string names a CUDA device"),
        C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", TO_NOTE),
    ] + extra

E("maha_baseline", "OOD_Baseline_and_ODIN.py", "explicit_replacement",
  "pokaxpoka/deep_Mahalanobis_detector OOD_Baseline_and_ODIN.py", _maha_main([]))

E("maha_generate", "OOD_Generate_Mahalanobis.py", "explicit_replacement",
  "pokaxpoka/deep_Mahalanobis_detector OOD_Generate_Mahalanobis.py", _maha_main([
    C("temp_x = torch.rand(2,3,32,32).cuda()", "tensor_to_device", "replace", True,
      "temp_x = torch.rand(2,3,32,32).npu()", "probe tensor for feature_list shapes; " + TO_NOTE),
]))

_idx = []
for ch, (dn, rn) in enumerate([("(63.0/255.0)", "(0.2023)"), ("(62.1/255.0)", "(0.1994)"), ("(66.7/255.0)", "(0.2010)")]):
    for div in (dn, rn):
        _idx.append("gradient.index_copy_(1, torch.LongTensor([%d]).cuda(), gradient.index_select(1, "
                    "torch.LongTensor([%d]).cuda()) / %s)" % (ch, ch, div))
IDX_NOTE = ("index tensors for index_copy_/index_select are created with .cuda(); both must live on the NPU "
            "with `gradient`")
_maha_lib = [
    C("=data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()", TO_NOTE),
    C("equal_flag = pred.eq(target.cuda()).cpu()", "tensor_to_device", "replace", True,
      "equal_flag = pred.eq(target.npu()).cpu()", TO_NOTE),
    C("temp_list = torch.Tensor(num_classes, int(num_feature)).cuda()", "tensor_to_device", "replace", True,
      "temp_list = torch.Tensor(num_classes, int(num_feature)).npu()", "class-mean buffer; " + TO_NOTE),
    C("temp_precision = torch.from_numpy(temp_precision).float().cuda()", "tensor_to_device", "replace", True,
      "temp_precision = torch.from_numpy(temp_precision).float().npu()",
      "sklearn precision matrix copied to device (fp32, so no fp64 issue); " + TO_NOTE),
    C("=data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "data, target = data.npu(), target.npu()", TO_NOTE),
    C("data = data.cuda()  # ODIN posterior", "tensor_to_device", "replace", True,
      "data = data.npu()  # ODIN posterior", TO_NOTE),
    C("target = test_label[total : total + batch_size].cuda()", "tensor_to_device", "replace", True,
      "target = test_label[total : total + batch_size].npu()", TO_NOTE),
    C("data = test_data[total : total + batch_size].cuda()", "tensor_to_device", "replace", True,
      "data = test_data[total : total + batch_size].npu()", TO_NOTE),
]
for s in _idx:
    _maha_lib.append(C("=" + s, "tensor_to_device", "replace", True, npu(s), IDX_NOTE + " (Mahalanobis score)"))
    _maha_lib.append(C("=" + s + "  # ODIN", "tensor_to_device", "replace", True, npu(s) + "  # ODIN",
                       IDX_NOTE + " (ODIN posterior)"))
    _maha_lib.append(C("=" + s + "  # adv", "tensor_to_device", "replace", True, npu(s) + "  # adv",
                       IDX_NOTE + " (adversarial samples)"))
E("maha_libgen", "lib_generation.py", "explicit_replacement",
  "pokaxpoka/deep_Mahalanobis_detector lib_generation.py (sample_estimator, get_Mahalanobis_score, get_posterior)",
  _maha_lib)

E("maha_dataloader", "data_loader.py", "explicit_replacement",
  "pokaxpoka/deep_Mahalanobis_detector data_loader.py (CIFAR/SVHN/ImageFolder loaders)", [])

# ------------------------------------------------------------------ energy OOD (wetliu/energy_ood)
def _energy_dp(sub):
    return C(sub, "distributed_framework", "replace", True,
             "raise NotImplementedError('torch.nn.DataParallel is unsupported on Ascend NPU; use --ngpu 1 or DDP')",
             DP_NOTE + "; only reached with --ngpu > 1, which then has to fail loudly or be rewritten to DDP")

E("energy_train", "CIFAR/train.py", "explicit_replacement",
  "wetliu/energy_ood CIFAR/train.py (energy-bounded fine-tuning with TinyImages outliers)", [
    IMPORT_TORCH(),
    C("net.load_state_dict(torch.load(model_name))", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(model_name, map_location='cpu'))",
      "pretrained WRN snapshots were saved from GPU; " + LOAD_NOTE),
    _energy_dp("net = torch.nn.DataParallel(net, device_ids=list(range(args.ngpu)))"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", TO_NOTE),
    C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1)", SEED_NOTE),
    C("=data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "data, target = data.npu(), target.npu()", TO_NOTE),
    C("data, target = data.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "data, target = data.npu(non_blocking=True), target.npu(non_blocking=True)", TO_NOTE),
])

E("energy_test", "CIFAR/test.py", "explicit_replacement",
  "wetliu/energy_ood CIFAR/test.py (MSP / energy / ODIN / Mahalanobis scoring)", [
    IMPORT_TORCH(),
    C("net.load_state_dict(torch.load(model_name))", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(model_name, map_location='cpu'))", LOAD_NOTE),
    _energy_dp("net = torch.nn.DataParallel(net, device_ids=list(range(args.ngpu)))"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", TO_NOTE),
    C("=data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()", TO_NOTE),
    C("temp_x = temp_x.cuda()", "tensor_to_device", "replace", True, "temp_x = temp_x.npu()", TO_NOTE),
])

E("energy_score", "utils/score_calculation.py", "explicit_replacement",
  "wetliu/energy_ood utils/score_calculation.py (ODIN and Mahalanobis helpers)", [
    C("=data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()", TO_NOTE),
    C("labels = Variable(torch.LongTensor(maxIndexTemp).cuda())", "tensor_to_device", "replace", True,
      "labels = Variable(torch.LongTensor(maxIndexTemp).npu())", TO_NOTE),
    C("data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "data, target = data.npu(), target.npu()", TO_NOTE),
] + [C(s, "tensor_to_device", "replace", True, npu(s), IDX_NOTE) for s in _idx[0::2]] + [
    C("data = Variable(data.cuda(), volatile=True)", "tensor_to_device", "replace", True,
      "data = Variable(data.npu(), volatile=True)", TO_NOTE),
    C("equal_flag = pred.eq(target.cuda()).cpu()", "tensor_to_device", "replace", True,
      "equal_flag = pred.eq(target.npu()).cpu()", TO_NOTE),
    C("temp_list = torch.Tensor(num_classes, int(num_feature)).cuda()", "tensor_to_device", "replace", True,
      "temp_list = torch.Tensor(num_classes, int(num_feature)).npu()", TO_NOTE),
    C("temp_precision = torch.from_numpy(temp_precision).float().cuda()", "tensor_to_device", "replace", True,
      "temp_precision = torch.from_numpy(temp_precision).float().npu()", TO_NOTE),
])

E("energy_display", "utils/display_results.py", "explicit_replacement",
  "wetliu/energy_ood utils/display_results.py (sklearn AUROC/AUPR/FPR95)", [])

_run = [
    "=CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10",
    "=CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score energy",
    "--score M --noise $noise -v",
    "--score Odin --num_to_avg 10",
    "--score energy --T $T",
]
_run_full = [
    "CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10",
    "CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score energy",
    "CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score M --noise $noise -v",
    "CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name $2 --score Odin --num_to_avg 10 --T $T --noise $noise -v",
    "CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score energy --T $T",
]
E("energy_run_sh", "CIFAR/run.sh", "explicit_replacement",
  "wetliu/energy_ood CIFAR/run.sh (sweeps over scores / temperatures / noise)", [
    C(s, "env_var", "replace", True, full.replace("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"),
      VISIBLE_NOTE + " (as committed gpu=0 coincides with the default device, but the variable is the "
      "script's device knob and concurrent sweeps would all land on NPU 0)")
    for s, full in zip(_run, _run_full)
])

# ------------------------------------------------------------------ OpenOOD (Jingkang50/OpenOOD v1.5)
E("openood_main", "main.py", "explicit_replacement",
  "Jingkang50/OpenOOD main.py (config -> pipeline, launched through utils.launch)", [
    C("=import sys", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; also re-imported by mp.spawn children"),
    C("torch.cuda.manual_seed_all(config.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(config.seed)",
      "torch.manual_seed on the line above already seeds every device (unconfirmed for the privateuse1 "
      "backend); torch.cuda.manual_seed_all is a lazy no-op without CUDA"),
])

E("openood_launch", "openood/utils/launch.py", "explicit_replacement",
  "Jingkang50/OpenOOD openood/utils/launch.py (detectron2-style mp.spawn launcher)", [
    C("assert torch.cuda.is_available(", "torch_cuda_api", "replace", True, "assert torch.npu.is_available(",
      "torch.cuda.is_available() is False on an Ascend host -> every spawned worker asserts"),
    C("backend='NCCL',", "dist_backend", "replace", True, "backend='hccl',", "NCCL is not available; HCCL"),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "torch.cuda.device_count() is 0 -> assertion"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "binds each spawned rank to its NPU; without it all ranks share npu:0"),
])

E("openood_comm", "openood/utils/comm.py", "explicit_replacement",
  "Jingkang50/OpenOOD openood/utils/comm.py (detectron2 comm: gather/all_gather of picklable objects)", [
    C("dist.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", False,
      "dist.barrier(device_ids=[torch.npu.current_device()])",
      "guarded by get_backend() == NCCL, which is False under hccl -> unreachable after the port; edited only "
      "for consistency"),
    C("if dist.get_backend() == 'nccl':", "dist_backend", "replace", True,
      "if dist.get_backend() in ('nccl', 'hccl'):",
      "backend-string comparison (not rewritten by any tool): under hccl comm.gather/all_gather (used by "
      "BaseTrainer.save_metrics every epoch) would fall through to the WORLD hccl group and hit the "
      "['gloo','nccl'] assert with CPU byte tensors; a gloo side-group is needed as for NCCL"),
    C("assert backend in ['gloo', 'nccl']", "dist_backend", "replace", False,
      "assert backend in ['gloo', 'nccl', 'hccl']",
      "only reached with an explicit hccl group once the gloo side-group is used; not required"),
    C("device = torch.device('cpu' if backend == 'gloo' else 'cuda')", "device_type", "replace", False,
      "device = torch.device('cpu' if backend == 'gloo' else 'npu')",
      "same: only for a caller-supplied non-gloo group"),
])

E("openood_netutils", "openood/networks/utils.py", "explicit_replacement",
  "Jingkang50/OpenOOD openood/networks/utils.py get_network (checkpoint load, DDP wrap, .cuda())", [
    C("subnet.load_state_dict(torch.load(checkpoint),", "tensor_to_device", "replace", True,
      "subnet.load_state_dict(torch.load(checkpoint, map_location='cpu'),", LOAD_NOTE),
    C("ckpt = torch.load(network_config.checkpoint)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(network_config.checkpoint, map_location='cpu')", LOAD_NOTE),
    C("net.load_state_dict(torch.load(network_config.checkpoint),", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(network_config.checkpoint, map_location='cpu'),", LOAD_NOTE),
    C("loaded_pth = torch.load(network_config.checkpoint)", "tensor_to_device", "replace", True,
      "loaded_pth = torch.load(network_config.checkpoint, map_location='cpu')", LOAD_NOTE),
    C("=subnet.cuda(),", "tensor_to_device", "replace", True, "subnet.npu(),",
      "module must be on the NPU before DDP wraps it"),
    C("=net.cuda(),", "tensor_to_device", "replace", True, "net.npu(),", "module must be on the NPU before DDP wraps it"),
    C("=subnet.cuda()", "tensor_to_device", "replace", True, "subnet.npu()", TO_NOTE),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", TO_NOTE),
    C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1)", SEED_NOTE),
])

E("openood_trainer", "openood/trainers/base_trainer.py", "explicit_replacement",
  "Jingkang50/OpenOOD openood/trainers/base_trainer.py", [
    C("data = batch['data'].cuda()", "tensor_to_device", "replace", True, "data = batch['data'].npu()", TO_NOTE),
    C("target = batch['label'].cuda()", "tensor_to_device", "replace", True, "target = batch['label'].npu()", TO_NOTE),
])

E("openood_basepp", "openood/postprocessors/base_postprocessor.py", "explicit_replacement",
  "Jingkang50/OpenOOD openood/postprocessors/base_postprocessor.py (inference loop shared by all postprocessors)", [
    C("data = batch['data'].cuda()", "tensor_to_device", "replace", True, "data = batch['data'].npu()", TO_NOTE),
    C("label = batch['label'].cuda()", "tensor_to_device", "replace", True, "label = batch['label'].npu()",
      "label only goes back to .cpu(), but .cuda() itself raises without CUDA"),
])

E("openood_vim", "openood/postprocessors/vim_postprocessor.py", "explicit_replacement",
  "Jingkang50/OpenOOD openood/postprocessors/vim_postprocessor.py (ViM: numpy principal space)", [
    C("data = batch['data'].cuda()", "tensor_to_device", "replace", True, "data = batch['data'].npu()", TO_NOTE),
])

E("openood_mds", "openood/postprocessors/mds_postprocessor.py", "explicit_replacement",
  "Jingkang50/OpenOOD openood/postprocessors/mds_postprocessor.py (class means + tied precision)", [
    C("data, labels = batch['data'].cuda(), batch['label']", "tensor_to_device", "replace", True,
      "data, labels = batch['data'].npu(), batch['label']", TO_NOTE),
    C("self.class_mean).cuda()", "tensor_to_device", "replace", True,
      "self.class_mean).npu()  # shape [#classes, feature dim]", TO_NOTE),
    C("self.precision = torch.from_numpy(group_lasso.precision_).float().cuda()", "tensor_to_device", "replace",
      True, "self.precision = torch.from_numpy(group_lasso.precision_).float().npu()", TO_NOTE),
])

E("openood_knn", "openood/postprocessors/knn_postprocessor.py", "explicit_replacement",
  "Jingkang50/OpenOOD openood/postprocessors/knn_postprocessor.py (deep nearest neighbours, faiss)", [
    C("data = batch['data'].cuda()", "tensor_to_device", "replace", True, "data = batch['data'].npu()", TO_NOTE),
    C("res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", True, None,
      "faiss GPU resources need a CUDA device (and do not exist in faiss-cpu); no Ascend faiss backend"),
    C("self.index = faiss.GpuIndexFlatL2(res, feature.shape[1])", "unsupported_op_workaround", "replace", True,
      "self.index = faiss.IndexFlatL2(feature.shape[1])",
      "exact L2 search on the host CPU index; same results, slower on ImageNet-scale banks"),
])

E("openood_evaluator", "openood/evaluation_api/evaluator.py", "explicit_replacement",
  "Jingkang50/OpenOOD openood/evaluation_api/evaluator.py (v1.5 Evaluator API)", [
    C("data = batch['data'].cuda()", "tensor_to_device", "replace", True, "data = batch['data'].npu()", TO_NOTE),
])

E("openood_evalscript", "scripts/eval_ood.py", "explicit_replacement",
  "Jingkang50/OpenOOD scripts/eval_ood.py (evaluates every s* run folder with Evaluator)", [
    IMPORT_TORCH(),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", TO_NOTE),
])

E("openood_setup", "setup.py", "explicit_replacement",
  "Jingkang50/OpenOOD setup.py (install_requires)", [
    C("'faiss-gpu>=1.7.2',", "unsupported_op_workaround", "replace", False, "'faiss-cpu>=1.7.2',",
      "faiss has no Ascend backend; faiss-gpu wheels are CUDA x86_64 builds, so installing them on an aarch64 "
      "Atlas host fails (unconfirmed in the knowledge base; on x86 the CPU index inside faiss-gpu still works)"),
])

E("openood_cfg", "configs/pipelines/test/test_ood.yml", "explicit_replacement",
  "Jingkang50/OpenOOD configs/pipelines/test/test_ood.yml (num_gpus/num_machines keys)", [])

E("openood_train_sh", "scripts/basics/imagenet200/train_imagenet200.sh", "explicit_replacement",
  "Jingkang50/OpenOOD scripts/basics/imagenet200/train_imagenet200.sh (2-GPU baseline launcher)", [
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      VISIBLE_NOTE + "; the launcher's device_count assert and local_rank binding rely on it"),
])

# ------------------------------------------------------------------ ViM (haoqiwang/vim)
E("vim_extract_vit", "extract_feature_vit.py", "explicit_replacement",
  "haoqiwang/vim extract_feature_vit.py (mmcls ViT feature extraction)", [
    IMPORT_TORCH(),
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
      True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "needed by the NPUDataParallel line; mmcv>=1.7 NPU wrappers (from memory, not in the knowledge base)"),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model, device_ids=[0])",
      "MMDataParallel scatters inputs onto CUDA device 0; NPU wrapper scatters onto npu:0"),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", TO_NOTE),
])

E("vim_extract_bit", "extract_feature_bit.py", "explicit_replacement",
  "haoqiwang/vim extract_feature_bit.py (BiT-S-R101x1 feature extraction)", [
    IMPORT_TORCH(),
    C("state_dict = torch.load(args.model_path)", "tensor_to_device", "replace", True,
      "state_dict = torch.load(args.model_path, map_location='cpu')", "fine-tuned BiT checkpoint; " + LOAD_NOTE),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      DP_NOTE + "; with torch_npu the wrapper would see all NPUs and try to scatter"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", TO_NOTE),
    C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)", TO_NOTE),
    C("feat_batch = model.module.forward_features(x)", "distributed_framework", "replace", True,
      "feat_batch = model.forward_features(x)",
      "consequence of dropping DataParallel: there is no .module any more"),
])

E("vim_benchmark", "benchmark.py", "explicit_replacement",
  "haoqiwang/vim benchmark.py (MSP/Energy/ReAct/ViM/GradNorm/Mahalanobis/KL/KNN from saved features)", [
    IMPORT_TORCH(),
    C("=fc.cuda()", "tensor_to_device", "replace", True, "fc.npu()", "GradNorm fc layer; " + TO_NOTE),
    C("x = torch.from_numpy(x).float().cuda()", "tensor_to_device", "replace", True,
      "x = torch.from_numpy(x).float().npu()", TO_NOTE),
    C("logsoftmax = torch.nn.LogSoftmax(dim=-1).cuda()", "tensor_to_device", "replace", False,
      "logsoftmax = torch.nn.LogSoftmax(dim=-1).npu()",
      "parameter-free module: Module.cuda() only maps over (no) tensors, so it never touches CUDA; "
      "edited for consistency only"),
    C("targets = torch.ones((1, 1000)).cuda()", "tensor_to_device", "replace", True,
      "targets = torch.ones((1, 1000)).npu()", TO_NOTE),
    C("mean = torch.from_numpy(np.array(train_means)).cuda().float()", "tensor_to_device", "replace", True,
      "mean = torch.from_numpy(np.array(train_means)).npu().float()",
      "fp64 array goes to the device before .float(); port keeps the order (fp64 tensors on NPU are a "
      "precision/perf caveat, .float().npu() would be better)"),
    C("prec = torch.from_numpy(ec.precision_).cuda().float()", "tensor_to_device", "replace", True,
      "prec = torch.from_numpy(ec.precision_).npu().float()", "float64 precision matrix; same caveat"),
    C("tqdm(torch.from_numpy(feature_id_val).cuda()", "tensor_to_device", "replace", True,
      "score_id = -np.array([(((f - mean)@prec) * (f - mean)).sum(axis=-1).min().cpu().item() for f in "
      "tqdm(torch.from_numpy(feature_id_val).npu().float())])", TO_NOTE),
    C("tqdm(torch.from_numpy(feature_ood).cuda()", "tensor_to_device", "replace", True,
      "score_ood = -np.array([(((f - mean)@prec) * (f - mean)).sum(axis=-1).min().cpu().item() for f in "
      "tqdm(torch.from_numpy(feature_ood).npu().float())])", TO_NOTE),
])

# ------------------------------------------------------------------ ReAct (deeplearning-wisc/react)
E("react_eval", "eval.py", "explicit_replacement",
  "deeplearning-wisc/react eval.py (energy / ODIN / Mahalanobis scoring loop with ReAct model)", [
    IMPORT_TORCH(),
    C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1)", SEED_NOTE),
    C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", TO_NOTE),
    C("labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", TO_NOTE),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(non_blocking=True)", TO_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      VISIBLE_NOTE + "; set before the first NPU call, as upstream does for CUDA"),
    C("temp_x = Variable(temp_x).cuda()", "tensor_to_device", "replace", True,
      "temp_x = Variable(temp_x).npu()", TO_NOTE),
])

E("react_modelloader", "util/model_loader.py", "explicit_replacement",
  "deeplearning-wisc/react util/model_loader.py get_model", [
    C("in_dataset=args.in_dataset, model_arch=args.name, epochs=epoch))", "tensor_to_device", "replace", True,
      "in_dataset=args.in_dataset, model_arch=args.name, epochs=epoch), map_location='cpu')",
      LOAD_NOTE + "; the map_location argument goes on the continuation line that closes torch.load("),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", TO_NOTE),
])

E("react_dataloader", "util/data_loader.py", "explicit_replacement",
  "deeplearning-wisc/react util/data_loader.py (module-level loader kwargs)", [
    C("kwargs = {'num_workers': 2, 'pin_memory': True} if torch.cuda.is_available() else {}", "torch_cuda_api",
      "replace", False,
      "kwargs = {'num_workers': 2, 'pin_memory': True} if torch.npu.is_available() else {}",
      "on an NPU host the CUDA check is False, so loaders silently drop to num_workers=0 without pinning: "
      "slower, results unchanged -> performance only"),
])

E("react_metrics", "util/metrics.py", "explicit_replacement",
  "deeplearning-wisc/react util/metrics.py (FPR95/AUROC/AUIN)", [])

E("react_resnet", "models/resnet.py", "explicit_replacement",
  "deeplearning-wisc/react models/resnet.py (forward_threshold = ReAct clipping)", [])
