# Open World Object Detection (ORE) ROI heads.
#
# Adds three things on top of the standard Faster R-CNN box head used for
# incremental learning of known classes:
#   * a per-class feature store (queue of RoI features) used to compute
#     class prototypes,
#   * a contrastive clustering loss in the latent space,
#   * an energy based unknown identifier fitted on held-out validation
#     energies (Weibull distributions for known / unknown).
import logging
import os
import shortuuid
import numpy as np
import torch
from torch import nn
from torch.distributions.weibull import Weibull
from torch.distributions.transforms import AffineTransform
from torch.distributions.transformed_distribution import TransformedDistribution

from detectron2.config import configurable
from detectron2.layers import ShapeSpec
from detectron2.structures import Boxes, Instances, pairwise_iou
from detectron2.utils.events import get_event_storage
from detectron2.utils import comm
from detectron2.utils.store import Store

from .box_head import build_box_head
from .fast_rcnn import FastRCNNOutputLayers
from .roi_heads import ROI_HEADS_REGISTRY, StandardROIHeads

logger = logging.getLogger(__name__)


def _cuda_available():
    return torch.cuda.is_available() and torch.cuda.device_count() > 0


@ROI_HEADS_REGISTRY.register()
class OpenWorldROIHeads(StandardROIHeads):
    """
    StandardROIHeads + clustering / energy machinery for open-world, class
    incremental detection (tasks t1..t4 add 20 classes each).
    """

    @configurable
    def __init__(self, *, clustering_items_per_class, clustering_start_iter, clustering_update_mu_iter,
                 clustering_momentum, clustering_z_dimension, enable_clustering, prev_intro_cls,
                 curr_intro_cls, max_iterations, output_dir, feat_store_path, margin, num_classes,
                 **kwargs):
        super().__init__(**kwargs)
        self.clustering_start_iter = clustering_start_iter
        self.clustering_update_mu_iter = clustering_update_mu_iter
        self.clustering_momentum = clustering_momentum
        self.hingeloss = nn.HingeEmbeddingLoss(2)
        self.enable_clustering = enable_clustering
        self.prev_intro_cls = prev_intro_cls
        self.curr_intro_cls = curr_intro_cls
        self.seen_classes = self.prev_intro_cls + self.curr_intro_cls
        self.invalid_class_range = list(range(self.seen_classes, num_classes - 1))
        logging.getLogger(__name__).info("Invalid class range: " + str(self.invalid_class_range))

        self.max_iterations = max_iterations
        self.feature_store_is_stored = False
        self.output_dir = output_dir
        self.feat_store_path = feat_store_path
        self.feature_store_save_loc = os.path.join(self.output_dir, self.feat_store_path, 'feat.pt')
        self.num_classes = num_classes
        self.margin = margin

        if os.path.isfile(self.feature_store_save_loc):
            logger.info('Trying to load feature store from ' + self.feature_store_save_loc)
            self.feature_store = torch.load(self.feature_store_save_loc)
            logger.info('Loaded feature store from ' + self.feature_store_save_loc)
        else:
            logger.info('Feature store not found in ' + self.feature_store_save_loc + '. Creating new feature store.')
            self.feature_store = Store(num_classes + 1, clustering_items_per_class)
        self.means = [None for _ in range(num_classes + 1)]
        self.clustering_z_dimension = clustering_z_dimension

    @classmethod
    def from_config(cls, cfg, input_shape):
        ret = super().from_config(cfg, input_shape)
        ret.update({
            "clustering_items_per_class": cfg.OWOD.CLUSTERING.ITEMS_PER_CLASS,
            "clustering_start_iter": cfg.OWOD.CLUSTERING.START_ITER,
            "clustering_update_mu_iter": cfg.OWOD.CLUSTERING.UPDATE_MU_ITER,
            "clustering_momentum": cfg.OWOD.CLUSTERING.MOMENTUM,
            "clustering_z_dimension": cfg.OWOD.CLUSTERING.Z_DIMENSION,
            "enable_clustering": cfg.OWOD.ENABLE_CLUSTERING,
            "prev_intro_cls": cfg.OWOD.PREV_INTRODUCED_CLS,
            "curr_intro_cls": cfg.OWOD.CUR_INTRODUCED_CLS,
            "max_iterations": cfg.SOLVER.MAX_ITER,
            "output_dir": cfg.OUTPUT_DIR,
            "feat_store_path": cfg.OWOD.FEATURE_STORE_SAVE_PATH,
            "margin": cfg.OWOD.CLUSTERING.MARGIN,
            "num_classes": cfg.MODEL.ROI_HEADS.NUM_CLASSES,
        })
        return ret

    def update_feature_store(self, features, proposals):
        # cat(..., dim=0) concatenates over all images in the batch
        gt_classes = torch.cat([p.gt_classes for p in proposals])
        self.feature_store.add(features, gt_classes)

        storage = get_event_storage()

        if storage.iter == self.max_iterations - 1 and self.feature_store_is_stored is False and comm.is_main_process():
            logger.info('Saving image store at iteration ' + str(storage.iter) + ' to ' + self.feature_store_save_loc)
            torch.save(self.feature_store, self.feature_store_save_loc)
            self.feature_store_is_stored = True

    def clstr_loss_l2_cdist(self, input_features, proposals):
        """
        Get the foreground input_features, generate distributions for the class,
        get probability of each feature from each distribution;
        Compute loss: if belonging to a class -> likelihood should be higher
                      else -> lower
        :param input_features:
        :param proposals:
        :return:
        """
        gt_classes = torch.cat([p.gt_classes for p in proposals])
        mask = gt_classes != self.num_classes
        fg_features = input_features[mask]
        classes = gt_classes[mask]

        all_means = self.means
        for item in all_means:
            if item is not None:
                length = item.shape
                break

        for i, item in enumerate(all_means):
            if item is None:
                all_means[i] = torch.zeros((length))

        distances = torch.cdist(fg_features, torch.stack(all_means).cuda(), p=self.margin)
        labels = []

        for index, feature in enumerate(fg_features):
            for cls_index, mu in enumerate(self.means):
                if mu is not None and feature is not None:
                    if classes[index] == cls_index:
                        labels.append(1)
                    else:
                        labels.append(-1)
                else:
                    labels.append(0)

        loss = self.hingeloss(distances, torch.tensor(labels).reshape((-1, self.num_classes + 1)).cuda())

        return loss

    def get_clustering_loss(self, input_features, proposals):
        if not self.enable_clustering:
            return 0

        storage = get_event_storage()
        c_loss = 0
        if storage.iter == self.clustering_start_iter:
            items = self.feature_store.retrieve(-1)
            for index, item in enumerate(items):
                if len(item) == 0:
                    self.means[index] = None
                else:
                    mu = torch.tensor(item).mean(dim=0)
                    self.means[index] = mu
            c_loss = self.clstr_loss_l2_cdist(input_features, proposals)
            # Freeze the parameters when clustering starts
            # for param in self.box_predictor.parameters():
            #     param.requires_grad = False
        elif storage.iter > self.clustering_start_iter:
            if storage.iter % self.clustering_update_mu_iter == 0:
                # Compute new MUs
                items = self.feature_store.retrieve(-1)
                new_means = [None for _ in range(self.num_classes + 1)]
                for index, item in enumerate(items):
                    if len(item) == 0:
                        new_means[index] = None
                    else:
                        new_means[index] = torch.tensor(item).mean(dim=0)
                # Update the MUs
                for i, mean in enumerate(self.means):
                    if (mean) is not None and new_means[i] is not None:
                        self.means[i] = self.clustering_momentum * mean + \
                                        (1 - self.clustering_momentum) * new_means[i]

            c_loss = self.clstr_loss_l2_cdist(input_features, proposals)
        return c_loss

    def compute_energy(self, predictions, proposals, temperature=1.0):
        """Store log-sum-exp energies of the known-class logits for the Weibull fit (eval only)."""
        gt_classes = torch.cat([p.gt_classes for p in proposals])
        logits = predictions[0]
        data = (logits, gt_classes)
        location = os.path.join(self.output_dir, 'energy', shortuuid.uuid() + '.pkl')
        os.makedirs(os.path.dirname(location), exist_ok=True)
        torch.save(data, location)

    def create_distribution(self, scale, shape, shift):
        wd = Weibull(scale=scale, concentration=shape)
        transforms = AffineTransform(loc=shift, scale=1.)
        weibull = TransformedDistribution(wd, transforms)
        return weibull

    def load_energy_distributions(self, energy_dist_path):
        """
        Load the parameters of the two Weibull distributions (known / unknown)
        that were fitted offline by tools/fit_energy.py.
        """
        if not os.path.isfile(energy_dist_path):
            logger.info('Energy distribution not found at ' + energy_dist_path)
            return None, None
        param = torch.load(energy_dist_path)
        unknown = self.create_distribution(param['scale_unk'], param['shape_unk'], param['shift_unk'])
        known = self.create_distribution(param['scale_known'], param['shape_known'], param['shift_known'])
        device = "cuda" if _cuda_available() else "cpu"
        logger.info("Energy based unknown identifier runs on " + device)
        return unknown, known

    def identify_unknowns(self, logits, unknown_dist, known_dist):
        lse = torch.logsumexp(logits[:, :self.seen_classes], dim=1)
        # unknown if its energy is more likely under the unknown distribution
        p_unk = torch.exp(unknown_dist.log_prob(lse.cpu()))
        p_known = torch.exp(known_dist.log_prob(lse.cpu()))
        return (p_unk > p_known).to(logits.device)
