import os
import shutil
import argparse
from tqdm.auto import tqdm
import torch
import torch.utils.tensorboard
from torch.nn.utils import clip_grad_norm_
from torch_geometric.loader import DataLoader
from torch_geometric.transforms import Compose

from models.maskfill import MaskFillModelVN
from utils.datasets import get_dataset
from utils.transforms import *
from utils.misc import *
from utils.train import *


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', type=str, default='./configs/train.yml')
    parser.add_argument('--device', type=str, default=None, help='override config.train.device')
    parser.add_argument('--logdir', type=str, default='./logs')
    args = parser.parse_args()
    base_path = os.path.dirname(os.path.abspath(__file__))

    # Load configs
    config = load_config(args.config)
    config_name = os.path.basename(args.config)[:os.path.basename(args.config).rfind('.')]
    seed_all(config.train.seed)
    if args.device is not None:
        config.train.device = args.device
    if config.train.device.startswith('cuda') and not torch.cuda.is_available():
        print('CUDA is not available, falling back to CPU. This will be very slow.')
        config.train.device = 'cpu'

    # Logging
    log_dir = get_new_log_dir(args.logdir, prefix=config_name)
    ckpt_dir = os.path.join(log_dir, 'checkpoints')
    os.makedirs(ckpt_dir, exist_ok=True)
    logger = get_logger('train', log_dir)
    writer = torch.utils.tensorboard.SummaryWriter(log_dir)
    logger.info(args)
    logger.info(config)
    shutil.copyfile(args.config, os.path.join(log_dir, os.path.basename(args.config)))
    shutil.copytree(os.path.join(base_path, 'models'), os.path.join(log_dir, 'models'))

    # Transforms
    protein_featurizer = FeaturizeProteinAtom()
    ligand_featurizer = FeaturizeLigandAtom()
    masking = get_mask(config.train.transform.mask)
    composer = AtomComposer(protein_featurizer.feature_dim, ligand_featurizer.feature_dim, config.model.encoder.knn)

    edge_sampler = EdgeSample(config.train.transform.edgesampler)
    cfg_ctr = config.train.transform.contrastive
    contrastive_sampler = ContrastiveSample(cfg_ctr.num_real, cfg_ctr.num_fake, cfg_ctr.pos_real_std, cfg_ctr.pos_fake_std, config.model.field.knn)
    transform = Compose([
        RefineData(),
        LigandCountNeighbors(),
        protein_featurizer,
        ligand_featurizer,
        masking,
        composer,

        FocalBuilder(),
        edge_sampler,
        contrastive_sampler,
    ])

    # Datasets and loaders
    logger.info('Loading dataset...')
    dataset, subsets = get_dataset(
        config=config.dataset,
        transform=transform,
    )
    train_set, val_set = subsets['train'], subsets['test']
    follow_batch = []
    collate_exclude_keys = ['ligand_nbh_list']
    train_iterator = inf_iterator(DataLoader(
        train_set,
        batch_size=config.train.batch_size,
        shuffle=True,
        num_workers=config.train.num_workers,
        pin_memory=config.train.pin_memory,
        follow_batch=follow_batch,
        exclude_keys=collate_exclude_keys,
    ))
    val_loader = DataLoader(val_set, config.train.batch_size, shuffle=False, follow_batch=follow_batch, exclude_keys=collate_exclude_keys,)

    # Model
    logger.info('Building model...')
    if config.model.vn == 'vn':
        model = MaskFillModelVN(
            config.model,
            num_classes=contrastive_sampler.num_elements,
            num_bond_types=edge_sampler.num_bond_types,
            protein_atom_feature_dim=protein_featurizer.feature_dim,
            ligand_atom_feature_dim=ligand_featurizer.feature_dim,
        ).to(config.train.device)
    print('Num of parameters is', np.sum([p.numel() for p in model.parameters()]))

    # Optimizer and scheduler
    optimizer = get_optimizer(config.train.optimizer, model)
    scheduler = get_scheduler(config.train.scheduler, optimizer)

    def train(it):
        model.train()
        optimizer.zero_grad()
        batch = next(train_iterator).to(config.train.device)

        pos_noise = torch.randn_like(batch.compose_pos) * config.train.pos_noise_std
        loss, loss_frontier, loss_pos, loss_cls, loss_edge, loss_real, loss_fake, loss_surf = model.get_loss(

            pos_real=batch.pos_real,
            y_real=batch.cls_real.long(),
            # p_real=batch.ind_real.float(),    # Binary indicators: float
            pos_fake=batch.pos_fake,

            edge_index_real=torch.stack([batch.real_compose_edge_index_0, batch.real_compose_edge_index_1], dim=0),
            edge_label=batch.real_compose_edge_type,

            index_real_cps_edge_for_atten=batch.index_real_cps_edge_for_atten,
            tri_edge_index=batch.tri_edge_index,
            tri_edge_feat=batch.tri_edge_feat,

            compose_feature=batch.compose_feature.float(),
            compose_pos=batch.compose_pos + pos_noise,
            idx_ligand=batch.idx_ligand_ctx_in_compose,
            idx_protein=batch.idx_protein_in_compose,

            y_frontier=batch.ligand_frontier,
            idx_focal=batch.idx_focal_in_compose,
            pos_generate=batch.pos_generate,
            idx_protein_all_mask=batch.idx_protein_all_mask,
            y_protein_frontier=batch.y_protein_frontier,

            compose_knn_edge_index=batch.compose_knn_edge_index,
            compose_knn_edge_feature=batch.compose_knn_edge_feature,
            real_compose_knn_edge_index=torch.stack([batch.real_compose_knn_edge_index_0, batch.real_compose_knn_edge_index_1], dim=0),
            fake_compose_knn_edge_index=torch.stack([batch.fake_compose_knn_edge_index_0, batch.fake_compose_knn_edge_index_1], dim=0),
        )
        loss.backward()
        orig_grad_norm = clip_grad_norm_(model.parameters(), config.train.max_grad_norm)
        optimizer.step()

        logger.info('[Train] Iter %d | Loss %.6f | Loss(Fron) %.6f | Loss(Pos) %.6f | Loss(Cls) %.6f | Loss(Edge) %.6f | Loss(Real) %.6f | Loss(Fake) %.6f | Loss(Surf) %.6f' % (
            it, loss.item(), loss_frontier.item(), loss_pos.item(), loss_cls.item(), loss_edge.item(), loss_real.item(), loss_fake.item(), loss_surf.item()
        ))
        writer.add_scalar('train/loss', loss, it)
        writer.add_scalar('train/loss_frontier', loss_frontier, it)
        writer.add_scalar('train/loss_pos', loss_pos, it)
        writer.add_scalar('train/loss_cls', loss_cls, it)
        writer.add_scalar('train/loss_edge', loss_edge, it)
        writer.add_scalar('train/loss_real', loss_real, it)
        writer.add_scalar('train/loss_fake', loss_fake, it)
        writer.add_scalar('train/loss_surf', loss_surf, it)
        writer.add_scalar('train/lr', optimizer.param_groups[0]['lr'], it)
        writer.add_scalar('train/grad', orig_grad_norm, it)
        writer.flush()

    def validate(it):
        sum_loss, sum_n = 0, 0
        sum_loss_fron, sum_loss_pos, sum_loss_cls, sum_loss_edge, sum_loss_real, sum_loss_fake, sum_loss_surf = 0, 0, 0, 0, 0, 0, 0
        with torch.no_grad():
            model.eval()
            for batch in tqdm(val_loader, desc='Validate'):
                batch = batch.to(config.train.device)
                loss, loss_frontier, loss_pos, loss_cls, loss_edge, loss_real, loss_fake, loss_surf = model.get_loss(
                    pos_real=batch.pos_real,
                    y_real=batch.cls_real.long(),
                    pos_fake=batch.pos_fake,

                    edge_index_real=torch.stack([batch.real_compose_edge_index_0, batch.real_compose_edge_index_1], dim=0),
                    edge_label=batch.real_compose_edge_type,

                    index_real_cps_edge_for_atten=batch.index_real_cps_edge_for_atten,
                    tri_edge_index=batch.tri_edge_index,
                    tri_edge_feat=batch.tri_edge_feat,

                    compose_feature=batch.compose_feature.float(),
                    compose_pos=batch.compose_pos,
                    idx_ligand=batch.idx_ligand_ctx_in_compose,
                    idx_protein=batch.idx_protein_in_compose,

                    y_frontier=batch.ligand_frontier,
                    idx_focal=batch.idx_focal_in_compose,
                    pos_generate=batch.pos_generate,
                    idx_protein_all_mask=batch.idx_protein_all_mask,
                    y_protein_frontier=batch.y_protein_frontier,

                    compose_knn_edge_index=batch.compose_knn_edge_index,
                    compose_knn_edge_feature=batch.compose_knn_edge_feature,
                    real_compose_knn_edge_index=torch.stack([batch.real_compose_knn_edge_index_0, batch.real_compose_knn_edge_index_1], dim=0),
                    fake_compose_knn_edge_index=torch.stack([batch.fake_compose_knn_edge_index_0, batch.fake_compose_knn_edge_index_1], dim=0),
                )
                sum_loss += loss.item()
                sum_loss_fron += loss_frontier.item()
                sum_loss_pos += loss_pos.item()
                sum_loss_cls += loss_cls.item()
                sum_loss_edge += loss_edge.item()
                sum_loss_real += loss_real.item()
                sum_loss_fake += loss_fake.item()
                sum_loss_surf += loss_surf.item()
                sum_n += 1
        avg_loss = sum_loss / sum_n
        avg_loss_fron = sum_loss_fron / sum_n
        avg_loss_pos = sum_loss_pos / sum_n
        avg_loss_cls = sum_loss_cls / sum_n
        avg_loss_edge = sum_loss_edge / sum_n

        if config.train.scheduler.type == 'plateau':
            scheduler.step(avg_loss)
        elif config.train.scheduler.type == 'warmup_plateau':
            scheduler.step_ReduceLROnPlateau(avg_loss)
        else:
            scheduler.step()

        logger.info('[Validate] Iter %05d | Loss %.6f | Loss(Fron) %.6f | Loss(Pos) %.6f | Loss(Cls) %.6f | Loss(Edge) %.6f' % (
            it, avg_loss, avg_loss_fron, avg_loss_pos, avg_loss_cls, avg_loss_edge,
        ))
        writer.add_scalar('val/loss', avg_loss, it)
        writer.add_scalar('val/loss_fron', avg_loss_fron, it)
        writer.add_scalar('val/loss_pos', avg_loss_pos, it)
        writer.add_scalar('val/loss_cls', avg_loss_cls, it)
        writer.add_scalar('val/loss_edge', avg_loss_edge, it)
        if config.train.device.startswith('cuda'):
            writer.add_scalar('val/max_mem_gb', torch.cuda.max_memory_allocated() / 1024 ** 3, it)
        writer.flush()
        return avg_loss

    try:
        model.train()
        for it in range(1, config.train.max_iters+1):
            try:
                train(it)
            except RuntimeError as e:
                logger.error('Runtime Error ' + str(e))
                logger.error('Skipping Iteration %d' % it)
                torch.cuda.empty_cache()
            if it % config.train.val_freq == 0 or it == config.train.max_iters:
                validate(it)
                ckpt_path = os.path.join(ckpt_dir, '%d.pt' % it)
                torch.save({
                    'config': config,
                    'model': model.state_dict(),
                    'optimizer': optimizer.state_dict(),
                    'scheduler': scheduler.state_dict(),
                    'iteration': it,
                }, ckpt_path)
                model.train()
    except KeyboardInterrupt:
        logger.info('Terminating...')
